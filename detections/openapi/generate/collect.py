"""What a generated spec is built from: one host's endpoints, data fields and sampled stored traces.

Three reads whatever the host's size: its endpoints, every data field of those endpoints, and the
newest ``OPENAPI_GENERATE_SAMPLE_TRACES`` stored traces of each endpoint (stored traces are
redacted already, DECISIONS §4; on PostgreSQL one LATERAL probe per endpoint on the
``trace_endpoint_recent`` index, elsewhere a window function).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import orjson
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from classification.models import DataField
from inventory.models import ApiTrace, Endpoint, Host

FIELD_COLUMNS = ("endpoint_id", "data_section", "status_code", "data_path", "data_type", "is_nullable",
                 "data_classes", "content_type")
TRACE_COLUMNS = ("endpoint_id", "path", "request_parameters", "request_headers", "request_body", "response_status",
                 "response_headers", "response_body", "meta")


@dataclass
class EndpointFacts:
    """One endpoint with its fields and sampled traces."""

    uuid: object
    method: str
    path: str
    is_graphql: bool
    graphql_schema: str | None
    unauthenticated_success_seen: bool
    is_authenticated: bool
    fields: list[tuple] = field(default_factory=list)  # FIELD_COLUMNS[1:]
    traces: list[tuple] = field(default_factory=list)  # TRACE_COLUMNS[1:], JSON columns decoded


@dataclass
class HostFacts:
    host: Host
    endpoints: list[EndpointFacts]


def host_facts(host: Host, *, sample: int | None = None) -> HostFacts:
    """The endpoints of ``host`` (by path, method) with their fields and newest sampled traces."""
    sample = settings.OPENAPI_GENERATE_SAMPLE_TRACES if sample is None else sample
    endpoints = {}
    for row in Endpoint.objects.filter(host=host).order_by("path", "method").values_list(
        "uuid", "method", "path", "is_graphql", "graphql_schema", "unauthenticated_success_seen",
        "is_authenticated_detected", "is_authenticated_user_set",
    ):
        uuid, method, path, graphql, schema, unauth, detected, user_set = row
        endpoints[uuid] = EndpointFacts(uuid, method, path, graphql, schema, unauth,
                                        detected if user_set is None else user_set)
    if not endpoints:
        return HostFacts(host, [])
    ids = list(endpoints)
    for row in _fields(ids):
        endpoints[row[0]].fields.append(row[1:])
    if sample > 0:
        for row in _sampled_traces(ids, sample):
            endpoints[row[0]].traces.append(row[1:])
    return HostFacts(host, list(endpoints.values()))


def _fields(endpoint_ids: list):
    """Rows of ``FIELD_COLUMNS``; on PostgreSQL one server-bound query, class lists decoded with orjson
    (the common empty list without a call): a host has tens of thousands of fields."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        yield from DataField.objects.filter(endpoint_id__in=endpoint_ids).values_list(*FIELD_COLUMNS)
        return
    from inventory.ingest.sql import pg_cursor

    loads = orjson.loads
    with pg_cursor() as cursor:
        cursor.execute(
            "SELECT endpoint_id, data_section, status_code, data_path, data_type, is_nullable, data_classes::text, "
            "content_type FROM classification_datafield WHERE endpoint_id = ANY(%s)", [endpoint_ids])
        for endpoint_id, section, status, path, dtype, nullable, classes, content_type in cursor:
            yield endpoint_id, section, status, path, dtype, nullable, [] if classes == "[]" else loads(classes), \
                content_type


_SAMPLE_SQL = """
SELECT t.endpoint_id, t.path, t.request_parameters::text, t.request_headers::text, t.request_body,
       t.response_status, t.response_headers::text, t.response_body, t.meta::text
FROM unnest(%s::uuid[]) AS e(id)
CROSS JOIN LATERAL (
    SELECT * FROM inventory_apitrace WHERE endpoint_id = e.id ORDER BY created_at DESC LIMIT %s
) AS t
"""


def _sampled_traces(endpoint_ids: list, sample: int):
    if connections[DEFAULT_DB_ALIAS].vendor == "postgresql":
        from inventory.ingest.sql import pg_cursor

        loads = orjson.loads
        with pg_cursor() as cursor:
            cursor.execute(_SAMPLE_SQL, [endpoint_ids, sample])
            for endpoint_id, path, params, req_headers, req_body, status, resp_headers, resp_body, meta in cursor:
                yield (endpoint_id, path, loads(params), loads(req_headers), req_body, status, loads(resp_headers),
                       resp_body, loads(meta))
        return
    ranked = ApiTrace.objects.filter(endpoint_id__in=endpoint_ids).annotate(
        rank=Window(RowNumber(), partition_by=[F("endpoint_id")], order_by=[F("created_at").desc()])
    )
    grouped = defaultdict(int)
    for row in ranked.values_list(*TRACE_COLUMNS, "rank"):
        if row[-1] <= sample and grouped[row[0]] < sample:
            grouped[row[0]] += 1
            yield row[:-1]
