"""Shared by the hardening tests: a realistic inventory built through the real routes, and row counts."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile

from inventory.ingest.pipeline import batch_analyze
from inventory.models import IngestBatch
from tests.inventory.ingest_support import raw_trace

SHOP = "shop.example.com"
SPEC_FILE = Path(__file__).parent.parent / "detections" / "specs" / "petstore.yaml"


def analyse_pending() -> int:
    """Run the analysis of every PENDING batch in this process, as the worker would. Returns how many ran."""
    ids = list(IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).order_by("id").values_list("id", flat=True))
    for batch_id in ids:
        batch_analyze(batch_id=batch_id)
    return len(ids)


def seed_traces() -> list[dict]:
    """Traffic with something for every route to find: sensitive fields, credentials, a GraphQL call."""
    user = {"id": 42, "email": "ada@example.com", "ssn": "078-05-1120", "phone": "+1 415 555 2671",
            "card": "4111 1111 1111 1111", "items": [{"name": "book", "price": 12.5}]}
    return [
        raw_trace(host=SHOP, path="/api/users/42", response_body=user,
                  headers={"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo"}),
        raw_trace(host=SHOP, path="/api/users/43", response_body=user),
        raw_trace(host=SHOP, path="/api/search", query=[("q", "ada@example.com"), ("limit", "10")],
                  response_body=[{"id": 1}]),
        raw_trace(host=SHOP, path="/api/login", method="POST", status=200,
                  headers={"Content-Type": "application/json"},
                  body=json.dumps({"username": "ada", "password": "hunter2"}), response_body={"token": "t"}),
        raw_trace(host=SHOP, path="/graphql", method="POST", headers={"Content-Type": "application/json"},
                  body=json.dumps({"query": "{ user(id: 1) { email } }"}),
                  response_body={"data": {"user": {"email": "bob@example.com"}}}),
        raw_trace(host="petstore.example.com", path="/v1/pets/7", destination="93.184.216.34",
                  response_body={"id": 7, "name": "rex"}),
        raw_trace(host="internal.svc", path="/health", source="10.0.0.9", response_body={"ok": True}),
    ]


@dataclass
class Seeded:
    """Ids of the seeded rows, by the path (and query) parameter names that take them."""

    ids: dict[str, list[str]] = field(default_factory=dict)


def seed_inventory(client) -> Seeded:
    """Build an inventory the way production does (agent routes + analysis), plus a webhook, a spec,
    a testing environment and a queued test run, through the public API."""
    from classification.models import DataField
    from detections.models import Alert
    from inventory.models import Endpoint

    response = client.post("/api/v1/log-request/batch", seed_traces(), format="json")
    assert response.status_code == 200, response.content
    analyse_pending()
    webhook = client.post("/api/v1/webhook", {"url": "http://127.0.0.1:9/hook", "maxRetries": 0}, format="json")
    assert webhook.status_code == 201, webhook.content
    spec = client.post("/api/v1/spec/new",
                       {"file": SimpleUploadedFile("petstore.yaml", SPEC_FILE.read_bytes(), "application/yaml")},
                       format="multipart")
    assert spec.status_code == 201, spec.content
    env = client.put("/api/v1/testing/global-env", {"baseUrl": "http://127.0.0.1:9", "authToken": "t0ken"},
                     format="json")
    assert env.status_code == 200, env.content
    run = client.post("/api/v1/testing/runs", {"host": SHOP}, format="json")
    assert run.status_code == 202, run.content

    # Ordered by content, not by random uuids or equal timestamps: the same rows in the same order every run.
    endpoints = list(Endpoint.objects.order_by("host__name", "method", "path").values_list("uuid", "path", "host__name"))
    fields = DataField.objects.order_by("endpoint__host__name", "endpoint__method", "endpoint__path", "data_section",
                                        "status_code", "data_path")
    alerts = Alert.objects.order_by("endpoint__host__name", "endpoint__method", "endpoint__path", "type", "description")
    return Seeded(ids={
        "endpoint_id": [str(uuid) for uuid, _, _ in endpoints],
        "data_field_id": [str(u) for u in fields.values_list("uuid", flat=True)],
        "alert_id": [str(u) for u in alerts.values_list("uuid", flat=True)],
        "webhook_id": [webhook.json()["uuid"]],
        "name": [spec.json()["name"]],
        "run_id": [run.json()["uuid"]],
        "endpoint": [path for _, path, _ in endpoints] + [str(uuid) for uuid, _, _ in endpoints[:2]],
        "host": [SHOP, "petstore.example.com"],
        "hosts": [SHOP],
    })


def row_counts() -> dict[str, int]:
    """Rows of every model of the project's apps (and the API keys)."""
    labels = ("core", "inventory", "classification", "detections", "webhooks", "testgen")
    return {
        model._meta.label: model.objects.count()
        for label in labels
        for model in apps.get_app_config(label).get_models()
    }
