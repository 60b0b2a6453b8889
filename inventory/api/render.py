"""Wire dicts of the busiest read routes, built straight from query rows.

GET /endpoints, GET /endpoint/{id}, GET /hosts and GET /new-detections answer with
exactly what their DRF serializers (``serializers.py``, which stay the documented
schema) would produce, without instantiating a serializer per request and a field
per value: rendering a 10-item page through DRF cost more than the whole rest of the
request (``bench/README.md``). ``tests/inventory/test_render.py`` checks every
function here against its serializer.
"""
from __future__ import annotations

import orjson
from django.db.models import F

from classification.models import DataField
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint

from core.fields import timestamp

# GET /endpoints (and new ENDPOINT detections): the columns of a list item, in this order.
ENDPOINT_COLUMNS = (
    "uuid", "path", "host__name", "method", "risk_score", "data_classes", "resource_permissions", "first_detected",
    "last_active", "is_authenticated_detected", "is_authenticated_user_set", "full_trace_capture_enabled",
    "is_graphql", "openapi_spec_name", "owner", "created_at", "updated_at",
)


def string_list(values) -> list:
    return [None if v is None else str(v) for v in (values or ())]


def _bool(value):
    return None if value is None else bool(value)


def endpoint_item(row: tuple) -> dict:
    """SPEC "Endpoint (list item)" from a row of ``ENDPOINT_COLUMNS``."""
    (uuid, path, host, method, risk, classes, permissions, first, last, auth_detected, auth_user, full_capture,
     graphql, spec_name, owner, created, updated) = row
    return {
        "uuid": str(uuid),
        "path": path,
        "host": host,
        "method": method,
        "riskScore": risk,
        "dataClasses": string_list(classes),
        "resourcePermissions": string_list(permissions),
        "firstDetected": timestamp(first),
        "lastActive": timestamp(last),
        "isAuthenticatedDetected": bool(auth_detected),
        "isAuthenticatedUserSet": _bool(auth_user),
        "fullTraceCaptureEnabled": bool(full_capture),
        "isGraphQl": bool(graphql),
        "openapiSpecName": spec_name,
        "owner": owner,
        "createdAt": timestamp(created),
        "updatedAt": timestamp(updated),
    }


def endpoint_rows(queryset) -> list[tuple]:
    """The list-item rows of a queryset of endpoints (host joined), in its order."""
    return list(queryset.values_list(*ENDPOINT_COLUMNS))


# --- Endpoint detail --------------------------------------------------------------------

DATA_FIELD_COLUMNS = ("uuid", "data_classes", "false_positives", "scanner_identified", "data_type", "data_section",
                      "data_path", "status_code", "content_type", "is_nullable", "entity", "created_at",
                      "updated_at", "last_seen")
ALERT_COLUMNS = ("uuid", "type", "risk_score", "status", "description", "created_at", "updated_at",
                 "resolution_message", "context")
TRACE_COLUMNS = ("uuid", "path", "method", "host", "request_parameters", "request_headers", "request_body",
                 "response_status", "response_headers", "response_body", "meta", "created_at", "redacted")


def data_field_item(row: tuple) -> dict:
    """A DataField as ``DataFieldSerializer`` shows it, from a row of ``DATA_FIELD_COLUMNS``."""
    (uuid, classes, fps, scanner, dtype, section, path, status, content_type, nullable, entity, created, updated,
     last_seen) = row
    return {
        "uuid": str(uuid),
        "dataClasses": string_list(classes),
        "falsePositives": string_list(fps),
        "scannerIdentified": string_list(scanner),
        "dataType": dtype,
        "dataSection": section,
        "dataPath": path,
        "statusCode": int(status),
        "contentType": content_type,
        "isNullable": bool(nullable),
        "entity": None if entity is None else str(entity),
        "createdAt": timestamp(created),
        "updatedAt": timestamp(updated),
        "lastSeen": timestamp(last_seen),
    }


def _dict(value):
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value


def alert_item(row: tuple) -> dict:
    """An alert as ``EndpointAlertSerializer`` shows it, from a row of ``ALERT_COLUMNS``."""
    uuid, type_, risk, status, description, created, updated, resolution, context = row
    return {
        "uuid": str(uuid),
        "type": type_,
        "riskScore": risk.lower(),
        "status": status,
        "description": description,
        "createdAt": timestamp(created),
        "updatedAt": timestamp(updated),
        "resolutionMessage": None if resolution is None else str(resolution),
        "context": _dict(context),
    }


def trace_item(row: tuple) -> dict:
    """A trace as ``ApiTraceSerializer`` shows it, from a row of ``TRACE_COLUMNS``."""
    (uuid, path, method, host, params, req_headers, req_body, status, resp_headers, resp_body, meta, created,
     redacted) = row
    return {
        "uuid": str(uuid),
        "path": path,
        "method": method,
        "host": host,
        "requestParameters": params,
        "requestHeaders": req_headers,
        "requestBody": str(req_body),
        "responseStatus": int(status),
        "responseHeaders": resp_headers,
        "responseBody": str(resp_body),
        "meta": _dict(meta),
        "createdAt": timestamp(created),
        "redacted": bool(redacted),
    }


# JSON columns of a trace: PostgreSQL's jsonb gives an object's keys back ordered by their length
# in bytes, then bytewise, and the ORM reads them in that order.
_TRACE_JSON_COLUMNS = frozenset({"request_parameters", "request_headers", "response_headers", "meta"})


class _NotExact(Exception):
    """A value that a trip through jsonb could change (a float, a key that is not a string)."""


def _jsonb_key(item) -> tuple:
    key = item[0]
    if not isinstance(key, str):
        raise _NotExact()
    encoded = key.encode()
    return len(encoded), encoded


def _as_jsonb(value):
    """``value`` as the ORM reads it back from a jsonb column; ``_NotExact`` when that is not sure."""
    if isinstance(value, dict):
        return {k: _as_jsonb(v) for k, v in sorted(value.items(), key=_jsonb_key)}
    if isinstance(value, list):
        return [_as_jsonb(v) for v in value]
    if isinstance(value, float):  # jsonb's numeric may spell it otherwise (1e16 comes back 10000000000000000)
        raise _NotExact()
    return value


def trace_json(values: dict) -> bytes | None:
    """The JSON of a trace about to be stored (``values``: its column values, ``uuid`` and
    ``created_at`` included) exactly as :func:`trace_item` of the stored row renders it, for
    ``ApiTrace.rendered``; ``None`` when a value's trip through jsonb could change its spelling."""
    from core.renderers import ORJSONRenderer

    try:
        row = tuple(_as_jsonb(values[c]) if c in _TRACE_JSON_COLUMNS else values[c] for c in TRACE_COLUMNS)
    except _NotExact:
        return None
    return ORJSONRenderer().render(trace_item(row))


def traces_rendered(endpoint_id, limit: int) -> orjson.Fragment:
    """The endpoint's newest ``limit`` traces (newest first) as one rendered JSON array (``trace_item``
    of each, as ``core.renderers.ORJSONRenderer`` writes it): the JSON stored with each trace
    (``ApiTrace.rendered``), the columns rendered for the traces stored without it. One query."""
    from core.renderers import ORJSONRenderer

    renderer = ORJSONRenderer()
    rows = (ApiTrace.objects.filter(endpoint_id=endpoint_id).order_by(F("created_at").desc(), "uuid")
            .values_list("rendered", *TRACE_COLUMNS)[:limit])
    parts = [bytes(row[0]) if row[0] is not None else renderer.render(trace_item(row[1:])) for row in rows]
    return orjson.Fragment(b"[" + b",".join(parts) + b"]")


def endpoint_detail(endpoint: Endpoint, *, openapi_spec: dict | None, traces_limit: int,
                    rendered_traces: bool = False) -> dict:
    """SPEC "Endpoint (detail)" (``EndpointDetailSerializer``): the list item, fields, alerts, traces, spec, schema.

    ``rendered_traces``: ``traces`` as :func:`traces_rendered`'s ready JSON (for the route's renderer),
    not as dicts."""
    data = endpoint_item(tuple(
        endpoint.host.name if name == "host__name" else getattr(endpoint, name) for name in ENDPOINT_COLUMNS
    ))
    data["dataFields"] = [
        data_field_item(row) for row in DataField.objects.filter(endpoint_id=endpoint.uuid)
        .order_by("data_section", "data_path", "status_code").values_list(*DATA_FIELD_COLUMNS)
    ]
    data["alerts"] = [
        alert_item(row) for row in Alert.objects.filter(endpoint_id=endpoint.uuid)
        .order_by("-created_at", "uuid").values_list(*ALERT_COLUMNS)
    ]
    data["traces"] = traces_rendered(endpoint.uuid, traces_limit) if rendered_traces else [
        trace_item(row) for row in ApiTrace.objects.filter(endpoint_id=endpoint.uuid)
        .order_by(F("created_at").desc(), "uuid").values_list(*TRACE_COLUMNS)[:traces_limit]
    ]
    if openapi_spec is not None:
        data["openapiSpec"] = openapi_spec
    if endpoint.is_graphql:
        data["graphQlSchema"] = endpoint.graphql_schema
    return data


def host_item(name: str, num_endpoints: int, is_public: bool) -> dict:
    """SPEC "Host" (``HostSerializer``)."""
    return {"host": str(name), "numEndpoints": int(num_endpoints), "isPublic": bool(is_public)}
