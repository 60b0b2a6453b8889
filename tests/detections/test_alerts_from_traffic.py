"""All eight alert types raised by traces sent to the ingestion route, offered to the webhooks,
never raised twice while Open or Ignored."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from core.enums import AlertType
from detections.models import Alert
from inventory.models import Endpoint
from tests.inventory.ingest_support import raw_trace, send
from webhooks.models import Webhook, WebhookDelivery

SPEC = (Path(__file__).parent / "specs" / "petstore.yaml").read_bytes()  # servers: https://shop.example.com/v1
BATCH = "/api/v1/log-request/batch"
AUTH = {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz"}
PUBLIC = "93.184.216.34"


def eight_type_traces() -> list[dict]:
    """Plain-http traffic to a public host that has an uploaded spec."""
    host = "http://shop.example.com"
    return [
        # no credentials, 2xx, an email in the body, a body not matching the spec's Pet schema
        raw_trace(host=host, path="/v1/pets/7", destination=PUBLIC,
                  response_body={"id": "seven", "name": "Rex", "email": "rex@example.com"}),
        # Basic credentials, an email in the query, a path the spec does not document
        raw_trace(host=host, path="/v1/search", destination=PUBLIC, query=[("q", "bob@example.com")],
                  headers={"Authorization": "Basic YWxpY2U6czNjcmV0"}),
        # an email as a path segment
        raw_trace(host=host, path="/v1/customers/carol@example.com/orders", destination=PUBLIC, headers=AUTH),
        raw_trace(host=host, path="/v1/customers/dave@example.com/orders", destination=PUBLIC, headers=AUTH),
    ]


EXPECTED = {
    "New Endpoint Detected": {
        "A new endpoint has been detected for shop.example.com: /v1/pets/{param1}.",
        "A new endpoint has been detected for shop.example.com: /v1/search.",
        "A new endpoint has been detected for shop.example.com: /v1/customers/{param1}/orders.",
    },
    # The Authorization header is the request's own credential channel: authentication, not data (DECISIONS §5).
    "PII Data Detected": {"Sensitive data of type email has been detected in field 'email' of Response Body."},
    "Open API Spec Diff": {
        "Response body of GET /v1/pets/{param1} on shop.example.com (status 200) does not match OpenAPI spec "
        "'petstore': field 'id' is not of type integer.",
        "Endpoint GET /v1/search on shop.example.com is not documented in OpenAPI spec 'petstore'.",
        "Endpoint GET /v1/customers/{param1}/orders on shop.example.com is not documented in OpenAPI spec 'petstore'.",
    },
    "Sensitive Data in Query Params": {"Query Parameter 'q' contains sensitive data of type email."},
    "Sensitive Data in Path Params": {"Path Parameter at position 3 contains sensitive data of type email."},
    "Basic Authentication Detected": {"Basic Authentication detected in Authorization header."},
    "Endpoint not secured by SSL": {
        "Endpoint GET /v1/pets/{param1} on shop.example.com is served without SSL.",
        "Endpoint GET /v1/search on shop.example.com is served without SSL.",
        "Endpoint GET /v1/customers/{param1}/orders on shop.example.com is served without SSL.",
    },
    "Unauthenticated Endpoint returning Sensitive Data": {
        "Unauthenticated endpoint GET /v1/pets/{param1} in shop.example.com is returning sensitive data.",
    },
}


def upload_spec(client) -> None:
    response = client.post("/api/v1/spec/new", {"file": SimpleUploadedFile("petstore.yaml", SPEC)}, format="multipart")
    assert response.status_code == 201, response.content


def alerts_by_type() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for type_, description in Alert.objects.values_list("type", "description"):
        found.setdefault(type_, set()).add(description)
    return found


@pytest.mark.django_db
class TestEveryTypeFromTheIngestionRoute:
    @pytest.fixture
    def ingest(self, client, django_capture_on_commit_callbacks):
        def _ingest(traces):
            response = send(client, django_capture_on_commit_callbacks, BATCH, traces)
            assert response.status_code == 200, response.content
        return _ingest

    def test_each_of_the_eight_types_is_raised_and_offered_to_the_webhooks(self, client, ingest):
        upload_spec(client)
        hook = Webhook.objects.create(url="http://127.0.0.1:9/hook")

        ingest(eight_type_traces())

        found = alerts_by_type()
        assert set(found) == set(AlertType.values)
        for type_, descriptions in EXPECTED.items():
            assert descriptions <= found[type_], type_
        # Every alert has its pending delivery, with its own uuid and type in the payload snapshot.
        deliveries = WebhookDelivery.objects.filter(webhook=hook)
        assert deliveries.count() == Alert.objects.count()
        assert {(d.payload["alert"]["uuid"], d.payload["alert"]["type"]) for d in deliveries} == {
            (str(a.uuid), a.type) for a in Alert.objects.all()
        }
        assert {d.status for d in deliveries} == {"PENDING"}

    def test_not_raised_twice_while_open_or_ignored(self, client, ingest):
        upload_spec(client)
        ingest(eight_type_traces())
        first = Alert.objects.count()

        ingest(eight_type_traces())
        assert Alert.objects.count() == first

        Alert.objects.update(status="Ignored")
        ingest(eight_type_traces())
        assert Alert.objects.count() == first

        # Resolved ones come back for the rules that keep firing on this traffic.
        Alert.objects.filter(type="Open API Spec Diff").update(status="Resolved")
        ingest(eight_type_traces())
        assert Alert.objects.filter(type="Open API Spec Diff", status="Open").count() == len(EXPECTED["Open API Spec Diff"])

    def test_spec_diff_reports_undocumented_statuses_and_links_endpoints(self, client, ingest):
        upload_spec(client)

        ingest([
            raw_trace(host="shop.example.com", path="/v1/pets/7", headers=AUTH, response_body={"id": 7, "name": "Rex"}),
            raw_trace(host="shop.example.com", path="/v1/pets/8", headers=AUTH, status=500, response_body="boom",
                      response_headers={"Content-Type": "text/plain"}),
        ])

        assert set(Alert.objects.filter(type="Open API Spec Diff").values_list("description", flat=True)) == {
            "Response status 500 of GET /v1/pets/{param1} on shop.example.com is not documented in OpenAPI spec "
            "'petstore'."
        }
        assert Endpoint.objects.get(path="/v1/pets/{param1}").openapi_spec_name == "petstore"

    def test_traffic_of_a_host_without_a_spec_raises_no_spec_diff(self, ingest):
        ingest(eight_type_traces())
        assert not Alert.objects.filter(type="Open API Spec Diff").exists()
