"""Payload counts reflect the analysis that raised the alert (DECISIONS §6, issue #14 point 5).

The analysis of a batch writes the endpoints' new risk after it raises its alerts; the deliveries'
payloads (snapshotted in the same transaction) must count an endpoint made sensitive by that very
analysis as sensitive. These tests run the analysis the worker runs on batches accepted through the
real route, then compare each delivery's payload with the database.
"""
from __future__ import annotations

import pytest

from core.enums import RiskScore
from inventory.models import Endpoint
from tests.inventory.ingest_support import raw_trace, send
from webhooks.models import Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db

HOST = "shop.example.com"


def host_state(host: str) -> dict:
    """What the payload's ``meta`` must say about ``host``, read from the database."""
    endpoints = Endpoint.objects.filter(host__name=host)
    return {"host": host, "totalEndpoints": endpoints.count(),
            "totalSensitiveEndpoints": endpoints.exclude(risk_score=RiskScore.NONE).count()}


def payloads(alert_type: str) -> list[dict]:
    return [d.payload for d in WebhookDelivery.objects.filter(payload__alert__type=alert_type)]


def test_the_pii_delivery_for_a_new_email_field_counts_its_endpoint_as_sensitive(client, django_capture_on_commit_callbacks):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    quiet = raw_trace(host=HOST, path="/api/health", response_body={"status": "up"})
    assert send(client, django_capture_on_commit_callbacks, "/api/v1/log-request/batch", [quiet]).status_code == 200
    assert host_state(HOST) == {"host": HOST, "totalEndpoints": 1, "totalSensitiveEndpoints": 0}

    leaking = raw_trace(host=HOST, path="/api/account", response_body={"email": "ada@example.com"})
    assert send(client, django_capture_on_commit_callbacks, "/api/v1/log-request/batch", [leaking]).status_code == 200

    endpoint = Endpoint.objects.get(host__name=HOST, path="/api/account")
    assert endpoint.risk_score != RiskScore.NONE
    [payload] = payloads("PII Data Detected")
    assert payload["meta"] == host_state(HOST) == {"host": HOST, "totalEndpoints": 2, "totalSensitiveEndpoints": 1}
    assert payload["alert"]["apiEndpoint"]["uuid"] == str(endpoint.uuid)
    assert {"dataPath": "email", "dataClasses": ["email"], "dataSection": "resBody"} in \
        payload["alert"]["apiEndpoint"]["dataFields"]
    # Every alert of that analysis (the new endpoint's too) went out with the same, current counts.
    [new_endpoint] = [p for p in payloads("New Endpoint Detected") if p["alert"]["apiEndpoint"]["path"] == "/api/account"]
    assert new_endpoint["meta"] == host_state(HOST)


def test_payload_counts_of_one_batch_match_the_state_it_leaves(client, django_capture_on_commit_callbacks):
    Webhook.objects.create(url="http://127.0.0.1:9/hook", alert_types=["PII Data Detected"])
    # Differently shaped answers: three endpoints whatever the inventory learns from path families.
    bodies = {"orders": {"email": "ada@example.com"}, "invoices": {"billing": {"email": "bob@example.com"}},
              "customers": [{"id": 7, "contact": "cy@example.com"}]}
    batch = [raw_trace(host=HOST, path=f"/api/{name}", response_body=body) for name, body in bodies.items()]
    batch.append(raw_trace(host=HOST, path="/api/status", response_body={"ok": True}))

    assert send(client, django_capture_on_commit_callbacks, "/api/v1/log-request/batch", batch).status_code == 200

    sent = payloads("PII Data Detected")
    assert len(sent) == 3
    assert [p["meta"] for p in sent] == [host_state(HOST)] * 3
    assert host_state(HOST) == {"host": HOST, "totalEndpoints": 4, "totalSensitiveEndpoints": 3}
