"""GET /endpoint/{id} on PostgreSQL: the answer's bytes from two prepared statements, no ORM.

The ORM path (``render.endpoint_detail`` with ``services.endpoint_openapi_spec``) stays the
reference and the SQLite path. Here one statement resolves the id (the endpoint itself, else the
endpoint it was merged into), joins the host and has PostgreSQL build the list item, the fields
and the alerts as JSON in the key order of ``render``'s dicts, with the timestamps already in the
wire format (DECISIONS §1) and the uploaded spec as text; a second one reads the host's generated
spec excerpt when no spec is linked (DECISIONS §10). Python decodes that JSON with orjson and writes
it again with ``ORJSONRenderer``: the same bytes as the ORM path
(``tests/inventory/test_detail_sql.py``) for about a fifth of its CPU (``bench/README.md``).

The newest 100 traces are not re-serialised: each was rendered once when ingestion stored it
(``ApiTrace.rendered``) and the statement returns those bytes, joined into the answer as they are.
When one of them was stored without its JSON, a third statement builds them all from their columns.

A number the standard library and orjson would decode differently (an integer of 20 digits or
more, which orjson turns into a float) sends the request down the ORM path.
"""
from __future__ import annotations

import uuid

import orjson

from core.errors import EndpointNotFound

from .render import string_list

# A timestamptz column in the wire format of core.fields.timestamp (milliseconds truncated, UTC).
_WIRE_TIME = "to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"


def _object(alias: str, pairs: tuple) -> str:
    """``json_build_object`` of (key, column or SQL) pairs; a column named ``@x`` is a timestamp."""
    parts = []
    for key, value in pairs:
        if value.startswith("@"):
            value = _WIRE_TIME.format(f"{alias}.{value[1:]}")
        elif value.isidentifier():
            value = f"{alias}.{value}"
        parts.append(f"'{key}', {value}")
    return "json_build_object(" + ", ".join(parts) + ")"


_ITEM = (("uuid", "e.uuid::text"), ("path", "path"), ("host", "h.name"), ("method", "method"),
         ("riskScore", "risk_score"), ("dataClasses", "data_classes"),
         ("resourcePermissions", "resource_permissions"), ("firstDetected", "@first_detected"),
         ("lastActive", "@last_active"), ("isAuthenticatedDetected", "is_authenticated_detected"),
         ("isAuthenticatedUserSet", "is_authenticated_user_set"),
         ("fullTraceCaptureEnabled", "full_trace_capture_enabled"), ("isGraphQl", "is_graphql"),
         ("openapiSpecName", "openapi_spec_name"), ("owner", "owner"), ("createdAt", "@created_at"),
         ("updatedAt", "@updated_at"))
_FIELD = (("uuid", "f.uuid::text"), ("dataClasses", "data_classes"), ("falsePositives", "false_positives"),
          ("scannerIdentified", "scanner_identified"), ("dataType", "data_type"), ("dataSection", "data_section"),
          ("dataPath", "data_path"), ("statusCode", "status_code"), ("contentType", "content_type"),
          ("isNullable", "is_nullable"), ("entity", "entity"), ("createdAt", "@created_at"),
          ("updatedAt", "@updated_at"), ("lastSeen", "@last_seen"))
_ALERT = (("uuid", "a.uuid::text"), ("type", "type"), ("riskScore", "lower(a.risk_score)"), ("status", "status"),
          ("description", "description"), ("createdAt", "@created_at"), ("updatedAt", "@updated_at"),
          ("resolutionMessage", "resolution_message"), ("context", "context"))
_TRACE = (("uuid", "t.uuid::text"), ("path", "path"), ("method", "method"), ("host", "host"),
          ("requestParameters", "request_parameters"), ("requestHeaders", "request_headers"),
          ("requestBody", "request_body"), ("responseStatus", "response_status"),
          ("responseHeaders", "response_headers"), ("responseBody", "response_body"), ("meta", "meta"),
          ("createdAt", "@created_at"), ("redacted", "redacted"))

# The endpoint named by %(id)s, else the one an alias of that id points to (``lookup.endpoint_get``);
# orders as ``render.endpoint_detail`` does.
DETAIL_SQL = f"""
WITH e AS (
    (SELECT * FROM inventory_endpoint WHERE uuid = %(id)s)
    UNION ALL
    (SELECT e.* FROM inventory_endpointalias a JOIN inventory_endpoint e ON e.uuid = a.endpoint_id
     WHERE a.old_uuid = %(id)s)
    LIMIT 1
)
SELECT e.host_id, e.path, e.openapi_spec_name, e.is_graphql, e.graphql_schema,
       {_object("e", _ITEM)}::text,
       (SELECT json_agg({_object("f", _FIELD)} ORDER BY f.data_section, f.data_path, f.status_code)
        FROM classification_datafield f WHERE f.endpoint_id = e.uuid)::text,
       (SELECT json_agg({_object("a", _ALERT)} ORDER BY a.created_at DESC, a.uuid)
        FROM detections_alert a WHERE a.endpoint_id = e.uuid)::text,
       (SELECT array_agg(t.rendered ORDER BY t.created_at DESC, t.uuid) FROM (
            SELECT rendered, created_at, uuid FROM inventory_apitrace
            WHERE endpoint_id = e.uuid ORDER BY created_at DESC, uuid LIMIT %(traces)s) t),
       (SELECT s.spec::text FROM detections_openapispec s WHERE s.name = e.openapi_spec_name)
FROM e JOIN inventory_host h ON h.id = e.host_id
"""

# The traces of DETAIL_SQL built from their columns, when some were stored without their JSON.
TRACES_SQL = f"""
SELECT json_agg(r.item ORDER BY r.created_at DESC, r.uuid)::text FROM (
    SELECT {_object("t", _TRACE)} AS item, t.created_at, t.uuid FROM inventory_apitrace t
    WHERE t.endpoint_id = %(id)s ORDER BY t.created_at DESC, t.uuid LIMIT %(traces)s) r
"""

# ``detections.openapi.generate.service.generated_spec_excerpt`` in one prepared statement.
_SPEC_PARTS = ("openapi", "info", "servers", "components")
EXCERPT_SQL = (
    "SELECT json_build_array(" + ", ".join(f"s.spec -> '{p}'" for p in _SPEC_PARTS)
    + ", s.spec -> 'paths' -> %(key)s::text)::text FROM detections_openapispec s"
    " WHERE s.source_host_id = %(host)s AND s.is_auto_generated ORDER BY s.id LIMIT 1"
)

# 20 digits or more in a row: maybe an integer orjson would decode as a float (the standard library
# keeps it exact). Digits mapped to "0" and the run searched as bytes: a tenth of a regular expression's time.
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 20


def _loads(text: str | None, default):
    if text is None:
        return default
    data = text.encode()
    if data.translate(_DIGITS_TO_ZERO).find(_LONG_NUMBER) >= 0:
        raise _Fallback()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:  # a number beyond a double's range
        raise _Fallback() from None


class _Fallback(Exception):
    """The SQL path cannot promise the ORM path's bytes for this endpoint."""


def _traces(cursor, rendered: list | None, *, endpoint_id: str, limit: int):
    """The traces as one ready JSON array: their stored JSON (``ApiTrace.rendered``) joined, or,
    when some trace was stored without it, all of them built from their columns."""
    from inventory.ingest.sql import pg_execute

    if not rendered:
        return []
    if None not in rendered:
        return orjson.Fragment(b"[" + b",".join(rendered) + b"]")
    built = pg_execute(cursor, TRACES_SQL, {"id": uuid.UUID(endpoint_id), "traces": limit}).fetchone()[0]
    return _loads(built, [])


def _generated_excerpt(cursor, *, host_id: int, path: str) -> dict | None:
    from detections.openapi.generate.operation import template
    from inventory.ingest.sql import pg_execute

    key, _ = template(path)
    row = pg_execute(cursor, EXCERPT_SQL, {"key": key, "host": host_id}).fetchone()
    if row is None:
        return None
    values = _loads(row[0], None)
    excerpt = {p: value for p, value in zip(_SPEC_PARTS, values) if value is not None}
    excerpt["paths"] = {key: values[-1]} if isinstance(values[-1], dict) else {}
    return excerpt


def endpoint_detail_body(endpoint_key: uuid.UUID, *, traces_limit: int) -> bytes | None:
    """The rendered answer of GET /endpoint/{id} (``ORJSONRenderer`` of ``render.endpoint_detail``),
    or ``None`` when only the ORM path can render this endpoint exactly. ``EndpointNotFound`` for an
    unknown id. One statement, two when the endpoint links no uploaded spec (three when some trace
    was stored without its JSON)."""
    from core.renderers import ORJSONRenderer
    from inventory.ingest.sql import pg_cursor, pg_execute

    with pg_cursor(binary=True) as cursor:  # the traces' JSON arrives as bytes
        row = pg_execute(cursor, DETAIL_SQL, {"id": endpoint_key, "traces": traces_limit}).fetchone()
        if row is None:
            raise EndpointNotFound()
        host_id, path, spec_name, is_graphql, graphql_schema, item, fields, alerts, traces, spec = row
        try:
            data = _loads(item, None)
            data["dataClasses"] = string_list(data["dataClasses"])
            data["resourcePermissions"] = string_list(data["resourcePermissions"])
            data["dataFields"] = _loads(fields, [])
            for field in data["dataFields"]:
                field["dataClasses"] = string_list(field["dataClasses"])
                field["falsePositives"] = string_list(field["falsePositives"])
                field["scannerIdentified"] = string_list(field["scannerIdentified"])
            data["alerts"] = _loads(alerts, [])
            data["traces"] = _traces(cursor, traces, endpoint_id=data["uuid"], limit=traces_limit)
            if spec_name:
                spec = _loads(spec, None)
                spec = spec if isinstance(spec, dict) else None
            else:
                spec = _generated_excerpt(cursor, host_id=host_id, path=path)
        except _Fallback:
            return None
    if spec is not None:
        data["openapiSpec"] = spec
    if is_graphql:
        data["graphQlSchema"] = graphql_schema
    return ORJSONRenderer().render(data)
