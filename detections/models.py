"""Security alerts raised by traffic analysis (DECISIONS §6) and the OpenAPI specs traffic is compared with."""
from __future__ import annotations

import hashlib
import uuid

from django.db import models
from django.utils import timezone

from core.enums import AlertStatus, AlertType, RiskScore
from core.timestamps import Timestamped

# Statuses in which an alert blocks a new one with the same endpoint, type and description.
ACTIVE_STATUSES = (AlertStatus.OPEN, AlertStatus.IGNORED)


def alert_dedup_key(type: str, description: str) -> str:
    """The hash that identifies "the same alert" on one endpoint: type and description."""
    return hashlib.sha1(f"{type}\n{description}".encode("utf-8", "surrogatepass")).hexdigest()


class Alert(Timestamped):
    """An alert on an endpoint.

    Contract: at most one Open-or-Ignored alert per (endpoint, type, description). The partial
    unique constraint ``alert_active_unique`` enforces it even when several workers raise the
    same alert at once; ``detections.services.alerts_raise`` is the way to create alerts.
    """

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey("inventory.Endpoint", on_delete=models.CASCADE, related_name="alerts")
    type = models.CharField(max_length=64, choices=AlertType.choices)
    risk_score = models.CharField(max_length=6, choices=RiskScore.choices)
    status = models.CharField(max_length=10, choices=AlertStatus.choices, default=AlertStatus.OPEN)
    description = models.TextField()
    # sha1(type + description): descriptions are unbounded text, too long for a btree key.
    dedup_key = models.CharField(max_length=40, editable=False, default="")
    context = models.JSONField(default=dict, blank=True)
    resolution_message = models.TextField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "dedup_key"],
                condition=models.Q(status__in=ACTIVE_STATUSES),
                name="alert_active_unique",
            ),
        ]
        indexes = [
            # De-duplication looks up (endpoint, type, description) among Open/Ignored alerts.
            models.Index(fields=["endpoint", "type", "status"], name="alert_dedup"),
            models.Index(fields=["status", "-created_at"], name="alert_list"),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {self.description[:60]}"

    def save(self, *args, **kwargs):
        self.dedup_key = alert_dedup_key(self.type, self.description)
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "dedup_key"}
        super().save(*args, **kwargs)


class OpenApiSpec(models.Model):
    """An OpenAPI 3.x document: uploaded (traffic to its hosts is compared with it, "Open API Spec
    Diff"), or generated from one host's traffic (``is_auto_generated``, DECISIONS §10).

    ``hosts`` are the host names of the document's absolute ``servers`` URLs; ``spec`` is the parsed
    document (JSON-compatible), ``text`` the file as uploaded (as generated: JSON). A generated spec
    names its host in ``source_host`` (deleted with it); it is never compared with traffic nor linked
    to endpoints (``openapiSpecName`` names uploaded specs only), and the API refuses to replace or
    delete it (409).
    """

    class Extension(models.TextChoices):
        JSON = "json"
        YAML = "yaml"

    name = models.CharField(max_length=128, unique=True)
    text = models.TextField()
    spec = models.JSONField()
    extension = models.CharField(max_length=4, choices=Extension.choices)
    openapi_version = models.CharField(max_length=16)
    hosts = models.JSONField(default=list)
    is_auto_generated = models.BooleanField(default=False, editable=False)
    source_host = models.OneToOneField("inventory.Host", null=True, blank=True, editable=False,
                                       on_delete=models.CASCADE, related_name="generated_spec")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "OpenAPI spec"
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(is_auto_generated=False) | models.Q(source_host__isnull=False),
                                   name="generated_spec_has_host"),
        ]

    def __str__(self) -> str:
        return self.name


class GeneratedSpecState(models.Model):
    """When a host's generated spec must be rebuilt, and how its last build went (debounce bookkeeping).

    ``stale_since`` is set (only when empty) by what changes the host's inventory; the refresh task
    claims the row by clearing it, so a second run of the same message is harmless, and a change made
    during a build sets it again (one more build, one debounce period later). ``built_from``: when the
    last build started reading the inventory (the sweep looks for endpoints changed after it).
    """

    host = models.OneToOneField("inventory.Host", primary_key=True, on_delete=models.CASCADE,
                                related_name="generated_spec_state")
    stale_since = models.DateTimeField(null=True, blank=True)
    built_from = models.DateTimeField(null=True, blank=True)
    build_seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["stale_since"], name="generated_spec_stale")]

    def __str__(self) -> str:
        return f"generated spec state of host {self.host_id}"
