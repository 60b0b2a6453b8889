"""With the broker unreachable, work is committed and left to the sweeps: no error reaches the caller
(a client, or the analysis that raised alerts), nothing is lost."""
from __future__ import annotations

import socket
from datetime import timedelta

import pytest

from core.enums import AlertType
from detections.models import Alert
from detections.services import AlertCandidate, alerts_raise
from inventory.ingest.accept import batches_requeue
from inventory.models import IngestBatch
from tests.factories import EndpointFactory, HostFactory
from tests.inventory.ingest_support import raw_trace
from tests.testgen.conftest import SHOP, set_env, shop  # noqa: F401 (fixtures)
from testgen.models import TestRun
from webhooks.models import Webhook, WebhookDelivery
from webhooks.services.sweep import deliveries_sweep

from .conftest import _app_broker_set

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def unreachable_broker(settings):
    """This process publishes to a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _app_broker_set(f"redis://127.0.0.1:{port}/0")
    yield
    _app_broker_set(settings.CELERY_BROKER_URL)


def test_alerts_raised_while_the_broker_is_unreachable_commit_with_their_pending_deliveries(unreachable_broker):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    endpoint = EndpointFactory(host=HostFactory(name="a.example.com"), path="/users/{param1}")

    [alert] = alerts_raise([AlertCandidate(endpoint.uuid, AlertType.PII_DATA, "Sensitive data in field 'email'.")])

    assert Alert.objects.filter(uuid=alert.uuid).exists()
    delivery = WebhookDelivery.objects.get(alert=alert)
    assert (delivery.status, delivery.attempts) == ("PENDING", 0)
    # The sweep cannot send it either while the broker is away, and says so without failing.
    assert deliveries_sweep()["requeued"] == 0
    assert WebhookDelivery.objects.get(alert=alert).status == "PENDING"


def test_traces_posted_while_the_broker_is_unreachable_are_accepted_and_kept_pending(client, unreachable_broker):
    response = client.post("/api/v1/log-request/batch", [raw_trace(path="/orders/1")], format="json")

    assert (response.status_code, response.json()) == (200, "OK")
    batch = IngestBatch.objects.get()
    assert (batch.status, batch.num_traces, batch.attempts) == (IngestBatch.Status.PENDING, 1, 0)
    # The requeue sweep tries again without raising; the batch waits for the broker.
    batches_requeue(older_than=timedelta(0))
    assert IngestBatch.objects.get().status == IngestBatch.Status.PENDING


def test_a_test_run_started_while_the_broker_is_unreachable_is_accepted_and_kept_pending(
    client, shop, set_env, unreachable_broker
):
    set_env("http://127.0.0.1:9")

    response = client.post("/api/v1/testing/runs", {"host": SHOP, "type": "XSS"}, format="json")

    assert response.status_code == 202, response.content
    run = TestRun.objects.get()
    assert (str(run.uuid), run.status) == (response.json()["uuid"], TestRun.Status.PENDING)
