"""Accept-time checks of agent traces: fast, structural, hand-written.

The ingestion routes must answer in a few milliseconds for a 100-trace batch,
so instead of a DRF serializer per trace this walks the JSON once and reports
zod-style issues (DECISIONS §3) whose path starts with the trace's index in the
batch. Only what the analysis relies on is checked; unknown keys are ignored,
as agents add fields over time. Limits (DECISIONS §9): 1,000 traces per batch
(a ``too_big`` issue), 1 MB per trace (``413``); the 10 MB request limit is
enforced on the raw body before parsing.

What is accepted (types, leniencies, limits) is ``wire.py``'s, shared with the worker's reading
(``traces.py``); every issue is built by ``core.zod``'s constructors.
"""
from __future__ import annotations

from typing import Any

from core.errors import PayloadTooLarge, ZodError
from core.zod import (
    MISSING,
    issue_invalid_enum,
    issue_invalid_string,
    issue_too_big,
    issue_too_small,
    issue_wrong_type,
)

from inventory.patterns.normalize import host_normalize

from .wire import (
    ANALYSIS_TYPES,
    BODY_VALUE_TYPES,
    PAIR_VALUE_TYPES,
    PROCESSED_MAPS,
    STATUS_MAX,
    STATUS_MIN,
    host_header,
    method_valid,
    status_number,
)

MAX_TRACES_PER_BATCH = 1000
MAX_TRACE_BYTES = 1024 * 1024
MAX_REQUEST_BYTES = 10 * 1024 * 1024
MAX_ISSUES = 100

_ANALYSIS_TYPES = list(ANALYSIS_TYPES)


class _Issues(list):
    def type_error(self, path: list, expected: str, value: Any) -> None:
        self.append(issue_wrong_type(path, expected, value))


def _get(obj: dict, key: str) -> Any:
    return obj.get(key, MISSING)


def _check_pairs(value: Any, path: list, issues: _Issues) -> int:
    """``[{name, value}]`` or null/absent; returns the approximate size in characters."""
    if value is MISSING or value is None:
        return 0
    if not isinstance(value, list):
        issues.type_error(path, "array", value)
        return 0
    size = 0
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            issues.type_error([*path, i], "object", item)
            continue
        name = _get(item, "name")
        if not isinstance(name, str):
            issues.type_error([*path, i, "name"], "string", name)
            continue
        item_value = item.get("value")
        if not isinstance(item_value, PAIR_VALUE_TYPES):
            issues.type_error([*path, i, "value"], "string", item_value)
            continue
        size += len(name) + (len(item_value) if isinstance(item_value, str) else 8)
    return size


def _check_body(value: Any, path: list, issues: _Issues) -> int:
    if value is MISSING or value is None:
        return 0
    if isinstance(value, str):
        return len(value)
    if isinstance(value, BODY_VALUE_TYPES):
        return 64  # re-serialised later; only strings can be large in practice
    issues.type_error(path, "string", value)
    return 0


def _check_status(value: Any, path: list, issues: _Issues) -> None:
    if type(value) is int and STATUS_MIN <= value <= STATUS_MAX:
        return  # what agents send; the rest goes through the wire rule
    number = status_number(value)
    if number is None or number != int(number):
        issues.type_error(path, "number", value)
    elif number < STATUS_MIN:
        issues.append(issue_too_small(path, "number", STATUS_MIN))
    elif number > STATUS_MAX:
        issues.append(issue_too_big(path, "number", STATUS_MAX))


def _check_string_map_of_lists(value: Any, path: list, issues: _Issues) -> None:
    if value is MISSING or value is None:
        return
    if not isinstance(value, dict):
        issues.type_error(path, "object", value)
        return
    for key, names in value.items():
        if not isinstance(names, list):
            issues.type_error([*path, key], "array", names)


def _check_trace(trace: Any, path: list, issues: _Issues, *, processed: bool) -> int:
    """Check one trace; returns its approximate size in characters."""
    if not isinstance(trace, dict):
        issues.type_error(path, "object", trace)
        return 0
    size = _check_request(_get(trace, "request"), [*path, "request"], issues)
    size += _check_response(_get(trace, "response"), [*path, "response"], issues)
    meta = trace.get("meta")
    if meta is not None and not isinstance(meta, dict):
        issues.type_error([*path, "meta"], "object", meta)
    if processed:
        _check_processed(trace, path, issues)
    return size


def _check_request(request: Any, path: list, issues: _Issues) -> int:
    if not isinstance(request, dict):
        issues.type_error(path, "object", request)
        return 0
    size = _check_pairs(_get(request, "headers"), [*path, "headers"], issues)
    url = _get(request, "url")
    if not isinstance(url, dict):
        issues.type_error([*path, "url"], "object", url)
    else:
        size += _check_url(url, request, [*path, "url"], issues)
    method = _get(request, "method")
    if not isinstance(method, str):
        issues.type_error([*path, "method"], "string", method)
    elif not method_valid(method):
        issues.append(issue_invalid_string([*path, "method"], "regex", "Invalid HTTP method"))
    return size + _check_body(_get(request, "body"), [*path, "body"], issues)


def _check_url(url: dict, request: dict, path: list, issues: _Issues) -> int:
    size = 0
    host = _get(url, "host")
    if not isinstance(host, str):
        issues.type_error([*path, "host"], "string", host)
    elif not host_normalize(host) and not host_header(request.get("headers")):
        issues.append(issue_too_small([*path, "host"], "string", 1))
    url_path = _get(url, "path")
    if not isinstance(url_path, str):
        issues.type_error([*path, "path"], "string", url_path)
    else:
        size += len(url_path)
    return size + _check_pairs(_get(url, "parameters"), [*path, "parameters"], issues)


def _check_response(response: Any, path: list, issues: _Issues) -> int:
    if not isinstance(response, dict):
        issues.type_error(path, "object", response)
        return 0
    _check_status(_get(response, "status"), [*path, "status"], issues)
    size = _check_pairs(_get(response, "headers"), [*path, "headers"], issues)
    return size + _check_body(_get(response, "body"), [*path, "body"], issues)


def _check_object_or_null(value: Any, path: list, issues: _Issues) -> None:
    if value is not MISSING and value is not None and not isinstance(value, dict):
        issues.type_error(path, "object", value)


def _check_processed(trace: dict, path: list, issues: _Issues) -> None:
    """The keys of a processed (v2) trace: pre-computed findings, session, analysis type."""
    data = _get(trace, "processedTraceData")
    if data is not MISSING and data is not None:
        if not isinstance(data, dict):
            issues.type_error([*path, "processedTraceData"], "object", data)
        else:
            for key in PROCESSED_MAPS:
                _check_string_map_of_lists(_get(data, key), [*path, "processedTraceData", key], issues)
    _check_object_or_null(_get(trace, "sessionMeta"), [*path, "sessionMeta"], issues)
    analysis = _get(trace, "analysisType")
    if analysis is not MISSING and analysis is not None and analysis not in _ANALYSIS_TYPES:
        received = analysis if isinstance(analysis, (str, int, float, bool)) else None
        issues.append(issue_invalid_enum([*path, "analysisType"], _ANALYSIS_TYPES, analysis, received))


def traces_validate(payload: Any, *, batch: bool, processed: bool) -> list[dict]:
    """Check a request body; return the list of traces or raise ``ZodError`` / ``PayloadTooLarge``.

    ``batch``: the body is an array of traces (issue paths start with the index);
    otherwise one trace (paths start with its keys).
    """
    issues = _Issues()
    if batch:
        if not isinstance(payload, list):
            issues.type_error([], "array", payload)
            raise ZodError(issues)
        if len(payload) > MAX_TRACES_PER_BATCH:
            raise ZodError([issue_too_big([], "array", MAX_TRACES_PER_BATCH)])
        traces = payload
    else:
        traces = [payload]
    for index, trace in enumerate(traces):
        size = _check_trace(trace, [index] if batch else [], issues, processed=processed)
        if size > MAX_TRACE_BYTES:
            where = f"Trace {index}" if batch else "The trace"
            raise PayloadTooLarge(f"{where} is larger than 1 MB.")
        if len(issues) >= MAX_ISSUES:
            break
    if issues:
        raise ZodError(list(issues[:MAX_ISSUES]))
    return traces

