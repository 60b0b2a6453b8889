"""Zod-style validation issues built from DRF serializer errors.

Metlo's clients read validation failures in zod's shape, so each DRF error
code is translated to the zod issue code a zod schema would have produced
for the same input (``invalid_type``, ``invalid_enum_value``, ``too_big``,
``too_small``, ``invalid_string``), with zod's extra keys. The constructors
(``issue_required``, ``issue_wrong_type``, ``issue_too_big``…) also serve code
that checks JSON by hand, like the ingestion routes' accept-time check.
"""
from __future__ import annotations

from typing import Any

from rest_framework import fields as drf_fields
from rest_framework import serializers

from core.jsontypes import json_type

ZodIssue = dict[str, Any]

_MISSING = object()
MISSING = _MISSING  # an absent key, for callers walking JSON themselves (zod_type: "undefined")


def zod_type(value: Any) -> str:
    """The zod name of a JSON value's type (``received``)."""
    if value is _MISSING or value is drf_fields.empty:
        return "undefined"
    kind = json_type(value, default="unknown")
    if kind == "integer":  # zod has one numeric type
        return "number"
    if kind == "unknown" and isinstance(value, tuple):
        return "array"
    return kind


def expected_type(field: drf_fields.Field | None) -> str:
    """The zod type a field expects."""
    if field is None:
        return "unknown"
    if isinstance(field, (serializers.ListField, serializers.ListSerializer, serializers.MultipleChoiceField)):
        return "array"
    if isinstance(field, (serializers.Serializer, serializers.DictField, serializers.JSONField)):
        return "object"
    if isinstance(field, serializers.BooleanField):
        return "boolean"
    if isinstance(field, (serializers.IntegerField, serializers.FloatField, serializers.DecimalField)):
        return "number"
    return "string"


def _string_validation(field: drf_fields.Field | None) -> str | None:
    if isinstance(field, serializers.UUIDField):
        return "uuid"
    if isinstance(field, serializers.URLField):
        return "url"
    if isinstance(field, (serializers.DateTimeField, serializers.DateField)):
        return "datetime"
    if isinstance(field, serializers.RegexField):
        return "regex"
    return None


def _child(field: drf_fields.Field | None, key: Any) -> drf_fields.Field | None:
    if isinstance(field, serializers.ListSerializer):
        return field.child
    if isinstance(field, (serializers.ListField, serializers.DictField)):
        return field.child
    if isinstance(field, serializers.Serializer):
        return field.fields.get(key)
    return None


def _value_at(data: Any, key: Any) -> Any:
    try:
        if isinstance(data, dict) or hasattr(data, "get"):
            return data.get(key, _MISSING) if not isinstance(key, int) else data[key]
        if isinstance(data, (list, tuple)):
            return data[key]
    except (KeyError, IndexError, TypeError, ValueError):
        pass
    return _MISSING


# ---------------------------------------------------------------- one constructor per zod issue code
# With zod's keys in zod's order (the error bodies are contract: DECISIONS §3). The DRF translation
# below and the hand-written ingestion check (inventory/ingest/validation.py) build issues with them.

def issue_required(path: list, expected: str) -> ZodIssue:
    """``invalid_type`` for an absent key: received ``undefined``, message ``Required``."""
    return {"code": "invalid_type", "expected": expected, "received": "undefined", "path": path, "message": "Required"}


def issue_invalid_type(path: list, expected: str, received: str) -> ZodIssue:
    """``invalid_type``: ``received`` is a zod type name (:func:`zod_type`)."""
    return {"code": "invalid_type", "expected": expected, "received": received, "path": path,
            "message": f"Expected {expected}, received {received}"}


def issue_wrong_type(path: list, expected: str, value: Any) -> ZodIssue:
    """``invalid_type`` for ``value`` (``MISSING`` for an absent key: :func:`issue_required`)."""
    if value is _MISSING:
        return issue_required(path, expected)
    return issue_invalid_type(path, expected, zod_type(value))


def issue_invalid_enum(path: list, options: list, value: Any, received: Any) -> ZodIssue:
    """``invalid_enum_value``: ``received`` is what the issue reports (the value, or null)."""
    shown = " | ".join(f"'{o}'" for o in options)
    return {"code": "invalid_enum_value", "options": options, "received": received, "path": path,
            "message": f"Invalid enum value. Expected {shown}, received '{value}'"}


def issue_too_big(path: list, kind: str, maximum: Any, message: str | None = None) -> ZodIssue:
    """``too_big`` for a number, string or array (``kind``)."""
    if message is None:
        message = _size_message(kind, "less than or equal to", "at most", maximum)
    return {"code": "too_big", "maximum": maximum, "type": kind, "inclusive": True, "exact": False, "path": path,
            "message": message}


def issue_too_small(path: list, kind: str, minimum: Any) -> ZodIssue:
    """``too_small`` for a number, string or array (``kind``)."""
    return {"code": "too_small", "minimum": minimum, "type": kind, "inclusive": True, "exact": False, "path": path,
            "message": _size_message(kind, "greater than or equal to", "at least", minimum)}


def issue_invalid_string(path: list, validation: str, message: str | None = None) -> ZodIssue:
    """``invalid_string`` (``regex``, ``uuid``, ``url``, ``datetime``…)."""
    return {"code": "invalid_string", "validation": validation, "path": path,
            "message": message if message is not None else f"Invalid {validation}"}


def issue_custom(path: list, message: str) -> ZodIssue:
    """``custom``: a rule zod has no code for."""
    return {"code": "custom", "path": path, "message": message}


# ---------------------------------------------------------------- DRF errors -> zod issues

def issue_for(code: str, message: str, path: list, field: drf_fields.Field | None, value: Any) -> ZodIssue:
    """Translate one DRF error (code + message) on ``field`` holding ``value``."""
    expected = expected_type(field)
    received = zod_type(value)
    if code == "required" or (code == "null" and value is _MISSING):
        return issue_required(path, expected)
    if code == "null":
        return issue_invalid_type(path, expected, "null")
    if code in {"invalid_choice", "invalid_enum"}:
        options = [str(o) for o in getattr(field, "choices", {}) or []]
        return issue_invalid_enum(path, options, value, value if received != "undefined" else None)
    if code in {"max_value", "max_length", "max_items"}:
        kind = {"max_value": "number", "max_length": "string", "max_items": "array"}[code]
        return issue_too_big(path, kind, _limit(field, code))
    if code in {"min_value", "min_length", "min_items", "empty", "blank"}:
        kind = {"min_value": "number", "min_length": "string", "min_items": "array", "empty": "array", "blank": "string"}[code]
        return issue_too_small(path, kind, 1 if code in {"empty", "blank"} else _limit(field, code))
    if code in {"not_a_list", "not_a_dict", "not_a_string"} or (
        code == "invalid" and expected in {"number", "boolean", "object", "array"} and received != expected
    ):
        if code == "not_a_list":
            expected = "array"
        elif code == "not_a_dict":
            expected = "object"
        return issue_invalid_type(path, expected, received)
    if code in {"invalid", "invalid_uuid", "invalid_url", "invalid_datetime"} and (validation := _string_validation(field)):
        return issue_invalid_string(path, validation)
    if code == "invalid" and isinstance(value, str) and expected == "string":
        return issue_invalid_string(path, "regex", message)
    if code == "invalid" and received != expected and expected == "string":
        return issue_invalid_type(path, expected, received)
    if code == "max_whole_digits" or code == "max_digits":
        return issue_too_big(path, "number", None, message)
    return issue_custom(path, message)


def _limit(field: drf_fields.Field | None, code: str) -> Any:
    attr = {"max_value": "max_value", "min_value": "min_value", "max_length": "max_length",
            "min_length": "min_length", "max_items": "max_length", "min_items": "min_length"}[code]
    return getattr(field, attr, None)


def _size_message(kind: str, number_words: str, count_words: str, limit: Any) -> str:
    if kind == "number":
        return f"Number must be {number_words} {limit}"
    if kind == "array":
        return f"Array must contain {count_words} {limit} element(s)"
    return f"String must contain {count_words} {limit} character(s)"


def _walk(errors: Any, field: drf_fields.Field | None, data: Any, path: list) -> list[ZodIssue]:
    if isinstance(errors, dict):
        issues: list[ZodIssue] = []
        for key, sub in errors.items():
            if key == "non_field_errors" or key == "__all__":
                issues.extend(_walk(sub, None, data, path))
                continue
            child_path = [*path, int(key) if isinstance(key, str) and key.isdigit() and isinstance(data, list) else key]
            issues.extend(_walk(sub, _child(field, key), _value_at(data, child_path[-1]), child_path))
        return issues
    if isinstance(errors, list):
        # A list of error details for this field, or (ListSerializer) one entry per item.
        if errors and all(isinstance(e, (dict, list)) for e in errors):
            issues = []
            for index, sub in enumerate(errors):
                if sub:
                    issues.extend(_walk(sub, _child(field, index), _value_at(data, index), [*path, index]))
            return issues
        issues = []
        for detail in errors:
            if isinstance(detail, (dict, list)):
                issues.extend(_walk(detail, field, data, path))
            else:
                issues.append(issue_for(getattr(detail, "code", "invalid") or "invalid", str(detail), path, field, data))
        return issues
    return [issue_for(getattr(errors, "code", "invalid") or "invalid", str(errors), path, field, data)]


def issues_from_serializer(serializer: serializers.BaseSerializer) -> list[ZodIssue]:
    """All issues of a failed ``is_valid()``, with paths into the input."""
    data = getattr(serializer, "initial_data", _MISSING)
    return _walk(serializer.errors, serializer, data, [])
