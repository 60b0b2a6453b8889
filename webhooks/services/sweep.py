"""The safety net of delivery and the pruning of history (DECISIONS §7, docs/guarantees.md).

* :func:`deliveries_sweep` (beat, every few seconds) makes every committed delivery eventually
  attempted: it re-publishes deliveries whose message was lost and takes back the claims of workers
  that died mid-attempt. Re-publishing a lost message is not a retry: a retry is decided by the
  send task from the attempt's outcome (``webhooks.tasks``).
* :func:`runs_prune` keeps each webhook's newest ``policy.RUNS_KEPT`` attempt records (also called
  by every recording of attempts, in its transaction); :func:`deliveries_prune` drops finished
  deliveries after ``policy.FINISHED_KEPT``.
"""
from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from .. import policy
from ..models import Webhook, WebhookDelivery, WebhookRun
from .fan_out import delivery_enqueue
from .pacing import in_flight

logger = logging.getLogger(__name__)


def deliveries_sweep(*, now=None) -> dict:
    """Make sure every unfinished delivery gets attempted (beat runs this every few seconds).

    * A SENDING claim older than ``CLAIM_LEASE`` is taken back (the worker died mid-attempt): the
      delivery becomes PENDING again without counting that attempt, and is re-sent with the same
      delivery id; after ``MAX_RECLAIMS`` such losses it is FAILED instead.
    * A PENDING delivery that has been due and untouched for ``SWEEP_PENDING_AFTER`` is enqueued
      again (its message was lost), unless its webhook has deliveries in flight (it is waiting for
      a slot; the webhook's senders take it next). A copy of a message that still exists is
      harmless: the claim lets only one of them send.
    Returns the counts of reclaimed, given-up and re-enqueued deliveries.
    """
    now = now or timezone.now()
    Status = WebhookDelivery.Status
    failed = 0
    reclaimed: list = []
    stale_claims = list(
        WebhookDelivery.objects.filter(status=Status.SENDING, claimed_at__lt=now - policy.CLAIM_LEASE)
        .values_list("uuid", "claimed_at", "reclaims")[: policy.SWEEP_BATCH]
    )
    for delivery_id, claimed_at, reclaims in stale_claims:
        base = WebhookDelivery.objects.filter(pk=delivery_id, status=Status.SENDING, claimed_at=claimed_at)
        if reclaims + 1 >= policy.MAX_RECLAIMS:
            with transaction.atomic():
                if base.update(status=Status.FAILED, finished_at=now, reclaims=F("reclaims") + 1, updated_at=now):
                    failed += 1
                    _lost_run_record(delivery_id=delivery_id)
            continue
        if base.update(status=Status.PENDING, attempts=F("attempts") - 1, reclaims=F("reclaims") + 1,
                       next_attempt_at=now, updated_at=now):
            reclaimed.append(delivery_id)
    cutoff = now - policy.SWEEP_PENDING_AFTER
    # Deliveries waiting for the slots of a webhook with deliveries in flight are not lost: its
    # senders take them next (services.pacing). A long burst is not re-sent message by message.
    being_sent = list(in_flight(now=now))
    lost = reclaimed + list(
        WebhookDelivery.objects.filter(status=Status.PENDING, next_attempt_at__lte=cutoff, enqueued_at__lte=cutoff)
        .exclude(webhook_id__in=being_sent)
        .order_by("next_attempt_at")
        .values_list("uuid", flat=True)[: policy.SWEEP_BATCH]
    )
    requeued = 0
    for delivery_id in lost:
        if WebhookDelivery.objects.filter(pk=delivery_id, status=Status.PENDING).update(enqueued_at=now):
            try:
                delivery_enqueue(delivery_id=delivery_id)
                requeued += 1
            except Exception:  # broker still down: the next sweep tries again
                logger.warning("sweep could not enqueue delivery %s", delivery_id)
                WebhookDelivery.objects.filter(pk=delivery_id).update(enqueued_at=cutoff)
    if reclaimed or failed or requeued:
        logger.info("delivery sweep: %d reclaimed, %d given up, %d re-enqueued", len(reclaimed), failed, requeued)
    return {"reclaimed": len(reclaimed), "failed": failed, "requeued": requeued}


def _lost_run_record(*, delivery_id) -> None:
    """Record the give-up of a delivery whose workers were lost (in the caller's transaction)."""
    delivery = WebhookDelivery.objects.filter(pk=delivery_id).first()
    if delivery is None:
        return
    Webhook.objects.select_for_update(no_key=True).filter(pk=delivery.webhook_id).first()
    WebhookRun.objects.create(
        webhook_id=delivery.webhook_id, delivery_id=delivery.uuid, attempt=delivery.attempts, ok=False,
        status_code=None, payload=delivery.payload,
        msg=f"Given up: the worker was lost during {policy.MAX_RECLAIMS} attempts.",
    )
    runs_prune(webhook_id=delivery.webhook_id)


def deliveries_prune(*, now=None) -> int:
    """Delete finished deliveries older than ``FINISHED_KEPT`` (their attempts live in the runs)."""
    now = now or timezone.now()
    return WebhookDelivery.objects.filter(
        status__in=[WebhookDelivery.Status.DONE, WebhookDelivery.Status.FAILED],
        finished_at__lt=now - policy.FINISHED_KEPT,
    ).delete()[0]


def runs_prune(*, webhook_id=None, webhook_ids: list | None = None) -> int:
    """Delete attempt records beyond the newest ``RUNS_KEPT`` of one webhook, of ``webhook_ids``, or
    (neither given) of every webhook. Two queries whatever the number of webhooks."""
    runs = WebhookRun.objects.all()
    if webhook_id is not None:
        runs = runs.filter(webhook_id=webhook_id)
    elif webhook_ids is not None:
        runs = runs.filter(webhook_id__in=webhook_ids)
    stale = list(
        runs.annotate(rank=Window(RowNumber(), partition_by=[F("webhook_id")],
                                  order_by=[F("created_at").desc(), F("id").desc()]))
        .filter(rank__gt=policy.RUNS_KEPT).values_list("id", flat=True)
    )
    return WebhookRun.objects.filter(id__in=stale).delete()[0] if stale else 0
