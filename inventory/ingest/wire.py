"""The wire shape of an agent trace (DECISIONS §9): its fields and its leniencies, in one place.

Metlo's agents differ in what they send, and the service accepts all of them. The rules below are
the one statement of what is accepted and how it is read:

* ``validation.py`` (accept time, hand-written for speed) refuses what these rules cannot read;
* ``traces.py`` (the worker) reads a stored trace with the same rules;
* ``schema.py`` documents the shape for the OpenAPI schema; ``tests/inventory/test_trace_wire.py``
  checks it against :data:`RAW_TRACE` and :data:`PROCESSED_TRACE` key by key (type, required,
  nullable, limits), so the documentation cannot drift from what is accepted.

The leniencies: ``url.host`` may carry a scheme, user information and a port (or be empty when a
``Host`` header names the host); ``status`` may be a number or a string of digits; header and
parameter values may be any JSON scalar (numbers and booleans read as text, null as empty); lists of
pairs and bodies may be null or absent; a body may be any JSON value (re-serialised as text); meta
ports may be strings, numbers or null; query parameters may come in ``url.path`` instead of
``url.parameters``; ``endpointPath`` and ``graphqlPaths`` are read wherever agents put them.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

import orjson

from inventory.patterns.normalize import host_normalize

# ---------------------------------------------------------------- limits and accepted types

STATUS_MIN, STATUS_MAX = 100, 599
METHOD_MAX_LENGTH = 16
ANALYSIS_TYPES = ("full", "partial")
SHORT_TEXT_MAX = 255
PORT_MAX = 16
# A header or parameter value: any JSON scalar (read as text by :func:`text`).
PAIR_VALUE_TYPES = (str, int, float, bool, type(None))
# A body: text, or any other JSON value (re-serialised by :func:`text`); null or absent is empty.
BODY_VALUE_TYPES = (str, dict, list, int, float, bool, type(None))
# processedTraceData's maps of ``<section>.<path>`` -> names that the service reads.
PROCESSED_MAPS = ("dataTypes", "sensitiveDataDetected")


# ---------------------------------------------------------------- the fields


@dataclass(frozen=True, slots=True)
class WireField:
    """One key of a trace on the wire.

    ``type`` is the documented JSON type; ``lenient`` lists the other JSON types accepted and
    coerced (see the module). ``fields`` are an object's keys (or, for an array, its items' keys);
    ``items`` an array's item type, ``values`` an object-as-map's value type. ``blank``: an empty
    string is accepted (strings). ``documented`` is False for keys some agents send that the schema
    leaves out (read, never required).
    """

    name: str
    type: str
    required: bool = False
    nullable: bool = False
    lenient: tuple[str, ...] = ()
    fields: tuple[WireField, ...] = ()
    items: str | None = None
    values: str | None = None
    blank: bool = True
    documented: bool = True


def _scalar(name: str, kind: str = "string", **kw) -> WireField:
    return WireField(name, kind, **kw)


_SCALARS = ("number", "boolean")
_PAIR = (
    _scalar("name", required=True),
    _scalar("value", nullable=True, lenient=_SCALARS),
)


def _pairs(name: str) -> WireField:
    return WireField(name, "array", nullable=True, items="object", fields=_PAIR)


def _body(name: str) -> WireField:
    return _scalar(name, nullable=True, lenient=("object", "array", *_SCALARS))


def _map(name: str) -> WireField:
    return WireField(name, "object", values="array")


def _meta_text(name: str, **kw) -> WireField:
    return _scalar(name, nullable=True, **kw)


RAW_TRACE = (
    WireField("request", "object", required=True, fields=(
        WireField("url", "object", required=True, fields=(
            _scalar("host", required=True),
            _scalar("path", required=True),
            _pairs("parameters"),
            _scalar("endpointPath", nullable=True, documented=False),
        )),
        _pairs("headers"),
        _body("body"),
        _scalar("method", required=True, blank=False),
    )),
    WireField("response", "object", required=True, fields=(
        _scalar("status", "number", required=True, lenient=("string",)),
        _pairs("headers"),
        _body("body"),
    )),
    WireField("meta", "object", nullable=True, fields=(
        _scalar("incoming", "boolean"),
        _meta_text("source"),
        _meta_text("sourcePort", lenient=("number",)),
        _meta_text("destination"),
        _meta_text("destinationPort", lenient=("number",)),
        _meta_text("environment"),
        _meta_text("metloSource"),
        _meta_text("originalSource", documented=False),
    )),
    _scalar("endpointPath", nullable=True, documented=False),
)

PROCESSED_TRACE = RAW_TRACE + (
    WireField("processedTraceData", "object", nullable=True, fields=(
        _map("sensitiveDataDetected"),
        _map("dataTypes"),
        _map("attackDetections"),
        _scalar("requestContentType"),
        _scalar("responseContentType"),
        WireField("graphqlPaths", "array", items="string"),
        _scalar("endpointPath", nullable=True, documented=False),
    )),
    WireField("sessionMeta", "object", nullable=True, fields=(
        _scalar("authenticationProvided", "boolean", nullable=True),
        _scalar("authenticationSuccessful", "boolean", nullable=True),
        _scalar("authType", nullable=True),
    )),
    _scalar("redacted", "boolean"),
    _scalar("analysisType", nullable=True, blank=False),
    WireField("graphqlPaths", "array", items="string", documented=False),
    WireField("encryption", "object", documented=False),
)


# ---------------------------------------------------------------- the leniencies, as rules


def text(value: object) -> str:
    """A value as the worker stores it: text as is, null empty, JSON scalars spelt as JSON, other JSON re-serialised."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


def status_number(value: object) -> int | float | None:
    """``response.status`` as a number: a JSON number or a string of digits; None for anything else.

    Whether it is a whole number in range is the caller's check (:data:`STATUS_MIN`, :data:`STATUS_MAX`).
    """
    if isinstance(value, str):
        digits = value.strip()
        if not digits.isdigit():
            return None
        try:
            return int(digits)
        except ValueError:  # digits int() does not read (superscripts)
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value


def method_valid(method: str) -> bool:
    """An HTTP method token: letters only once trimmed, at most :data:`METHOD_MAX_LENGTH` characters."""
    token = method.strip()
    return bool(token) and len(method) <= METHOD_MAX_LENGTH and token.isalpha()


def method_read(value: object) -> str:
    return text(value).strip().upper()


def host_header(headers: object) -> str:
    """The first ``Host`` header (any case) whose value names a host, as sent; "" when none does."""
    if not isinstance(headers, list):
        return ""
    for item in headers:
        if isinstance(item, dict) and str(item.get("name", "")).lower() == "host":
            value = item.get("value")
            if value and host_normalize(text(value)):
                return text(value)
    return ""


def host_raw(url_host: str, headers: object) -> str:
    """Where a trace's host is read: ``url.host`` when it names one, else the ``Host`` header."""
    return url_host if host_normalize(url_host) else host_header(headers)


def pairs_read(raw: object) -> list[tuple[str, str]]:
    """``[{name, value}]`` as (name, text) pairs; null, absent, odd items and empty names are left out."""
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if isinstance(item, dict):
            name = item.get("name")
            if isinstance(name, str) and name:
                out.append((name, text(item.get("value"))))
    return out


def query_read(path: str, parameters: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The query parameters: ``url.parameters``, else those written in ``url.path`` after ``?``."""
    if parameters or "?" not in path:
        return parameters
    return parse_qsl(path.split("?", 1)[1].split("#", 1)[0], keep_blank_values=True)


def port_read(value: object) -> str | None:
    """A meta port (string, number or null) as text; None when absent or empty."""
    if value is None or value == "":
        return None
    return text(value)[:PORT_MAX]


def short_text(value: object) -> str:
    return text(value)[:SHORT_TEXT_MAX]


def endpoint_path_read(raw: dict, url: dict, processed_data: object) -> object:
    """An agent-given endpoint pattern: ``url.endpointPath``, the trace's, or processedTraceData's."""
    found = url.get("endpointPath") or raw.get("endpointPath")
    if found is None and isinstance(processed_data, dict):
        found = processed_data.get("endpointPath")
    return found


def graphql_paths_read(raw: dict, processed_data: object) -> object:
    """GraphQL operation paths: processedTraceData's, else the trace's own."""
    found = processed_data.get("graphqlPaths") if isinstance(processed_data, dict) else None
    return raw.get("graphqlPaths") if found is None else found
