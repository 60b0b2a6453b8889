"""The seven traffic alert rules (DECISIONS §6), raised by the analysis, never twice while Open."""
import json

import pytest

from core.enums import AlertStatus
from detections.models import Alert
from inventory.models import Endpoint

from .ingest_support import ingest, raw_trace, sample  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

AUTH = {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz"}


def alerts(type_):
    return list(Alert.objects.filter(type=type_).order_by("created_at").values_list("description", flat=True))


def test_new_endpoint_detected(ingest):
    ingest(raw_trace(host="shop.example.com", path="/api/v1/products/17", headers=AUTH))
    ingest(raw_trace(host="shop.example.com", path="/api/v1/products/18", headers=AUTH))
    assert alerts("New Endpoint Detected") == ["A new endpoint has been detected for shop.example.com: "
                                               "/api/v1/products/{param1}."]
    alert = Alert.objects.get(type="New Endpoint Detected")
    assert alert.risk_score == "LOW" and alert.status == "Open"
    assert alert.endpoint == Endpoint.objects.get()


def test_pii_data_detected_once_per_new_class_on_a_field(ingest):
    ingest(raw_trace(path="/profile", headers=AUTH, response_body={"contact": {"email": "a@example.com"}}))
    ingest(raw_trace(path="/profile", headers=AUTH, response_body={"contact": {"email": "b@example.com"}}))
    ingest(raw_trace(path="/profile", method="POST", headers={**AUTH, "Content-Type": "application/json"},
                     body='{"ssn": "123-45-6789"}'))
    # The bearer token in Authorization is the request's own credential: authentication, not data (DECISIONS §5).
    assert sorted(Alert.objects.filter(type="PII Data Detected").values_list("endpoint__method", "description")) == [
        ("GET", "Sensitive data of type email has been detected in field 'contact.email' of Response Body."),
        ("POST", "Sensitive data of type ssn has been detected in field 'ssn' of Request Body."),
    ]
    alert = Alert.objects.get(description__contains="contact.email")
    assert alert.risk_score == "HIGH"
    assert alert.context == {"dataSection": "RESPONSE_BODY", "dataPath": "contact.email", "dataClass": "email"}
    assert "a@example.com" not in str(Alert.objects.values_list("context", "description"))


def test_sensitive_data_in_query_params_not_twice_while_open_again_after_resolution(ingest):
    trace = raw_trace(path="/search", headers=AUTH, query=[("q", "bob@example.com")])
    ingest(trace)
    ingest(trace)
    expected = "Query Parameter 'q' contains sensitive data of type email."
    assert alerts("Sensitive Data in Query Params") == [expected]
    Alert.objects.filter(type="Sensitive Data in Query Params").update(status=AlertStatus.RESOLVED)
    ingest(trace)
    assert alerts("Sensitive Data in Query Params") == [expected, expected]
    Alert.objects.filter(type="Sensitive Data in Query Params", status="Open").update(status=AlertStatus.IGNORED)
    ingest(trace)
    assert len(alerts("Sensitive Data in Query Params")) == 2  # an Ignored one also blocks repeats


def test_sensitive_data_in_path_params(ingest):
    ingest(raw_trace(path="/api/customers/carol@example.com/orders", headers=AUTH))
    ingest(raw_trace(path="/api/customers/dave@example.com/orders", headers=AUTH))
    assert alerts("Sensitive Data in Path Params") == [
        "Path Parameter at position 3 contains sensitive data of type email."]
    assert Endpoint.objects.get().path == "/api/customers/{param1}/orders"


def test_basic_authentication_detected(ingest):
    ingest(raw_trace(path="/legacy/export", headers={"Authorization": "Basic YWxpY2U6czNjcmV0"}))
    ingest(raw_trace(path="/legacy/export", headers={"Authorization": "basic Ym9iOnB3"}))
    ingest(raw_trace(path="/modern", headers=AUTH))
    assert alerts("Basic Authentication Detected") == ["Basic Authentication detected in Authorization header."]
    assert Alert.objects.get(type="Basic Authentication Detected").risk_score == "MEDIUM"
    assert Alert.objects.get(type="Basic Authentication Detected").endpoint.path == "/legacy/export"


def test_endpoint_not_secured_by_ssl_on_external_hosts_only(ingest):
    ingest(raw_trace(host="http://shop.example.com", path="/cart", destination="93.184.216.34", headers=AUTH))
    ingest(
        raw_trace(host="http://shop.example.com", path="/cart", destination="93.184.216.34", headers=AUTH),
        raw_trace(host="https://secure.example.com", path="/cart", destination="93.184.216.34", headers=AUTH),
        raw_trace(host="internal.example.com", path="/cart", destination="10.0.0.3", destination_port="80",
                  headers=AUTH),
        raw_trace(host="proxy.example.com", path="/cart", destination="93.184.216.35", destination_port="8080",
                  headers={**AUTH, "X-Forwarded-Proto": "http"}),
    )
    assert sorted(alerts("Endpoint not secured by SSL")) == [
        "Endpoint GET /cart on proxy.example.com is served without SSL.",
        "Endpoint GET /cart on shop.example.com is served without SSL.",
    ]


def test_unauthenticated_endpoint_returning_sensitive_data(ingest):
    ingest(raw_trace(path="/public/users/1", response_body={"email": "x@example.com"}))
    ingest(raw_trace(path="/public/users/2", response_body={"email": "y@example.com"}))
    ingest(raw_trace(path="/private/users/1", headers=AUTH, response_body={"email": "x@example.com"}))
    ingest(raw_trace(path="/public/status", response_body={"status": "green"}))
    assert alerts("Unauthenticated Endpoint returning Sensitive Data") == [
        "Unauthenticated endpoint GET /public/users/{param1} in api.example.com is returning sensitive data."]


def test_v2_traces_raise_the_same_rules(ingest):
    ingest(*sample("v2-batch-flask-01.json"), url="/api/v2/log-request/batch")
    types = set(Alert.objects.values_list("type", flat=True))
    assert types == {"New Endpoint Detected", "PII Data Detected", "Unauthenticated Endpoint returning Sensitive Data"}


def test_alerts_of_one_batch_are_not_duplicated(ingest):
    ingest(*[raw_trace(path=f"/public/users/{i}", query=[("email", f"u{i}@example.com")],
                       response_body={"email": f"u{i}@example.com"}) for i in range(20)])
    assert Alert.objects.count() == len(set(Alert.objects.values_list("type", "description")))
    assert Alert.objects.filter(type="Sensitive Data in Query Params").count() == 1


def test_open_api_spec_diff_is_checked_on_ingested_traffic(ingest):
    from detections.specs import spec_create

    spec = {
        "openapi": "3.0.3", "info": {"title": "shop", "version": "1"},
        "servers": [{"url": "https://shop.example.com/api"}],
        "paths": {"/items/{id}": {"get": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "responses": {"200": {"description": "ok", "content": {
            "application/json": {"schema": {"type": "object", "properties": {"id": {"type": "integer"}}}}}}}}}},
    }
    spec_create(name="shop", raw=json.dumps(spec).encode())
    ingest(raw_trace(host="shop.example.com", path="/api/items/7", headers=AUTH, response_body={"id": 7}),
           raw_trace(host="shop.example.com", path="/api/items/8", headers=AUTH, response_body={"id": "eight"}),
           raw_trace(host="shop.example.com", path="/api/carts/1", headers=AUTH, response_body={}))
    assert sorted(alerts("Open API Spec Diff")) == [
        "Endpoint GET /api/carts/{param1} on shop.example.com is not documented in OpenAPI spec 'shop'.",
        "Response body of GET /api/items/{param1} on shop.example.com (status 200) does not match OpenAPI spec "
        "'shop': field 'id' is not of type integer.",
    ]
    assert Endpoint.objects.get(path="/api/items/{param1}").openapi_spec_name == "shop"
