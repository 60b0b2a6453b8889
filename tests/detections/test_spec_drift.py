"""GET /api/v1/spec/{name}/drift: an uploaded spec against the inventory of its hosts (DECISIONS §10)."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from inventory.models import Endpoint
from tests.inventory.ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
HOST = "shop.example.com"
PET = {"type": "object", "required": ["id", "name", "legacyCode"],
       "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "legacyCode": {"type": "string"}}}
SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "shop", "version": "1"},
    "servers": [{"url": "https://shop.example.com/v1"}],
    "paths": {
        "/pets": {"get": {
            "parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}},
                           {"name": "X-Tenant", "in": "header", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "pets", "content": {"application/json": {
                "schema": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}}},
        }},
        "/pets/{petId}": {"get": {
            "deprecated": True,
            "parameters": [{"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "responses": {"200": {"description": "a pet"}},
        }},
        "/orders": {"get": {"responses": {"200": {"description": "orders"}}}},
    },
    "components": {"schemas": {"Pet": PET}},
}


@pytest.fixture
def drift(client, ingest):
    upload = SimpleUploadedFile("shop.json", json.dumps(SPEC).encode())
    assert client.post("/api/v1/spec/new", {"file": upload}, format="multipart").status_code == 201
    ingest(
        raw_trace(host=HOST, path="/v1/pets", query=[("limit", "5"), ("sort", "asc")], headers={"X-Client": "web"},
                  response_body=[{"id": "one", "name": "Rex", "color": "red"}]),
        raw_trace(host=HOST, path="/v1/pets/7", response_body={"id": 7}),
        raw_trace(host=HOST, path="/v1/stores", response_body=[]),
        raw_trace(host=HOST, path="/v1/pets", status=500, response_body={"error": "boom"}),
    )
    response = client.get("/api/v1/spec/shop/drift")
    assert response.status_code == 200, response.content
    return response.json()


def shape(items, *keys):
    return sorted(tuple(item.get(k) for k in keys) for item in items)


def test_shadow_unused_and_zombie_operations(drift):
    assert drift["spec"] == "shop" and drift["hosts"] == [HOST] and drift["windowDays"] == 7
    assert shape(drift["shadowEndpoints"], "method", "path") == [("GET", "/v1/stores")]
    assert shape(drift["unusedOperations"], "method", "path") == [("GET", "/orders")]
    assert shape(drift["zombieOperations"], "method", "path", "operation") == [
        ("GET", "/v1/pets/{param1}", "GET /pets/{petId}")]
    assert drift["summary"] == {"shadowEndpoints": 1, "unusedOperations": 1, "zombieOperations": 1,
                                "parameterDrift": 3, "responseDrift": 4}


def test_parameters_and_response_fields_that_differ(drift):
    assert shape(drift["parameterDrift"], "in", "name", "kind") == [
        ("header", "x-client", "undocumented"), ("header", "x-tenant", "required_not_seen"),
        ("query", "sort", "undocumented")]
    assert shape(drift["responseDrift"], "statusCode", "field", "kind") == [
        (200, "[].color", "undocumented_field"), (200, "[].id", "type_mismatch"),
        (200, "[].legacyCode", "required_not_seen"), (500, None, "undocumented_status")]
    (mismatch,) = [i for i in drift["responseDrift"] if i["kind"] == "type_mismatch"]
    assert mismatch["documented"] == ["integer"] and mismatch["observed"] == "string"
    assert "Rex" not in json.dumps(drift) and "one" not in json.dumps(drift["responseDrift"])


def test_an_operation_without_traffic_in_the_retention_window_is_unused(drift, client):
    Endpoint.objects.filter(path="/v1/pets/{param1}").update(last_active=timezone.now() - timedelta(days=8))
    body = client.get("/api/v1/spec/shop/drift").json()
    assert ("GET", "/pets/{petId}") in shape(body["unusedOperations"], "method", "path")
    assert body["zombieOperations"] == []  # deprecated, but no longer called


def test_unknown_spec_is_404_and_a_read_key_may_ask(client, scoped_client, drift):
    assert client.get("/api/v1/spec/nope/drift").status_code == 404
    assert scoped_client("read").get("/api/v1/spec/shop/drift").status_code == 200
