"""Operator commands of ingestion: import_har, seed_demo; and the periodic prune."""
import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from classification.models import DataField
from detections.models import Alert
from inventory.ingest.maintenance import ingest_prune
from inventory.models import ApiTrace, Endpoint, Host, IngestBatch, ObservedPath, UsageMinute

pytestmark = pytest.mark.django_db


def har_entry(url, *, method="GET", status=200, response=None, post=None, server="93.184.216.34"):
    entry = {
        "startedDateTime": "2026-01-31T12:00:00.000Z",
        "request": {"method": method, "url": url, "headers": [{"name": "Accept", "value": "application/json"}],
                    "queryString": []},
        "response": {"status": status, "headers": [],
                     "content": {"mimeType": "application/json", "text": json.dumps(response or {})}},
        "serverIPAddress": server,
    }
    if post is not None:
        entry["request"]["postData"] = {"mimeType": "application/json", "text": json.dumps(post)}
    return entry


@pytest.fixture
def har_file(tmp_path):
    def _write(entries):
        path = tmp_path / "traffic.har"
        path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
        return str(path)
    return _write


def test_import_har_runs_entries_through_the_pipeline(har_file):
    path = har_file([
        har_entry("https://shop.example.com/api/v1/users/42?expand=1", response={"email": "a@example.com"}),
        har_entry("https://shop.example.com/api/v1/users/43", response={"email": "b@example.com"}),
        har_entry("http://shop.example.com/api/v1/login", method="POST", post={"password": "har-secret-1"}),
        har_entry("https://shop.example.com/missing", status=404),
        {"request": {"url": "not a url"}, "response": {"status": 200}},
    ])
    out = StringIO()
    call_command("import_har", path, "--no-progress", stdout=out)
    assert "4 entries analysed, 1 skipped." in out.getvalue()
    assert sorted(Endpoint.objects.values_list("method", "path")) == [
        ("GET", "/api/v1/users/{param1}"), ("POST", "/api/v1/login")]
    assert Host.objects.get().is_public is True
    assert DataField.objects.get(data_path="email").data_classes == ["email"]
    assert DataField.objects.get(data_path="expand").data_section == "REQUEST_QUERY"
    assert "har-secret-1" not in json.dumps(list(ApiTrace.objects.values_list("request_body", flat=True)))
    # Plain http on a public host.
    assert Alert.objects.filter(type="Endpoint not secured by SSL").count() == 1
    assert IngestBatch.objects.get().status == IngestBatch.Status.DONE


def test_import_har_async_queues_batches_for_the_workers(har_file, django_capture_on_commit_callbacks):
    path = har_file([har_entry(f"https://api.example.com/items/{i}") for i in range(5)])
    with django_capture_on_commit_callbacks() as callbacks:
        call_command("import_har", path, "--async", "--batch-size", "2", "--no-progress", stdout=StringIO())
    assert IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).count() == 3
    assert len(callbacks) == 3 and Endpoint.objects.count() == 0


def test_import_har_refuses_what_is_not_a_har(tmp_path):
    bad = tmp_path / "x.har"
    bad.write_text("{not json")
    with pytest.raises(CommandError, match="not a JSON"):
        call_command("import_har", str(bad))
    bad.write_text("[]")
    with pytest.raises(CommandError, match="not a HAR"):
        call_command("import_har", str(bad))
    with pytest.raises(CommandError, match="Cannot read"):
        call_command("import_har", str(tmp_path / "missing.har"))


def test_seed_demo_populates_the_inventory_once():
    out = StringIO()
    call_command("seed_demo", "--traces", "400", "--no-progress", stdout=out)
    hosts = dict(Host.objects.values_list("name", "is_public"))
    assert hosts == {"api.shop-demo.com": True, "graphql.shop-demo.com": True, "orders.internal.svc": False,
                     "payments.internal.svc": False, "legacy.partner-demo.net": True}
    assert Endpoint.objects.count() >= 12
    assert Endpoint.objects.filter(risk_score="HIGH").exists()
    assert Endpoint.objects.filter(is_graphql=True).exists()
    types = set(Alert.objects.values_list("type", flat=True))
    assert {"New Endpoint Detected", "PII Data Detected", "Basic Authentication Detected",
            "Endpoint not secured by SSL", "Sensitive Data in Path Params"} <= types
    assert UsageMinute.objects.exists()
    count = Endpoint.objects.count()
    out = StringIO()
    call_command("seed_demo", "--if-empty", "--no-progress", stdout=out)
    assert "not empty" in out.getvalue() and Endpoint.objects.count() == count


def test_prune_keeps_the_newest_2000_observed_paths_and_recent_usage():
    endpoint = Endpoint.objects.create(host=Host.objects.create(name="h.example.com"), method="GET",
                                       path="/a/{param1}", path_regex="^/a/[^/]+$", num_segments=2,
                                       num_literal_segments=1)
    now = timezone.now()
    ObservedPath.objects.bulk_create(
        [ObservedPath(endpoint=endpoint, path=f"/a/{i}", last_seen=now - timedelta(seconds=i)) for i in range(2010)]
    )
    UsageMinute.objects.create(endpoint=endpoint, minute=now - timedelta(days=3), count=5)
    UsageMinute.objects.create(endpoint=endpoint, minute=now.replace(second=0, microsecond=0), count=7)
    counts = ingest_prune()
    assert counts["observed_paths"] == 10 and counts["usage_minutes"] == 1
    assert not ObservedPath.objects.filter(path__in=[f"/a/{i}" for i in range(2000, 2010)]).exists()
    assert UsageMinute.objects.get().count == 7
