"""Celery entry points of webhook delivery: load by id, call a service, decide about running again.

The services never enqueue their own retries: ``services.attempt.deliveries_attempt`` returns an
outcome per delivery and the tasks below turn :attr:`Attempt.RETRY` (after ``retry_after``) and,
for the single-delivery task, :attr:`Attempt.NOT_DUE` (in ``due_in``) into a later run.

Pacing (DECISIONS §7, ``services.pacing``): a task that has just made attempts to a webhook goes on
with the deliveries waiting for that webhook's slots (:func:`_waiting_send`), so a burst drains at
``policy.max_in_flight()`` deliveries at a time per webhook without any message polling for a slot.
"""
from __future__ import annotations

import logging
import time
import uuid

from celery import shared_task
from django.utils import timezone

from . import policy
from .services import pacing, sweep
from .services.attempt import Attempt, deliveries_attempt, waiting_deliveries_attempt
from .services.fan_out import delivery_enqueue, webhook_queue

logger = logging.getLogger(__name__)


@shared_task(bind=True, max_retries=None, ignore_result=True, soft_time_limit=30, time_limit=60)
def delivery_send_task(self, delivery_id: str) -> None:
    """One attempt of a delivery (a retry or a sweep re-send). Safe to run twice: the service claims
    the row with a conditional update and claims nothing the second time. The message is
    acknowledged on receipt: a delivery whose worker dies is taken back and re-sent by the sweep
    (its claim lease runs out), sooner than Redis would redeliver a late-acknowledged message, and
    without the worker crash a late acknowledgement racing a broker restart causes (see
    ``inventory.tasks``). After an attempt it sends the deliveries waiting for its webhook's slots."""
    [outcome] = deliveries_attempt(delivery_ids=[delivery_id])
    if outcome.result is Attempt.NOT_DUE:  # an early copy of the message: come back when it is due
        raise self.retry(countdown=outcome.due_in, queue=webhook_queue())
    if outcome.result is Attempt.RETRY:  # a 5xx with retries left (counted in the database)
        self.retry(countdown=outcome.retry_after, queue=webhook_queue(), throw=False)
    _waiting_send(_webhooks_attempted([outcome]))


@shared_task(ignore_result=True, soft_time_limit=30, time_limit=60)
def deliveries_send_task(delivery_ids: list[str]) -> None:
    """First attempts of the deliveries of one fan-out, POSTed concurrently. Safe to run twice for
    the same reason as ``delivery_send_task``. A delivery to retry continues as a
    ``delivery_send_task`` of its own, ``retry_after`` later; if that cannot be published (broker
    unreachable) the row is PENDING and due, and the sweep sends it. A delivery not due yet already
    has its own continuation (the retry message of an earlier run, or the sweep); one waiting for a
    slot is sent by the holder of that slot. After its attempts it sends the deliveries waiting for
    the slots of those webhooks."""
    outcomes = deliveries_attempt(delivery_ids=delivery_ids)
    _retries_enqueue(outcomes)
    _waiting_send(_webhooks_attempted(outcomes))


@shared_task(ignore_result=True, soft_time_limit=30, time_limit=60)
def waiting_deliveries_send_task(webhook_ids: list[str]) -> None:
    """Carry on sending the deliveries waiting for these webhooks' slots (published by a task whose
    ``policy.SEND_WAITING_BUDGET`` ran out). Safe to run twice: it claims only free slots."""
    _waiting_send(sorted({uuid.UUID(str(w)) for w in webhook_ids}))


@shared_task(ignore_result=True, soft_time_limit=120)
def deliveries_sweep_task() -> dict:
    """Beat: re-send deliveries left pending (lost message) or claimed by a worker that died."""
    return sweep.deliveries_sweep()


@shared_task(ignore_result=True, soft_time_limit=300)
def webhooks_prune_task() -> dict:
    """Beat: keep the newest ``RUNS_KEPT`` attempt records per webhook; drop old finished deliveries."""
    return {"runs": sweep.runs_prune(), "deliveries": sweep.deliveries_prune()}


def _retries_enqueue(outcomes) -> None:
    """Publish a ``delivery_send_task`` ``retry_after`` later for each :attr:`Attempt.RETRY`."""
    for outcome in outcomes:
        if outcome.result is not Attempt.RETRY:
            continue
        try:
            delivery_enqueue(delivery_id=outcome.delivery_id, countdown=outcome.retry_after)
        except Exception:  # noqa: BLE001 - broker unreachable: the row is PENDING and due, the sweep sends it
            logger.warning("could not enqueue the retry of delivery %s; the sweep will send it",
                           outcome.delivery_id)


def _webhooks_attempted(outcomes) -> list:
    """The webhooks this task has just freed slots of (it made attempts to them)."""
    return sorted({o.webhook_id for o in outcomes if o.attempted and o.webhook_id is not None})


def _waiting_send(webhook_ids: list) -> None:
    """Send the deliveries waiting for the slots of ``webhook_ids`` (pacing, DECISIONS §7), oldest
    first, in rounds of the free slots, until none is waiting or other senders hold every slot (they
    carry on: no polling, no busy loop). A retry is published as soon as it is recorded. After
    ``policy.SEND_WAITING_BUDGET`` seconds a new message carries on behind whatever else waits in
    the queue; if it cannot be published, the sweep sends what is left."""
    if not webhook_ids:
        return
    started = time.monotonic()
    waiting_deliveries_attempt(webhook_ids=webhook_ids, seconds=policy.SEND_WAITING_BUDGET,
                               on_retry=lambda outcome: _retries_enqueue([outcome]))
    if time.monotonic() - started < policy.SEND_WAITING_BUDGET:
        return  # stopped because nothing was claimable: nothing to hand over
    if not pacing.deliveries_waiting(webhook_ids=webhook_ids, now=timezone.now()):
        return
    try:
        waiting_deliveries_send_task.apply_async(([str(w) for w in webhook_ids],), queue=webhook_queue())
    except Exception:  # noqa: BLE001 - broker unreachable: the deliveries are PENDING, the sweep sends them
        logger.warning("could not enqueue the waiting deliveries of %d webhook(s); the sweep will send them",
                       len(webhook_ids))
