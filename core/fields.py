"""Serializer fields shared by every app: the wire timestamp format and zod-strict inputs."""
from __future__ import annotations

import datetime as dt

from rest_framework import serializers


def timestamp(value: dt.datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds and ``Z``: ``2026-01-31T12:00:00.000Z`` (DECISIONS §1)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    value = value.astimezone(dt.UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


class TimestampField(serializers.DateTimeField):
    """A read-only timestamp in the wire format of DECISIONS §1 (documented as ``date-time``)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value):
        return timestamp(value)


class LenientDateTimeField(serializers.DateTimeField):
    """An ISO 8601 timestamp or date input; a date means its UTC midnight, a naive time is UTC."""

    def to_internal_value(self, value):
        if isinstance(value, str) and len(value.strip()) == 10:
            try:
                day = dt.date.fromisoformat(value.strip())
            except ValueError:
                pass
            else:
                return dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC)
        return super().to_internal_value(value)


class StrictCharField(serializers.CharField):
    """A JSON string only (zod's ``z.string()``); DRF alone would turn ``1`` into ``"1"``."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)
