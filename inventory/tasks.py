"""Celery entry points of the inventory: trace analysis and its housekeeping."""
from __future__ import annotations

import logging
import time
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from core.budget import TIME_LIMITS
from core.logsafe import WithheldError, error_name, withheld

from .ingest.accept import batches_requeue
from .ingest.health import analysis_recorded
from .ingest.maintenance import ingest_prune
from .ingest.drain import drain_send
from .ingest.pipeline import batch_analyze, batch_record_failure, claim_abandoned, claim_failed, singles_analyze
from .learning import paths_learn
from .models import IngestBatch

logger = logging.getLogger(__name__)


# Time limits travel in each task's message (the sender's settings): web and worker must agree.
# A soft limit of 0 means none (the hard one only).
SOFT_LIMIT = settings.INGEST_ANALYSIS_SOFT_TIME_LIMIT or None
HARD_LIMIT = settings.INGEST_ANALYSIS_TIME_LIMIT


@shared_task(bind=True, max_retries=None, soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT)
def analyze_batch_task(self, batch_id: int) -> None:
    """Analyse one accepted batch (``inventory.ingest.pipeline.batch_analyze``).

    Safe to run twice: the batch row is claimed (leased, its attempt counted) before the analysis.
    The message is acknowledged on receipt, not after the task (``acks_late``): a batch whose
    worker dies stays PENDING in the database, and the requeue sweep sends it again once its lease
    ends, where a late-acknowledged message would only come back after Redis's visibility
    timeout; and a late acknowledgement racing a broker restart kills the worker (kombu 5.7's
    Redis transport raises ``AttributeError`` from the closed channel).
    A failure rolls back; the failed attempt is recorded and the task retried with
    backoff until ``MAX_ATTEMPTS``, after which the batch is marked FAILED (kept
    for inspection, logged, never silently dropped); rows analysed together with it are analysed
    alone next. The soft time limit gives the analysis up (rolled back, its rows analysed alone or
    quarantined: ``pipeline.claim_abandoned``); the hard one kills the worker process (the lease ends).
    """
    claimed: list = []
    try:
        outcome = batch_analyze(batch_id=batch_id, claimed=claimed)
    except TIME_LIMITS:
        _abandoned(self, claimed, whole_task=True)
        return
    except Exception as exc:
        if _failure_recorded(batch_id, exc, claimed):
            return
        raise _retry(self, exc) from None
    if outcome is not None:
        analysis_recorded(analysed=outcome.analysed, skipped=outcome.skipped, truncated=outcome.truncated,
                          by_source=outcome.by_source)
        _learn_groups(outcome)


# A drain stops after this many seconds of analyses and sends itself again, well within its
# soft time limit, so a long backlog never makes it time out (and count a failure) half-way.
DRAIN_BUDGET_SECONDS = 60


def _drain_budget() -> float:
    return min(DRAIN_BUDGET_SECONDS, (SOFT_LIMIT or HARD_LIMIT) / 3)


@shared_task(bind=True, max_retries=None, soft_time_limit=SOFT_LIMIT, time_limit=HARD_LIMIT)
def ingest_drain_task(self) -> int:
    """Analyse every pending single-trace row in batches, light rows first (``inventory.ingest.drain``).

    Sent by the web after a single-trace post (one per ``INGEST_DRAIN_WINDOW`` per process) and by
    the requeue sweep. Safe to run twice or side by side: each round claims its rows (``SKIP
    LOCKED``, leased) and marks them DONE in the analysis transaction. A failed round rolls back;
    its failure is recorded (one row: FAILED after five attempts, as for a batch; several: each
    analysed alone next) and the drain retried with backoff. The soft time limit gives the round up
    (``pipeline.claim_abandoned``). Returns the number of traces analysed.
    """
    analysed, started = 0, time.monotonic()
    while time.monotonic() - started < _drain_budget():
        claimed: list = []
        try:
            outcome = singles_analyze(claimed=claimed)
        except TIME_LIMITS:
            _abandoned(self, claimed, whole_task=False)
            return analysed
        except Exception as exc:
            if claimed:
                _failure_recorded(claimed[0].ids[0], exc, claimed)
            raise _retry(self, exc) from None
        if outcome is None:
            return analysed
        analysed += outcome.traces
        analysis_recorded(analysed=outcome.analysed, skipped=outcome.skipped, truncated=outcome.truncated,
                          by_source=outcome.by_source)
        _learn_groups_debounced(outcome)
    try:
        drain_send()  # more than one budget's worth waiting: carry on in a fresh task
    except Exception as exc:  # noqa: BLE001 - broker down: the rows wait for the sweep or the next signal
        logger.error("could not send the next ingest drain; the sweep will", exc_info=withheld(exc))
    return analysed


def _abandoned(task, claimed: list, *, whole_task: bool) -> None:
    """The soft time limit interrupted the task. A claim still analysing is given up: counted as lost
    when its own analysis took most of the task's time (``whole_task``: it is the task's only analysis)."""
    if not claimed:
        return
    claim = claimed[0]
    # The limits the message carried (the sender's), else this process's.
    soft = ((getattr(task.request, "timelimit", None) or (None, None))[1]) or SOFT_LIMIT or HARD_LIMIT
    culprit = whole_task or time.monotonic() - claim.started >= soft / 2
    logger.error("ingest analysis of %d row(s) given up at the soft time limit (%s)", len(claim.batches),
                 "counted as lost" if culprit else "released")
    try:
        claim_abandoned(claim, culprit=culprit)
    except Exception as exc:  # noqa: BLE001 - the lease ends by itself: the rows are dealt with then
        logger.error("could not release the claim given up", exc_info=withheld(exc))


def _failure_recorded(batch_id: int, exc: Exception, claimed: list | None = None) -> bool:
    """Log a failed analysis and count it (against the claim's rows when there was a claim); True once
    the batch is FAILED."""
    if isinstance(exc, OperationalError):
        logger.warning("ingest batch %s: database error (%s), will retry", batch_id, type(exc).__name__)
    else:
        logger.error("ingest batch %s: analysis failed", batch_id, exc_info=withheld(exc))
    if claimed:
        failed = claim_failed(claimed[0], exc)
    else:
        failed = batch_record_failure(batch_id=batch_id, error=exc)
    if failed:
        logger.error("ingest batch %s marked FAILED after repeated errors", batch_id)
        # Its traces count as failed for the source that sent them (one more query, once per FAILED batch).
        row = IngestBatch.objects.filter(id=batch_id).values("source", "num_traces").first() or {}
        analysis_recorded(failed_batches=1, by_source={row.get("source", ""): {"failed": row.get("num_traces", 0)}})
    return failed


def _retry(task, exc: Exception):
    """The task's retry with backoff (1 s, 2 s, 4 s … 60 s)."""
    # Celery logs the retry reason: its name only, not a message that may quote trace data.
    return task.retry(countdown=min(60, 2 ** min(task.request.retries, 6)), exc=WithheldError(error_name(exc)))


def _learn_groups(outcome) -> None:
    for host_id, method, num_segments in sorted(outcome.new_endpoint_groups):
        _learn_or_defer(host_id, method, num_segments)


# Drains follow each other every INGEST_DRAIN_WINDOW while agents post, and the first traffic
# of an API creates endpoints in the same groups round after round: a group this process learned
# less than LEARN_DEBOUNCE seconds ago is learned again once, by a paths_learn_task counting
# down to the end of that window, which sees every endpoint created meanwhile.
LEARN_DEBOUNCE = 2.0
_learn_windows: dict[tuple, list] = {}  # group -> [window end (monotonic), deferred task sent]


def _learn_groups_debounced(outcome) -> None:
    """Learn each group of the drain round now, or once at the end of its window (see above)."""
    now = time.monotonic()
    if len(_learn_windows) > 10_000:
        for group in [g for g, (ends, _) in _learn_windows.items() if ends <= now]:
            del _learn_windows[group]
    for group in sorted(outcome.new_endpoint_groups):
        window = _learn_windows.get(group)
        if window is None or window[0] <= now:
            _learn_windows[group] = [now + LEARN_DEBOUNCE, False]
            _learn_or_defer(*group)
        elif not window[1]:
            window[1] = True
            # After this round's commit, and after every round of the window (they commit before it ends).
            try:
                paths_learn_task.apply_async(group, countdown=window[0] - now)
            except Exception as exc:  # noqa: BLE001 - broker down: learn now rather than not at all
                logger.warning("learning host %s %s not deferred (%s); learning now", group[0], group[1],
                               type(exc).__name__)
                window[1] = False
                _learn_or_defer(*group)


def _learn_or_defer(host_id: int, method: str, num_segments: int) -> None:
    """Learned parameterisation of a group that got new endpoints, right after its batch committed;
    when rows stay locked (another analysis holds them), the group is learned a little later."""
    try:
        paths_learn(host_id=host_id, method=method, num_segments=num_segments)
    except OperationalError as exc:
        logger.info("learning host %s %s deferred (%s)", host_id, method, type(exc).__name__)
        paths_learn_task.apply_async((host_id, method, num_segments), countdown=2)


@shared_task(bind=True, max_retries=10, soft_time_limit=120)
def paths_learn_task(self, host_id: int, method: str, num_segments: int) -> None:
    """Learned parameterisation of one (host, method, segment count), retried while rows stay locked."""
    try:
        paths_learn(host_id=host_id, method=method, num_segments=num_segments)
    except OperationalError as exc:
        raise self.retry(countdown=min(60, 2 ** min(self.request.retries + 1, 6)),
                         exc=WithheldError(error_name(exc))) from None


@shared_task
def ingest_requeue_task() -> int:
    """Beat: re-send messages of batches still pending after ``INGEST_REQUEUE_AFTER`` seconds."""
    return batches_requeue(older_than=timedelta(seconds=settings.INGEST_REQUEUE_AFTER))


@shared_task
def ingest_prune_task() -> dict:
    """Beat: trace retention (7 days, observed raw paths too), usage minutes, finished batches."""
    return ingest_prune()
