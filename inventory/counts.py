"""Cached totals of the inventory lists (``X-Total-Count``, GET /hosts' endpoint counts).

Counting 100,000 endpoints costs 10–40 ms whatever the index (every match is visited);
a list page costs well under a millisecond. So a count that was *slow* (at least
``INVENTORY_COUNT_CACHE_MIN_MS``) is kept in this process, keyed by what was counted
and by the inventory version, for at most ``INVENTORY_COUNT_CACHE_SECONDS``.

The version is a Redis counter that the writers of endpoints, hosts and data fields
bump with :func:`inventory_changed`: ingestion, the API's mutations, data-class
changes, spec assignment and the admin (model signals). It is bumped at once and
again after the transaction commits, so a count read while a change was in flight is
not kept past the commit (another process sees a bump within ``VERSION_REUSE``, 0.2 s).
A writer that forgets to bump makes totals lag by at most the time-to-live. Without Redis (the zero-configuration demo) only the time-to-live
applies. Fast counts (small inventories, selective filters, the test suite) are never
cached: they are always exact.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

VERSION_KEY = "apiscope:inventory:version"
_MAX_ENTRIES = 2000

_lock = threading.Lock()
_cache: OrderedDict[Hashable, tuple[int, float, object]] = OrderedDict()
_client = None
_client_failed_at = 0.0


def _redis():
    """A module-wide Redis client on ``REDIS_URL`` (None without Redis, or for 10 s after a failure)."""
    global _client
    url = getattr(settings, "REDIS_URL", "")
    if not url or time.monotonic() - _client_failed_at < 10:
        return None
    if _client is None:
        import redis

        _client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    return _client


def _redis_failed(exc: Exception) -> None:
    global _client_failed_at
    _client_failed_at = time.monotonic()
    logger.warning("inventory count cache: Redis unavailable (%s); counting without the cache", type(exc).__name__)


# The version read from Redis is reused for this long (seconds): one Redis round trip per
# request cost as much CPU as the rest of a cached count. This process's own writes drop it.
VERSION_REUSE = 0.2
_version_read: tuple[float, int] | None = None


def inventory_version() -> int | None:
    """The current inventory version; None when it cannot be read (then nothing is cached)."""
    global _version_read
    client = _redis()
    if client is None:
        return 0 if not getattr(settings, "REDIS_URL", "") else None
    read = _version_read
    now = time.monotonic()
    if read is not None and now - read[0] < VERSION_REUSE:
        return read[1]
    try:
        version = int(client.get(VERSION_KEY) or 0)
    except Exception as exc:  # noqa: BLE001 - a cache must never fail a request
        _redis_failed(exc)
        return None
    _version_read = (now, version)
    return version


def _bump() -> None:
    global _version_read
    _version_read = None
    client = _redis()
    if client is not None:
        try:
            client.incr(VERSION_KEY)
        except Exception as exc:  # noqa: BLE001
            _redis_failed(exc)
    with _lock:
        _cache.clear()


def inventory_changed() -> None:
    """Say that endpoints, hosts or data fields changed: cached totals are dropped now and after commit."""
    _bump()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(_bump, robust=True)


def cached_count(key: Hashable, compute: Callable[[], object]) -> object:
    """``compute()`` (a count, or any small result derived from counting), cached as described above."""
    ttl = settings.INVENTORY_COUNT_CACHE_SECONDS
    if ttl <= 0:
        return compute()
    version = inventory_version()
    now = time.monotonic()
    if version is not None:
        with _lock:
            entry = _cache.get(key)
            if entry is not None and entry[0] == version and entry[1] > now:
                _cache.move_to_end(key)
                return entry[2]
    started = time.perf_counter()
    value = compute()
    if version is not None and (time.perf_counter() - started) * 1000 >= settings.INVENTORY_COUNT_CACHE_MIN_MS:
        with _lock:
            _cache[key] = (version, now + ttl, value)
            _cache.move_to_end(key)
            while len(_cache) > _MAX_ENTRIES:
                _cache.popitem(last=False)
    return value


def _saved(sender, **kwargs) -> None:
    inventory_changed()


def connect_signals() -> None:
    """Single-row saves of endpoints, hosts and data fields (the admin, ``.save()`` in services) change the
    inventory too. Deletions are not hooked: a ``post_delete`` receiver would make Django load every row a
    cascade deletes; the services that delete call :func:`inventory_changed` themselves."""
    from django.db.models.signals import post_save

    from classification.models import DataField
    from inventory.models import Endpoint, Host

    for model in (Endpoint, Host, DataField):
        post_save.connect(_saved, sender=model, dispatch_uid=f"inventory-counts-{model._meta.label}")
