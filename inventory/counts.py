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

Whole answers of the busiest read routes (GET /endpoints and GET /hosts: the rendered page and
its total; GET /endpoint/{id}) are kept the same way by :func:`cached_answer`, whatever they cost, for at most
``INVENTORY_PAGE_CACHE_SECONDS`` (1 s by default; 0, the test settings' default, turns it off),
within a byte budget. A repeated request is then the key check and a dictionary lookup: no
validation, no count, no page query, no rendering; counts are then kept for that time-to-live too,
however fast. Writers bump the version for every column a list item shows (``lastActive``
included) and alerts' saves do, so a change is visible at once in the process that made it and
within ``VERSION_REUSE`` elsewhere; a change no writer reported (a trace stored within the second
of its endpoint's lastActive, an alert raised with nothing listed changing, a spec's text
replaced) within the time-to-live.
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


def redis_client():
    """A module-wide Redis client on ``REDIS_URL`` (None without Redis, or for 10 s after a failure)."""
    global _client
    url = getattr(settings, "REDIS_URL", "")
    if not url or time.monotonic() - _client_failed_at < 10:
        return None
    if _client is None:
        import redis

        _client = redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)
    return _client


def redis_failed(exc: Exception) -> None:
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
    client = redis_client()
    if client is None:
        return 0 if not getattr(settings, "REDIS_URL", "") else None
    read = _version_read
    now = time.monotonic()
    if read is not None and now - read[0] < VERSION_REUSE:
        return read[1]
    try:
        version = int(client.get(VERSION_KEY) or 0)
    except Exception as exc:  # noqa: BLE001 - a cache must never fail a request
        redis_failed(exc)
        return None
    _version_read = (now, version)
    return version


def _bump() -> None:
    global _version_read, _answers_bytes
    _version_read = None
    client = redis_client()
    if client is not None:
        try:
            client.incr(VERSION_KEY)
        except Exception as exc:  # noqa: BLE001
            redis_failed(exc)
    with _lock:
        _cache.clear()
        _answers.clear()
        _keys.clear()
        _answers_bytes = 0


def inventory_changed() -> None:
    """Say that endpoints, hosts or data fields changed: cached totals are dropped now and after commit."""
    _bump()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(_bump, robust=True)


def cached_count(key: Hashable, compute: Callable[[], object]) -> object:
    """``compute()`` (a count, or any small result derived from counting), cached as described above."""
    return _cached(key, compute, settings.INVENTORY_COUNT_CACHE_SECONDS, settings.INVENTORY_COUNT_CACHE_MIN_MS)


_ANSWER_MAX_BYTES = 4 * 1024 * 1024
_answers_bytes = 0
_answers: OrderedDict[Hashable, tuple[int, float, tuple[bytes, int]]] = OrderedDict()


def cached_answer(key: Hashable, compute: Callable[[], tuple]) -> tuple:
    """``compute()`` = (rendered JSON body, anything small: a list's total) of a read route, kept for
    ``INVENTORY_PAGE_CACHE_SECONDS`` at the current inventory version (module docstring); an exception
    from ``compute`` (bad input, unknown id) is not kept. Bodies over a sixteenth of the byte budget
    (4 MB per process) are not kept."""
    global _answers_bytes
    ttl = settings.INVENTORY_PAGE_CACHE_SECONDS
    version = inventory_version() if ttl > 0 else None
    now = time.monotonic()
    if version is not None:
        entry = _answers.get(key)
        if entry is not None and entry[0] == version and entry[1] > now:
            return entry[2]
    value = compute()
    if version is not None and len(value[0]) <= _ANSWER_MAX_BYTES // 16:
        with _lock:
            old = _answers.pop(key, None)
            _answers_bytes -= len(old[2][0]) if old else 0
            _answers[key] = (version, now + ttl, value)
            _answers_bytes += len(value[0])
            while _answers_bytes > _ANSWER_MAX_BYTES:
                _answers_bytes -= len(_answers.popitem(last=False)[1][2][0])
    return value


_KEYS_MAX_ENTRIES = 16
_keys: OrderedDict[Hashable, tuple[int, float, list]] = OrderedDict()


def cached_keys(key: Hashable, compute: Callable[[], list]) -> list | None:
    """``compute()`` (a result's ordered keys: deep pages are slices of it), kept like whole answers
    (``INVENTORY_PAGE_CACHE_SECONDS`` at the current version), at most 16 results per process;
    ``None`` when that cache is off or the version is unknown (the caller pages in SQL)."""
    ttl = settings.INVENTORY_PAGE_CACHE_SECONDS
    version = inventory_version() if ttl > 0 else None
    if version is None:
        return None
    now = time.monotonic()
    entry = _keys.get(key)
    if entry is not None and entry[0] == version and entry[1] > now:
        return entry[2]
    value = compute()
    with _lock:
        _keys[key] = (version, now + ttl, value)
        while len(_keys) > _KEYS_MAX_ENTRIES:
            _keys.popitem(last=False)
    return value


def _cached(key: Hashable, compute: Callable[[], object], ttl: float, min_ms: float) -> object:
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
    if version is not None and (time.perf_counter() - started) * 1000 < min_ms:
        # A fast count is kept only as long as whole answers are (none in the test settings).
        ttl = settings.INVENTORY_PAGE_CACHE_SECONDS
    if version is not None and ttl > 0:
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
    from detections.models import Alert
    from inventory.models import Endpoint, Host

    # Alerts: GET /endpoint/{id} shows them (its answer is cached like the lists').
    for model in (Endpoint, Host, DataField, Alert):
        post_save.connect(_saved, sender=model, dispatch_uid=f"inventory-counts-{model._meta.label}")
