"""Webhooks: management, fan-out of alerts to deliveries, sending, the sweep and pruning.

Delivery contract (DECISIONS §7):

* :func:`alerts_fan_out` writes one PENDING delivery per matching webhook in the caller's
  transaction (the one that writes the alerts) and enqueues the send task only after commit;
* :func:`delivery_attempt` claims a delivery with a conditional update, sends the payload snapshot
  once, records the attempt (pruning the webhook's history to the newest 10) and says whether and
  when to retry — only a 5xx with retries left is retried, ``RETRY_DELAY`` later;
* :func:`deliveries_sweep` re-enqueues deliveries whose message was lost and takes back claims of
  workers that died mid-attempt, so every committed delivery is eventually attempted.
"""
from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Prefetch, Q
from django.utils import timezone

from classification.models import DataField
from core.enums import SECTION_SHORT, RiskScore
from core.errors import WebhookNotFound
from core.fields import timestamp
from inventory.models import Endpoint

from . import http, policy
from .models import Webhook, WebhookDelivery, WebhookRun

logger = logging.getLogger(__name__)

USER_AGENT = "apiscope-webhooks/1.0"


def webhook_queue() -> str:
    """The Celery queue of delivery tasks (a dedicated worker keeps them clear of analysis backlogs)."""
    return settings.WEBHOOK_QUEUE


# --- management ----------------------------------------------------------------------------

def _runs_prefetch() -> Prefetch:
    return Prefetch("runs", queryset=WebhookRun.objects.order_by("-created_at", "-id"))


def webhooks_list() -> list[Webhook]:
    """Every webhook, newest first, with its runs (two queries)."""
    return list(Webhook.objects.order_by("-created_at", "uuid").prefetch_related(_runs_prefetch()))


def _webhook_key(webhook_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(webhook_id))
    except ValueError:
        raise WebhookNotFound() from None


def webhook_get(*, webhook_id) -> Webhook:
    """One webhook with its runs; raises :class:`WebhookNotFound` for unknown or malformed ids."""
    hook = Webhook.objects.prefetch_related(_runs_prefetch()).filter(uuid=_webhook_key(webhook_id)).first()
    if hook is None:
        raise WebhookNotFound()
    return hook


def webhook_create(*, url: str, alert_types: list[str], hosts: list[str], max_retries: int) -> Webhook:
    """Create a webhook from validated input (the serializer has run the SSRF check on ``url``)."""
    hook = Webhook(url=url, alert_types=list(dict.fromkeys(alert_types)), hosts=list(dict.fromkeys(hosts)),
                   max_retries=max_retries)
    hook.full_clean()
    hook.save()
    logger.info("webhook %s created", hook.uuid)
    return webhook_get(webhook_id=hook.uuid)


def webhook_update(*, webhook_id, **changes) -> Webhook:
    """Change any of ``url``, ``alert_types``, ``hosts``, ``max_retries`` (validated input).
    Deliveries already pending go to the new URL with the new retry limit."""
    with transaction.atomic():
        hook = Webhook.objects.select_for_update().filter(uuid=_webhook_key(webhook_id)).first()
        if hook is None:
            raise WebhookNotFound()
        for name in ("url", "max_retries"):
            if name in changes:
                setattr(hook, name, changes[name])
        for name in ("alert_types", "hosts"):
            if name in changes:
                setattr(hook, name, list(dict.fromkeys(changes[name])))
        hook.full_clean()
        hook.save()
    return webhook_get(webhook_id=hook.uuid)


def webhook_delete(*, webhook_id) -> None:
    """Delete a webhook with its pending deliveries and history; raises :class:`WebhookNotFound`."""
    deleted, _ = Webhook.objects.filter(uuid=_webhook_key(webhook_id)).delete()
    if not deleted:
        raise WebhookNotFound()
    logger.info("webhook %s deleted", webhook_id)


# --- fan-out -------------------------------------------------------------------------------

def alerts_payloads(*, alerts: list, endpoints: dict | None = None) -> dict:
    """SPEC's "Alert (webhook payload)" for each alert, keyed by alert uuid.

    ``alert.riskScore`` is lower case; ``apiEndpoint.dataFields`` lists every data field of the
    endpoint (``dataSection`` in the short vocabulary: reqQuery, reqHeaders, reqBody, resHeaders,
    resBody); ``meta.totalEndpoints`` counts the host's endpoints and ``meta.totalSensitiveEndpoints``
    those whose riskScore is not NONE. Three queries whatever the number of alerts (two when the
    caller passes the alerts' ``endpoints`` by uuid, hosts loaded).
    """
    endpoint_ids = {a.endpoint_id for a in alerts}
    if endpoints is None:
        endpoints = _endpoints_with_hosts(endpoint_ids)
    fields: dict = {eid: [] for eid in endpoint_ids}
    for field in (
        DataField.objects.filter(endpoint_id__in=endpoint_ids)
        .order_by("data_section", "data_path", "status_code")
        .values("endpoint_id", "data_path", "data_classes", "data_section")
    ):
        fields[field["endpoint_id"]].append({
            "dataPath": field["data_path"],
            "dataClasses": list(field["data_classes"] or []),
            "dataSection": SECTION_SHORT.get(field["data_section"], field["data_section"]),
        })
    host_ids = {e.host_id for e in endpoints.values()}
    counts = {
        row["host_id"]: row
        for row in Endpoint.objects.filter(host_id__in=host_ids).values("host_id").annotate(
            total=Count("uuid"), sensitive=Count("uuid", filter=~Q(risk_score=RiskScore.NONE))
        )
    }
    payloads = {}
    for alert in alerts:
        endpoint = endpoints[alert.endpoint_id]
        host_counts = counts.get(endpoint.host_id, {"total": 0, "sensitive": 0})
        payloads[alert.uuid] = {
            "alert": {
                "uuid": str(alert.uuid),
                "type": str(alert.type),
                "riskScore": str(alert.risk_score).lower(),
                "status": str(alert.status),
                "createdAt": timestamp(alert.created_at),
                "description": alert.description,
                "apiEndpoint": {
                    "uuid": str(endpoint.uuid),
                    "path": endpoint.path,
                    "method": endpoint.method,
                    "host": endpoint.host.name,
                    "dataFields": fields[endpoint.uuid],
                },
            },
            "meta": {
                "host": endpoint.host.name,
                "totalEndpoints": host_counts["total"],
                "totalSensitiveEndpoints": host_counts["sensitive"],
            },
        }
    return payloads


def _endpoints_with_hosts(endpoint_ids) -> dict:
    return {e.uuid: e for e in Endpoint.objects.filter(uuid__in=endpoint_ids).select_related("host")}


def alerts_fan_out(*, alerts: list) -> list[WebhookDelivery]:
    """Create one PENDING delivery per (alert, matching webhook); enqueue each send after commit.

    A webhook matches when its alertTypes is empty or holds the alert's type and its hosts is
    empty or holds the alert's host. Runs inside the caller's transaction: if it rolls back,
    neither alerts nor deliveries exist and nothing is sent. If enqueueing fails after commit
    (broker down), the rows stay PENDING and :func:`deliveries_sweep` sends them later.
    """
    if not alerts:
        return []
    hooks = list(Webhook.objects.only("uuid", "alert_types", "hosts"))
    if not hooks:
        return []
    # No savepoint when nested: the caller's transaction is the unit that commits or rolls back.
    with transaction.atomic(savepoint=False):
        endpoints = _endpoints_with_hosts({a.endpoint_id for a in alerts})
        matches = [
            (alert, hook)
            for alert in alerts
            for hook in hooks
            if alert.endpoint_id in endpoints
            and hook.matches(alert_type=alert.type, host=endpoints[alert.endpoint_id].host.name)
        ]
        if not matches:
            return []
        payloads = alerts_payloads(alerts=list({a.uuid: a for a, _ in matches}.values()), endpoints=endpoints)
        now = timezone.now()
        deliveries = WebhookDelivery.objects.bulk_create([
            WebhookDelivery(webhook_id=hook.uuid, alert_id=alert.uuid, payload=payloads[alert.uuid],
                            next_attempt_at=now, enqueued_at=now)
            for alert, hook in matches
        ])
        for delivery in deliveries:
            transaction.on_commit(partial(_delivery_enqueue_after_commit, delivery_id=delivery.uuid))
    logger.info("fanned out %d alert(s) to %d delivery(ies)", len(alerts), len(deliveries))
    return deliveries


def delivery_enqueue(*, delivery_id, countdown: float | None = None) -> None:
    """Publish the send task for one delivery (ids only) on the webhook queue."""
    from .tasks import delivery_send_task

    delivery_send_task.apply_async((str(delivery_id),), countdown=countdown, queue=webhook_queue())


def _delivery_enqueue_after_commit(*, delivery_id) -> None:
    """Commit hook of :func:`alerts_fan_out`: a broker failure is logged and left to the sweep, never
    raised into the caller, whose alerts and deliveries are already committed. (Not ``robust=True``:
    Django's logging of a failed robust hook needs ``__qualname__``, which a ``partial`` lacks, and
    raises ``AttributeError`` out of the commit instead.)"""
    try:
        delivery_enqueue(delivery_id=delivery_id)
    except Exception:  # noqa: BLE001 - broker unreachable: the row stays PENDING, the sweep sends it
        logger.warning("could not enqueue delivery %s; the sweep will send it", delivery_id)


# --- one attempt ---------------------------------------------------------------------------

@dataclass(frozen=True)
class AttemptOutcome:
    """What the task should do next: run again in ``retry_in`` seconds, or stop (None)."""

    retry_in: float | None = None
    sent: bool = False


def delivery_attempt(*, delivery_id) -> AttemptOutcome:
    """Make one attempt of a delivery, if it is due and nobody else holds it.

    The claim (PENDING and due → SENDING, attempts + 1) is a conditional update: a duplicate
    message, a late retry or a sweep re-send finds nothing to claim and returns quietly. No
    transaction is open during the request. Afterwards one transaction records the attempt,
    prunes the webhook's runs to the newest ``RUNS_KEPT`` and moves the delivery to DONE (2xx),
    PENDING due in ``RETRY_DELAY`` (5xx with retries left) or FAILED (anything else).
    """
    now = timezone.now()
    claimed = WebhookDelivery.objects.filter(
        pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
    ).update(status=WebhookDelivery.Status.SENDING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now)
    if not claimed:
        row = WebhookDelivery.objects.filter(pk=delivery_id).values("status", "next_attempt_at").first()
        if row and row["status"] == WebhookDelivery.Status.PENDING:
            # Not due yet: an early copy of the message. Come back when it is due.
            return AttemptOutcome(retry_in=max((row["next_attempt_at"] - now).total_seconds(), 0.01))
        return AttemptOutcome()
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None:  # webhook deleted meanwhile (cascade)
        return AttemptOutcome()
    hook = delivery.webhook
    result = http.post_json(
        hook.url,
        orjson.dumps(delivery.payload),
        headers={
            "User-Agent": USER_AGENT,
            "X-Delivery-Id": str(delivery.uuid),
            "X-Delivery-Attempt": str(delivery.attempts),
        },
        timeout=policy.REQUEST_TIMEOUT,
    )
    return _attempt_record(delivery=delivery, result=result, claimed_at=now)


def _attempt_record(*, delivery: WebhookDelivery, result: http.SendResult, claimed_at) -> AttemptOutcome:
    msg = (result.error if result.error and result.status_code is None else result.answer)[: policy.MSG_MAX_CHARS]
    with transaction.atomic():
        # Lock the webhook: attempts of one webhook are recorded and pruned one at a time, so the
        # history holds exactly the newest RUNS_KEPT even with several workers.
        hook = Webhook.objects.select_for_update().filter(pk=delivery.webhook_id).first()
        if hook is None:
            return AttemptOutcome()
        WebhookRun.objects.create(
            webhook=hook, delivery_id=delivery.uuid, attempt=delivery.attempts, ok=result.ok,
            status_code=result.status_code, msg=msg, payload=delivery.payload, duration_ms=result.duration_ms,
        )
        runs_prune(webhook_id=hook.uuid)
        now = timezone.now()
        retry = policy.should_retry(
            status_code=result.status_code, attempts_made=delivery.attempts, max_retries=hook.max_retries
        )
        if retry:
            due = now + timedelta(seconds=policy.RETRY_DELAY)
            changes = {"status": WebhookDelivery.Status.PENDING, "next_attempt_at": due, "enqueued_at": now}
        else:
            status = WebhookDelivery.Status.DONE if result.ok else WebhookDelivery.Status.FAILED
            changes = {"status": status, "finished_at": now}
        # Only if our claim still stands (the sweep takes back claims older than CLAIM_LEASE).
        WebhookDelivery.objects.filter(
            pk=delivery.uuid, status=WebhookDelivery.Status.SENDING, claimed_at=claimed_at
        ).update(updated_at=now, **changes)
    logger.info(
        "delivery %s attempt %d to webhook %s: %s",
        delivery.uuid, delivery.attempts, delivery.webhook_id,
        result.status_code if result.status_code is not None else ("timeout" if result.timed_out else "error"),
    )
    return AttemptOutcome(retry_in=policy.RETRY_DELAY if retry else None, sent=True)


def runs_prune(*, webhook_id=None) -> int:
    """Delete attempt records beyond the newest ``RUNS_KEPT`` of one webhook (or of every webhook)."""
    hook_ids = [webhook_id] if webhook_id is not None else list(Webhook.objects.values_list("uuid", flat=True))
    deleted = 0
    for hook_id in hook_ids:
        stale = (
            WebhookRun.objects.filter(webhook_id=hook_id)
            .order_by("-created_at", "-id")
            .values_list("id", flat=True)[policy.RUNS_KEPT:]
        )
        deleted += WebhookRun.objects.filter(id__in=list(stale)).delete()[0]
    return deleted


# --- the safety net ------------------------------------------------------------------------

def deliveries_sweep(*, now=None) -> dict:
    """Make sure every unfinished delivery gets attempted (beat runs this every few seconds).

    * A SENDING claim older than ``CLAIM_LEASE`` is taken back (the worker died mid-attempt): the
      delivery becomes PENDING again without counting that attempt, and is re-sent with the same
      delivery id; after ``MAX_RECLAIMS`` such losses it is FAILED instead.
    * A PENDING delivery that has been due and untouched for ``SWEEP_PENDING_AFTER`` is enqueued
      again (its message was lost). A copy of a message that still exists is harmless: the claim
      lets only one of them send.
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
    lost = reclaimed + list(
        WebhookDelivery.objects.filter(status=Status.PENDING, next_attempt_at__lte=cutoff, enqueued_at__lte=cutoff)
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
    delivery = WebhookDelivery.objects.filter(pk=delivery_id).first()
    if delivery is None:
        return
    Webhook.objects.select_for_update().filter(pk=delivery.webhook_id).first()
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
