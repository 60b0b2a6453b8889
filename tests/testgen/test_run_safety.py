"""A security product's own security, end to end: runs started through POST /api/v1/testing/runs and
executed by a real Celery worker (on PostgreSQL and Redis) never send the worker's secrets, and
never reach a refused target. Assertions are on the raw bytes a receiver on 127.0.0.1 got.

The worker has secrets of its own (SECRET_KEY, FIELD_ENCRYPTION_KEY, DATABASE_URL) and lists one
target, ``localhost``: 127.0.0.1 by address is not listed, the database and broker are reachable by
that name but protected.
"""
from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth.models import User
from django.test import Client

from inventory.models import Endpoint, IngestBatch
from testgen.models import TestingEnvironment
from tests.inventory.ingest_support import raw_trace, seeded_transactional_db  # noqa: F401 (fixture)
from tests.support import processes
from tests.support.processes import start_worker, wait_for
from tests.testgen.factories import endpoint_from_traffic
from tests.support.receiver import Answer, Receiver

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
RUNS = "/api/v1/testing/runs"
ENV = "/api/v1/testing/global-env"
WORKER_SECRET_KEY = f"worker-secret-key-{uuid.uuid4().hex}{uuid.uuid4().hex}"
WORKER_FIELD_KEY = f"worker-field-key-{uuid.uuid4().hex}"
PLANTED = "{{env.SECRET_KEY}}"


@pytest.fixture(scope="module")
def worker(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        database_url = processes.test_database_url()
        process = start_worker("celery", pool="solo", SECRET_KEY=WORKER_SECRET_KEY,
                               FIELD_ENCRYPTION_KEY=WORKER_FIELD_KEY, TESTING_ALLOWED_TARGETS="localhost",
                               TESTING_ENV_ALLOWLIST="", TESTGEN_SQLI_DELAY_SECONDS="1", TESTGEN_MAX_INPUTS="3")
    process.database_url = database_url
    yield process
    process.stop()


@pytest.fixture
def same_key(settings):
    """This process encrypts the environment's token with the worker's key, so the worker reads it."""
    settings.FIELD_ENCRYPTION_KEY = WORKER_FIELD_KEY


@pytest.fixture
def search(seeded_transactional_db):
    return endpoint_from_traffic(host="shop.test", method="GET", path="/api/search", query={"q": "ali"})


def run_to_the_end(client, body: dict, worker) -> dict:
    response = client.post(RUNS, body, format="json")
    assert response.status_code == 202, response.content
    run_id = response.json()["uuid"]
    return wait_for(lambda: (d := client.get(f"{RUNS}/{run_id}").json())["status"] in ("DONE", "FAILED") and d,
                    timeout=180, interval=0.3, message=lambda: worker.log()[-3000:])


def assert_no_secret(raw: bytes, worker) -> None:
    for secret in (WORKER_SECRET_KEY, WORKER_FIELD_KEY, worker.database_url, "postgres://"):
        assert secret.encode() not in raw


class TestWorkerSecrets:
    def test_an_environment_header_naming_a_variable_fails_the_run_and_sends_nothing(
            self, client, worker, same_key, receiver, search):
        client.put(ENV, {"baseUrl": f"http://localhost:{receiver.port}", "headers": {"X-A": "a"}}, format="json")
        # Not through the API (it refuses {{env.}}): a direct database write.
        TestingEnvironment.objects.update(headers={"X-Leak": f"{PLANTED} {{{{env.DATABASE_URL}}}}"})

        run = run_to_the_end(client, {"endpoint": "/api/search"}, worker)

        assert run["status"] == "FAILED"
        assert run["error"].startswith("The run was not started: {{env.SECRET_KEY}} (in headers.X-Leak) refers to "
                                       "an environment variable")
        assert run["error"].endswith("Nothing was sent.")
        assert (receiver.connections, receiver.raw()) == (0, b"")

    def test_an_auth_token_set_in_the_admin_naming_a_variable_fails_the_run_and_sends_nothing(
            self, client, worker, same_key, receiver, search):
        admin = Client()
        admin.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
        response = admin.post("/admin/testgen/testingenvironment/add/", {
            "base_url": f"http://localhost:{receiver.port}", "auth_token": f"Bearer {PLANTED}", "test_user_id": "",
            "timeout_ms": "", "retries": "", "headers": "null", "extra": "{}"})
        assert response.status_code == 302

        run = run_to_the_end(client, {"host": "shop.test"}, worker)

        assert run["status"] == "FAILED"
        assert "{{env.SECRET_KEY}} (in authToken)" in run["error"]
        assert (receiver.connections, receiver.raw()) == (0, b"")

    def test_a_placeholder_planted_in_traffic_is_sent_as_text_never_as_the_secret(
            self, client, worker, same_key, receiver, seeded_transactional_db):
        # An end user of the monitored API (no key) sends the placeholder in a request body and query.
        body = json.dumps({"note": PLANTED, "title": "x{{env.DATABASE_URL}}y", "n": 1})
        trace = raw_trace(host="notes.test", path="/api/notes", method="POST", status=201, body=body,
                          headers={"Content-Type": "application/json"}, query=[("tag", PLANTED)],
                          response_body={"id": 1})
        assert client.post("/api/v1/log-request/single", trace, format="json").status_code == 200
        wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).exists()
                 and Endpoint.objects.filter(host__name="notes.test").exists(), timeout=120, interval=0.3,
                 message=lambda: worker.log()[-3000:])
        assert client.put(ENV, {"baseUrl": f"http://localhost:{receiver.port}", "authToken": "Bearer t"},
                          format="json").status_code == 200

        runs = [run_to_the_end(client, {"host": "notes.test", "type": kind}, worker)
                for kind in ("MASS_ASSIGNMENT", "SQL_INJECTION", "XSS")]

        assert [r["status"] for r in runs] == ["DONE", "DONE", "DONE"], runs
        raw = receiver.raw()
        assert receiver.connections == sum(r["numRequests"] for run in runs
                                           for r in client.get(f"{RUNS}/{run['uuid']}").json()["results"])
        assert_no_secret(raw, worker)
        # The planted text itself went out as text: in the JSON bodies and, encoded, in the query.
        assert b'"note": "{{env.SECRET_KEY}}"' in raw
        assert b"x{{env.DATABASE_URL}}y" in raw
        assert b"tag=%7B%7Benv.SECRET_KEY%7D%7D" in raw


class TestTargets:
    @pytest.mark.parametrize(("base_url", "reason"), [
        ("http://127.0.0.1:{port}", "127.0.0.1:{port} is a loopback address"),
        ("http://[::ffff:127.0.0.1]:{port}", "::ffff:127.0.0.1:{port} is a loopback address"),
        ("http://[64:ff9b::7f00:1]:{port}", "is an IPv6 form of 127.0.0.1 (a loopback address)"),
        ("http://[::127.0.0.1]:{port}", "is an IPv6 form of 127.0.0.1 (a loopback address)"),
        ("http://169.254.169.254:{port}", "169.254.169.254:{port} is a cloud metadata address"),
        ("http://10.1.2.3:{port}", "10.1.2.3:{port} is a private address"),
        ("http://localhost:5432", "is this service's own database (default)"),
        ("http://localhost:6379", "is this service's own broker"),
        ("http://[::ffff:127.0.0.1]:5432", "is this service's own database (default)"),
    ])
    def test_a_refused_target_fails_the_run_and_receives_nothing(self, client, worker, receiver, search,
                                                                 base_url, reason):
        assert client.put(ENV, {"baseUrl": base_url.format(port=receiver.port)}, format="json").status_code == 200

        run = run_to_the_end(client, {"endpoint": "/api/search", "type": "SQL_INJECTION"}, worker)

        assert run["status"] == "FAILED"
        assert run["error"].startswith("Target refused: ")
        assert reason.format(port=receiver.port) in run["error"]
        assert run["numTests"] == 0
        assert receiver.connections == 0

    def test_a_listed_target_is_tested_and_its_redirects_are_not_followed(self, client, worker, search):
        elsewhere = Receiver()
        target = Receiver(Answer(302, location=f"http://localhost:{elsewhere.port}/internal"))
        try:
            client.put(ENV, {"baseUrl": f"http://localhost:{target.port}"}, format="json")

            run = run_to_the_end(client, {"endpoint": "/api/search", "type": "XSS"}, worker)

            assert (run["status"], run["numTests"]) == ("DONE", 1)
            # The example request was answered with a redirect, a refusal: it was not followed, and the
            # payloads were not sent (an answer to them would prove nothing).
            assert target.connections == 1 and b"GET /api/search?q=" in target.raw()
            assert elsewhere.connections == 0
        finally:
            elsewhere.close()
            target.close()
