"""Accepting traces: store them durably, enqueue their analysis, push back when overloaded.

The ingestion routes call :func:`traces_accept` after validating the body. The
traces go into one ``IngestBatch`` row and only the row id travels through
Celery (``analyze_batch_task``), enqueued after commit. Nothing is dropped
silently: when the traces waiting for analysis exceed
``settings.INGEST_MAX_BACKLOG`` the caller gets ``503`` with ``Retry-After``
and keeps its data; when the broker is unreachable the row stays PENDING and
the sweep (``ingest_requeue_task``) sends it later.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from functools import partial
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, Sum
from django.db.models.functions import Coalesce
from django.utils import timezone
import orjson

from core.errors import ServiceBusy
from core.logsafe import withheld
from inventory.models import IngestBatch

from .drain import drain_send, drain_signal
from .staging import traces_stage

logger = logging.getLogger(__name__)


def ingest_backlog() -> int:
    """Traces accepted and not analysed yet (PENDING batches), read through the partial index.

    Every ingestion request asks: on PostgreSQL one prepared statement, without the ORM's
    query building (a tenth of a 100-trace request's CPU otherwise).
    """
    if connection.vendor == "postgresql":
        from .sql import pg_cursor

        with pg_cursor() as cursor:
            # The status as a literal: the partial index on PENDING rows serves a prepared plan too.
            cursor.execute(
                "SELECT coalesce(sum(num_traces), 0) FROM inventory_ingestbatch WHERE status = 'PENDING'",
                prepare=True,
            )
            return cursor.fetchone()[0]
    return IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).aggregate(
        n=Coalesce(Sum("num_traces"), 0)
    )["n"]


# Single-trace posts: the backlog read by a request is reused by the next ones of this process for
# this long (seconds), plus what this process accepted since, while it stays this far under the
# limit (a tenth of it, and at least BACKLOG_REUSE_MARGIN traces). The limit is a backpressure
# threshold, not an exact cap: it may be passed by what other web processes accept within that
# second. Batches (one read per up to 1,000 traces) and small limits are always read exactly.
BACKLOG_REUSE_SECONDS = 1.0
BACKLOG_REUSE_MARGIN = 1000

_backlog_lock = threading.Lock()
_backlog = {"value": 0, "read_at": -1e9}


def _backlog_estimate(adding: int, *, reuse: bool) -> int:
    """The backlog a request adding ``adding`` traces compares with the limit: read through
    :func:`ingest_backlog`, or (``reuse``) this process's last reading plus what it accepted since,
    when that reading is fresh and far under the limit (see ``BACKLOG_REUSE_SECONDS``)."""
    limit = settings.INGEST_MAX_BACKLOG
    with _backlog_lock:
        estimate = _backlog["value"]
        fresh = time.monotonic() - _backlog["read_at"] < BACKLOG_REUSE_SECONDS
    if reuse and fresh and limit - estimate - adding >= max(limit / 10, BACKLOG_REUSE_MARGIN):
        return estimate
    value = ingest_backlog()
    with _backlog_lock:
        _backlog["value"], _backlog["read_at"] = value, time.monotonic()
    return value


def _backlog_added(count: int) -> None:
    with _backlog_lock:
        _backlog["value"] += count


def _retry_after(backlog: int) -> int:
    """Seconds until the backlog should be back under its limit at the expected drain rate."""
    excess = backlog - settings.INGEST_MAX_BACKLOG
    rate = max(1, settings.INGEST_DRAIN_RATE)
    return max(1, min(120, math.ceil(max(excess, rate) / rate)))


def batch_enqueue(batch_id: int) -> None:
    """Send the analysis message of a batch; a broker failure is logged, the sweep re-sends."""
    from inventory.tasks import analyze_batch_task

    try:
        analyze_batch_task.delay(batch_id)
    except Exception as exc:  # noqa: BLE001 - the broker is down: the row is safe, the sweep re-sends it
        # Withheld: broker errors can quote the broker URL (and its password).
        logger.error("could not enqueue ingest batch %s; the sweep will retry", batch_id, exc_info=withheld(exc))


def traces_accept(*, traces: list, processed: bool, traces_json: bytes | None = None,
                  single: bool = False, source: str = "") -> IngestBatch | None:
    """Store validated traces as one PENDING batch and enqueue its analysis after commit.

    ``single`` (``/log-request/single``): no message of its own; the row is analysed by the next
    drain, which this sends at most once per ``INGEST_DRAIN_WINDOW`` (``inventory.ingest.drain``).

    Raises ``ServiceBusy`` (503, Retry-After) when the backlog is at or above
    ``INGEST_MAX_BACKLOG``. An empty list stores nothing and returns ``None``.
    ``traces_json``, when given, is ``traces`` as JSON text (the request body the
    routes parsed): on PostgreSQL it is stored as is, sparing a re-serialisation
    and client-side quoting of the largest value the route writes. The returned
    row then has no ``traces`` loaded. Either way the row holds the traces with
    their credential channel redacted (``staging.traces_stage``; the JSON text
    is re-serialised when a trace had one), never as received. ``source`` (who sent
    them, ``inventory.ingest.health.source_of``) is written in the same INSERT, so the
    worker counts its outcome per source.
    """
    if not traces:
        return None
    backlog = _backlog_estimate(len(traces), reuse=single)
    if backlog >= settings.INGEST_MAX_BACKLOG:
        logger.warning("ingestion backlog %s at or above %s: refusing %s traces", backlog,
                       settings.INGEST_MAX_BACKLOG, len(traces))
        raise ServiceBusy("Too many traces waiting for analysis, retry later.", retry_after=_retry_after(backlog))
    kind = IngestBatch.Kind.PROCESSED if processed else IngestBatch.Kind.RAW
    staged = traces_stage(traces)  # the row never holds the credential channel in clear (staging.py)
    if staged is not None:
        traces, traces_json = staged, (orjson.dumps(staged) if traces_json is not None else None)
    # One INSERT: committed by itself (autocommit), or with the caller's transaction, before the
    # on-commit callback sends the message or the drain signal.
    if traces_json is not None and connection.vendor == "postgresql":
        batch = _batch_insert_json(kind=kind, traces_json=traces_json, num_traces=len(traces), source=source)
    else:
        batch = IngestBatch.objects.create(kind=kind, traces=traces, num_traces=len(traces), source=source)
    _backlog_added(len(traces))
    transaction.on_commit(partial(drain_signal if single else batch_enqueue, batch.id))
    return batch


def _batch_insert_json(*, kind: str, traces_json: bytes, num_traces: int, source: str) -> IngestBatch:
    """INSERT a PENDING batch whose traces are JSON text (server-side bound, cast to jsonb by PostgreSQL)."""
    from .sql import pg_cursor

    batch = IngestBatch(kind=kind, num_traces=num_traces, source=source)
    with pg_cursor() as cursor:
        cursor.execute(
            "INSERT INTO inventory_ingestbatch (kind, traces, num_traces, status, attempts, error, received_at, "
            "source) VALUES (%s, %s::jsonb, %s, %s, 0, '', %s, %s) RETURNING id",
            [kind, traces_json.decode("utf-8"), num_traces, batch.status, batch.received_at, source],
        )
        batch.id = cursor.fetchone()[0]
    return batch


def batches_requeue(*, older_than: timedelta, limit: int = 1000) -> int:
    """Re-send the message of PENDING batches not analysed after ``older_than`` (lost messages).

    A batch is re-sent at most once per ``older_than``; duplicates are harmless
    because the analysis claims the row. Returns the number re-sent.
    """
    cutoff = timezone.now() - older_than
    ids = list(
        IngestBatch.objects.filter(status=IngestBatch.Status.PENDING, received_at__lt=cutoff)
        .filter(Q(requeued_at__isnull=True) | Q(requeued_at__lt=cutoff))
        .order_by("received_at")
        .values_list("id", flat=True)[:limit]
    )
    if ids:
        IngestBatch.objects.filter(id__in=ids).update(requeued_at=timezone.now())
        # Single-trace rows have no message of their own: one drain takes them all.
        singles = set(IngestBatch.objects.filter(id__in=ids, kind=IngestBatch.Kind.RAW, num_traces=1)
                      .values_list("id", flat=True))
        for batch_id in ids:
            if batch_id not in singles:
                batch_enqueue(batch_id)
        if singles:
            try:
                drain_send()
            except Exception as exc:  # noqa: BLE001 - broker down: the next sweep tries again
                logger.error("could not send the ingest drain; the sweep will retry", exc_info=withheld(exc))
        logger.info("re-enqueued %s pending ingest batches (%s single traces, one drain)", len(ids), len(singles))
    return len(ids)



def traces_ingest_now(*, traces: list, processed: bool = False, received_at=None) -> IngestBatch:
    """Store validated traces as a batch and analyse it in this process (commands, demo, benchmark).

    The same path as the routes and the worker: an ``IngestBatch`` row (credential
    channel redacted, as the routes store it), then ``batch_analyze`` claims and
    analyses it. No backpressure check: the caller is doing the work itself.
    """
    from .pipeline import batch_analyze

    batch = IngestBatch.objects.create(
        kind=IngestBatch.Kind.PROCESSED if processed else IngestBatch.Kind.RAW, traces=traces_stage(traces, received_at) or traces,
        num_traces=len(traces), received_at=received_at or timezone.now(),
    )
    batch_analyze(batch_id=batch.id)
    return batch
