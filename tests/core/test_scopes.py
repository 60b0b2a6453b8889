"""Key scopes (DECISIONS §2) through the real URLs: every route decides its scope, every key outside
its scope gets 403 "Forbidden.", checks answer in the contract's order, the schema says the same.

The expected access is written out here (``expected_allowed``), independently of the views'
declarations, and the URL-conf walker applies it to every route: a new route is covered at once.
"""
from __future__ import annotations

import pytest
from rest_framework.permissions import AllowAny
from rest_framework.test import APIClient

from core.models import ApiKey, Scope
from core.scopes import ScopePermission, implemented_methods, required_scope
from inventory.models import Endpoint
from tests.factories import EndpointFactory
from tests.inventory.ingest_support import processed_trace, raw_trace
from webhooks.models import Webhook

from . import routes

pytestmark = pytest.mark.django_db

INGEST_ROUTES = {
    ("GET", "/api/v1/verify"), ("GET", "/api/v1/agent-config"), ("POST", "/api/v1/log-request/single"),
    ("POST", "/api/v1/log-request/batch"), ("POST", "/api/v2/log-request/batch"),
}
FORBIDDEN = (403, "Forbidden.")


def expected_allowed(scope: str, method: str, path: str) -> bool:
    """The contract: ingest = the agent routes; read = every GET; admin = everything."""
    if scope == Scope.ADMIN:
        return True
    if scope == Scope.INGEST:
        return (method, path) in INGEST_ROUTES
    return method == "GET"


def expected_required(method: str, path: str) -> str:
    """The least scope that serves a route."""
    if (method, path) in INGEST_ROUTES:
        return Scope.INGEST
    return Scope.READ if method == "GET" else Scope.ADMIN


def operations() -> list[tuple[str, str]]:
    """(method, concrete path) of every keyed API route."""
    return [(method, route.path) for route in routes.api_routes() if route.path not in routes.PUBLIC
            for method in implemented_methods(route.view)]


def call(api: APIClient, method: str, path: str, body=None):
    if method == "GET":
        return api.get(path)
    return getattr(api, method.lower())(path, {} if body is None else body, format="json")


# ------------------------------------------------------------------ every route has a decision

def test_the_walker_sees_every_kind_of_route():
    found = set(operations())
    assert INGEST_ROUTES <= found
    assert ("DELETE", f"/api/v1/endpoint/{routes.SAMPLE_ID}") in found
    assert ("POST", "/api/v1/testing/runs") in found


def test_every_api_route_declares_a_scope_for_each_of_its_methods():
    for route in routes.api_routes():
        if route.path in routes.PUBLIC:
            assert AllowAny in route.view.permission_classes, route.path
            continue
        assert ScopePermission in route.view.permission_classes, route.path
        methods = implemented_methods(route.view)
        assert methods, route.path
        for method in methods:
            assert required_scope(route.view, method) is not None, f"{method} {route.path} has no scope decision"


def test_each_route_declares_the_least_scope_that_serves_it():
    for method, path in operations():
        view = next(r.view for r in routes.api_routes() if r.path == path)
        assert required_scope(view, method) == expected_required(method, path), f"{method} {path}"


# ------------------------------------------------------------------ outside its scope: 403, inside: served

@pytest.mark.parametrize("scope", Scope.values)
def test_every_route_outside_the_keys_scope_is_forbidden(scoped_client, scope):
    api = scoped_client(scope)
    refused = [(m, p) for m, p in operations() if not expected_allowed(scope, m, p)]
    assert refused or scope == Scope.ADMIN
    for method, path in refused:
        response = call(api, method, path)
        assert (response.status_code, response.json()) == FORBIDDEN, f"{scope}: {method} {path}"


@pytest.mark.parametrize("scope", Scope.values)
def test_every_route_inside_the_keys_scope_is_served(scoped_client, scope):
    api = scoped_client(scope)
    for method, path in operations():
        if expected_allowed(scope, method, path):
            response = call(api, method, path)
            assert response.status_code not in (401, 403), f"{scope}: {method} {path} {response.status_code}"
            assert response.status_code < 500, f"{scope}: {method} {path}"


def test_a_read_key_gets_every_get_route_the_way_an_admin_key_does(scoped_client):
    EndpointFactory()
    read, admin = scoped_client(Scope.READ), scoped_client(Scope.ADMIN)
    for method, path in operations():
        if method == "GET":
            assert read.get(path).status_code == admin.get(path).status_code, path


def test_the_ingest_scope_serves_what_agents_call(scoped_client):
    agent = scoped_client(Scope.INGEST)
    assert (agent.get("/api/v1/verify").status_code, agent.get("/api/v1/verify").json()) == (200, "OK")
    assert "sensitiveDataList" in agent.get("/api/v1/agent-config").json()
    for path, body in (("/api/v1/log-request/single", raw_trace()), ("/api/v1/log-request/batch", [raw_trace()]),
                       ("/api/v2/log-request/batch", [processed_trace()])):
        response = agent.post(path, body, format="json")
        assert (response.status_code, response.json()) == (200, "OK"), path


def test_the_read_scope_serves_the_inventory_and_the_agent_checks(scoped_client):
    endpoint = EndpointFactory()
    reader = scoped_client(Scope.READ)
    for path in ("/api/v1/endpoints", "/api/v1/hosts", "/api/v1/alerts", "/api/v1/webhooks", "/api/v1/data-class",
                 "/api/v1/testing/global-env", "/api/v1/testing/runs", "/api/v1/specs", "/api/v1/hosts-graph",
                 "/api/v1/new-detections-agg", f"/api/v1/endpoint/{endpoint.uuid}", "/api/v1/verify",
                 "/api/v1/agent-config"):
        assert reader.get(path).status_code == 200, path
    assert reader.get("/api/v1/endpoints").json()[0]["uuid"] == str(endpoint.uuid)


def test_the_admin_scope_changes_things(scoped_client):
    endpoint = EndpointFactory()
    admin = scoped_client(Scope.ADMIN)
    created = admin.post("/api/v1/webhook", {"url": "https://hooks.example.com/in"}, format="json")
    assert created.status_code == 201
    assert admin.put(f"/api/v1/endpoint/{endpoint.uuid}/authenticated", {"authenticated": True},
                     format="json").json() == "Success"
    assert admin.put("/api/v1/testing/global-env", {"baseUrl": "https://staging.example.com"},
                     format="json").status_code == 200
    assert admin.delete(f"/api/v1/endpoint/{endpoint.uuid}").json() == "Success"
    assert not Endpoint.objects.exists()


def test_a_forbidden_request_changes_nothing(scoped_client):
    endpoint = EndpointFactory()
    hook = Webhook.objects.create(url="https://hooks.example.com/in")
    for scope in (Scope.INGEST, Scope.READ):
        api = scoped_client(scope)
        assert (api.delete(f"/api/v1/endpoint/{endpoint.uuid}").status_code,
                api.put(f"/api/v1/webhook/{hook.uuid}", {"url": "https://evil.example.com/"}, format="json")
                .status_code) == (403, 403)
    assert Endpoint.objects.filter(pk=endpoint.pk).exists()
    assert Webhook.objects.get().url == "https://hooks.example.com/in"


def test_scope_changes_apply_on_the_next_request(scoped_client):
    api = scoped_client(Scope.READ)
    assert api.delete("/api/v1/endpoints", {"uuids": [routes.SAMPLE_ID]}, format="json").status_code == 403
    ApiKey.objects.filter(scope=Scope.READ).update(scope=Scope.ADMIN)
    assert api.delete("/api/v1/endpoints", {"uuids": [routes.SAMPLE_ID]}, format="json").json() == "Success"


# ------------------------------------------------------------------ check order: 401, 404, 405, 403, 400, 404

def test_a_read_key_changing_an_unknown_endpoint_with_an_invalid_body_is_forbidden(scoped_client):
    response = scoped_client(Scope.READ).put("/api/v1/endpoint/not-a-uuid/authenticated", {"authenticated": "maybe"},
                                      format="json")
    assert (response.status_code, response.json()) == FORBIDDEN


def test_an_admin_key_gets_the_unknown_id_then_the_validation_error(scoped_client):
    admin = scoped_client(Scope.ADMIN)
    response = admin.put("/api/v1/endpoint/not-a-uuid/authenticated", {"authenticated": "maybe"}, format="json")
    assert (response.status_code, response.json()) == (404, "Endpoint does not exist.")
    endpoint = EndpointFactory()
    response = admin.put(f"/api/v1/endpoint/{endpoint.uuid}/authenticated", {"authenticated": "maybe"},
                         format="json")
    assert response.status_code == 400 and response.json()["type"] == "ZOD"


def test_an_ingest_key_posting_an_invalid_batch_gets_the_validation_error(scoped_client):
    agent = scoped_client(Scope.INGEST)
    response = agent.post("/api/v1/log-request/batch", [{"request": {}}], format="json")
    assert response.status_code == 400
    assert response.json()["err"]["issues"][0]["path"][0] == 0
    malformed = agent.post("/api/v1/log-request/batch", data=b"[{", content_type="application/json")
    assert (malformed.status_code, malformed.json()["type"]) == (400, "ZOD")


def test_a_read_key_posting_traces_is_forbidden_before_its_body_is_read(scoped_client):
    reader = scoped_client(Scope.READ)
    for body in (b"[{", b"not json at all", b"[]"):
        response = reader.post("/api/v1/log-request/batch", data=body, content_type="application/json")
        assert (response.status_code, response.json()) == FORBIDDEN
    response = reader.post("/api/v1/log-request/batch", data=b"<xml/>", content_type="application/xml")
    assert (response.status_code, response.json()) == FORBIDDEN


def test_an_unknown_id_inside_the_scope_is_404_and_outside_it_403(scoped_client):
    assert (scoped_client(Scope.READ).get("/api/v1/endpoint/nope").json()) == "Endpoint does not exist."
    assert scoped_client(Scope.READ).get("/api/v1/endpoint/nope").status_code == 404
    response = scoped_client(Scope.INGEST).get("/api/v1/endpoint/nope")
    assert (response.status_code, response.json()) == FORBIDDEN


@pytest.mark.parametrize("scope", Scope.values)
def test_an_unknown_route_is_404_whatever_the_scope(scoped_client, scope):
    api = scoped_client(scope)
    for response in (api.get("/api/v1/no-such-route"), api.delete("/api/v1/endpoint/x/nothing-here"),
                     api.post("/api/v3/log-request/batch", [], format="json")):
        assert (response.status_code, response.json()) == (404, "Not found.")


def test_a_method_the_route_does_not_have_is_405_not_403(scoped_client):
    for scope, method, path in (
        (Scope.READ, "delete", "/api/v1/verify"), (Scope.INGEST, "post", "/api/v1/endpoints"),
        (Scope.INGEST, "put", "/api/v1/log-request/batch"), (Scope.READ, "patch", "/api/v1/hosts"),
    ):
        response = getattr(scoped_client(scope), method)(path, {}, format="json")
        assert (response.status_code, response.json()) == (405, "Method not allowed."), (scope, method, path)


def test_a_missing_or_unknown_key_is_401_before_the_scope(anon_client):
    for api_key in (None, "ask_not-a-real-key"):
        if api_key:
            anon_client.credentials(HTTP_AUTHORIZATION=api_key)
        response = anon_client.put("/api/v1/endpoint/not-a-uuid/authenticated", {"authenticated": 1}, format="json")
        assert (response.status_code, response.json()) == (401, "Client unauthorized")


def test_head_follows_get_and_options_needs_some_method_of_the_route(scoped_client):
    agent, reader = scoped_client(Scope.INGEST), scoped_client(Scope.READ)
    assert reader.head("/api/v1/endpoints").status_code == 200
    assert agent.head("/api/v1/endpoints").status_code == 403
    assert agent.options("/api/v1/log-request/batch").status_code == 200
    assert agent.options("/api/v1/endpoints").status_code == 403
    assert reader.options("/api/v1/webhook").status_code == 403  # POST only, admin only


# ------------------------------------------------------------------ the key lookup stays one statement

def test_the_scope_comes_with_the_key_in_the_one_lookup(scoped_client, django_assert_num_queries):
    agent = scoped_client(Scope.INGEST)
    with django_assert_num_queries(1) as queries:
        assert agent.get("/api/v1/endpoints").status_code == 403
    assert "scope" in queries.captured_queries[0]["sql"]
    with django_assert_num_queries(1):
        assert agent.get("/api/v1/verify").status_code == 200


# ------------------------------------------------------------------ the served schema says the same

@pytest.fixture
def schema(anon_client) -> dict:
    return anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def _documented(schema: dict) -> dict[tuple[str, str], dict]:
    return {
        (method.upper(), path): operation
        for path, item in schema["paths"].items() for method, operation in item.items()
        if method in ("get", "put", "post", "patch", "delete") and path not in routes.PUBLIC
    }


def test_the_schema_documents_every_keyed_route(schema):
    documented = {(method, routes.schema_concrete(path)) for method, path in _documented(schema)}
    assert documented == set(operations())


def test_the_schema_states_each_operations_scope_and_its_403(schema):
    for (method, path), operation in _documented(schema).items():
        concrete = routes.schema_concrete(path)
        label = f"{method} {path}"
        allowed = [s for s in Scope.values if expected_allowed(s, method, concrete)]
        assert operation["x-required-scope"] == expected_required(method, concrete), label
        assert operation["x-allowed-scopes"] == allowed, label
        assert f"**Scope:** `{operation['x-required-scope']}`" in operation["description"], label
        assert {"ApiKeyAuth": []} in operation["security"], label
        if len(allowed) < len(Scope.values):
            body = operation["responses"]["403"]["content"]["application/json"]["schema"]
            assert body == {"type": "string", "enum": ["Forbidden."]}, label
        else:
            assert "403" not in operation["responses"], label


def test_the_schema_explains_the_scopes(schema):
    description = schema["components"]["securitySchemes"]["ApiKeyAuth"]["description"]
    assert all(f"`{scope}`" in description for scope in Scope.values)
    assert "x-required-scope" in description
