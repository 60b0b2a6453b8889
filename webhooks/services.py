"""Webhooks: management, fan-out of alerts to deliveries, sending, the sweep and pruning.

Delivery contract (DECISIONS §7):

* :func:`alerts_fan_out` writes one PENDING delivery per matching webhook in the caller's
  transaction (the one that writes the alerts) and enqueues the send tasks only after commit, one
  per ``DELIVERIES_PER_TASK`` deliveries;
* :func:`deliveries_attempt` (first attempts, several deliveries) and :func:`delivery_attempt`
  (retries and sweep re-sends, one delivery) claim deliveries with a conditional update, send each
  payload snapshot once (concurrently), record the attempts (pruning each webhook's history to the
  newest 10) and say whether and when to retry — only a 5xx with retries left is retried,
  ``RETRY_DELAY`` later;
* :func:`deliveries_sweep` re-enqueues deliveries whose message was lost and takes back claims of
  workers that died mid-attempt, so every committed delivery is eventually attempted.
"""
from __future__ import annotations

import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import Count, F, Prefetch, Q, Window
from django.db.models.functions import RowNumber
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
        transaction.on_commit(partial(_deliveries_enqueue_after_commit, delivery_ids=[d.uuid for d in deliveries]))
    logger.info("fanned out %d alert(s) to %d delivery(ies)", len(alerts), len(deliveries))
    return deliveries


def delivery_enqueue(*, delivery_id, countdown: float | None = None) -> None:
    """Publish the send task for one delivery (ids only) on the webhook queue."""
    from .tasks import delivery_send_task

    delivery_send_task.apply_async((str(delivery_id),), countdown=countdown, queue=webhook_queue())


def deliveries_enqueue(*, delivery_ids: list) -> None:
    """Publish the send task of several first attempts (ids only) on the webhook queue."""
    from .tasks import deliveries_send_task

    deliveries_send_task.apply_async(([str(i) for i in delivery_ids],), queue=webhook_queue())


def _deliveries_enqueue_after_commit(*, delivery_ids: list) -> None:
    """Commit hook of :func:`alerts_fan_out`: one task per ``DELIVERIES_PER_TASK`` deliveries. A broker
    failure is logged and left to the sweep, never raised into the caller, whose alerts and
    deliveries are already committed. (Not ``robust=True``: Django's logging of a failed robust hook
    needs ``__qualname__``, which a ``partial`` lacks, and raises ``AttributeError`` out of the
    commit instead.)"""
    size = policy.DELIVERIES_PER_TASK
    for start in range(0, len(delivery_ids), size):
        try:
            deliveries_enqueue(delivery_ids=delivery_ids[start:start + size])
        except Exception:  # noqa: BLE001 - broker unreachable: the rows stay PENDING, the sweep sends them
            logger.warning("could not enqueue %d delivery(ies); the sweep will send them",
                           len(delivery_ids) - start)
            return


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
    [outcome] = _attempts_record([(delivery, _send(delivery))], claimed_at=now)
    return outcome


def deliveries_attempt(*, delivery_ids: list) -> dict:
    """First attempts of several deliveries (one fan-out): claimed in one update, POSTed
    concurrently, recorded in one transaction. Each behaves as :func:`delivery_attempt` would;
    a delivery to retry is enqueued again on its own ``RETRY_DELAY`` later (the sweep sends it
    if that fails). Returns the ids of the deliveries sent and of those to retry.
    """
    now = timezone.now()
    Status = WebhookDelivery.Status
    WebhookDelivery.objects.filter(pk__in=delivery_ids, status=Status.PENDING, next_attempt_at__lte=now).update(
        status=Status.SENDING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now)
    deliveries = list(WebhookDelivery.objects.select_related("webhook")
                      .filter(pk__in=delivery_ids, status=Status.SENDING, claimed_at=now).order_by("uuid"))
    if not deliveries:
        return {"sent": [], "retry": []}
    with ThreadPoolExecutor(max_workers=min(len(deliveries), policy.DELIVERIES_PER_TASK),
                            thread_name_prefix="webhook-send") as senders:
        results = list(senders.map(_send, deliveries))
    outcomes = _attempts_record(list(zip(deliveries, results)), claimed_at=now)
    retry = [d.uuid for d, o in zip(deliveries, outcomes) if o.retry_in is not None]
    for delivery_id in retry:
        try:
            delivery_enqueue(delivery_id=delivery_id, countdown=policy.RETRY_DELAY)
        except Exception:  # noqa: BLE001 - broker unreachable: the row is PENDING and due, the sweep sends it
            logger.warning("could not enqueue the retry of delivery %s; the sweep will send it", delivery_id)
    return {"sent": [d.uuid for d, o in zip(deliveries, outcomes) if o.sent], "retry": retry}


def _send(delivery: WebhookDelivery) -> http.SendResult:
    """POST the delivery's payload snapshot to its webhook (no database access: runs in threads)."""
    return http.post_json(
        delivery.webhook.url,
        orjson.dumps(delivery.payload),
        headers={
            "User-Agent": USER_AGENT,
            "X-Delivery-Id": str(delivery.uuid),
            "X-Delivery-Attempt": str(delivery.attempts),
        },
        timeout=policy.REQUEST_TIMEOUT,
    )


def _attempts_record(sent: list[tuple[WebhookDelivery, http.SendResult]], *, claimed_at) -> list[AttemptOutcome]:
    """Record attempts made under one claim: their runs, each webhook's history pruned, the deliveries'
    next state. One transaction, a fixed number of queries; outcomes in the order given."""
    Status = WebhookDelivery.Status
    outcomes: list[AttemptOutcome] = []
    with transaction.atomic():
        # Lock the webhooks (in key order: no deadlock between workers): attempts of one webhook are
        # recorded and pruned one transaction at a time, so its history holds exactly the newest
        # RUNS_KEPT even with several workers. NO KEY UPDATE: a fan-out creating deliveries of these
        # webhooks meanwhile (its foreign-key checks take KEY SHARE) does not wait for us.
        hooks = {h.pk: h for h in Webhook.objects.select_for_update(no_key=True)
                 .filter(pk__in={d.webhook_id for d, _ in sent}).order_by("pk")}
        now = timezone.now()
        runs, transitions = [], {}
        for delivery, result in sent:
            hook = hooks.get(delivery.webhook_id)
            if hook is None:  # deleted meanwhile, with its deliveries
                outcomes.append(AttemptOutcome())
                continue
            msg = (result.error if result.error and result.status_code is None else result.answer)
            runs.append(WebhookRun(
                webhook=hook, delivery_id=delivery.uuid, attempt=delivery.attempts, ok=result.ok,
                status_code=result.status_code, msg=msg[: policy.MSG_MAX_CHARS], payload=delivery.payload,
                duration_ms=result.duration_ms,
            ))
            retry = policy.should_retry(
                status_code=result.status_code, attempts_made=delivery.attempts, max_retries=hook.max_retries
            )
            state = "retry" if retry else (Status.DONE if result.ok else Status.FAILED)
            transitions.setdefault(state, []).append(delivery.uuid)
            outcomes.append(AttemptOutcome(retry_in=policy.RETRY_DELAY if retry else None, sent=True))
            logger.info(
                "delivery %s attempt %d to webhook %s: %s",
                delivery.uuid, delivery.attempts, delivery.webhook_id,
                result.status_code if result.status_code is not None else ("timeout" if result.timed_out else "error"),
            )
        WebhookRun.objects.bulk_create(runs)
        runs_prune(webhook_ids=list(hooks))
        for state, ids in transitions.items():
            if state == "retry":
                changes = {"status": Status.PENDING, "enqueued_at": now,
                           "next_attempt_at": now + timedelta(seconds=policy.RETRY_DELAY)}
            else:
                changes = {"status": state, "finished_at": now}
            # Only where our claim still stands (the sweep takes back claims older than CLAIM_LEASE).
            WebhookDelivery.objects.filter(pk__in=ids, status=Status.SENDING, claimed_at=claimed_at).update(
                updated_at=now, **changes)
    return outcomes


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
