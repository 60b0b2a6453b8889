"""Fan-out of alerts to deliveries, and the publishing of send tasks on the webhook queue.

Contract (DECISIONS §7): :func:`alerts_fan_out` writes one PENDING delivery per matching webhook
in the caller's transaction (the one that writes the alerts) and publishes the send tasks only
after commit, one per ``policy.DELIVERIES_PER_TASK`` deliveries. A publish that fails leaves the
rows PENDING for the sweep; it is never raised into the committer. Messages carry ids only.
"""
from __future__ import annotations

import logging
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import policy
from ..models import Webhook, WebhookDelivery
from .payload import alerts_payloads, endpoints_with_hosts

logger = logging.getLogger(__name__)


def webhook_queue() -> str:
    """The Celery queue of delivery tasks (a dedicated worker keeps them clear of analysis backlogs)."""
    return settings.WEBHOOK_QUEUE


def alerts_fan_out(*, alerts: list) -> list[WebhookDelivery]:
    """Create one PENDING delivery per (alert, matching webhook); enqueue each send after commit.

    A webhook matches when its alertTypes is empty or holds the alert's type and its hosts is
    empty or holds the alert's host. Runs inside the caller's transaction: if it rolls back,
    neither alerts nor deliveries exist and nothing is sent. If enqueueing fails after commit
    (broker down), the rows stay PENDING and :func:`webhooks.services.sweep.deliveries_sweep` sends them later.
    """
    if not alerts:
        return []
    hooks = list(Webhook.objects.only("uuid", "alert_types", "hosts"))
    if not hooks:
        return []
    # No savepoint when nested: the caller's transaction is the unit that commits or rolls back.
    with transaction.atomic(savepoint=False):
        endpoints = endpoints_with_hosts({a.endpoint_id for a in alerts})
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
    from ..tasks import delivery_send_task

    delivery_send_task.apply_async((str(delivery_id),), countdown=countdown, queue=webhook_queue())


def deliveries_enqueue(*, delivery_ids: list) -> None:
    """Publish the send task of several first attempts (ids only) on the webhook queue."""
    from ..tasks import deliveries_send_task

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
