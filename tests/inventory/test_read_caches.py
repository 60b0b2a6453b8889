"""The read caches through a real gunicorn: API keys (a revoked key stops within 1 s) and whole list
answers (dropped by every kind of write, so the filters answer what the data says).

The web process gets ``INVENTORY_PAGE_CACHE_SECONDS=600``: an answer it still serves after a write
can only be fresh because the writer bumped the inventory version (``inventory.counts``), not
because its time-to-live ran out. Writes are made in this process, through the routes and the
analysis the worker runs; the truth is recomputed from the data fields each time.
"""
from __future__ import annotations

import time
from collections import defaultdict

import pytest
import requests

from classification.models import DataField
from classification.services import class_severities, field_risk
from core.models import ApiKey, hash_key
from core.renderers import ORJSONRenderer
from inventory.api import render, services
from inventory.counts import inventory_changed
from inventory.models import Endpoint, IngestBatch
from inventory.tasks import analyze_batch_task
from tests.inventory.ingest_support import raw_trace
from tests.support.processes import process_env, wait_for
from tests.support.web import start_web

pytestmark = pytest.mark.django_db(transaction=True)
needs_redis = pytest.mark.skipif(
    not getattr(__import__("django.conf").conf.settings, "REDIS_URL", ""),
    reason="the inventory version the caches follow lives in Redis; without it (make run's embedded default) "
           "answers are kept for the time-to-live only (inventory/counts.py)")

LIST = "/api/v1/endpoints"


@pytest.fixture
def web(transactional_db):
    inventory_changed()  # the previous test's flush is a write no writer reported (this process's caches)
    server = start_web(process_env(INVENTORY_PAGE_CACHE_SECONDS="600", API_KEY_CACHE_SECONDS="1"))
    yield server
    server.stop()


def analyse(*traces) -> None:
    """What the worker runs for an accepted batch, here."""
    batch = IngestBatch.objects.create(kind=IngestBatch.Kind.RAW, traces=list(traces), num_traces=len(traces))
    analyze_batch_task(batch.id)
    assert IngestBatch.objects.get(id=batch.id).status == IngestBatch.Status.DONE


def truth() -> dict[str, tuple[list, str]]:
    """Each endpoint's (dataClasses, riskScore) recomputed from its data fields (DECISIONS §4)."""
    classes: dict = defaultdict(set)
    for endpoint_id, names in DataField.objects.values_list("endpoint_id", "data_classes"):
        classes[str(endpoint_id)].update(names or ())
    severities = class_severities()
    return {str(e): (sorted(classes[str(e)]), field_risk(sorted(classes[str(e)]), severities))
            for e in Endpoint.objects.values_list("uuid", flat=True)}


def uncached_body(params: dict) -> bytes:
    """The list answer computed here from the database (no cache in the test settings), as bytes."""
    page = services.endpoints_page(filters={k: v for k, v in params.items() if k not in ("limit", "offset")},
                                   offset=params.get("offset", 0), limit=params["limit"])
    return ORJSONRenderer().render([render.endpoint_item(row) for row in page.items])


QUERIES = [
    ({"limit": 500}, "limit=500"),
    ({"limit": 500, "riskScores": ["HIGH"]}, "limit=500&riskScores=HIGH"),
    ({"limit": 500, "riskScores": ["NONE"]}, "limit=500&riskScores=NONE"),
    ({"limit": 500, "dataClasses": ["email"]}, "limit=500&dataClasses=email"),
    ({"limit": 500, "dataClasses": ["ssn"]}, "limit=500&dataClasses=ssn"),
    ({"limit": 2, "riskScores": ["HIGH", "MEDIUM"]}, "limit=2&riskScores=HIGH&riskScores=MEDIUM"),
    ({"limit": 1, "offset": 1}, "limit=1&offset=1"),  # a deep page: a slice of the cached ordered keys
    ({"limit": 2, "offset": 1, "riskScores": ["HIGH"]}, "limit=2&offset=1&riskScores=HIGH"),
]


def consistent(web, session) -> bool:
    """Every query answers, from the web process, what the data fields say and byte for byte what
    an uncached request answers."""
    expected = truth()
    for params, query in QUERIES:
        response = session.get(f"{web.base_url}{LIST}?{query}", timeout=10)
        assert response.status_code == 200, response.text
        if response.content != uncached_body(params):
            return False
        items = response.json()
        if len(params) == 2 and params["limit"] == 500 and "offset" not in params:
            name, values = next((k, v) for k, v in params.items() if k != "limit")
            wanted = {e for e, (classes, risk) in expected.items()
                      if (risk in values if name == "riskScores" else set(classes) & set(values))}
            if {i["uuid"] for i in items} != wanted:
                return False
        if query == "limit=500" and {i["uuid"]: (i["dataClasses"], i["riskScore"]) for i in items} != expected:
            return False
    return True


@needs_redis
def test_every_kind_of_write_is_answered_at_once_by_the_cached_lists(web, api_key, client):
    session = requests.Session()
    session.headers["Authorization"] = api_key

    def check(step: str) -> None:
        wait_for(lambda: consistent(web, session), timeout=10, message=lambda: f"stale list answers after {step}")

    analyse(raw_trace(host="shop.example.com", path="/api/users/42", response_body={"email": "ada@example.com"}),
            raw_trace(host="shop.example.com", path="/api/orders/7", response_body={"total": 3}))
    check("the first analysis")
    assert len(session.get(f"{web.base_url}{LIST}?limit=500", timeout=10).json()) == 2

    # ingestion: a new class on an existing endpoint (risk and dataClasses), lastActive
    analyse(raw_trace(host="shop.example.com", path="/api/orders/8",
                      response_body={"card": "4111111111111111", "ssn": "536-90-4399"}))
    check("an analysis adding classes")

    users = Endpoint.objects.get(path="/api/users/{param1}")
    orders = Endpoint.objects.get(path="/api/orders/{param1}")
    assert client.put(f"/api/v1/endpoint/{users.uuid}/authenticated", {"authenticated": True},
                      format="json").status_code == 200
    check("PUT authenticated")
    assert client.put(f"/api/v1/endpoint/{users.uuid}/enable-full-trace-capture", {"enabled": True},
                      format="json").status_code == 200
    check("PUT enable-full-trace-capture")

    field = DataField.objects.get(endpoint_id=users.uuid, data_path="email")
    assert client.post(f"/api/v1/data-field/{field.uuid}/update-classes", {
        "dataClasses": ["ssn"], "dataSection": field.data_section, "dataPath": field.data_path},
        format="json").status_code == 200
    check("update-classes")

    card = DataField.objects.filter(endpoint_id=orders.uuid).exclude(data_classes=[]).first()
    assert client.delete(f"/api/v1/data-field/{card.uuid}").status_code == 200
    check("DELETE data-field")

    assert client.post("/api/v1/clear-sensitive-data").json() == "Success"
    check("clear-sensitive-data")

    analyse(raw_trace(host="shop.example.com", path="/api/users/43", response_body={"email": "bob@example.com"}))
    check("an analysis after clearing")
    assert client.post("/api/v1/clear-all-datafields").json() == "Success"
    check("clear-all-datafields")

    detail_url = f"{web.base_url}/api/v1/endpoint/{users.uuid}"

    def detail_fresh() -> bool:
        body = session.get(detail_url, timeout=10).content
        return body == ORJSONRenderer().render(services.endpoint_detail(endpoint_id=str(users.uuid)))

    wait_for(detail_fresh, timeout=10, message=lambda: "stale detail")
    alert = users.alerts.first()
    assert client.put(f"/api/v1/alert/{alert.uuid}", {"updateType": "resolve"}, format="json").status_code == 200
    wait_for(detail_fresh, timeout=10, message=lambda: "stale detail after an alert's status change")
    analyse(raw_trace(host="shop.example.com", path="/api/users/44", response_body={"name": "x"}))
    wait_for(detail_fresh, timeout=10, message=lambda: "stale detail after an analysis")

    assert client.delete(f"/api/v1/endpoint/{orders.uuid}").status_code == 200
    check("DELETE endpoint")
    hosts = session.get(f"{web.base_url}/api/v1/hosts", timeout=10).json()
    assert hosts == [{"host": "shop.example.com", "numEndpoints": 1, "isPublic": hosts[0]["isPublic"]}]


def test_api_answers_keep_the_full_stacks_headers(web, api_key, client):
    """/api/ requests skip the admin's middleware (config/wsgi.py), not the headers every answer carries."""
    session = requests.Session()
    session.headers["Authorization"] = api_key
    for path in (LIST, "/api/v1/hosts", "/api/v1/endpoint/7b0e1f8c-6d1a-4c55-9a53-3c1f2f4f9d11"):
        served = session.get(f"{web.base_url}{path}", timeout=10)
        local = client.get(path)
        assert served.status_code == local.status_code and served.content == local.content
        skipped = {"date", "server", "connection", "x-request-id"}
        assert {k.lower(): v for k, v in served.headers.items() if k.lower() not in skipped} == {
            k.lower(): v for k, v in local.headers.items() if k.lower() not in skipped}
        assert served.headers["X-Request-Id"]
    assert requests.get(f"{web.base_url}/admin/login/", timeout=10).status_code == 200  # sessions, CSRF


def test_a_revoked_key_stops_working_within_one_second(web, api_key):
    session = requests.Session()
    session.headers["Authorization"] = api_key
    assert session.get(f"{web.base_url}{LIST}", timeout=10).status_code == 200  # the lookup is now cached there
    # Revoked the way the admin's bulk action does (no save of the row in the web process).
    ApiKey.objects.filter(key_hash=hash_key(api_key)).update(revoked_at=time.strftime("%Y-%m-%dT%H:%M:%SZ"))
    revoked = time.monotonic()
    time.sleep(max(0.0, revoked + 1.05 - time.monotonic()))
    response = session.get(f"{web.base_url}{LIST}", timeout=10)
    assert (response.status_code, response.json()) == (401, "Client unauthorized")
    assert session.get(f"{web.base_url}/api/v1/hosts", timeout=10).status_code == 401
