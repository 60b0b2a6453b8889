"""Hostile input gets a clear 4xx and changes nothing.

Every test counts the rows of every model before and after the request (``row_counts``)
and asserts they are equal; an accepted trace is analysed in-process (the worker's own
function) and must analyse without error.
"""
from __future__ import annotations

import gzip
import json

import pytest
from rest_framework.test import APIClient

from inventory.ingest.pipeline import batch_analyze
from inventory.models import ApiTrace, Endpoint, IngestBatch
from tests.factories import AlertFactory, DataFieldFactory, EndpointFactory
from tests.inventory.ingest_support import raw_trace

from .support import row_counts

pytestmark = pytest.mark.django_db

MB = 1024 * 1024
ZOD = {"type": "ZOD", "message": "Invalid parameters"}


@pytest.fixture
def inventory(db):
    """A small inventory, so "nothing changed" is checked against rows that exist."""
    field = DataFieldFactory(data_classes=["email"])
    AlertFactory(endpoint=field.endpoint)
    EndpointFactory(host=field.endpoint.host, method="POST")
    return field


@pytest.fixture
def unchanged(inventory):
    """Asserts at the end of the test that no row of any model was added, changed in number or removed."""
    before = row_counts()
    yield
    assert row_counts() == before


def raw(client: APIClient, method: str, path: str, body: bytes, content_type: str = "application/json", **extra):
    return client.generic(method, path, body, content_type=content_type, **extra)


def assert_zod(response, status: int = 400) -> list[dict]:
    assert response.status_code == status, response.content
    body = response.json()
    assert {k: body[k] for k in ("type", "message")} == ZOD
    assert body["err"]["name"] == "ZodError" and body["err"]["issues"]
    return body["err"]["issues"]


def has_nul(value) -> bool:
    """Any NUL character in a string or key of a JSON value."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


def analyse_all() -> None:
    for batch_id in IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).values_list("id", flat=True):
        batch_analyze(batch_id=batch_id)


# JSON routes of the management API, with a body each accepts.
JSON_ROUTES = [
    ("post", "/api/v1/webhook", {"url": "http://127.0.0.1:9/hook"}),
    ("put", "/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9"}),
    ("delete", "/api/v1/endpoints", {"uuids": ["00000000-0000-0000-0000-000000000000"]}),
    ("delete", "/api/v1/hosts", {"hosts": ["nothing.example.com"]}),
    ("post", "/api/v1/testing/runs", {"host": "nothing.example.com"}),
]
INGEST_ROUTES = ["/api/v1/log-request/single", "/api/v1/log-request/batch", "/api/v2/log-request/batch"]


def ingest_body(path: str, trace: dict) -> bytes:
    return json.dumps(trace if path.endswith("single") else [trace]).encode()


# ----------------------------------------------------------------------------- oversized bodies

class TestOversizedBodies:
    @pytest.mark.parametrize(("method", "path", "_"), JSON_ROUTES)
    def test_a_body_over_10_mb_is_413_on_json_routes(self, client, unchanged, method, path, _):
        body = b'{"pad": "' + b"x" * (10 * MB) + b'"}'
        response = raw(client, method.upper(), path, body)
        assert response.status_code == 413
        assert response.json() == "Payload too large."

    @pytest.mark.parametrize("path", INGEST_ROUTES)
    def test_a_request_over_10_mb_is_413_on_ingestion(self, client, unchanged, path):
        trace = raw_trace(response_body="x" * (900 * 1024))
        body = json.dumps([trace] * 12).encode()
        assert len(body) > 10 * MB
        response = raw(client, "POST", path, body)
        assert response.status_code == 413
        assert IngestBatch.objects.count() == 0

    def test_a_gzip_body_inflating_past_10_mb_is_413(self, client, unchanged):
        body = gzip.compress(json.dumps([raw_trace(response_body="x" * (900 * 1024))] * 12).encode())
        assert len(body) < MB
        response = raw(client, "POST", "/api/v1/log-request/batch", body, HTTP_CONTENT_ENCODING="gzip")
        assert response.status_code == 413

    @pytest.mark.parametrize("path", INGEST_ROUTES)
    def test_a_trace_over_1_mb_is_413(self, client, unchanged, path):
        body = ingest_body(path, raw_trace(response_body="x" * (MB + 10)))
        response = raw(client, "POST", path, body)
        assert response.status_code == 413
        assert "larger than 1 MB" in response.json()

    def test_graphql_schema_over_5_mb_is_413(self, client, inventory):
        from django.core.files.uploadedfile import SimpleUploadedFile

        endpoint = EndpointFactory(host=inventory.endpoint.host, path="/graphql", method="POST")
        before = row_counts()
        upload = SimpleUploadedFile("schema.graphql", b"#" * (5 * MB + 1), "text/plain")
        response = client.put(f"/api/v1/endpoint/{endpoint.uuid}/graphql-schema", {"file": upload}, format="multipart")
        assert response.status_code == 413
        assert row_counts() == before
        endpoint.refresh_from_db()
        assert not endpoint.graphql_schema


# ----------------------------------------------------------------------------- deep nesting

DEEP = b"[" * 100_000 + b"]" * 100_000


class TestDeepNesting:
    @pytest.mark.parametrize(("method", "path", "_"), JSON_ROUTES)
    def test_100k_nested_arrays_are_a_validation_error_on_json_routes(self, client, unchanged, method, path, _):
        issues = assert_zod(raw(client, method.upper(), path, DEEP))
        assert issues[0]["path"] == []

    @pytest.mark.parametrize(("method", "path", "body"), JSON_ROUTES)
    def test_moderate_nesting_inside_a_field_is_a_validation_error(self, client, unchanged, method, path, body):
        deep_value = json.loads("[" * 200 + "]" * 200)
        key = next(iter(body))
        assert_zod(raw(client, method.upper(), path, json.dumps({**body, key: deep_value}).encode()))

    @pytest.mark.parametrize("path", INGEST_ROUTES)
    def test_100k_nested_arrays_are_a_validation_error_on_ingestion(self, client, unchanged, path):
        assert_zod(raw(client, "POST", path, DEEP))

    @pytest.mark.parametrize("depth", [990, 1020, 100_000])
    def test_a_trace_whose_json_body_is_deeply_nested_is_analysed(self, client, depth):
        """Bodies are strings: accepted, and the analysis (which parses them) must not crash on depth."""
        deep_body = "[" * depth + "]" * depth
        trace = raw_trace(path="/api/deep", response_body=deep_body)
        trace["request"]["body"] = '{"a":' * depth + "1" + "}" * depth
        trace["request"]["headers"] = [{"name": "Content-Type", "value": "application/json"}]
        response = client.post("/api/v1/log-request/single", trace, format="json")
        assert response.status_code == 200
        analyse_all()
        assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
        assert Endpoint.objects.filter(path="/api/deep").exists()

    def test_a_deep_body_in_a_stored_trace_does_not_break_test_generation(self, client):
        body = '{"a":' * 900 + "1" + "}" * 900
        trace = raw_trace(host="deep.example.com", path="/api/orders", method="POST", body=body,
                          headers={"Content-Type": "application/json", "Authorization": "Bearer x"},
                          response_body=body)
        assert client.post("/api/v1/log-request/single", trace, format="json").status_code == 200
        analyse_all()
        for test_type in ("MASS_ASSIGNMENT", "SQL_INJECTION", "XSS", None):
            query = {"endpoint": "/api/orders", "host": "deep.example.com", **({"type": test_type} if test_type else {})}
            response = client.get("/api/v1/gen-test-endpoint", query)
            assert response.status_code == 200, (test_type, response.content)
        assert client.get("/api/v1/gen-test-endpoints", {"host": "deep.example.com"}).status_code == 200

    @pytest.mark.parametrize("document", [
        b"[" * 100_000 + b"]" * 100_000,
        b"a:\n" + b"".join(b"  " * i + b"- \n" for i in range(1, 1500)),
        b"openapi: 3.0.0\ninfo: {title: t, version: '1'}\nservers: [{url: 'https://x.example.com'}]\n"
        b"paths: {/a: {get: {responses: {'200': {description: \"nul \\0 here\"}}}}}\n",
        b'{"openapi": "3.0.0", "info": {"title": "t\\u0000", "version": "1"}, "paths": {}, '
        b'"servers": [{"url": "https://x.example.com"}]}',
    ])
    def test_hostile_spec_files_are_a_validation_error(self, client, unchanged, document):
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile("hostile.yaml", document, "application/yaml")
        response = client.post("/api/v1/spec/new", {"file": upload}, format="multipart")
        assert_zod(response)

    def test_deeply_nested_v2_processed_data_is_a_validation_error_or_analysed(self, client):
        from tests.inventory.ingest_support import processed_trace

        deep = json.loads("[" * 900 + "]" * 900)
        trace = processed_trace(processedTraceData={"dataTypes": {"resBody.a": deep}})
        response = client.post("/api/v2/log-request/batch", [trace], format="json")
        assert response.status_code in (200, 400)
        analyse_all()
        assert not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()


# ----------------------------------------------------------------------------- huge arrays

class TestHugeArrays:
    def test_1001_traces_in_a_batch_are_too_big(self, client, unchanged):
        traces = [raw_trace(path=f"/api/items/{i}") for i in range(1001)]
        issues = assert_zod(raw(client, "POST", "/api/v1/log-request/batch", json.dumps(traces).encode()))
        assert issues == [{"code": "too_big", "maximum": 1000, "type": "array", "inclusive": True, "exact": False,
                           "path": [], "message": "Array must contain at most 1000 element(s)"}]

    def test_1000_traces_in_a_batch_are_accepted(self, client):
        traces = [raw_trace(path=f"/api/items/{i}") for i in range(1000)]
        assert client.post("/api/v1/log-request/batch", traces, format="json").status_code == 200
        assert IngestBatch.objects.get().num_traces == 1000

    def test_a_webhook_with_100k_alert_types_is_too_big(self, client, unchanged):
        body = {"url": "http://127.0.0.1:9/hook", "alertTypes": ["New Endpoint Detected"] * 100_000}
        issues = assert_zod(client.post("/api/v1/webhook", body, format="json"))
        assert [(i["code"], i["path"]) for i in issues] == [("too_big", ["alertTypes"])]

    def test_100k_invalid_items_answer_a_bounded_number_of_issues(self, client, unchanged):
        body = {"url": "http://127.0.0.1:9/hook", "alertTypes": ["nope"] * 100_000}
        response = client.post("/api/v1/webhook", body, format="json")
        issues = assert_zod(response)
        assert len(issues) <= 100
        assert len(response.content) < 200_000

    def test_delete_endpoints_with_100k_uuids_is_too_big(self, client, unchanged):
        body = {"uuids": ["00000000-0000-0000-0000-000000000000"] * 100_000}
        issues = assert_zod(client.delete("/api/v1/endpoints", body, format="json"))
        assert issues[0]["code"] == "too_big"

    def test_a_trace_with_100k_headers_is_accepted_and_analysed(self, client):
        trace = raw_trace(path="/api/many-headers")
        trace["request"]["headers"] = [{"name": f"x-h{i}", "value": "v"} for i in range(100_000)]
        response = client.post("/api/v1/log-request/single", trace, format="json")
        assert response.status_code in (200, 413)
        analyse_all()
        assert not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()


# ----------------------------------------------------------------------------- invalid UTF-8

class TestInvalidUtf8:
    @pytest.mark.parametrize(("method", "path", "_"), JSON_ROUTES)
    def test_invalid_utf8_is_a_validation_error_on_json_routes(self, client, unchanged, method, path, _):
        assert_zod(raw(client, method.upper(), path, b'{"url": "http://a\xff\xfe.example"}'))

    @pytest.mark.parametrize("path", INGEST_ROUTES)
    def test_invalid_utf8_is_a_validation_error_on_ingestion(self, client, unchanged, path):
        body = ingest_body(path, raw_trace()).replace(b"/api/v1/users/42", b"/api/\xff\xfe/42")
        assert_zod(raw(client, "POST", path, body))

    def test_lone_surrogate_escapes_are_a_validation_error(self, client, unchanged):
        assert_zod(raw(client, "PUT", "/api/v1/testing/global-env", b'{"baseUrl": "http://a.example", "testUserId": "\\ud800"}'))
        body = ingest_body("/api/v1/log-request/single", raw_trace()).replace(b"/api/v1/users/42", b"/api/\\udc00")
        assert_zod(raw(client, "POST", "/api/v1/log-request/single", body))

    def test_nan_and_infinity_are_a_validation_error(self, client, unchanged):
        assert_zod(raw(client, "POST", "/api/v1/webhook", b'{"url": "http://127.0.0.1:9/h", "maxRetries": NaN}'))
        assert_zod(raw(client, "POST", "/api/v1/webhook", b'{"url": "http://127.0.0.1:9/h", "maxRetries": 1e999}'))


# ----------------------------------------------------------------------------- content types

NON_JSON = [
    ("text/plain", b'{"url": "http://127.0.0.1:9/hook"}'),
    ("application/xml", b"<webhook><url>http://127.0.0.1:9/hook</url></webhook>"),
    ("application/x-www-form-urlencoded", b"url=http%3A%2F%2F127.0.0.1%3A9%2Fhook"),
    ("multipart/form-data; boundary=b", b'--b\r\nContent-Disposition: form-data; name="url"\r\n\r\nhttp://127.0.0.1:9/hook\r\n--b--\r\n'),
]


class TestContentTypes:
    @pytest.mark.parametrize(("content_type", "body"), NON_JSON)
    @pytest.mark.parametrize(("method", "path", "_"), JSON_ROUTES)
    def test_non_json_bodies_are_415_on_json_routes(self, client, unchanged, method, path, _, content_type, body):
        response = raw(client, method.upper(), path, body, content_type=content_type)
        assert response.status_code == 415
        assert response.json().startswith("Unsupported media type: ")

    @pytest.mark.parametrize(("content_type", "_"), NON_JSON)
    @pytest.mark.parametrize("path", INGEST_ROUTES)
    def test_non_json_bodies_are_415_on_ingestion(self, client, unchanged, path, content_type, _):
        response = raw(client, "POST", path, ingest_body(path, raw_trace()), content_type=content_type)
        assert response.status_code == 415

    def test_json_with_a_charset_or_a_json_suffix_is_accepted(self, client):
        response = raw(client, "POST", "/api/v1/log-request/single", ingest_body("single", raw_trace()),
                       content_type="application/json; charset=utf-8")
        assert response.status_code == 200
        response = raw(client, "POST", "/api/v1/webhook", b'{"url": "http://127.0.0.1:9/hook"}',
                       content_type="application/json; charset=utf-8")
        assert response.status_code == 201

    def test_a_json_body_on_an_upload_route_is_415(self, client, unchanged, inventory):
        response = raw(client, "PUT", f"/api/v1/endpoint/{inventory.endpoint.uuid}/graphql-schema",
                       b'{"file": "type Query { a: Int }"}')
        assert response.status_code == 415
        response = raw(client, "POST", "/api/v1/spec/new", b'{"file": "openapi: 3.0.0"}')
        assert response.status_code == 415


# ----------------------------------------------------------------------------- NUL characters

class TestNulCharacters:
    @pytest.mark.parametrize(("method", "path", "body"), [
        ("post", "/api/v1/webhook", {"url": "http://127.0.0.1:9/ho\x00ok"}),
        ("post", "/api/v1/webhook", {"url": "http://127.0.0.1:9/hook", "hosts": ["a\x00b"]}),
        ("put", "/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9", "testUserId": "a\x00"}),
        ("put", "/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9", "headers": {"X-A\x00": "v"}}),
        ("put", "/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9", "headers": {"X-A": "v\x00"}}),
        ("put", "/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9", "cust\x00om": "v"}),
        ("delete", "/api/v1/hosts", {"hosts": ["a\x00.example.com"]}),
        ("post", "/api/v1/testing/runs", {"host": "a\x00.example.com"}),
    ])
    def test_nul_in_a_management_body_is_a_validation_error(self, client, unchanged, method, path, body):
        assert_zod(getattr(client, method)(path, body, format="json"))

    def test_nul_in_data_field_updates_is_a_validation_error(self, client, unchanged, inventory):
        base = f"/api/v1/data-field/{inventory.uuid}"
        assert_zod(client.put(f"{base}/update-entity", {"entity": "a\x00"}, format="json"))
        assert_zod(client.put(f"{base}/update-data-path", {"dataPath": "a\x00b"}, format="json"))
        assert_zod(client.post(f"{base}/update-classes", {"dataClasses": ["email\x00"], "dataSection": "RESPONSE_BODY",
                                                          "dataPath": inventory.data_path}, format="json"))

    def test_nul_in_endpoint_updates_is_a_validation_error(self, client, unchanged, inventory):
        endpoint = inventory.endpoint
        response = client.post(f"/api/v1/endpoint/{endpoint.uuid}/update-paths", {"paths": ["/a\x00/{param1}"]},
                               format="json")
        assert response.status_code == 400

    def test_nul_in_alert_resolution_message_is_a_validation_error(self, client, unchanged, inventory):
        alert = inventory.endpoint.alerts.get()
        assert_zod(client.put(f"/api/v1/alert/{alert.uuid}", {"updateType": "resolve", "resolutionMessage": "a\x00"},
                              format="json"))

    @pytest.mark.parametrize("path", ["/api/v1/endpoints", "/api/v1/hosts", "/api/v1/alerts", "/api/v1/new-detections",
                                      "/api/v1/gen-test-endpoints", "/api/v1/gen-test-endpoint"])
    def test_nul_in_query_parameters_is_a_validation_error_or_no_match(self, client, unchanged, path):
        for name in ("searchQuery", "hosts", "host", "endpoint", "detectionHosts"):
            response = client.get(path, {name: "a\x00b", "host": "h\x00", "endpoint": "/a\x00"})
            assert response.status_code in (200, 400, 404), (name, response.content)

    def test_nul_in_traces_is_stripped(self, client):
        trace = raw_trace(host="nul.example.com", path="/api/us\x00ers/42", query=[("q\x00", "v\x00")],
                          headers={"X-Tok\x00en": "a\x00b"}, response_body={"em\x00ail": "ada@example.com\x00"})
        trace["meta"]["extra\x00"] = {"k\x00": ["\x00"]}
        response = client.post("/api/v1/log-request/single", trace, format="json")
        assert response.status_code == 200
        assert not has_nul(IngestBatch.objects.get().traces)
        analyse_all()
        assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
        endpoint = Endpoint.objects.get(host__name="nul.example.com")
        assert endpoint.path == "/api/users/{param1}"
        # The response body's JSON held an escaped NUL in a key: the data field's path has it dropped.
        assert endpoint.data_fields.filter(data_path="email").exists()


# ----------------------------------------------------------------------------- long values in traces

class TestLongValuesInTraces:
    @pytest.mark.parametrize("length", [3_000, 100_000, 900_000])
    def test_a_very_long_path_is_stored_or_skipped_without_error(self, client, length):
        trace = raw_trace(host="long.example.com", path="/api/" + "a" * length)
        assert client.post("/api/v1/log-request/batch", [trace, raw_trace(host="long.example.com")],
                           format="json").status_code == 200
        analyse_all()
        assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
        # The ordinary trace of the same batch was not lost with the long one.
        assert Endpoint.objects.filter(host__name="long.example.com", path="/api/v1/users/{param1}").exists()

    def test_very_long_header_names_and_values_are_analysed(self, client):
        trace = raw_trace(host="long.example.com", headers={"X-" + "n" * 50_000: "v" * 500_000,
                                                             "Authorization": "Basic " + "Q" * 100_000},
                          response_headers={"Set-Cookie": "s=" + "c" * 100_000})
        trace["request"]["url"]["parameters"] = [{"name": "p" * 10_000, "value": "q" * 100_000}]
        assert client.post("/api/v1/log-request/single", trace, format="json").status_code == 200
        analyse_all()
        assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
        assert ApiTrace.objects.filter(host="long.example.com").exists()

    def test_a_very_long_host_is_analysed(self, client):
        trace = raw_trace(host="h" * 5_000 + ".example.com")
        response = client.post("/api/v1/log-request/batch", [trace, raw_trace(host="ok.example.com")], format="json")
        assert response.status_code in (200, 400)
        analyse_all()
        assert not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()

    def test_very_long_method_and_odd_status_are_validation_errors(self, client, unchanged):
        trace = raw_trace()
        trace["request"]["method"] = "G" * 100
        assert_zod(client.post("/api/v1/log-request/single", trace, format="json"))
        trace = raw_trace(status=10**20)
        assert_zod(client.post("/api/v1/log-request/single", trace, format="json"))


# ----------------------------------------------------------------------------- query parameters

BAD_QUERIES = {
    "/api/v1/endpoints": [{"offset": "-1"}, {"limit": "501"}, {"limit": "abc"}, {"riskScores": "BAD"},
                          {"methods": "FETCH"}, {"hostType": "PUBLIC"}, {"isAuthenticated": "maybe"},
                          {"limit[]": "-5"}, {"offset": "1.5"}],
    "/api/v1/hosts": [{"offset": "-1"}, {"limit": "501"}, {"hostType": "x"}, {"sortBy": "AGE"},
                      {"sortOrder": "UP"}, {"limit": ""}],
    "/api/v1/alerts": [{"offset": "-1"}, {"limit": "501"}, {"types": "Nope"}, {"riskScores": "severe"},
                       {"status": "Closed"}, {"endpoint": "not-a-uuid"}],
    "/api/v1/new-detections": [{"start": "yesterday"}, {"end": "2026-13-45"}, {"detectionType": "HOST"},
                               {"detectionLimit": "51"}, {"detectionOffset": "-1"}, {"detectionRiskScores": "BAD"}],
    "/api/v1/testing/runs": [{"offset": "-1"}, {"limit": "501"}, {"limit": "ten"}],
    "/api/v1/gen-test-endpoint": [{"endpoint": "/x", "method": "FETCH"}, {"endpoint": "/x", "type": "NOPE"},
                                  {"endpoint": "/x", "type": "XSS", "version": "-1"}],
    "/api/v1/gen-test-endpoints": [{"host": "h", "type": "NOPE"}, {"host": "h", "version": "x"}],
}


class TestListQueryParameters:
    @pytest.mark.parametrize(("path", "query"), [(p, q) for p, qs in BAD_QUERIES.items() for q in qs])
    def test_invalid_query_parameters_are_a_validation_error(self, client, unchanged, path, query):
        assert_zod(client.get(path, query))

    @pytest.mark.parametrize("path", ["/api/v1/endpoints", "/api/v1/hosts", "/api/v1/alerts", "/api/v1/testing/runs"])
    @pytest.mark.parametrize("offset", [str(2**63), str(10**30)])
    def test_an_offset_past_every_row_is_an_empty_page(self, client, unchanged, path, offset):
        response = client.get(path, {"offset": offset})
        assert response.status_code == 200, response.content
        assert response.json() == []
        assert int(response["X-Total-Count"]) >= 0

    def test_a_detection_offset_past_every_row_is_an_empty_page(self, client, unchanged):
        response = client.get("/api/v1/new-detections", {"detectionOffset": str(2**64)})
        assert response.status_code == 200
        assert response.json()["items"] == []

    def test_a_very_long_search_query_is_answered(self, client, unchanged):
        for path in ("/api/v1/endpoints", "/api/v1/hosts"):
            response = client.get(path, {"searchQuery": "%_\\" * 3000})
            assert response.status_code in (200, 400)


# ----------------------------------------------------------------------------- path parameters

class TestPathParameters:
    @pytest.mark.parametrize(("method", "path"), [
        ("get", "/api/v1/endpoint/{x}"), ("get", "/api/v1/endpoint/{x}/usage"),
        ("get", "/api/v1/endpoint/{x}/suggested-paths"), ("delete", "/api/v1/endpoint/{x}"),
        ("delete", "/api/v1/data-field/{x}"), ("get", "/api/v1/alert/{x}"), ("get", "/api/v1/webhook/{x}"),
        ("delete", "/api/v1/webhook/{x}"), ("get", "/api/v1/spec/{x}"), ("delete", "/api/v1/spec/{x}"),
        ("get", "/api/v1/testing/runs/{x}"),
    ])
    @pytest.mark.parametrize("value", ["not-a-uuid", "%00", "a%00b", "a" * 5000, "00000000-0000-0000-0000-000000000000",
                                       "%F0%9F%98%80", "..%2F..%2Fetc", "abc%0A"])
    def test_malformed_or_unknown_ids_are_404(self, client, unchanged, method, path, value):
        response = getattr(client, method)(path.replace("{x}", value))
        assert response.status_code == 404, response.content
        assert isinstance(response.json(), str)

    @pytest.mark.parametrize("value", ["a%00b", "not-a-uuid"])
    def test_malformed_ids_in_bodies_of_updates_are_404(self, client, unchanged, value):
        assert client.put(f"/api/v1/webhook/{value}", {"maxRetries": 1}, format="json").status_code == 404
        assert client.put(f"/api/v1/alert/{value}", {"updateType": "resolve"}, format="json").status_code == 404
        assert client.put(f"/api/v1/data-field/{value}/update-entity", {"entity": "x"},
                          format="json").status_code == 404


# ----------------------------------------------------------------------------- Accept header

class TestAcceptHeader:
    @pytest.mark.parametrize("accept", ["", "text/html", "application/xml", "image/png;q=1", ";;;", "*/*"])
    def test_any_accept_header_gets_json(self, client, unchanged, accept, inventory):
        for path in ("/api/v1/endpoints", f"/api/v1/endpoint/{inventory.endpoint.uuid}", "/api/v1/nothing"):
            response = client.get(path, HTTP_ACCEPT=accept)
            assert response.status_code in (200, 404)
            assert response["Content-Type"] == "application/json"
        response = client.put(f"/api/v1/endpoint/{inventory.endpoint.uuid}/authenticated", {"authenticated": "x"},
                              format="json", HTTP_ACCEPT=accept)
        assert_zod(response)
