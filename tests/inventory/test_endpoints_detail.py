"""One endpoint: detail, usage, authenticated, full trace capture, delete, suggested paths, GraphQL schema."""
import datetime as dt
import uuid

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils import timezone

from classification.models import DataField
from detections.models import Alert
from inventory.api.render import TRACE_COLUMNS, trace_json
from inventory.models import ApiTrace, Endpoint, EndpointCaller, Host, ObservedPath, UsageDay, UsageMinute
from tests.factories import AlertFactory, DataFieldFactory, HostFactory
from tests.inventory.factories import (
    ApiTraceFactory,
    EndpointCallerFactory,
    ObservedPathFactory,
    PatternEndpointFactory,
    UsageDayFactory,
    UsageMinuteFactory,
)

pytestmark = pytest.mark.django_db

UNKNOWN = "7b0e1f8c-6d1a-4c55-9a53-3c1f2f4f9d11"
SUBROUTES = [
    ("get", ""), ("delete", ""), ("get", "/usage"), ("put", "/authenticated"),
    ("put", "/enable-full-trace-capture"), ("get", "/suggested-paths"), ("post", "/update-paths"),
    ("put", "/graphql-schema"), ("delete", "/graphql-schema"),
]
VALID_BODY = {
    "/authenticated": {"authenticated": True},
    "/enable-full-trace-capture": {"enabled": True},
    "/update-paths": {"paths": ["/x"]},
}


def url(endpoint, suffix=""):
    key = endpoint if isinstance(endpoint, str) else endpoint.uuid
    return f"/api/v1/endpoint/{key}{suffix}"


@pytest.mark.parametrize("method, suffix", SUBROUTES)
@pytest.mark.parametrize("key", [UNKNOWN, "not-a-uuid", "123", "7b0e1f8c6d1a4c559a533c1f2f4f9d1"])
def test_unknown_or_malformed_endpoint_id_is_404_endpoint_does_not_exist(client, method, suffix, key):
    response = getattr(client, method)(url(key, suffix), VALID_BODY.get(suffix, {}), format="json")
    assert response.status_code == 404
    assert response.content == b'"Endpoint does not exist."'


@pytest.mark.parametrize("method, suffix", SUBROUTES)
def test_endpoint_routes_need_the_api_key(anon_client, method, suffix):
    e = PatternEndpointFactory()
    response = getattr(anon_client, method)(url(e, suffix), VALID_BODY.get(suffix, {}), format="json")
    assert response.status_code == 401 and response.json() == "Client unauthorized"
    assert Endpoint.objects.filter(uuid=e.uuid).exists()


class TestDetail:
    def test_detail_carries_fields_alerts_and_traces_in_decisions_shapes(self, client):
        e = PatternEndpointFactory(path="/users/{param1}", data_classes=["email"], risk_score="MEDIUM", risk_rank=2)
        field = DataFieldFactory(endpoint=e, data_section="RESPONSE_BODY", data_path="user.email",
                                 data_classes=["email"], false_positives=["phone_number"], entity="customer")
        AlertFactory(endpoint=e, type="PII Data Detected", risk_score="HIGH",
                     description="Sensitive data of type email has been detected in field 'user.email'.")
        trace = ApiTraceFactory(endpoint=e, path="/users/7")
        body = client.get(url(e)).json()

        assert body["uuid"] == str(e.uuid) and body["riskScore"] == "MEDIUM" and body["dataClasses"] == ["email"]
        [f] = body["dataFields"]
        assert set(f) == {"uuid", "dataClasses", "falsePositives", "scannerIdentified", "dataType", "dataSection",
                          "dataPath", "statusCode", "contentType", "isNullable", "entity", "createdAt",
                          "updatedAt", "lastSeen"}
        assert (f["uuid"], f["dataPath"], f["dataSection"], f["statusCode"]) == (
            str(field.uuid), "user.email", "RESPONSE_BODY", 200)
        assert f["dataClasses"] == ["email"] and f["falsePositives"] == ["phone_number"] and f["entity"] == "customer"
        [a] = body["alerts"]
        assert set(a) == {"uuid", "type", "riskScore", "status", "description", "createdAt", "updatedAt",
                          "resolutionMessage", "context"}
        assert a["riskScore"] == "high" and a["status"] == "Open" and a["type"] == "PII Data Detected"
        [t] = body["traces"]
        assert set(t) == {"uuid", "path", "method", "host", "requestParameters", "requestHeaders", "requestBody",
                          "responseStatus", "responseHeaders", "responseBody", "meta", "createdAt", "redacted"}
        assert t["uuid"] == str(trace.uuid) and t["path"] == "/users/7" and t["responseStatus"] == 200
        assert t["requestHeaders"] == [{"name": "Authorization", "value": "[REDACTED]"}]
        assert "graphQlSchema" not in body and "openapiSpec" not in body

    def test_traces_are_newest_first_and_at_most_100(self, client):
        e = PatternEndpointFactory()
        now = timezone.now()
        traces = [ApiTraceFactory(endpoint=e, created_at=now - dt.timedelta(seconds=i)) for i in range(105)]
        body = client.get(url(e)).json()
        assert [t["uuid"] for t in body["traces"]] == [str(t.uuid) for t in traces[:100]]

    def test_graphql_endpoint_shows_its_schema_even_when_none_is_uploaded(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True)
        assert client.get(url(e)).json()["graphQlSchema"] is None
        Endpoint.objects.filter(uuid=e.uuid).update(graphql_schema="type Query { a: Int }")
        assert client.get(url(e)).json()["graphQlSchema"] == "type Query { a: Int }"

    def test_openapi_spec_is_omitted_while_no_spec_is_stored(self, client):
        e = PatternEndpointFactory(openapi_spec_name="shop.yaml")
        body = client.get(url(e)).json()
        assert body["openapiSpecName"] == "shop.yaml" and "openapiSpec" not in body

    def test_detail_is_a_constant_number_of_queries(self, client, django_assert_num_queries):
        e = PatternEndpointFactory()
        for _ in range(5):
            DataFieldFactory(endpoint=e)
            AlertFactory(endpoint=e, description=str(uuid.uuid4()))
            ApiTraceFactory(endpoint=e)
        # key; the endpoint with its host, fields, alerts, traces' stored JSON and linked spec (one
        # prepared statement, inventory.api.detail_sql); the traces built from their columns, as these
        # were written through the ORM without their JSON; the host's generated spec excerpt (DECISIONS §10)
        # (the ORM path on SQLite: key, endpoint+host, fields, alerts, traces, the spec)
        postgres = connection.vendor == "postgresql"
        with django_assert_num_queries(4 if postgres else 6):
            body = client.get(url(e)).json()
        assert (len(body["dataFields"]), len(body["alerts"]), len(body["traces"])) == (5, 5, 5)
        # Traces stored by ingestion carry their JSON: no statement builds them.
        for trace in ApiTrace.objects.filter(endpoint=e).values(*TRACE_COLUMNS, "uuid"):
            ApiTrace.objects.filter(uuid=trace["uuid"]).update(rendered=trace_json(trace))
        with django_assert_num_queries(3 if postgres else 6):
            assert client.get(url(e)).json() == body


class TestUsage:
    def test_daily_usage_is_the_last_30_days_with_traffic_oldest_first(self, client):
        e = PatternEndpointFactory()
        today = timezone.now().date()
        UsageDayFactory(endpoint=e, day=today, count=5)
        UsageDayFactory(endpoint=e, day=today - dt.timedelta(days=2), count=7)
        UsageDayFactory(endpoint=e, day=today - dt.timedelta(days=29), count=1)
        UsageDayFactory(endpoint=e, day=today - dt.timedelta(days=30), count=99)  # too old
        UsageDayFactory(day=today, count=1000)  # another endpoint
        body = client.get(url(e, "/usage")).json()
        assert body["dailyUsage"] == [
            {"day": f"{today - dt.timedelta(days=29)}T00:00:00.000Z", "cnt": 1},
            {"day": f"{today - dt.timedelta(days=2)}T00:00:00.000Z", "cnt": 7},
            {"day": f"{today}T00:00:00.000Z", "cnt": 5},
        ]

    def test_last_minute_count_reads_the_current_minute_counter(self, client):
        e = PatternEndpointFactory()
        now = timezone.now().replace(second=0, microsecond=0)
        UsageMinuteFactory(endpoint=e, minute=now, count=4)
        UsageMinuteFactory(endpoint=e, minute=now - dt.timedelta(minutes=5), count=100)
        body = client.get(url(e, "/usage")).json()
        # A minute boundary between the two lines moves the 4 to the weighted previous minute: still <= 4.
        assert 0 < body["last1MinCnt"] <= 4

    def test_last_minute_weights_the_previous_minute_by_its_part_in_the_window(self):
        from inventory.api.services import endpoint_usage

        e = PatternEndpointFactory()
        minute = timezone.now().replace(second=0, microsecond=0) - dt.timedelta(hours=1)
        UsageMinuteFactory(endpoint=e, minute=minute, count=10)
        UsageMinuteFactory(endpoint=e, minute=minute - dt.timedelta(minutes=1), count=60)
        usage = endpoint_usage(endpoint_id=str(e.uuid), now=minute + dt.timedelta(seconds=15))
        assert usage["last1MinCnt"] == 10 + 45

    def test_no_traffic_is_empty_usage(self, client):
        e = PatternEndpointFactory()
        assert client.get(url(e, "/usage")).json() == {"dailyUsage": [], "last1MinCnt": 0}


class TestToggles:
    def test_authenticated_sets_the_operator_value(self, client):
        e = PatternEndpointFactory(is_authenticated_detected=True)
        response = client.put(url(e, "/authenticated"), {"authenticated": False}, format="json")
        assert response.status_code == 200 and response.json() == "Success"
        e.refresh_from_db()
        assert e.is_authenticated_user_set is False and e.is_authenticated_detected is True
        assert client.get(url(e)).json()["isAuthenticatedUserSet"] is False

    @pytest.mark.parametrize("body", [{}, {"authenticated": "yes"}, {"authenticated": 1}, {"authenticated": None}])
    def test_authenticated_needs_a_boolean(self, client, body):
        e = PatternEndpointFactory()
        response = client.put(url(e, "/authenticated"), body, format="json")
        assert response.status_code == 400 and response.json()["type"] == "ZOD"
        assert response.json()["err"]["issues"][0]["path"] == ["authenticated"]
        e.refresh_from_db()
        assert e.is_authenticated_user_set is None

    def test_full_trace_capture_turns_on_and_off(self, client):
        e = PatternEndpointFactory()
        for enabled in (True, False, True):
            response = client.put(url(e, "/enable-full-trace-capture"), {"enabled": enabled}, format="json")
            assert response.status_code == 200 and response.json() == "Success"
            e.refresh_from_db()
            assert e.full_trace_capture_enabled is enabled

    def test_full_trace_capture_needs_enabled(self, client):
        e = PatternEndpointFactory()
        response = client.put(url(e, "/enable-full-trace-capture"), {"enable": True}, format="json")
        assert response.status_code == 400
        assert response.json()["err"]["issues"][0] == {
            "code": "invalid_type", "expected": "boolean", "received": "undefined", "path": ["enabled"],
            "message": "Required"}

    def test_malformed_json_body_is_a_zod_400(self, client):
        e = PatternEndpointFactory()
        response = client.put(url(e, "/authenticated"), data=b'{"authenticated": tr', content_type="application/json")
        assert response.status_code == 400 and response.json()["err"]["issues"][0]["path"] == []


class TestDelete:
    def _populated(self):
        e = PatternEndpointFactory()
        DataFieldFactory(endpoint=e)
        AlertFactory(endpoint=e)
        ApiTraceFactory(endpoint=e)
        UsageMinuteFactory(endpoint=e)
        UsageDayFactory(endpoint=e)
        ObservedPathFactory(endpoint=e)
        EndpointCallerFactory(endpoint=e)
        return e

    def _rows_of(self, e):
        return [m.objects.filter(endpoint_id=e.uuid).count()
                for m in (DataField, Alert, ApiTrace, UsageMinute, UsageDay, ObservedPath, EndpointCaller)]

    def test_delete_one_cascades_to_everything_under_it(self, client):
        e, other = self._populated(), self._populated()
        response = client.delete(url(e))
        assert response.status_code == 200 and response.json() == "Success"
        assert not Endpoint.objects.filter(uuid=e.uuid).exists()
        assert self._rows_of(e) == [0] * 7
        assert self._rows_of(other) == [1] * 7
        assert client.delete(url(e)).status_code == 404

    def test_delete_many_ignores_unknown_ids(self, client):
        a, b, keep = self._populated(), self._populated(), self._populated()
        response = client.delete("/api/v1/endpoints", {"uuids": [str(a.uuid), str(b.uuid), UNKNOWN]}, format="json")
        assert response.status_code == 200 and response.json() == "Success"
        assert list(Endpoint.objects.values_list("uuid", flat=True)) == [keep.uuid]
        assert self._rows_of(a) == [0] * 7 and self._rows_of(keep) == [1] * 7

    def test_a_host_without_endpoints_left_is_not_listed(self, client):
        e = PatternEndpointFactory(host=HostFactory(name="lonely.example.com"))
        client.delete(url(e))
        assert Host.objects.filter(name="lonely.example.com").exists()
        assert client.get("/api/v1/hosts").json() == []

    @pytest.mark.parametrize("body, path, code", [
        ({}, ["uuids"], "invalid_type"),
        ({"uuids": []}, ["uuids"], "too_small"),
        ({"uuids": "x"}, ["uuids"], "invalid_type"),
        ({"uuids": [UNKNOWN, "nope"]}, ["uuids", 1], "invalid_string"),
    ])
    def test_delete_many_validates_its_body_and_deletes_nothing(self, client, body, path, code):
        e = PatternEndpointFactory()
        response = client.delete("/api/v1/endpoints", body, format="json")
        assert response.status_code == 400
        issue = response.json()["err"]["issues"][0]
        assert issue["path"] == path and issue["code"] == code
        assert Endpoint.objects.filter(uuid=e.uuid).exists()


class TestSuggestedPaths:
    def test_suggestions_come_from_the_observed_paths(self, client):
        e = PatternEndpointFactory(path="/users/{param1}/orders/{param2}")
        for n in range(15):
            ObservedPathFactory(endpoint=e, path=f"/users/{1000 + n}/orders/{n}")
        for n in range(5):
            ObservedPathFactory(endpoint=e, path=f"/users/{2000 + n}/orders/latest")
        ObservedPathFactory(path="/users/1/orders/elsewhere")  # another endpoint
        response = client.get(url(e, "/suggested-paths"))
        assert response.status_code == 200
        # mean literal frequency: (users 1 + orders 1) / 2 = 1 before (1 + 1 + latest 0.25) / 3
        assert response.json() == ["/users/{param1}/orders/{param2}", "/users/{param1}/orders/latest"]

    def test_only_the_newest_2000_paths_are_read(self, client):
        e = PatternEndpointFactory(path="/items/{param1}")
        old = timezone.now() - dt.timedelta(days=1)
        ObservedPath.objects.bulk_create(
            [ObservedPath(endpoint=e, path=f"/items/{n}", last_seen=timezone.now()) for n in range(2000)]
            + [ObservedPath(endpoint=e, path="/stale/path", last_seen=old)]
        )
        assert client.get(url(e, "/suggested-paths")).json() == ["/items/{param1}"]

    def test_no_traffic_no_suggestions(self, client):
        assert client.get(url(PatternEndpointFactory(), "/suggested-paths")).json() == []


SDL = b"type Query { user(id: ID!): User }\ntype User { id: ID!, email: String }\n"


class TestGraphQlSchema:
    def _upload(self, client, e, content, name="schema.graphql"):
        return client.put(url(e, "/graphql-schema"), {"file": SimpleUploadedFile(name, content)}, format="multipart")

    def test_valid_schema_is_stored_and_shown(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True)
        response = self._upload(client, e, SDL)
        assert response.status_code == 200 and response.json() == "Success"
        e.refresh_from_db()
        assert e.graphql_schema == SDL.decode()
        assert client.get(url(e)).json()["graphQlSchema"] == SDL.decode()

    @pytest.mark.parametrize("content", [
        b"type Query { user(id: ID!): User",  # syntax error
        b"type Query { user: Missing }",  # unknown type
        b"type User { id: ID! }",  # no Query root type
        b'{"openapi": "3.0.0"}',  # not GraphQL at all
        b"[" * 5000,  # deeply nested garbage
    ])
    def test_invalid_sdl_is_a_400_and_changes_nothing(self, client, content):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True, graphql_schema="type Query { a: Int }")
        response = self._upload(client, e, content)
        assert response.status_code == 400
        issue = response.json()["err"]["issues"][0]
        assert issue["path"] == ["file"] and issue["message"].startswith("Invalid GraphQL schema")
        e.refresh_from_db()
        assert e.graphql_schema == "type Query { a: Int }"

    def test_non_utf8_file_is_a_400(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True)
        response = self._upload(client, e, b"\xff\xfe\x00type Query")
        assert response.status_code == 400 and response.json()["err"]["issues"][0]["path"] == ["file"]

    def test_non_graphql_endpoint_is_a_400(self, client):
        e = PatternEndpointFactory(path="/users/{param1}", is_graphql=False)
        response = self._upload(client, e, SDL)
        assert response.status_code == 400 and response.json() == "Endpoint is not a GraphQL endpoint."
        e.refresh_from_db()
        assert e.graphql_schema is None

    def test_missing_file_part_is_a_zod_400(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True)
        response = client.put(url(e, "/graphql-schema"), {"other": "x"}, format="multipart")
        assert response.status_code == 400 and response.json()["err"]["issues"][0]["path"] == ["file"]

    def test_json_body_instead_of_multipart_is_refused(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True)
        response = client.put(url(e, "/graphql-schema"), {"file": SDL.decode()}, format="json")
        assert response.status_code == 415

    def test_schema_over_5_mb_is_413(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True)
        big = b"type Query { a: Int }\n" + b"# padding\n" * (5 * 1024 * 1024 // 10)
        response = self._upload(client, e, big)
        assert response.status_code == 413
        e.refresh_from_db()
        assert e.graphql_schema is None

    def test_delete_removes_the_schema(self, client):
        e = PatternEndpointFactory(path="/graphql", is_graphql=True, graphql_schema=SDL.decode())
        response = client.delete(url(e, "/graphql-schema"))
        assert response.status_code == 200 and response.json() == "Success"
        e.refresh_from_db()
        assert e.graphql_schema is None
        assert client.get(url(e)).json()["graphQlSchema"] is None


def test_openapi_spec_is_the_stored_document_named_by_the_endpoint(client):
    from django.apps import apps

    try:
        spec_model = apps.get_model("detections", "OpenApiSpec")
    except LookupError:
        pytest.skip("detections.OpenApiSpec arrives with the alerts/spec work")
    document = {"openapi": "3.0.0", "info": {"title": "Shop", "version": "1"}, "paths": {}}
    spec_model.objects.create(name="shop.yaml", text="openapi: 3.0.0", spec=document, extension="yaml",
                              openapi_version="3.0.0")
    e = PatternEndpointFactory(openapi_spec_name="shop.yaml")
    assert client.get(url(e)).json()["openapiSpec"] == document
