"""Authentication by the raw API key in the ``Authorization`` header (no scheme word)."""
from rest_framework import authentication, exceptions

from .models import ApiKey, hash_key


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """Accept ``Authorization: <API_KEY>``; anything else is ``401 "Client unauthorized"``.

    The key is looked up by its SHA-256 hash, so the raw value is never compared
    or stored. A revoked key is the same as an unknown one.
    """

    def authenticate(self, request):
        raw = request.META.get("HTTP_AUTHORIZATION", "").strip()
        if not raw:
            return None
        key = ApiKey.objects.active().filter(key_hash=hash_key(raw)).only("id", "name").first()
        if key is None:
            raise exceptions.AuthenticationFailed()
        return (key, key)

    def authenticate_header(self, request) -> str:
        # A WWW-Authenticate value makes DRF answer 401 rather than 403.
        return "ApiKey"
