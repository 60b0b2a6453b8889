"""Security alerts raised by traffic analysis (DECISIONS §6)."""
from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from core.enums import AlertStatus, AlertType, RiskScore


class Alert(models.Model):
    """An alert on an endpoint. Not raised again while one with the same endpoint, type and
    description is Open or Ignored (see ``detections.services.alert_raise``)."""

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey("inventory.Endpoint", on_delete=models.CASCADE, related_name="alerts")
    type = models.CharField(max_length=64, choices=AlertType.choices)
    risk_score = models.CharField(max_length=6, choices=RiskScore.choices)
    status = models.CharField(max_length=10, choices=AlertStatus.choices, default=AlertStatus.OPEN)
    description = models.TextField()
    context = models.JSONField(default=dict, blank=True)
    resolution_message = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [
            # De-duplication looks up (endpoint, type, description) among Open/Ignored alerts.
            models.Index(fields=["endpoint", "type", "status"], name="alert_dedup"),
            models.Index(fields=["status", "-created_at"], name="alert_list"),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {self.description[:60]}"
