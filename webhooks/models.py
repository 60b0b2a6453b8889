"""Webhooks, their pending/finished deliveries and the history of delivery attempts (DECISIONS §7)."""
from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from . import policy


class Webhook(models.Model):
    """An HTTP receiver of alerts.

    It receives an alert when ``alert_types`` is empty or contains the alert's type and ``hosts``
    is empty or contains the alert's host. ``max_retries`` counts retries after a 5xx answer
    (default and limit: ``policy.DEFAULT_MAX_RETRIES``, ``policy.MAX_RETRIES_LIMIT``).
    """

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    url = models.CharField(max_length=2048)
    alert_types = models.JSONField(default=list, blank=True)
    hosts = models.JSONField(default=list, blank=True)
    max_retries = models.PositiveSmallIntegerField(default=policy.DEFAULT_MAX_RETRIES)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "uuid"]
        constraints = [
            models.CheckConstraint(condition=models.Q(max_retries__lte=policy.MAX_RETRIES_LIMIT),
                                  name="webhook_max_retries_range"),
        ]

    def __str__(self) -> str:
        return f"webhook {self.uuid}"

    def matches(self, *, alert_type: str, host: str) -> bool:
        """Whether an alert of this type on this host goes to this webhook (SPEC "Events" 1).
        Host names compare case-insensitively."""
        if self.alert_types and alert_type not in self.alert_types:
            return False
        return not self.hosts or host.lower() in {h.lower() for h in self.hosts}


class WebhookDelivery(models.Model):
    """One alert to send to one webhook: the durable hand-off between the alert and the worker.

    Written with the alert, in the same transaction; the send task gets only the id. ``uuid`` is
    sent as ``X-Delivery-Id`` on every attempt. ``payload`` is the snapshot taken when the alert
    fired. Life: PENDING -(claim)-> SENDING -> DONE | FAILED | PENDING (a 5xx with retries left,
    due at ``next_attempt_at``). A claim is a conditional update, so a duplicate message or a
    sweep never sends one attempt twice.
    """

    class Status(models.TextChoices):
        PENDING = "PENDING"
        SENDING = "SENDING"
        DONE = "DONE"
        FAILED = "FAILED"

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    alert = models.ForeignKey("detections.Alert", on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="webhook_deliveries")
    payload = models.JSONField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    # Attempts made (claims that sent or tried to send).
    attempts = models.PositiveSmallIntegerField(default=0)
    # Claims taken back by the sweep after a worker vanished mid-attempt.
    reclaims = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    enqueued_at = models.DateTimeField(default=timezone.now)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        indexes = [
            # Read by webhooks.services.sweep.deliveries_sweep: only unfinished rows.
            models.Index(
                fields=["next_attempt_at"],
                name="delivery_unfinished",
                condition=models.Q(status__in=["PENDING", "SENDING"]),
            ),
            # Read by webhooks.services.pacing: a webhook's deliveries in flight (its slots) and
            # those waiting for a slot, oldest first; only unfinished rows, whatever the history.
            models.Index(
                fields=["webhook", "next_attempt_at"],
                name="delivery_webhook_unfinished",
                condition=models.Q(status__in=["PENDING", "SENDING"]),
            ),
            # Read by webhooks.services.sweep.deliveries_prune: finished rows by age.
            models.Index(
                fields=["finished_at"],
                name="delivery_finished",
                condition=models.Q(status__in=["DONE", "FAILED"]),
            ),
        ]

    def __str__(self) -> str:
        return f"delivery {self.uuid} ({self.status})"


class WebhookRun(models.Model):
    """One delivery attempt as shown in the webhook's ``runs`` (the newest ``policy.RUNS_KEPT`` per
    webhook are kept).

    ``msg`` is the error text or the receiver's answer, at most ``policy.MSG_MAX_CHARS`` characters; ``status_code``
    is null when no HTTP answer arrived (timeout, connection failure, refused target).
    """

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="runs")
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.SET_NULL, null=True, blank=True,
                                 related_name="runs")
    attempt = models.PositiveSmallIntegerField(default=1)
    ok = models.BooleanField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    msg = models.TextField(blank=True, default="")
    payload = models.JSONField()
    duration_ms = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The webhook's runs (newest first) and pruning to the newest RUNS_KEPT.
            models.Index(fields=["webhook", "-created_at", "-id"], name="webhook_run_recent"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.webhook_id} ({'ok' if self.ok else 'failed'})"
