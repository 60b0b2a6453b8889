"""Accept-time checks of agent traces: fast, structural, hand-written.

The ingestion routes must answer in a few milliseconds for a 100-trace batch,
so instead of a DRF serializer per trace this walks the JSON once and reports
zod-style issues (DECISIONS §3) whose path starts with the trace's index in the
batch. Only what the analysis relies on is checked; unknown keys are ignored,
as agents add fields over time. Limits (DECISIONS §9): 1,000 traces per batch
(a ``too_big`` issue), 1 MB per trace (``413``); the 10 MB request limit is
enforced on the raw body before parsing.
"""
from __future__ import annotations

from typing import Any

from core.errors import PayloadTooLarge, ZodError
from core.zod import zod_type

from inventory.patterns.normalize import host_normalize

from .decrypt import encryption_issues

MAX_TRACES_PER_BATCH = 1000
MAX_TRACE_BYTES = 1024 * 1024
MAX_REQUEST_BYTES = 10 * 1024 * 1024
MAX_ISSUES = 100

_SCALAR = (str, int, float, bool, type(None))
_ANALYSIS_TYPES = ["full", "partial"]


class _Issues(list):
    def type_error(self, path: list, expected: str, value: Any) -> None:
        received = zod_type(value)
        if value is _MISSING:
            self.append({"code": "invalid_type", "expected": expected, "received": "undefined",
                         "path": path, "message": "Required"})
        else:
            self.append({"code": "invalid_type", "expected": expected, "received": received, "path": path,
                         "message": f"Expected {expected}, received {received}"})


_MISSING = object()


def _get(obj: dict, key: str) -> Any:
    return obj.get(key, _MISSING)


def _check_pairs(value: Any, path: list, issues: _Issues) -> int:
    """``[{name, value}]`` or null/absent; returns the approximate size in characters."""
    if value is _MISSING or value is None:
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
        if not isinstance(item_value, _SCALAR):
            issues.type_error([*path, i, "value"], "string", item_value)
            continue
        size += len(name) + (len(item_value) if isinstance(item_value, str) else 8)
    return size


def _check_body(value: Any, path: list, issues: _Issues) -> int:
    if value is _MISSING or value is None:
        return 0
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (dict, list, int, float, bool)):
        return 64  # re-serialised later; only strings can be large in practice
    issues.type_error(path, "string", value)
    return 0


def _check_status(value: Any, path: list, issues: _Issues) -> None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        issues.type_error(path, "number", value)
        return
    if value < 100:
        issues.append({"code": "too_small", "minimum": 100, "type": "number", "inclusive": True, "exact": False,
                       "path": path, "message": "Number must be greater than or equal to 100"})
    elif value > 599:
        issues.append({"code": "too_big", "maximum": 599, "type": "number", "inclusive": True, "exact": False,
                       "path": path, "message": "Number must be less than or equal to 599"})


def _check_string_map_of_lists(value: Any, path: list, issues: _Issues) -> None:
    if value is _MISSING or value is None:
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
    size = 0
    request = _get(trace, "request")
    if not isinstance(request, dict):
        issues.type_error([*path, "request"], "object", request)
        request = None
    else:
        url = _get(request, "url")
        headers_size = _check_pairs(_get(request, "headers"), [*path, "request", "headers"], issues)
        size += headers_size
        if not isinstance(url, dict):
            issues.type_error([*path, "request", "url"], "object", url)
        else:
            host = _get(url, "host")
            if not isinstance(host, str):
                issues.type_error([*path, "request", "url", "host"], "string", host)
            elif not host_normalize(host) and not _has_host_header(request.get("headers")):
                issues.append({"code": "too_small", "minimum": 1, "type": "string", "inclusive": True,
                               "exact": False, "path": [*path, "request", "url", "host"],
                               "message": "String must contain at least 1 character(s)"})
            url_path = _get(url, "path")
            if not isinstance(url_path, str):
                issues.type_error([*path, "request", "url", "path"], "string", url_path)
            else:
                size += len(url_path)
            size += _check_pairs(_get(url, "parameters"), [*path, "request", "url", "parameters"], issues)
        method = _get(request, "method")
        if not isinstance(method, str):
            issues.type_error([*path, "request", "method"], "string", method)
        elif not method.strip() or len(method) > 16 or not method.strip().isalpha():
            issues.append({"code": "invalid_string", "validation": "regex", "path": [*path, "request", "method"],
                           "message": "Invalid HTTP method"})
        size += _check_body(_get(request, "body"), [*path, "request", "body"], issues)

    response = _get(trace, "response")
    if not isinstance(response, dict):
        issues.type_error([*path, "response"], "object", response)
    else:
        _check_status(_get(response, "status"), [*path, "response", "status"], issues)
        size += _check_pairs(_get(response, "headers"), [*path, "response", "headers"], issues)
        size += _check_body(_get(response, "body"), [*path, "response", "body"], issues)

    meta = _get(trace, "meta")
    if meta is not _MISSING and meta is not None and not isinstance(meta, dict):
        issues.type_error([*path, "meta"], "object", meta)

    if processed:
        data = _get(trace, "processedTraceData")
        if data is not _MISSING and data is not None:
            if not isinstance(data, dict):
                issues.type_error([*path, "processedTraceData"], "object", data)
            else:
                _check_string_map_of_lists(_get(data, "dataTypes"), [*path, "processedTraceData", "dataTypes"], issues)
                _check_string_map_of_lists(
                    _get(data, "sensitiveDataDetected"), [*path, "processedTraceData", "sensitiveDataDetected"], issues
                )
        issues.extend(encryption_issues(trace.get("encryption"), [*path, "encryption"]))  # decrypt.py
        session = _get(trace, "sessionMeta")
        if session is not _MISSING and session is not None and not isinstance(session, dict):
            issues.type_error([*path, "sessionMeta"], "object", session)
        analysis = _get(trace, "analysisType")
        if analysis is not _MISSING and analysis is not None and analysis not in _ANALYSIS_TYPES:
            issues.append({"code": "invalid_enum_value", "options": _ANALYSIS_TYPES,
                           "received": analysis if isinstance(analysis, (str, int, float, bool)) else None,
                           "path": [*path, "analysisType"],
                           "message": f"Invalid enum value. Expected 'full' | 'partial', received '{analysis}'"})
    return size


def _has_host_header(headers: Any) -> bool:
    if not isinstance(headers, list):
        return False
    return any(
        isinstance(h, dict) and str(h.get("name", "")).lower() == "host" and host_normalize(str(h.get("value") or ""))
        for h in headers
    )


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
            raise ZodError([{"code": "too_big", "maximum": MAX_TRACES_PER_BATCH, "type": "array", "inclusive": True,
                             "exact": False, "path": [],
                             "message": f"Array must contain at most {MAX_TRACES_PER_BATCH} element(s)"}])
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

