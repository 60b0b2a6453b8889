"""Celery entry points of the inventory: trace analysis and its housekeeping."""
from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from core.logsafe import WithheldError, error_name, withheld

from .ingest.accept import batches_requeue
from .ingest.health import analysis_recorded
from .ingest.maintenance import ingest_prune
from .ingest.pipeline import batch_analyze, batch_record_failure
from .learning import paths_learn

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=None, soft_time_limit=300)
def analyze_batch_task(self, batch_id: int) -> None:
    """Analyse one accepted batch (``inventory.ingest.pipeline.batch_analyze``).

    Safe to run twice: the batch row is claimed inside the analysis transaction.
    The message is acknowledged on receipt, not after the task (``acks_late``): a batch whose
    worker dies stays PENDING in the database, and the requeue sweep sends it again within a
    minute, where a late-acknowledged message would only come back after Redis's visibility
    timeout; and a late acknowledgement racing a broker restart kills the worker (kombu 5.7's
    Redis transport raises ``AttributeError`` from the closed channel).
    A failure rolls back; the attempt is counted and the task retried with
    backoff until ``MAX_ATTEMPTS``, after which the batch is marked FAILED (kept
    for inspection, logged, never silently dropped).
    """
    try:
        outcome = batch_analyze(batch_id=batch_id)
    except Exception as exc:
        if isinstance(exc, OperationalError):
            logger.warning("ingest batch %s: database error (%s), will retry", batch_id, type(exc).__name__)
        else:
            logger.error("ingest batch %s: analysis failed", batch_id, exc_info=withheld(exc))
        failed = batch_record_failure(batch_id=batch_id, error=exc)
        if failed:
            logger.error("ingest batch %s marked FAILED after repeated errors", batch_id)
            analysis_recorded(failed_batches=1)
            return
        # Celery logs the retry reason: its name only, not a message that may quote trace data.
        raise self.retry(countdown=min(60, 2 ** min(self.request.retries, 6)),
                         exc=WithheldError(error_name(exc))) from None
    if outcome is not None:
        analysis_recorded(analysed=outcome.analysed, skipped=outcome.skipped)
        for host_id, method, num_segments in sorted(outcome.new_endpoint_groups):
            _learn_or_defer(host_id, method, num_segments)


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
