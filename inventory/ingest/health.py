"""Ingestion health counters: what each agent source sent, what was refused, what the workers did.

Written on the hot paths with one pipelined Redis round trip each (no database write):

* the accept routes call :func:`request_recorded` once per request (accepted traces, or the
  request refused: ``503`` backlog, other ``4xx``), per source: the API key's name and the
  User-Agent (the source's last ``meta.metloSource`` is kept beside it);
* the worker calls :func:`analysis_recorded` once per analysis (traces analysed, skipped, batches
  failed for good), globally and per source: each batch row keeps the source that sent it
  (``IngestBatch.source``, written by the accept routes in the row's INSERT);
* beat's watcher thread calls :func:`beat_seen` (liveness).

Counts go into 10-minute buckets (a Redis hash per bucket, kept 25 hours): "last hour" is the six
newest buckets, "last day" the 144 newest, so both are approximate to 10 minutes. Without Redis
(``make run``'s zero-configuration mode) nothing is counted and the console says so. Read by the
console's health page (``console/health.py``).
"""
from __future__ import annotations

import json
import time

from inventory.counts import redis_client, redis_failed

BUCKET_SECONDS = 600
KEEP_SECONDS = 25 * 3600
PREFIX = "apiscope:ingest"
SOURCES_KEY = f"{PREFIX}:sources"
ACCEPTED_KEY = f"{PREFIX}:accepted"
REFUSED_KEY = f"{PREFIX}:refused"  # the status of each source's last refused request
BEAT_KEY = f"{PREFIX}:beat-seen"
ANALYSIS = "analysis"  # the source name of the worker's counters


def bucket_key(bucket: int) -> str:
    return f"{PREFIX}:bucket:{bucket}"


def current_bucket(now: float | None = None) -> int:
    return int((now if now is not None else time.time()) // BUCKET_SECONDS)


SOURCE_MAX_LENGTH = 200  # IngestBatch.source


def source_of(request, *, key=None) -> str:
    """The source a request is counted under: the API key's name and the User-Agent, at most
    ``SOURCE_MAX_LENGTH`` characters (stored on the batch row too); never the key itself.
    ``key``: the request's API key, else the one DRF authenticated (never authenticates here)."""
    key = key or request.__dict__.get("_auth")
    name = (getattr(key, "name", None) or "(no valid key)")[:100]
    agent = request.META.get("HTTP_USER_AGENT", "").replace("\x00", "") or "(no User-Agent)"
    return f"{name}\x1f{agent}"[:SOURCE_MAX_LENGTH]


def _metlo_source(traces) -> str:
    trace = traces[0] if traces else None
    meta = trace.get("meta") if isinstance(trace, dict) else None
    if isinstance(meta, dict) and isinstance(meta.get("metloSource"), str):
        return meta["metloSource"][:100]
    return ""


def _write(counters: dict[str, int], hashes: dict[str, dict[str, str]] | None = None) -> None:
    client = redis_client()
    if client is None:
        return
    key = bucket_key(current_bucket())
    try:
        pipe = client.pipeline(transaction=False)
        for field, amount in counters.items():
            if amount:
                pipe.hincrby(key, field, amount)
        pipe.expire(key, KEEP_SECONDS)
        for name, values in (hashes or {}).items():
            pipe.hset(name, mapping=values)
        pipe.execute()
    except Exception as exc:  # noqa: BLE001 - counting must never fail an ingestion request
        redis_failed(exc)


def request_recorded(request, status: int, traces=None) -> None:
    """One ingestion request answered with ``status``; ``traces`` the accepted ones (when 200)."""
    source = source_of(request)
    if status < 300:
        counter, amount = "accepted", len(traces or ())
    else:
        counter, amount = ("rejected_503" if status == 503 else "rejected_4xx"), 1
    now = time.time()
    hashes = {SOURCES_KEY: {source: json.dumps({"at": now, "status": status})}}
    if status >= 300:
        hashes[REFUSED_KEY] = {source: str(status)}
    else:
        hashes[ACCEPTED_KEY] = {source: json.dumps({"at": now, "metloSource": _metlo_source(traces)})}
    _write({f"{source}\x1e{counter}": amount}, hashes)


ANALYSIS_KINDS = ("analysed", "skipped", "failed")


def analysis_recorded(*, analysed: int = 0, skipped: int = 0, failed_batches: int = 0,
                      by_source: dict[str, dict[str, int]] | None = None) -> None:
    """One analysis by a worker: traces analysed and skipped, or a batch marked FAILED; ``by_source``
    splits them per source (``{source: {"analysed": n, "skipped": n, "failed": n}}``, the batch
    rows' ``source``; rows without one are counted globally only)."""
    counts = {f"{ANALYSIS}\x1eanalysed": analysed, f"{ANALYSIS}\x1eskipped": skipped,
              f"{ANALYSIS}\x1efailed_batches": failed_batches}
    for source, figures in (by_source or {}).items():
        if source:
            for kind in ANALYSIS_KINDS:
                counts[f"{source}\x1e{kind}"] = figures.get(kind, 0)
    _write(counts)


MARKER_KINDS = ("test_traffic", "forged_markers")


def markers_recorded(*, test: int = 0, forged: int = 0) -> None:
    """Traces of security-test runs kept out of the inventory (a verified ``X-Apiscope-Test``), and
    traces whose marker did not verify (forged or stale: analysed as ordinary traffic). DECISIONS §8."""
    _write({f"{ANALYSIS}\x1etest_traffic": test, f"{ANALYSIS}\x1eforged_markers": forged})


def beat_seen() -> None:
    client = redis_client()
    if client is not None:
        try:
            client.set(BEAT_KEY, time.time(), ex=KEEP_SECONDS)
        except Exception as exc:  # noqa: BLE001
            redis_failed(exc)
