"""Celery entry points of webhook delivery: load by id, call a service, decide about running again.

The services never enqueue their own retries: ``services.attempt.deliveries_attempt`` returns an
outcome per delivery and the tasks below turn :attr:`Attempt.RETRY` (after ``retry_after``) and,
for the single-delivery task, :attr:`Attempt.NOT_DUE` (in ``due_in``) into a later run.
"""
from __future__ import annotations

import logging

from celery import shared_task

from .services import sweep
from .services.attempt import Attempt, deliveries_attempt
from .services.fan_out import delivery_enqueue, webhook_queue

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=None, ignore_result=True, soft_time_limit=30, time_limit=60)
def delivery_send_task(self, delivery_id: str) -> None:
    """One attempt of a delivery (a retry or a sweep re-send). Safe to run twice: the service claims
    the row with a conditional update and claims nothing the second time. The message is
    acknowledged on receipt: a delivery whose worker dies is taken back and re-sent by the sweep
    (its claim lease runs out), sooner than Redis would redeliver a late-acknowledged message, and
    without the worker crash a late acknowledgement racing a broker restart causes (see
    ``inventory.tasks``)."""
    [outcome] = deliveries_attempt(delivery_ids=[delivery_id])
    if outcome.result is Attempt.RETRY:  # a 5xx with retries left (counted in the database)
        raise self.retry(countdown=outcome.retry_after, queue=webhook_queue())
    if outcome.result is Attempt.NOT_DUE:  # an early copy of the message: come back when it is due
        raise self.retry(countdown=outcome.due_in, queue=webhook_queue())


@shared_task(ignore_result=True, soft_time_limit=30, time_limit=60)
def deliveries_send_task(delivery_ids: list[str]) -> None:
    """First attempts of the deliveries of one fan-out, POSTed concurrently. Safe to run twice for
    the same reason as ``delivery_send_task``. A delivery to retry continues as a
    ``delivery_send_task`` of its own, ``retry_after`` later; if that cannot be published (broker
    unreachable) the row is PENDING and due, and the sweep sends it. A delivery not due yet already
    has its own continuation (the retry message of an earlier run, or the sweep)."""
    for outcome in deliveries_attempt(delivery_ids=delivery_ids):
        if outcome.result is not Attempt.RETRY:
            continue
        try:
            delivery_enqueue(delivery_id=outcome.delivery_id, countdown=outcome.retry_after)
        except Exception:  # noqa: BLE001 - broker unreachable: the row is PENDING and due, the sweep sends it
            logger.warning("could not enqueue the retry of delivery %s; the sweep will send it",
                           outcome.delivery_id)


@shared_task(ignore_result=True, soft_time_limit=120)
def deliveries_sweep_task() -> dict:
    """Beat: re-send deliveries left pending (lost message) or claimed by a worker that died."""
    return sweep.deliveries_sweep()


@shared_task(ignore_result=True, soft_time_limit=300)
def webhooks_prune_task() -> dict:
    """Beat: keep the newest ``RUNS_KEPT`` attempt records per webhook; drop old finished deliveries."""
    return {"runs": sweep.runs_prune(), "deliveries": sweep.deliveries_prune()}
