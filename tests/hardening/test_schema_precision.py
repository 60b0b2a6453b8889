"""The published OpenAPI document states what the routes really answer (what the fuzz relies on)."""
import re

import pytest

from core.schema import TIMESTAMP_PATTERN

pytestmark = pytest.mark.django_db

METHODS = ("get", "put", "post", "patch", "delete")


@pytest.fixture
def schema(anon_client) -> dict:
    response = anon_client.get("/api/v1/schema", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def operations(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def test_every_route_with_a_key_documents_the_401_body(schema):
    for label, operation in operations(schema):
        if operation.get("security", schema.get("security")):
            body = operation["responses"]["401"]["content"]["application/json"]["schema"]
            assert body == {"type": "string", "enum": ["Client unauthorized"]}, label


def test_every_route_with_a_body_documents_400_413_and_415(schema):
    for label, operation in operations(schema):
        if "requestBody" in operation:
            assert {"400", "413", "415"} <= set(operation["responses"]), label
            for code in ("400", "413", "415"):
                assert operation["responses"][code].get("content"), (label, code)


def test_every_route_documents_the_web_servers_own_limits(schema):
    """414 and 431 come from gunicorn before the application reads the request (tests/hardening/
    test_hostile_traffic.py sends both to a real one): every operation documents them, as text/html."""
    for label, operation in operations(schema):
        for code, words in (("414", "4,094 bytes"), ("431", "100 header fields")):
            answer = operation["responses"][code]
            assert words in answer["description"] and set(answer["content"]) == {"text/html"}, (label, code)


def test_json_routes_take_json_only_and_upload_routes_multipart_only(schema):
    uploads = {"PUT /api/v1/endpoint/{endpoint_id}/graphql-schema", "POST /api/v1/spec/new", "PUT /api/v1/spec/{name}"}
    for label, operation in operations(schema):
        if "requestBody" in operation:
            expected = ["multipart/form-data"] if label in uploads else ["application/json"]
            assert list(operation["requestBody"]["content"]) == expected, label


def test_the_ingestion_503_documents_retry_after(schema):
    answer = schema["paths"]["/api/v1/log-request/batch"]["post"]["responses"]["503"]
    assert answer["headers"]["Retry-After"]["required"] is True


def test_list_routes_document_x_total_count(schema):
    for path in ("/api/v1/endpoints", "/api/v1/hosts", "/api/v1/alerts", "/api/v1/webhooks", "/api/v1/specs",
                 "/api/v1/testing/runs"):
        headers = schema["paths"][path]["get"]["responses"]["200"]["headers"]
        assert headers["X-Total-Count"]["schema"] == {"type": "integer", "minimum": 0}, path


def test_response_timestamps_carry_the_wire_pattern(schema):
    components = schema["components"]["schemas"]
    for name in ("EndpointListItem", "Alert", "Webhook", "TestRun"):
        assert components[name]["properties"]["createdAt"]["pattern"] == TIMESTAMP_PATTERN, name
    assert "pattern" not in str(components["NewDetections"]["properties"]["total"])


def test_test_run_timestamps_have_milliseconds(client, django_capture_on_commit_callbacks):
    assert client.put("/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9"}, format="json").status_code == 200
    from tests.factories import EndpointFactory

    EndpointFactory(host__name="runs.example.com")
    with django_capture_on_commit_callbacks():
        run = client.post("/api/v1/testing/runs", {"host": "runs.example.com"}, format="json")
    assert run.status_code == 202, run.content
    assert re.fullmatch(TIMESTAMP_PATTERN, run.json()["createdAt"])
    assert re.fullmatch(TIMESTAMP_PATTERN, client.get("/api/v1/testing/runs").json()[0]["createdAt"])


def test_answers_link_to_the_operations_their_values_feed(schema):
    by_id = {operation["operationId"]: operation for _, operation in operations(schema)}
    links = by_id["endpoint_list"]["responses"]["200"]["links"]
    assert links["EndpointDetail"] == {"operationId": "endpoint_detail",
                                       "parameters": {"endpoint_id": "$response.body#/0/uuid"}}
    assert links["GenTestEndpoint"]["parameters"]["query.host"] == "$response.body#/0/host"
    assert by_id["spec_create"]["responses"]["201"]["links"]["SpecRead"]["parameters"] == {
        "name": "$response.body#/name"}
    for operation in by_id.values():
        for answer in operation["responses"].values():
            for link in answer.get("links", {}).values():
                assert link["operationId"] in by_id
