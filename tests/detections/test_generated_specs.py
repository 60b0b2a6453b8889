"""OpenAPI specs generated from traffic (DECISIONS §10): content, redaction, the spec routes,
endpoint detail, uploading a generated spec back. Traffic goes through the ingestion route and the
pipeline's task function (``ingest``); the worker-process flow is ``test_generated_specs_worker.py``."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from detections.models import Alert, OpenApiSpec
from detections.openapi.generate.service import generated_spec_name, generated_spec_refresh
from detections.specs import openapi_validate
from inventory.models import Endpoint, Host
from tests.detections.generated_traffic import HOST, SECRETS, varied_traces
from tests.inventory.ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
NAME = "shop.example.com-generated"


@pytest.fixture
def generated(ingest):
    """The stored generated spec of HOST after the varied traffic."""
    ingest(*varied_traces())
    return generated_spec_refresh(host_id=Host.objects.get(name=HOST).id, force=True)


def document(spec) -> dict:
    return json.loads(spec.text)


def operation(doc, path, method="get") -> dict:
    return doc["paths"][path][method]


def body_schema(doc, path, status="200", method="get", media="application/json") -> dict:
    return operation(doc, path, method)["responses"][status]["content"][media]["schema"]


class TestDocument:
    def test_it_is_a_valid_openapi_31_document_of_the_host(self, generated):
        doc = document(generated)
        openapi_validate(doc)
        assert doc["openapi"] == "3.1.0"
        assert doc["servers"] == [{"url": "https://shop.example.com"}]
        assert generated.name == NAME and generated.is_auto_generated and generated.hosts == [HOST]
        assert set(doc["paths"]) == {"/api/users/{param1}", "/api/users", "/api/payments", "/graphql", "/health"}

    def test_json_schema_from_observed_values(self, generated):
        user = body_schema(document(generated), "/api/users/{param1}")
        props = user["properties"]
        assert user["type"] == "object"
        assert set(user["required"]) == {"id", "uuid", "email", "status", "score", "nickname", "createdAt", "tags",
                                         "address"}
        assert props["id"] == {"type": "integer"}
        assert props["score"] == {"type": "number"}  # 4.5 and 3: integer folded into number
        assert props["nickname"]["type"] == ["string", "null"]
        assert props["uuid"]["format"] == "uuid" and props["createdAt"]["format"] == "date-time"
        assert props["email"]["format"] == "email" and props["email"]["x-data-classes"] == ["email"]
        assert props["status"]["enum"] == ["active", "inactive"]
        assert props["tags"] == {"type": "array", "items": {"type": "string", "enum": ["admin", "beta"]}} or \
            props["tags"]["items"]["type"] == "string"
        assert props["address"]["required"] == ["city"]  # zip only in some objects
        listing = body_schema(document(generated), "/api/users")
        assert listing["type"] == "array" and listing["items"]["properties"]["id"] == {"type": "integer"}

    def test_statuses_media_types_and_parameters(self, generated):
        doc = document(generated)
        users = operation(doc, "/api/users/{param1}")
        assert set(users["responses"]) == {"200", "404"}
        assert {(p["name"], p["in"]) for p in users["parameters"]} == {("param1", "path"), ("expand", "query")}
        assert users["parameters"][0]["schema"] == {"type": "integer"}
        listing = operation(doc, "/api/users")
        assert {(p["name"], p["in"], p.get("required")) for p in listing["parameters"]} == {
            ("page", "query", True), ("limit", "query", True), ("X-Request-Id", "header", True)}
        payments = operation(doc, "/api/payments", "post")
        assert set(payments["responses"]) == {"201", "422"}
        request = payments["requestBody"]["content"]["application/json"]["schema"]
        assert request["properties"]["card"]["x-data-classes"] == ["credit_card"]
        assert request["properties"]["note"]["type"] == "null"
        assert payments["requestBody"]["required"] is True
        health = operation(doc, "/health")
        assert health["responses"]["200"]["content"] == {"text/plain": {"schema": {"type": "string"}}}

    def test_security_schemes_from_traffic(self, generated):
        doc = document(generated)
        assert doc["components"]["securitySchemes"] == {
            "bearerAuth": {"type": "http", "scheme": "bearer"},
            "apiKeyHeader_X-API-Key": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        }
        assert operation(doc, "/api/users/{param1}")["security"] == [{"bearerAuth": []}]
        assert operation(doc, "/api/payments", "post")["security"] == [{"apiKeyHeader_X-API-Key": []}]
        assert "security" not in operation(doc, "/health")

    def test_graphql_endpoint_is_described_as_such(self, generated, client):
        graphql = operation(document(generated), "/graphql", "post")
        assert graphql["x-graphql"] is True and graphql["tags"] == ["graphql"]
        assert graphql["requestBody"]["content"]["application/json"]["schema"]["properties"]["query"] == {
            "type": "string"}
        data = body_schema(document(generated), "/graphql", method="post")["properties"]["data"]
        assert data["properties"]["user"]["properties"]["email"]["x-data-classes"] == ["email"]
        assert "required" not in data["properties"]["user"]  # selections vary between queries

    def test_graphql_schema_is_linked_once_uploaded(self, ingest, client):
        ingest(*varied_traces())
        endpoint = Endpoint.objects.get(path="/graphql")
        sdl = SimpleUploadedFile("schema.graphql", b"type Query { user(id: ID!): User }\ntype User { id: ID email: String }")
        assert client.put(f"/api/v1/endpoint/{endpoint.uuid}/graphql-schema", {"file": sdl},
                          format="multipart").status_code == 200
        spec = generated_spec_refresh(host_id=endpoint.host_id, force=True)
        assert operation(document(spec), "/graphql", "post")["x-graphql-schema"]["href"] == (
            f"/api/v1/endpoint/{endpoint.uuid}")

    def test_no_sensitive_value_from_traffic_appears_in_the_spec(self, generated):
        text = generated.text
        for value in SECRETS:
            assert value not in text, value
        example = operation(document(generated), "/api/users/{param1}")["responses"]["200"]["content"][
            "application/json"]["example"]
        assert example["email"] == "[REDACTED]" and example["status"] in ("active", "inactive")
        assert example["address"]["zip"] == "string"  # free strings (not enum values) are never copied

    def test_operator_named_path_parameters(self, generated, client):
        endpoint = Endpoint.objects.get(path="/api/users/{param1}")
        response = client.post(f"/api/v1/endpoint/{endpoint.uuid}/update-paths", {"paths": ["/api/users/{userId}"]},
                               format="json")
        assert response.status_code == 200, response.content
        doc = document(generated_spec_refresh(host_id=endpoint.host_id, force=True))
        assert "/api/users/{userId}" in doc["paths"] and "/api/users/{param1}" not in doc["paths"]
        assert operation(doc, "/api/users/{userId}")["parameters"][0]["name"] == "userId"

    def test_names_are_escaped(self):
        assert generated_spec_name("127.0.0.1") == "127.0.0.1-generated"
        assert generated_spec_name("::1") == "1-generated"
        assert generated_spec_name("a" * 200).endswith("-generated") and len(generated_spec_name("a" * 200)) <= 128


class TestRoutes:
    def test_listed_and_read_like_uploaded_specs(self, generated, client):
        listed = client.get("/api/v1/specs")
        assert listed.status_code == 200
        (item,) = [s for s in listed.json() if s["name"] == NAME]
        assert item["isAutoGenerated"] is True and item["hosts"] == [HOST] and item["extension"] == "json"
        assert item["openapiVersion"] == "3.1.0"
        read = client.get(f"/api/v1/spec/{NAME}")
        assert read.status_code == 200
        assert json.loads(read.json()["spec"]) == generated.spec and read.json()["isAutoGenerated"] is True

    def test_put_and_delete_of_a_generated_spec_are_409(self, generated, client):
        upload = SimpleUploadedFile("x.json", generated.text.encode())
        response = client.put(f"/api/v1/spec/{NAME}", {"file": upload}, format="multipart")
        assert response.status_code == 409
        assert "generated from the traffic of shop.example.com" in response.json()
        response = client.delete(f"/api/v1/spec/{NAME}")
        assert response.status_code == 409 and "cannot be deleted" in response.json()
        assert client.get(f"/api/v1/spec/{NAME}/drift").status_code == 409
        assert OpenApiSpec.objects.filter(name=NAME).exists()

    def test_uploads_cannot_take_a_generated_name(self, client, generated):
        upload = SimpleUploadedFile(f"{NAME}.json", generated.text.encode())
        response = client.post("/api/v1/spec/new", {"file": upload}, format="multipart")
        assert response.status_code == 400
        assert "kept for specs generated from traffic" in response.json()["err"]["issues"][0]["message"]

    def test_read_keys_may_read_but_not_change(self, generated, scoped_client):
        reader = scoped_client("read")
        assert reader.get(f"/api/v1/spec/{NAME}").status_code == 200
        assert reader.delete(f"/api/v1/spec/{NAME}").status_code == 403

    def test_endpoint_detail_falls_back_to_the_generated_spec(self, generated, client):
        endpoint = Endpoint.objects.get(path="/api/users/{param1}")
        body = client.get(f"/api/v1/endpoint/{endpoint.uuid}").json()
        # The generated document cut down to the endpoint's path: still a valid OpenAPI document.
        assert body["openapiSpec"] == {**generated.spec, "paths": {
            "/api/users/{param1}": generated.spec["paths"]["/api/users/{param1}"]}}
        assert body["openapiSpecName"] is None
        openapi_validate(body["openapiSpec"])
        upload = SimpleUploadedFile("shop-v1.json", json.dumps({**generated.spec, "info": {
            "title": "uploaded", "version": "1"}}).encode())
        assert client.post("/api/v1/spec/new", {"file": upload}, format="multipart").status_code == 201
        body = client.get(f"/api/v1/endpoint/{endpoint.uuid}").json()
        assert body["openapiSpecName"] == "shop-v1" and body["openapiSpec"]["info"]["title"] == "uploaded"

    def test_the_drift_route_is_in_the_api_schema(self, anon_client):
        import yaml

        response = anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        schema = (response.json() if response["Content-Type"].startswith("application/vnd.oai.openapi+json")
                  else yaml.safe_load(response.content))
        drift = schema["paths"]["/api/v1/spec/{name}/drift"]["get"]
        assert drift["operationId"] == "spec_drift" and drift["x-required-scope"] == "read"
        assert {"200", "404", "409"} <= set(drift["responses"])
        assert "409" in schema["paths"]["/api/v1/spec/{name}"]["delete"]["responses"]

    def test_the_spec_answer_is_served_from_storage(self, generated, client):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            assert client.get(f"/api/v1/spec/{NAME}").status_code == 200
        tables = " ".join(q["sql"] for q in queries.captured_queries)
        assert "detections_openapispec" in tables
        assert "inventory_endpoint" not in tables and "classification_datafield" not in tables
        assert "inventory_apitrace" not in tables

    def test_deleting_the_host_deletes_its_generated_spec(self, generated, client):
        assert client.delete("/api/v1/hosts", {"hosts": [HOST]}, format="json").status_code == 200
        assert not OpenApiSpec.objects.filter(name=NAME).exists()


def test_uploading_the_generated_spec_back_raises_no_diff_on_its_traffic(generated, ingest, client):
    upload = SimpleUploadedFile("shop-roundtrip.json", generated.text.encode())
    response = client.post("/api/v1/spec/new", {"file": upload}, format="multipart")
    assert response.status_code == 201, response.content
    ingest(*varied_traces())
    assert list(Alert.objects.filter(type="Open API Spec Diff").values_list("description", flat=True)) == []
    # The comparison does run: a response of another shape is a difference.
    ingest(raw_trace(host=HOST, path="/api/users/3", headers={"Authorization": "Bearer x.y.z"},
                     response_body={"id": "three"}))
    assert Alert.objects.filter(type="Open API Spec Diff").exists()


class TestRefresh:
    def test_a_host_is_marked_once_and_its_refresh_published_with_the_debounce(
            self, ingest, settings, django_capture_on_commit_callbacks):
        from detections.models import GeneratedSpecState
        from detections.openapi.generate.service import generated_specs_mark_stale

        settings.OPENAPI_GENERATE_DEBOUNCE = 42
        ingest(*varied_traces())
        host = Host.objects.get(name=HOST)
        with django_capture_on_commit_callbacks() as callbacks:
            assert generated_specs_mark_stale(host_ids=[host.id]) == [host.id]
            assert generated_specs_mark_stale(host_ids=[host.id]) == []  # stale already: one rebuild
        assert [(c.args, c.keywords) for c in callbacks] == [(((host.id,),), {"countdown": 42})]
        assert GeneratedSpecState.objects.get(host=host).stale_since is not None
        spec = generated_spec_refresh(host_id=host.id)
        assert spec is not None and GeneratedSpecState.objects.get(host=host).stale_since is None
        assert generated_spec_refresh(host_id=host.id) is None  # a second run of the message: nothing to do

    def test_the_sweep_builds_hosts_never_built_and_hosts_changed_by_operators(
            self, ingest, django_capture_on_commit_callbacks, client):
        from detections.models import GeneratedSpecState
        from detections.openapi.generate.service import generated_specs_sweep

        ingest(*varied_traces())
        host = Host.objects.get(name=HOST)
        GeneratedSpecState.objects.all().delete()
        with django_capture_on_commit_callbacks():
            assert generated_specs_sweep()["marked"] == 1
        generated_spec_refresh(host_id=host.id)
        with django_capture_on_commit_callbacks():
            assert generated_specs_sweep()["marked"] == 0  # built, nothing changed since
        endpoint = Endpoint.objects.get(path="/health")
        assert client.put(f"/api/v1/endpoint/{endpoint.uuid}/authenticated", {"authenticated": True},
                          format="json").status_code == 200
        with django_capture_on_commit_callbacks():
            assert generated_specs_sweep()["marked"] == 1

    def test_unchanged_inventory_rewrites_nothing(self, generated):
        before = OpenApiSpec.objects.get(name=NAME).updated_at
        generated_spec_refresh(host_id=generated.source_host_id, force=True)
        assert OpenApiSpec.objects.get(name=NAME).updated_at == before


class TestVocabularyOnly:
    """DECISIONS §10 turn 3 (issue #25): a generated spec copies nothing from traffic but vocabulary."""

    HOST = "clinic.example.com"
    PLANTED = ["HIV positive", "Type two diabetes", "fluffy", "rex", "Ada Lovelace", "Grace Hopper",
               "call back after surgery", "VIP - handle personally", "globex-hospitals", "initech-care",
               "987654321", "987654322", "119922", "119923"]

    def four_traces(self) -> list[dict]:
        """The issue's example: four traces of two users (two tokens, two addresses)."""
        patients = [
            ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkb2MxIn0.c2lnLWRvYzE", "10.0.0.7", "globex-hospitals",
             {"fullName": "Ada Lovelace", "diagnosis": "HIV positive", "securityAnswer": "fluffy",
              "internalNote": "call back after surgery", "ssnNum": 987654321, "verificationCode": 119922,
              "status": "active"}),
            ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkb2MyIn0.c2lnLWRvYzI", "10.0.0.8", "initech-care",
             {"fullName": "Grace Hopper", "diagnosis": "Type two diabetes", "securityAnswer": "rex",
              "internalNote": "VIP - handle personally", "ssnNum": 987654322, "verificationCode": 119923,
              "status": "active"}),
        ]
        return [raw_trace(host=self.HOST, path=f"/api/patients/{100 + n}", source=source,
                          headers={"Authorization": token, "X-Tenant": tenant}, response_body=record)
                for n, (token, source, tenant, record) in enumerate(patients * 2)]

    def test_the_four_trace_example_leaves_no_planted_value_in_the_document(self, ingest, client):
        ingest(*self.four_traces())
        host = Host.objects.get(name=self.HOST)
        assert generated_spec_refresh(host_id=host.id, force=True) is not None
        response = client.get(f"/api/v1/spec/{generated_spec_name(self.HOST)}")
        assert response.status_code == 200
        text = json.dumps(response.json())  # the whole answer: the document text and its metadata
        for value in self.PLANTED:
            assert value not in text, value
        doc = json.loads(response.json()["spec"])
        props = body_schema(doc, "/api/patients/{param1}")["properties"]
        assert set(props) >= {"fullName", "diagnosis", "securityAnswer", "internalNote", "ssnNum", "verificationCode"}
        assert all("enum" not in schema for schema in props.values())  # two users: no enum at all
        example = operation(doc, "/api/patients/{param1}")["responses"]["200"]["content"]["application/json"][
            "example"]
        assert example["ssnNum"] in (0, "[REDACTED]") and example["verificationCode"] in (0, "[REDACTED]")
        tenant = next(p for p in operation(doc, "/api/patients/{param1}")["parameters"] if p["name"] == "X-Tenant")
        assert "enum" not in tenant["schema"]

    def test_vocabulary_seen_from_three_users_is_an_enum(self, ingest):
        tokens = [f"Bearer user-{n}-0123456789abcdef0123456789" for n in range(3)]
        ingest(*(raw_trace(host=self.HOST, path=f"/api/orders/{n}", headers={"Authorization": tokens[n % 3]},
                           response_body={"state": ("open", "closed")[n % 2], "owner": f"Person {n}"})
                 for n in range(12)))
        doc = document(generated_spec_refresh(host_id=Host.objects.get(name=self.HOST).id, force=True))
        props = body_schema(doc, "/api/orders/{param1}")["properties"]
        assert props["state"]["enum"] == ["closed", "open"]
        assert "enum" not in props["owner"]  # a name-holding key: never an enum
