"""Authentication by the raw API key in the ``Authorization`` header (no scheme word)."""
from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import connection
from rest_framework import authentication, exceptions

from .models import ApiKey, hash_key

_LOOKUP_SQL = (
    f"SELECT id, name, scope FROM {ApiKey._meta.db_table} "
    "WHERE key_hash = %s AND revoked_at IS NULL LIMIT 1"
)

# key hash -> (monotonic expiry, (id, name, scope) or None for an unknown/revoked key). Every
# request of a busy client used to cost one database round trip for its key; an answer is now
# reused for at most API_KEY_CACHE_SECONDS (1 s by default), so a key revoked or re-scoped in
# another process (the admin, ``revokeapikey``) stops working or changes scope within that
# time, and at once in the process that changed it (``key_cache_clear``, on every key save).
_cache: dict[str, tuple[float, tuple | None]] = {}
_cache_lock = threading.Lock()
_CACHE_MAX = 1024


def key_cache_clear(**_kwargs) -> None:
    """Forget every cached key lookup of this process (a key was saved, revoked or re-scoped here)."""
    with _cache_lock:
        _cache.clear()


def _lookup(key_hash: str) -> tuple | None:
    ttl = settings.API_KEY_CACHE_SECONDS
    now = time.monotonic()
    if ttl > 0:
        entry = _cache.get(key_hash)
        if entry is not None and entry[0] > now:
            return entry[1]
    # One statement written out (the ORM's per-request query compilation cost more than the lookup
    # itself), same as ``ApiKey.objects.active()``.
    with connection.cursor() as cursor:
        cursor.execute(_LOOKUP_SQL, [key_hash])
        row = cursor.fetchone()
    if ttl > 0:
        with _cache_lock:
            if len(_cache) >= _CACHE_MAX:  # many distinct wrong keys: start over rather than grow
                _cache.clear()
            _cache[key_hash] = (now + ttl, row)
    return row


class ApiKeyAuthentication(authentication.BaseAuthentication):
    """Accept ``Authorization: <API_KEY>``; anything else is ``401 "Client unauthorized"``.

    The key is looked up by its SHA-256 hash, so the raw value is never compared
    or stored. A revoked key is the same as an unknown one. The same statement
    reads the key's scope, which ``core.scopes.ScopePermission`` checks next.
    Lookups are cached per process for ``API_KEY_CACHE_SECONDS`` (see ``_cache``).
    """

    def authenticate(self, request):
        raw = request.META.get("HTTP_AUTHORIZATION", "").strip()
        if not raw:
            return None
        row = _lookup(hash_key(raw))
        if row is None:
            raise exceptions.AuthenticationFailed()
        key = ApiKey(id=row[0], name=row[1], scope=row[2])
        key._state.adding, key._state.db = False, connection.alias
        return (key, key)

    def authenticate_header(self, request) -> str:
        # A WWW-Authenticate value makes DRF answer 401 rather than 403.
        return "ApiKey"
