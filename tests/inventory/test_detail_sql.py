"""GET /endpoint/{id} from prepared SQL (inventory.api.detail_sql) answers the very bytes of the ORM path
(render.endpoint_detail, the reference and SQLite's path) for varied endpoints."""
import datetime as dt
import json
import uuid

import orjson

import pytest
from django.db import connection
from django.utils import timezone

from core.enums import AlertStatus, AlertType, DataSection
from core.renderers import ORJSONRenderer
from detections.models import OpenApiSpec
from detections.openapi.generate.operation import template
from inventory.api import detail_sql, services
from inventory.models import ApiTrace, EndpointAlias
from tests.factories import AlertFactory, DataFieldFactory, EndpointFactory, HostFactory
from tests.inventory.ingest_support import ingest, raw_trace  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif("connection.vendor != 'postgresql'", reason="the prepared-SQL path is PostgreSQL's"),
]

NOW = timezone.now().replace(microsecond=123999)
ODD = "ünï \"q\" \\ \n\t\x01 /é/ \u2028 \u2029 😀 <&>"
JSONS = [[], {}, [{"name": "q", "value": ODD}], {"a": [1, -2.5, 1e-7, 0.1, 3.14159265358979, None, True, False],
         "n": {"": ODD, "9": 9223372036854775807, "deep": [[{"x": -0.0}]]}}, [{"name": "A", "value": 1}], "str", 7]


def reference(endpoint_id, *, rendered_traces: bool = False) -> bytes:
    """The answer the route gave before the SQL path: the ORM path, every trace rendered from its columns
    (``rendered_traces``: each trace rendered apart, as the ORM path renders them for the route)."""
    return ORJSONRenderer().render(services.endpoint_detail(endpoint_id=str(endpoint_id),
                                                            rendered_traces=rendered_traces))


def sql_body(endpoint_id) -> bytes | None:
    return detail_sql.endpoint_detail_body(uuid.UUID(str(endpoint_id)), traces_limit=services.MAX_DETAIL_TRACES)


def rich_endpoint(n: int, **kwargs):
    host = kwargs.pop("host", None) or HostFactory(name=f"h{n}.ünï.example.com")
    e = EndpointFactory(host=host, path=f"/ça/{n}/{{param1}}/\u2028", method=["GET", "POST", "PATCH"][n % 3],
                        risk_score=["NONE", "LOW", "MEDIUM", "HIGH"][n % 4], data_classes=["email", ODD][: n % 3],
                        resource_permissions=["admin"] if n % 2 else [],
                        first_detected=None if n % 2 else NOW - dt.timedelta(days=n),
                        last_active=NOW, is_authenticated_user_set=[None, True, False][n % 3],
                        is_authenticated_detected=bool(n % 2), full_trace_capture_enabled=bool(n % 3),
                        owner=ODD if n % 2 else "", **kwargs)
    for i, section in enumerate(DataSection.values):
        DataFieldFactory(endpoint=e, data_section=section, data_path=f"a.{ODD}.{i}",
                         data_classes=["email", "ssn"][: (i + n) % 3], false_positives=["phone"] if i % 2 else [],
                         scanner_identified=[ODD] if i == n % 5 else [], is_nullable=bool(i % 2),
                         entity=None if i % 2 else "customer", content_type="application/json" if i else "")
    DataFieldFactory(endpoint=e, data_section=DataSection.RESPONSE_BODY, data_path="a", status_code=404)
    AlertFactory(endpoint=e, type=AlertType.PII_DATA, status=AlertStatus.RESOLVED, resolution_message=ODD,
                 risk_score="HIGH", context={"dataPath": ODD, "1": [1, 2.5, None], "x": {"y": True}})
    AlertFactory(endpoint=e, description=ODD)
    for i in range(3 + n % 4):
        ApiTrace.objects.create(
            endpoint=e, host=e.host.name, path=f"/ça/{n}/{i}/{ODD}", method="PATCH",
            request_parameters=JSONS[(i + n) % len(JSONS)], request_headers=JSONS[(i + 2) % len(JSONS)],
            request_body=ODD * i, response_status=200 + i, response_headers=JSONS[(i + 3) % len(JSONS)],
            response_body='{"a": 1}' if i % 2 else "", meta={"source": "10.0.0.1", "n": None, "u": ODD},
            redacted=bool(i % 2),
            # the same instant twice: ties ordered by uuid; microseconds cut, never rounded
            created_at=NOW - dt.timedelta(seconds=i // 2, microseconds=999 * i),
        )
    return e


def test_varied_endpoints_answer_the_orm_paths_bytes():
    endpoints = [rich_endpoint(n) for n in range(8)]
    for e in endpoints:
        body = sql_body(e.uuid)
        assert body is not None
        assert body == reference(e.uuid)
        assert b"\\u2028" in body


def test_bare_and_graphql_endpoints():
    bare = EndpointFactory(data_classes=[], first_detected=None, last_active=None, openapi_spec_name=None)
    graphql = rich_endpoint(1, is_graphql=True, graphql_schema="type Query { a: Int } # " + ODD)
    graphql_none = EndpointFactory(is_graphql=True, graphql_schema=None)
    for e in (bare, graphql, graphql_none):
        assert sql_body(e.uuid) == reference(e.uuid)


def test_linked_unlinked_and_generated_specs():
    spec = {"openapi": "3.0.0", "info": {"title": ODD}, "paths": {"/x": {"get": {"x-n": [1.5, 2]}}}}
    OpenApiSpec.objects.create(name="shop.yaml", text="{}", extension="yaml", openapi_version="3.0.0", hosts=[],
                               spec=spec)
    linked = rich_endpoint(2, openapi_spec_name="shop.yaml")
    missing = rich_endpoint(3, openapi_spec_name="gone.yaml")
    host = HostFactory(name="gen.example.com")
    generated = rich_endpoint(4, host=host)
    key, _ = template(generated.path)
    OpenApiSpec.objects.create(
        name="gen", text="{}", extension="json", openapi_version="3.0.0", hosts=[], is_auto_generated=True,
        source_host=host, spec={"openapi": "3.0.3", "info": {"title": "gen", "x": None}, "servers": [{"url": ODD}],
                                "paths": {key: {"get": {"responses": {"200": {"description": ODD}}}}, "/o": {}}})
    other_path = rich_endpoint(5, host=host)
    no_generated = rich_endpoint(6)
    for e in (linked, missing, generated, other_path, no_generated):
        body = sql_body(e.uuid)
        assert body is not None and body == reference(e.uuid)
    assert b'"paths":{"/x":{"get":{"x-n":[1.5,2]}}}' in sql_body(linked.uuid)
    assert b'"openapiSpec"' not in sql_body(missing.uuid)
    assert b'"servers":[{"url"' in sql_body(generated.uuid) and b'"paths":{}' in sql_body(other_path.uuid)


def test_an_alias_id_answers_the_endpoint_it_was_merged_into_and_unknown_ids_are_404(client):
    e = rich_endpoint(7)
    old = uuid.uuid4()
    EndpointAlias.objects.create(old_uuid=old, endpoint=e)
    assert sql_body(old) == reference(e.uuid)
    response = client.get(f"/api/v1/endpoint/{old}")
    assert response.status_code == 200 and response.content == reference(e.uuid)
    assert client.get(f"/api/v1/endpoint/{uuid.uuid4()}").status_code == 404
    assert client.get("/api/v1/endpoint/not-a-uuid").status_code == 404


def test_numbers_orjson_would_change_take_the_orm_path(client):
    e = rich_endpoint(0)
    ApiTrace.objects.create(endpoint=e, host="h", path="/p", method="GET", request_parameters=[{"v": 10 ** 30}],
                            response_status=200)
    assert sql_body(e.uuid) is None
    response = client.get(f"/api/v1/endpoint/{e.uuid}")
    # The whole answer falls back to DRF's renderer (floats spelled 1e-07), the traces keep orjson's (1e-7).
    assert response.status_code == 200 and response.content == reference(e.uuid, rendered_traces=True)
    assert b"1000000000000000000000000000000" in response.content


def test_traces_stored_by_ingestion_are_sent_as_their_stored_json(ingest, client):
    """Ingestion renders each stored trace once (``ApiTrace.rendered``); the detail joins those bytes
    and they equal a rendering of the stored columns: meta's keys as jsonb orders them, credentials
    redacted, odd characters. A trace stored without its JSON (written through the ORM, or holding
    a float jsonb may respell) has all of them built from their columns instead."""
    traces = [raw_trace(host="rendered.example.com", path="/api/orders/7", query=[("q", ODD), ("token", "s3cr3t")],
                        headers={"Authorization": "Bearer abc.def.ghi", "X-Odd": ODD},
                        body=json.dumps({"email": "ann@example.com", "n": ODD}),
                        response_body={"card": "4111 1111 1111 1111", "id": 7, "odd": ODD}, destination_port=8443)
              for _ in range(3)]
    ingest(*traces)
    stored = ApiTrace.objects.filter(host="rendered.example.com")
    assert stored.count() == 3 and all(row is not None for row in stored.values_list("rendered", flat=True))
    endpoint_id = stored.first().endpoint_id
    meta = orjson.loads(bytes(stored.first().rendered))["meta"]
    assert list(meta) == sorted(meta, key=lambda k: (len(k), k))  # jsonb's order, not the agent's
    body = sql_body(endpoint_id)
    assert body == reference(endpoint_id) == reference(endpoint_id, rendered_traces=True)  # SQLite's path too
    assert b"s3cr3t" not in body and b"abc.def.ghi" not in body and b"4111 1111" not in body
    response = client.get(f"/api/v1/endpoint/{endpoint_id}")
    assert response.status_code == 200 and response.content == body

    ApiTrace.objects.create(endpoint_id=endpoint_id, host="rendered.example.com", path="/api/orders/7",
                            method="GET", response_status=200, meta={"incoming": True, "n": 1e16})
    with_orm_trace = sql_body(endpoint_id)
    assert with_orm_trace == reference(endpoint_id) and b"10000000000000000" in with_orm_trace
    assert len(orjson.loads(with_orm_trace)["traces"]) == 4


def test_a_value_jsonb_could_respell_is_stored_without_its_json():
    from inventory.api.render import trace_json

    values = {"uuid": uuid.uuid4(), "path": "/p", "method": "GET", "host": "h", "request_parameters": [],
              "request_headers": [], "request_body": "", "response_status": 200, "response_headers": [], "response_body": "",
              "meta": {"sourcePort": "1", "incoming": True, "a": {"bb": 1, "c": [None, "x"]}}, "created_at": NOW,
              "redacted": False}
    assert orjson.loads(trace_json(values))["meta"] == {"a": {"c": [None, "x"], "bb": 1}, "incoming": True,
                                                         "sourcePort": "1"}
    assert list(orjson.loads(trace_json(values))["meta"]) == ["a", "incoming", "sourcePort"]
    assert trace_json({**values, "meta": {"x": 1e16}}) is None
    assert trace_json({**values, "request_headers": [{"name": "a", "value": 0.5}]}) is None
    assert trace_json({**values, "meta": {1: "integer key"}}) is None
