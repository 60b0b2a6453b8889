"""Coalescing single-trace posts: one drain signal per short window, the analysis in batches.

Metlo's pure-Python agent posts every request it sees as one trace (``/api/v1/log-request/single``).
A Celery message and an analysis per trace cost several times the trace itself, so single traces
are stored as today (one PENDING ``IngestBatch`` row each, committed before the answer) and only
*signalled*: after a row commits, :func:`drain_signal` sends ``ingest_drain_task`` with a
countdown of ``INGEST_DRAIN_WINDOW`` seconds, unless this process already sent one whose window
has not ended. The drain claims the oldest pending single-trace rows (``SKIP LOCKED``, up to
``INGEST_COALESCE_TRACES``), analyses them together and marks them DONE in one transaction, and
repeats until none is left (``pipeline.singles_analyze``).

Why nothing is left behind: a row that skipped its signal committed before the window of the
signal it relied on ended, and that drain does not start before the window ends (its countdown is
the window, counted from after the window was opened), so its claim sees the row. A drain that
fails rolls back and retries (the oldest row it held takes the failed attempt, as the batch a
message names does: after five, that row is FAILED and kept for inspection). A signal that is lost
(broker down, worker killed holding the countdown) leaves rows PENDING: the next signal after the
window drains them, and beat's requeue sweep (``ingest_requeue_task``) sends a drain for single
rows pending longer than ``INGEST_REQUEUE_AFTER``.
"""
from __future__ import annotations

import logging
import threading
import time

from django.conf import settings

from core.logsafe import withheld

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_window_ends = 0.0  # time.monotonic() at which this process's current drain window ends


def drain_signal(batch_id: int | None = None) -> None:
    """Run after a single-trace row committed: make sure a drain runs after it (see the module).

    ``batch_id`` is the committed row's (tests run ``analyze_batch_task`` with it in place of the
    drain). A broker failure is logged and re-opens the window for the next trace; the sweep
    drains what is left meanwhile.
    """
    global _window_ends
    window = settings.INGEST_DRAIN_WINDOW
    now = time.monotonic()
    with _lock:
        if now < _window_ends:
            return  # a drain sent by this process starts after now, once the window ends
        _window_ends = now + window
    try:
        drain_send(countdown=window)
    except Exception as exc:  # noqa: BLE001 - the broker is down: the rows are safe, the sweep drains them
        with _lock:
            _window_ends = 0.0
        # Withheld: broker errors can quote the broker URL (and its password).
        logger.error("could not send the ingest drain (row %s); the sweep will", batch_id, exc_info=withheld(exc))


def drain_send(*, countdown: float = 0) -> None:
    """Send one ``ingest_drain_task`` (raises when the broker cannot take it)."""
    from inventory.tasks import ingest_drain_task

    ingest_drain_task.apply_async(countdown=countdown) if countdown else ingest_drain_task.delay()
