"""The test-run marker on the ingestion side (DECISIONS §8, issue #25 point 7).

Traces carrying a verified ``X-Apiscope-Test`` marker of a run that is open (or closed minutes ago)
are counted on the health page as test traffic and kept out of the inventory, alerts and specs; a
forged or stale marker is ordinary traffic, counted as forged; the marker's value is never stored.
Through the ingest route and the analysis task; a real worker in ``test_issue25_worker.py``.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.health import health_read
from core.models import MarkedRun
from core.testmarker import GRACE, marked_run_close, marked_run_open, marker_value
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, IngestBatch

from .ingest_support import ingest, raw_trace, stored_traces_text  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

HOST = "shop.monitored.example"


def probes(marker: str | None) -> list[dict]:
    """What a BFLA / mass-assignment run sends to a monitored app: privileged keys, another user's data."""
    headers = {"Content-Type": "application/json", "Authorization": "Bearer test-identity-token-0123456789"}
    if marker is not None:
        headers["X-Apiscope-Test"] = marker
    return [
        raw_trace(host=HOST, path="/api/users/42", method="PATCH", headers=headers,
                  body='{"isAdmin": true, "role": "admin", "email": "victim@example.com"}',
                  response_body={"id": 42, "isAdmin": True, "role": "admin", "email": "victim@example.com"}),
        raw_trace(host=HOST, path="/api/admin/reset-all", method="POST", headers=headers, body="{}",
                  response_body={"ok": True, "ssn": "078-05-1120"}),
    ]


def _counts() -> tuple[int, int]:
    health = health_read(ask_workers=False)
    return health.analysis_hour["test_traffic"], health.analysis_hour["forged_markers"]


def _counted(n: int) -> int:
    """``n`` where ingestion is counted (Redis); 0 on the SQLite job, which has no Redis (docs/console.md)."""
    return n if health_read(ask_workers=False).counting else 0


def test_a_verified_marker_keeps_the_runs_traffic_out_of_inventory_alerts_and_specs(ingest):
    value = marked_run_open("run-0001")
    test_before, forged_before = _counts()

    ingest(*probes(value))

    assert Endpoint.objects.filter(host__name=HOST).count() == 0
    assert Alert.objects.count() == 0 and ApiTrace.objects.count() == 0
    assert IngestBatch.objects.filter(status=IngestBatch.Status.DONE).count() == 1
    assert _counts() == (test_before + _counted(2), forged_before)
    # Closed a moment ago: still the run's (agents batch, workers lag).
    marked_run_close("run-0001")
    ingest(*probes(value))
    assert Endpoint.objects.filter(host__name=HOST).count() == 0
    assert _counts() == (test_before + _counted(4), forged_before)


@pytest.mark.parametrize("forge", ["wrong tag", "never opened", "stale", "garbage"])
def test_a_forged_or_stale_marker_is_ordinary_traffic_counted_as_forged(ingest, forge):
    value = marked_run_open("run-0002")
    if forge == "wrong tag":
        value = value[:-4] + ("AAAA" if not value.endswith("AAAA") else "BBBB")
    elif forge == "never opened":
        value = marker_value("run-9999")
    elif forge == "stale":
        MarkedRun.objects.filter(run_id="run-0002").update(
            opened_at=timezone.now() - timedelta(hours=2), closed_at=timezone.now() - GRACE - timedelta(minutes=1))
    else:
        value = "x" * 300
    test_before, forged_before = _counts()

    ingest(*probes(value))

    assert sorted(Endpoint.objects.filter(host__name=HOST).values_list("path", flat=True)) == [
        "/api/admin/reset-all", "/api/users/{param1}"]
    assert Alert.objects.filter(endpoint__host__name=HOST).exists()
    assert _counts() == (test_before, forged_before + _counted(2))
    # The marker's value is never stored: the header is kept, its value redacted.
    text = stored_traces_text()
    assert value not in text
    for trace in ApiTrace.objects.all():
        marker = [h["value"] for h in trace.request_headers if h["name"] == "X-Apiscope-Test"]
        assert marker == ["[REDACTED]"]


def test_marked_and_ordinary_traffic_in_one_batch(ingest):
    value = marked_run_open("run-0003")
    ordinary = raw_trace(host=HOST, path="/api/orders/7", response_body={"id": 7, "total": 10})
    ingest(*probes(value), ordinary)
    assert list(Endpoint.objects.filter(host__name=HOST).values_list("path", flat=True)) == ["/api/orders/{param1}"]
    assert ApiTrace.objects.count() == 1
