"""Data classes (what we detect) and data fields (where data was seen on an endpoint)."""
from __future__ import annotations

import uuid

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from core.enums import DataSection, RiskScore
from core.userregex import user_regex_problem


def _validate_regex(value: str) -> None:
    """The pattern must compile on one of the bounded engines detection runs it on (core.userregex)."""
    problem = user_regex_problem(value)
    if problem is not None:
        shown = value if len(value) <= 100 else value[:100] + "…"
        raise ValidationError(f"Invalid regular expression {shown!r}: {problem} "
                              "(neither RE2 nor the regex module can compile it).")


class DataClass(models.Model):
    """A kind of sensitive data. Built-ins are seeded by a migration; operators add custom ones
    (value and/or key regex) and can disable any class in the admin."""

    name = models.CharField("className", max_length=100, unique=True)
    short_name = models.CharField(max_length=100)
    severity = models.CharField(max_length=6, choices=RiskScore.choices, default=RiskScore.MEDIUM)
    builtin = models.BooleanField(default=False, editable=False)
    enabled = models.BooleanField(default=True)
    value_regex = models.CharField(max_length=1000, blank=True, default="", validators=[_validate_regex])
    key_regex = models.CharField(max_length=1000, blank=True, default="", validators=[_validate_regex])
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "data classes"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        if not self.builtin and not (self.value_regex or self.key_regex):
            raise ValidationError("A custom data class needs a value regex, a key regex or both.")


class DataField(models.Model):
    """A field seen in one section of an endpoint's traffic, with its detected classes.

    ``false_positives`` holds classes an operator removed; detection never re-adds them.
    ``status_code`` is the response status for response sections and -1 for request sections.
    """

    class DataType(models.TextChoices):
        STRING = "string"
        INTEGER = "integer"
        NUMBER = "number"
        BOOLEAN = "boolean"
        OBJECT = "object"
        ARRAY = "array"
        NULL = "null"

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey("inventory.Endpoint", on_delete=models.CASCADE, related_name="data_fields")
    data_section = models.CharField(max_length=16, choices=DataSection.choices)
    data_path = models.CharField(max_length=1024)
    status_code = models.SmallIntegerField(default=-1)
    data_classes = models.JSONField(default=list, blank=True)
    false_positives = models.JSONField(default=list, blank=True)
    scanner_identified = models.JSONField(default=list, blank=True)
    data_type = models.CharField(max_length=8, choices=DataType.choices, default=DataType.STRING)
    content_type = models.CharField(max_length=255, blank=True, default="")
    is_nullable = models.BooleanField(default=False)
    entity = models.CharField(max_length=255, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    last_seen = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["endpoint", "data_section", "status_code", "data_path"], name="data_field_identity"
            ),
        ]
        indexes = [
            # GET /new-detections?detectionType=DATA_FIELD by creation window.
            models.Index(fields=["created_at"], name="data_field_created"),
        ]

    def __str__(self) -> str:
        return f"{self.data_section} {self.data_path}"
