"""Issue #25 through the ingest routes and a real Celery worker process (one worker for all of it).

Posted with an ``ingest`` key to ``/api/v1/log-request/batch``, analysed (learning included) by
``celery -A config worker`` on the test database and Redis, read back through the API:

* Metlo's workload shape (10 resources x 10 word sub-resources, identical answers) stays 100
  endpoints per host; 20 usernames still become one endpoint;
* consent-only requests to an endpoint answering e-mails raise the unauthenticated-data alert;
* each credential shape of the issue is ``[REDACTED]`` in stored traces and a read key's answers;
* a verified test-run marker keeps a run's requests out; the same requests with a forged marker are
  analysed normally; the generated spec of the four-trace example holds none of its values.
"""
from __future__ import annotations

import json

import pytest

from core.enums import AlertType
from core.models import Scope
from core.testmarker import marked_run_open
from detections.models import Alert
from detections.openapi.generate.service import generated_spec_name, generated_spec_refresh
from inventory.models import ApiTrace, Endpoint, Host, IngestBatch
from tests.support.processes import start_worker, wait_for

from .ingest_support import raw_trace, seeded_transactional_db  # noqa: F401 (fixture)
from .test_credential_shapes import SECRETS, traces as credential_traces

pytestmark = [pytest.mark.slow, pytest.mark.not_on_sqlite("a real worker on PostgreSQL and Redis")]

METLO_HOST = "host-00.perf.example.com"
RESOURCES = ["users", "orders", "products", "accounts", "invoices", "payments", "customers", "items", "carts",
             "reviews"]
SUBS = ["details", "history", "settings", "notes", "comments", "tags", "events", "files", "messages", "shipments"]
ANSWER = {"id": 100001, "owner": {"name": "User 1", "email": "user1@example.com", "phone": "(415) 555-0101"},
          "payment": {"card": "4111 1111 1111 1111", "expiry": "12/29"}, "status": "ok",
          "items": [{"sku": "SKU-1-0", "price": 9.99}]}
USERNAMES = ["alice", "dmitri", "oscar", "dave", "erin", "quentin", "ursula", "heidi", "ivan", "judy", "mallory",
             "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "xavier", "walter", "yolanda"]
CONSENT = ("cookieconsent_status=dismiss; lang=en; _ga=GA1.2.1234567890.1736672000; "
           "ajs_anonymous_id=a1b2c3d4-e5f6-4789-abcd-ef0123456789; __cf_bm=" + "x1Y2z3" * 20)


def metlo_traces() -> list[dict]:
    return [raw_trace(host=METLO_HOST, path=f"/api/{resource}/{100000 + n * 7919 + k}/{sub}",
                      method="POST" if k % 4 == 0 else "GET", response_body=ANSWER, query=[("page", str(n))])
            for n in range(3) for k, (resource, sub) in enumerate((r, s) for r in RESOURCES for s in SUBS)]


def monitored_app(marker: str) -> list[dict]:
    """A security-test run's probes against a monitored app (as a Metlo agent would report them)."""
    headers = {"Content-Type": "application/json", "X-Apiscope-Test": marker,
               "Authorization": "Bearer test-identity-0123456789abcdef"}
    return [raw_trace(host="monitored.example.com", path="/api/users/42", method="PATCH", headers=headers,
                      body='{"isAdmin": true, "role": "admin"}',
                      response_body={"id": 42, "isAdmin": True, "email": "victim@example.com"}),
            raw_trace(host="monitored.example.com", path="/api/products", method="POST", headers=headers,
                      body="{\"name\": \"' OR 1=1 --\"}", response_body={"id": 9, "name": "x"})]


@pytest.mark.django_db(transaction=True)
def test_issue25_through_the_route_and_a_real_worker(seeded_transactional_db, scoped_client, client):
    agent, reader = scoped_client(Scope.INGEST), scoped_client(Scope.READ)
    run_marker = marked_run_open("run-25")
    posts = [
        metlo_traces(),
        [raw_trace(host="vampi.example.com", path=f"/users/v1/{name}",
                   response_body={"username": name, "email": f"{name}@example.com"}) for name in USERNAMES],
        [raw_trace(host="spa.example.com", path="/api/team", headers={"Cookie": CONSENT}, source=f"81.2.3.{n}",
                   response_body=[{"email": "ada@example.com", "passwordHash": "$2b$12$" + "a" * 53}])
         for n in range(3)],
        credential_traces(),
        monitored_app(run_marker),
        monitored_app(run_marker[:-6] + "forged"),
    ]
    for traces in posts:
        response = agent.post("/api/v1/log-request/batch", traces, format="json")
        assert response.status_code == 200, response.content

    worker = start_worker("celery")
    try:
        wait_for(lambda: not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists(), timeout=120,
                 message=worker.tail)
        # Learning runs in the same task, right after the analysis commits: wait for its outcome (or fail).
        wait_for(lambda: Endpoint.objects.filter(host__name="vampi.example.com").count() == 1, timeout=60,
                 message=worker.tail)
    finally:
        log = worker.log()
        worker.stop()

    def listed(host: str) -> list[str]:
        answer = reader.get("/api/v1/endpoints", {"hosts": host, "limit": 500})
        assert answer.status_code == 200
        return sorted(item["path"] for item in answer.json())

    # Metlo's shape: 100 endpoints for the host, one per resource and word sub-resource.
    assert listed(METLO_HOST) == sorted(f"/api/{r}/{{param1}}/{s}" for r in RESOURCES for s in SUBS)
    # Usernames that are not dictionary words: one learned endpoint.
    assert listed("vampi.example.com") == ["/users/v1/{param1}"], log[-3000:]

    # Consent, language, analytics and CDN cookies are not a login.
    team = reader.get("/api/v1/endpoints", {"hosts": "spa.example.com"}).json()[0]
    assert team["isAuthenticatedDetected"] is False
    assert Alert.objects.filter(endpoint_id=team["uuid"], type=AlertType.UNAUTHENTICATED_SENSITIVE).exists()
    stored_cookie = {h["name"]: h["value"] for h in ApiTrace.objects.filter(host="spa.example.com").first()
                     .request_headers}["Cookie"]
    assert stored_cookie.startswith("cookieconsent_status=[REDACTED]; lang=[REDACTED]; _ga=[REDACTED]")

    # Every credential shape is redacted in storage and in a read key's answers.
    stored = json.dumps(list(ApiTrace.objects.values(
        "path", "request_parameters", "request_headers", "request_body", "response_headers", "response_body")))
    answers = "".join(reader.get(f"/api/v1/endpoint/{e}").content.decode()
                      for e in Endpoint.objects.values_list("uuid", flat=True))
    for shape, secret in SECRETS.items():
        assert secret not in stored and secret not in answers, shape

    # The verified run left the monitored app's inventory as it was; the forged marker's copy is analysed.
    monitored = Endpoint.objects.filter(host__name="monitored.example.com")
    assert sorted(monitored.values_list("path", flat=True)) == ["/api/products", "/api/users/{param1}"]
    assert ApiTrace.objects.filter(host="monitored.example.com").count() == 2
    assert run_marker not in stored

    # The generated spec of the host that carried the clinic-like values holds none of them.
    host = Host.objects.get(name="spa.example.com")
    assert generated_spec_refresh(host_id=host.id, force=True) is not None
    spec = client.get(f"/api/v1/spec/{generated_spec_name(host.name)}").content.decode()
    assert "ada@example.com" not in spec and "$2b$12$" not in spec
    assert "cookieconsent_status" not in spec  # no cookie scheme: those cookies are no credentials
