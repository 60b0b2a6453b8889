"""Authentication by the raw API key in the ``Authorization`` header (no scheme word)."""
from django.db import connection
from rest_framework import authentication, exceptions

from .models import ApiKey, hash_key

_LOOKUP_SQL = (
    f"SELECT id, name, scope FROM {ApiKey._meta.db_table} "
    "WHERE key_hash = %s AND revoked_at IS NULL LIMIT 1"
)


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """Accept ``Authorization: <API_KEY>``; anything else is ``401 "Client unauthorized"``.

    The key is looked up by its SHA-256 hash, so the raw value is never compared
    or stored. A revoked key is the same as an unknown one. The same statement
    reads the key's scope, which ``core.scopes.ScopePermission`` checks next.
    """

    def authenticate(self, request):
        raw = request.META.get("HTTP_AUTHORIZATION", "").strip()
        if not raw:
            return None
        # Every request runs this: one statement written out (the ORM's per-request query
        # compilation cost more than the lookup itself), same as ``ApiKey.objects.active()``.
        with connection.cursor() as cursor:
            cursor.execute(_LOOKUP_SQL, [hash_key(raw)])
            row = cursor.fetchone()
        if row is None:
            raise exceptions.AuthenticationFailed()
        key = ApiKey(id=row[0], name=row[1], scope=row[2])
        key._state.adding, key._state.db = False, connection.alias
        return (key, key)

    def authenticate_header(self, request) -> str:
        # A WWW-Authenticate value makes DRF answer 401 rather than 403.
        return "ApiKey"
