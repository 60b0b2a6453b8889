"""How one response differs from the operation that documents it.

Three questions, asked in this order by the "Open API Spec Diff" rule (``detections.rules.openapi``):
is the status documented (the code, its ``2XX`` range or ``default``), which documented media type
the response has, and which schema errors its JSON body has. Findings are sentence fragments built
from the schema and the field's position, never from the data.
"""
from __future__ import annotations

import re
from typing import Any

from core.userregex import scope

from ..specregex import additional_keys
from .compiled import CompiledSpec, deref

REDACTED = "[REDACTED]"
MAX_FINDINGS_SEEN = 50  # schema errors read per body before the worst are chosen
MAX_ERRORS_READ = 1000  # errors read per body at most (many may repeat one finding: items[] of a long array)
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


def response_for(operation: dict, status: int) -> tuple[str, Any] | None:
    """(responses key, response object) documenting ``status``: the code, its range, or ``default``."""
    responses = operation.get("responses")
    if not isinstance(responses, dict):
        return None
    keys = {str(k).upper(): k for k in responses}
    for candidate in (str(status), f"{str(status)[0]}XX", "DEFAULT"):
        if candidate in keys:
            return keys[candidate], responses[keys[candidate]]
    return None


def json_schema_pointer(spec: CompiledSpec, response: tuple, pointer: list, content_type: str | None) -> list | None:
    """Pointer tokens of the JSON schema documented for a response of this content type, or None
    when the response documents no schema for it, or a media type that is not JSON."""
    key, response_obj = response
    response_obj, response_pointer = deref(spec.spec, response_obj, [*pointer, "responses", key])
    if not isinstance(response_obj, dict):
        return None
    content = response_obj.get("content")
    media = _media_for(content, content_type)
    if media is None or not _is_json_media(media, content_type):
        return None
    media_obj = content[media]
    if not isinstance(media_obj, dict) or "schema" not in media_obj:
        return None
    return [*response_pointer, "content", media, "schema"]


def _media_for(content: dict, content_type: str | None) -> str | None:
    if not isinstance(content, dict) or not content:
        return None
    normal = {str(k).split(";", 1)[0].strip().lower(): k for k in content}
    if not content_type:
        return next(iter(content)) if len(content) == 1 else normal.get("application/json")
    wanted = content_type.split(";", 1)[0].strip().lower()
    major = wanted.split("/", 1)[0]
    for candidate in (wanted, f"{major}/*", "*/*"):
        if candidate in normal:
            return normal[candidate]
    return None


def _is_json_media(media: str, content_type: str | None) -> bool:
    for value in (content_type, media):
        if value:
            kind = value.split(";", 1)[0].strip().lower()
            if kind == "application/json" or kind.endswith("+json"):
                return True
            if kind not in ("*/*", "application/*"):
                return False
    return True


def schema_findings(spec: CompiledSpec, schema_pointer: list, document: Any) -> list[tuple[str, str]]:
    """(field label, problem) pairs of a JSON document against the schema at ``schema_pointer``,
    sorted, de-duplicated, at most ``MAX_FINDINGS_SEEN`` kept of at most ``MAX_ERRORS_READ`` errors read.
    Empty when validation recursed too deep."""
    validator = spec.validator(schema_pointer)
    findings: dict[tuple, str] = {}
    try:
        with scope(f"OpenAPI spec {spec.id}"):  # names the spec in user-regex timeout log lines
            for read, error in enumerate(validator.iter_errors(document), 1):
                if read > MAX_ERRORS_READ:
                    break
                problem = _problem(error)
                if problem is None:
                    continue
                label = _field_label(error.absolute_path)
                findings.setdefault((label, problem), label)
                if len(findings) >= MAX_FINDINGS_SEEN:
                    break
    except RecursionError:
        return []
    return sorted(findings)


def _field_label(path) -> str:
    label = ""
    for token in path:
        if isinstance(token, int):
            label += "[]"
        else:
            label += ("." if label else "") + str(token)
    return label


def _problem(error) -> str | None:
    """A sentence fragment for one schema error, built from the schema, never from the data."""
    keyword, expected, instance = error.validator, error.validator_value, error.instance
    if isinstance(instance, str) and instance == REDACTED:
        return None  # a value an agent redacted: its real type is unknown
    if keyword == "type":
        if instance is None:
            return "is null but not nullable"
        shown = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return f"is not of type {shown}"
    if keyword == "required":
        missing = [p for p in expected if isinstance(instance, dict) and p not in instance]
        return f"is missing required property '{missing[0]}'" if missing else "is missing a required property"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        schema = error.schema if isinstance(error.schema, dict) else {}
        extra = sorted(k for k in additional_keys(instance if isinstance(instance, dict) else {}, schema)
                       if isinstance(k, str))
        named = [k for k in extra if _SAFE_NAME.match(k)]
        return f"has undocumented property '{named[0]}'" if named else "has an undocumented property"
    if keyword in ("enum", "const"):
        return "is not one of the documented values"
    if keyword == "format":
        return f"does not match format '{expected}'"
    if keyword == "pattern":
        return "does not match the documented pattern"
    if keyword in ("oneOf", "anyOf"):
        return "does not match any documented alternative"
    if keyword == "nullable":
        return "is null but not nullable"
    return f"violates '{keyword}'"
