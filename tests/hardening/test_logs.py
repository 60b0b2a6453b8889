"""No secret or sensitive value reaches a log record, with every logger at DEBUG.

The whole journey runs in this process with logs captured: traces carrying an API-key header,
a bearer token, a password, a card number and an email are ingested and analysed by the
Celery task itself (``apply``: Celery's own tracing and logging included); a webhook whose URL
holds a secret token receives the alerts (delivery task run in-process against a real
receiver, then against a closed port); the testing environment gets an ``authToken`` and a
test run is executed against a real target. Then no record — message, arguments, exception
text — may contain any of those values, nor the API key the client used.
"""
from __future__ import annotations

import json
import logging
import socket

import pytest

from inventory.models import IngestBatch
from inventory.tasks import analyze_batch_task
from testgen.tasks import test_run_execute_task
from tests.inventory.ingest_support import raw_trace
from tests.support.receiver import Receiver
from webhooks.models import WebhookDelivery
from webhooks.tasks import deliveries_send_task

pytestmark = pytest.mark.django_db

HOST = "shop.example.com"
SECRETS = {
    "agent api key header": "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "bearer token": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2VjcmV0LXNpZ25hdHVyZS12YWx1ZQ",
    "password": "Tr0ub4dor&3-horse-battery",
    "card number": "4242 4242 4242 4242",
    "card number digits": "4242424242424242",
    "email": "ada.lovelace@example.org",
    "webhook url token": "whsec-9f8e7d6c5b4a39281706",
    "testing authToken": "tok-3a8f1c2e9b7d4056a1e2",
}


@pytest.fixture
def receiver():
    """A real HTTP server on 127.0.0.1 answering 200 to everything (webhook receiver and test target)."""
    server = Receiver()
    yield server.url
    server.close()


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def every_logger_at_debug(caplog):
    """caplog at DEBUG on the root and on every logger that exists or gets created."""
    caplog.set_level(logging.DEBUG)
    manager = logging.root.manager
    saved = {name: logger.level for name, logger in manager.loggerDict.items() if isinstance(logger, logging.Logger)}
    for name in saved:
        logging.getLogger(name).setLevel(logging.DEBUG)
    yield caplog
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


def traces() -> list[dict]:
    login = raw_trace(host=HOST, path="/api/login", method="POST",
                      headers={"Content-Type": "application/json", "X-Api-Key": SECRETS["agent api key header"]},
                      body=json.dumps({"username": "ada", "password": SECRETS["password"]}),
                      response_body={"token": SECRETS["bearer token"]})
    profile = raw_trace(host=HOST, path="/api/users/42",
                        headers={"Authorization": f"Bearer {SECRETS['bearer token']}"},
                        response_body={"id": 42, "email": SECRETS["email"], "card": SECRETS["card number"]})
    anonymous = raw_trace(host=HOST, path="/api/users/43", query=[("email", SECRETS["email"])],
                          response_body={"id": 43, "email": SECRETS["email"]})
    return [login, profile, anonymous]


# The on-commit functions that enqueue each task (other on-commit callbacks, such as the ingestion
# pipeline's cache refresh, are not enqueues and are left alone).
ENQUEUERS = {
    "analyze_batch_task": "batch_enqueue",
    "deliveries_send_task": "_deliveries_enqueue_after_commit",
    "test_run_execute_task": "_run_enqueue",
}


def run_enqueued(callbacks, task) -> int:
    """Run in this process, with Celery's tracing, the tasks whose enqueueing was captured on commit."""
    ran = 0
    enqueuer = ENQUEUERS[task.name.rsplit(".", 1)[-1]]
    for callback in callbacks:
        if getattr(getattr(callback, "func", None), "__name__", None) != enqueuer:
            continue
        args = getattr(callback, "args", ()) or ()
        kwargs = getattr(callback, "keywords", {}) or {}
        ident = args[0] if args else next(iter(kwargs.values()), None)
        if ident is not None:
            if isinstance(ident, list):  # several ids in one task
                ident = [str(i) for i in ident]
            elif not isinstance(ident, int):
                ident = str(ident)
            task.apply(args=(ident,)).get()
            ran += 1
    return ran


def leaks(records, secrets: dict) -> list[tuple[str, str, str]]:
    found = []
    for record in records:
        texts = [record.getMessage(), repr(record.args), record.exc_text or ""]
        if record.exc_info and record.exc_info[1] is not None:
            texts.append(repr(record.exc_info[1]))
        blob = "\n".join(texts)
        for label, value in secrets.items():
            if value in blob:
                found.append((label, record.name, record.getMessage()[:200]))
    return found


def test_no_secret_or_sensitive_value_reaches_the_logs(client, api_key, every_logger_at_debug, receiver, closed_port,
                                                       django_capture_on_commit_callbacks):
    caplog = every_logger_at_debug
    secrets = {**SECRETS, "our API key": api_key}

    hook = client.post("/api/v1/webhook", {"url": f"{receiver}/hook?token={SECRETS['webhook url token']}"},
                       format="json")
    assert hook.status_code == 201
    dead_hook = client.post("/api/v1/webhook", {"url": f"http://127.0.0.1:{closed_port}/x?token="
                                                       f"{SECRETS['webhook url token']}", "maxRetries": 0},
                            format="json")
    assert dead_hook.status_code == 201

    with django_capture_on_commit_callbacks() as accepted:
        assert client.post("/api/v1/log-request/batch", traces(), format="json").status_code == 200
    with django_capture_on_commit_callbacks() as fanned_out:
        assert run_enqueued(accepted, analyze_batch_task) == 1
    assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
    assert run_enqueued(fanned_out, deliveries_send_task) > 0
    assert WebhookDelivery.objects.filter(webhook__url__contains=receiver).exists()

    env = client.put("/api/v1/testing/global-env", {"baseUrl": receiver, "authToken": SECRETS["testing authToken"]},
                     format="json")
    assert env.status_code == 200
    with django_capture_on_commit_callbacks() as queued:
        assert client.post("/api/v1/testing/runs", {"host": HOST}, format="json").status_code == 202
    assert run_enqueued(queued, test_run_execute_task) == 1
    run = client.get("/api/v1/testing/runs").json()[0]
    assert run["status"] == "DONE" and run["numPassed"] + run["numFailed"] > 0, run

    # A few answers that log: an unknown key, a bad body, a missing route.
    client.credentials(HTTP_AUTHORIZATION=api_key + "x")
    assert client.get("/api/v1/endpoints").status_code == 401
    client.credentials(HTTP_AUTHORIZATION=api_key)
    assert client.post("/api/v1/webhook", {"url": f"ftp://x/?token={SECRETS['webhook url token']}"},
                       format="json").status_code == 400
    assert client.get(f"/api/v1/nothing?token={SECRETS['webhook url token']}").status_code == 404

    assert len(caplog.records) > 20  # the journey did log (ids and counts)
    assert leaks(caplog.records, secrets) == []


# Unexpected errors: their messages quote data (a database error quotes the SQL's literal values,
# int() the string it could not read). The message is withheld; the type and the stack are logged.

def test_a_500_is_logged_without_the_message_of_its_exception(client, every_logger_at_debug, monkeypatch):
    caplog = every_logger_at_debug
    from inventory.api import services

    def broken(**kwargs):
        return int(SECRETS["card number"])  # ValueError: invalid literal for int() with base 10: '4242 …'

    monkeypatch.setattr(services, "endpoints_page", broken)
    response = client.get("/api/v1/endpoints")
    assert response.status_code == 500
    assert response.json() == "Internal server error."
    logged = [r for r in caplog.records if r.name == "core.errors"]
    assert len(logged) == 1 and logged[0].exc_info is not None
    assert "ValueError (message withheld" in logged[0].exc_text and "in broken" in logged[0].exc_text
    assert leaks(caplog.records, SECRETS) == []


def test_a_failing_analysis_is_logged_and_retried_without_the_message(client, every_logger_at_debug, monkeypatch,
                                                                    django_capture_on_commit_callbacks):
    caplog = every_logger_at_debug
    from django.db import DataError

    import inventory.tasks

    def broken(*, batch_id, **_):
        raise DataError(f"value too long: LINE 1: ... VALUES ('{SECRETS['email']}', '{SECRETS['password']}')")

    with django_capture_on_commit_callbacks() as accepted:
        assert client.post("/api/v1/log-request/batch", traces(), format="json").status_code == 200
    monkeypatch.setattr(inventory.tasks, "batch_analyze", broken)
    run_enqueued(accepted, analyze_batch_task)  # retried in-process until the batch is FAILED
    assert IngestBatch.objects.get().status == IngestBatch.Status.FAILED
    failures = [r for r in caplog.records if r.name == "inventory.tasks" and r.exc_info]
    assert failures and "DataError" in failures[0].exc_text
    assert any(r.name == "celery.app.trace" and "retry" in r.getMessage().lower() for r in caplog.records)
    assert leaks(caplog.records, SECRETS) == []


@pytest.mark.slow
@pytest.mark.not_on_sqlite("starts gunicorn on the PostgreSQL test database")
@pytest.mark.django_db(transaction=True)
def test_the_access_log_of_the_procfiles_gunicorn_masks_credentials_in_request_lines(api_key):
    """gunicorn as the Procfile starts it (access log on): a key sent as ?api_key= (as some agents and
    scripts do), a token in the referer and the Authorization header never reach the log; the rest of
    the request line does."""
    import requests

    from tests.support.processes import process_env
    from tests.support.web import start_web

    web = start_web(process_env())
    try:
        response = requests.get(f"{web.base_url}/api/v1/endpoints?limit=2&api_key=QS-SECRET-4242&page=1",
                                headers={"Authorization": api_key, "Referer": "https://x.test/?token=REF-SECRET-7"},
                                timeout=30)
        assert response.status_code == 200
        line = wait_for_line(web, "/api/v1/endpoints?")
    finally:
        log = web.log()
        web.stop()
    assert "QS-SECRET-4242" not in log and "REF-SECRET-7" not in log and api_key not in log
    assert '"GET /api/v1/endpoints?limit=2&api_key=[REDACTED]&page=1 HTTP/1.1" 200' in line


def wait_for_line(web, needle: str) -> str:
    from tests.support.processes import wait_for

    return wait_for(lambda: next((line for line in web.log().splitlines() if needle in line), None), timeout=10)
