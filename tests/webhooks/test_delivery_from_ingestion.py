"""End to end: a trace sent to the ingestion route raises an alert that a real worker delivers."""
from __future__ import annotations

import pytest

from detections.models import Alert
from inventory.ingest.pipeline import batch_analyze
from inventory.models import IngestBatch
from tests.conftest import seed_builtin_data_classes
from tests.inventory.ingest_support import raw_trace


pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_an_alert_from_the_ingestion_route_reaches_the_receiver(celery_worker, receiver, client):
    seed_builtin_data_classes()  # a previous transactional test's flush may have removed them
    url, route = receiver.route()
    assert client.post("/api/v1/webhook", {"url": url, "alertTypes": ["Basic Authentication Detected"]},
                       format="json").status_code == 201

    response = client.post("/api/v1/log-request/batch",
                           [raw_trace(path="/legacy/export", headers={"Authorization": "Basic YWxpY2U6czNjcmV0"})],
                           format="json")
    assert response.status_code == 200
    # What the analysis worker does with the accepted batch (run here: this test's worker serves webhooks).
    for batch in IngestBatch.objects.filter(status="PENDING"):
        batch_analyze(batch_id=batch.id)

    request = route.wait_for_requests(1)[0]
    alert = Alert.objects.get(type="Basic Authentication Detected")
    assert request.json()["alert"]["uuid"] == str(alert.uuid)
    assert request.json()["alert"]["apiEndpoint"]["path"] == "/legacy/export"
    assert request.json()["alert"]["description"] == "Basic Authentication detected in Authorization header."
    assert len(route.requests) == 1
