"""Row timestamps shared by the apps' models."""
from __future__ import annotations

from django.db import models
from django.utils import timezone


class Timestamped(models.Model):
    """An abstract model: ``created_at`` (set once, overridable: imports and tests date rows) and
    ``updated_at`` (every save). Columns only: no table, no migration of its own."""

    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
