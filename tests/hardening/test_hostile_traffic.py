"""Hostile traffic (issue #24) through the ingestion routes to the README's minimal process set.

The corpus (``tests/hardening/hostile.py``: fragment bombs of 20 to 40 levels, deep and wide JSON at the
size limits, 1 MB of validator bait, long paths, many headers and parameters, regex bait) is posted the
way Metlo's Flask agent posts it (``/api/v1/log-request/single``) to a real gunicorn, and analysed by a
real Celery worker. What is asserted is what the budgets guarantee, never a wall-clock time: every trace
is analysed (none failed, none quarantined, none left), the ones over their budget are counted as
partial on the health counters and stored redacted, and a legitimate trace posted after the whole
corpus is analysed before the corpus' heavy rows. The worker's CPU per trace is measured by
``bench/hostile.py`` (bench/README.md "Hostile traffic").

The second test kills an analysis with the hard time limit: the costly trace ends quarantined, the
traces claimed with it are analysed once, nothing is sent again.
"""
from __future__ import annotations

import json
import socket
import time
from datetime import timedelta

import pytest
import requests

from core.models import ApiKey, Scope
from inventory.ingest.accept import batches_requeue
from inventory.models import ApiTrace, Endpoint, IngestBatch, UsageMinute
from tests.hardening.hostile import PHONE_BAIT, agent_trace, corpus, legitimate
from tests.inventory.ingest_support import seeded_transactional_db  # noqa: F401 (fixture)
from tests.support.processes import process_env, start_worker, wait_for
from tests.support.web import start_web

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.not_on_sqlite("real gunicorn and Celery processes on the PostgreSQL test database"),
]

SINGLE = "/api/v1/log-request/single"


def post(base_url: str, key: str, trace: dict) -> int:
    response = requests.post(f"{base_url}{SINGLE}", data=json.dumps(trace),
                             headers={"Authorization": key, "Content-Type": "application/json; charset=utf-8"},
                             timeout=60)
    return response.status_code


def raw_request(port: int, request: bytes) -> str:
    """The status line of gunicorn's answer to ``request`` (bytes as sent)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        return sock.recv(200).split(b"\r\n", 1)[0].decode()


def test_the_hostile_corpus_is_analysed_within_its_budgets_and_a_legitimate_trace_goes_first(
        seeded_transactional_db, admin_client):  # noqa: F811
    from console.health import health_read
    from inventory.counts import redis_client
    from inventory.ingest.health import PREFIX

    client = redis_client()
    stale = list(client.scan_iter(f"{PREFIX}:*"))
    if stale:
        client.delete(*stale)
    _, key = ApiKey.issue(name="flask agent", scope=Scope.INGEST)
    items = corpus()
    web = start_web(process_env())
    worker = None
    try:
        port = int(web.base_url.rsplit(":", 1)[1])
        # The web server's own limits, documented in the schema (core/schema.py).
        assert raw_request(port, b"GET /api/v1/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n").split()[1] == "414"
        many = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
        assert raw_request(port, b"GET /api/v1 HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n").split()[1] == "431"

        # The whole corpus is queued first (no worker yet), then one ordinary trace.
        for item in items:
            assert post(web.base_url, key, item.trace) == 200, item.name
        assert post(web.base_url, key, legitimate(1)) == 200
        rows = dict(IngestBatch.objects.values_list("id", "heavy"))
        assert len(rows) == len(items) + 1 and sum(rows.values()) >= len(items) - 3  # nearly all heavy
        legit_id = max(rows)
        assert rows[legit_id] is False

        worker = start_worker("celery", concurrency=1)
        wait_for(lambda: not IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).exists(), timeout=300,
                 message=lambda: worker.tail())
        # The worker counts each analysis right after its commit.
        wait_for(lambda: health_read(ask_workers=False).analysis_hour["analysed"] >= len(items) + 1, timeout=30,
                 message=lambda: f"{health_read(ask_workers=False).analysis_hour}\n{worker.tail()}")
    finally:
        if worker is not None:
            worker.stop()
        web.stop()

    statuses = set(IngestBatch.objects.values_list("status", flat=True))
    assert statuses == {IngestBatch.Status.DONE}, statuses  # nothing failed, nothing quarantined
    # Light before heavy: the legitimate trace, posted last, was analysed before every heavy row.
    legit = IngestBatch.objects.get(id=legit_id)
    heavy_done = IngestBatch.objects.filter(heavy=True).values_list("processed_at", flat=True)
    assert all(legit.processed_at < done for done in heavy_done)
    assert Endpoint.objects.filter(path="/api/legit1/orders").exists()

    # Every item made its endpoint (analysed, not skipped); the ones over budget were counted.
    health = health_read(ask_workers=False)
    analysis = health.analysis_hour
    assert (analysis["analysed"], analysis["skipped"]) == (len(items) + 1, 0), (
        analysis, sorted(Endpoint.objects.values_list("method", "path")))
    assert analysis["truncated"] >= 4, analysis  # validator bait, phone bait, many headers, many parameters
    source = next(s for s in health.sources if s.key == "flask agent")
    assert source.hour["truncated"] == analysis["truncated"]
    # A bomb is cheap now: its fragments are expanded once per operation, never cut.
    for bomb in ("/graphql", "/search"):
        assert Endpoint.objects.filter(path=bomb).exists()

    # A trace cut by its budget is stored with the unfinished sections redacted whole.
    notes = list(ApiTrace.objects.filter(path="/api/notes").values_list("request_body", flat=True))
    assert "[REDACTED]" in notes
    assert not any(PHONE_BAIT in body for body in notes)  # the bait bodies were cut: stored redacted


def test_an_analysis_killed_by_the_hard_time_limit_quarantines_the_costly_trace_and_analyses_the_rest_once(
        seeded_transactional_db, admin_client, monkeypatch):  # noqa: F811
    """A custom data class whose regex RE2 cannot run, on a worker whose operator raised
    USER_REGEX_TIMEOUT_MS: one value makes it run for minutes in C, where no budget check can stop it.
    The hard time limit kills the worker process; the four traces it held (claimed together) are analysed
    alone afterwards; the costly one kills its worker again and is quarantined: kept, counted, shown."""
    from classification.models import DataClass
    from console.health import health_read

    DataClass.objects.create(name="slow_slug", short_name="slow", severity="LOW", value_regex=r"^(?=(a|a)+$)")
    _, key = ApiKey.issue(name="flask agent", scope=Scope.INGEST)
    costly = agent_trace(path="/api/slugs", response_body=json.dumps({"slug": "a" * 40 + "!"}))
    # No soft limit (the regex engine would give way to it): the hard one kills the worker process. The
    # limits travel in the messages the web sends: both get them.
    limits = {"INGEST_ANALYSIS_TIME_LIMIT": "4", "INGEST_ANALYSIS_SOFT_TIME_LIMIT": "0",
              "USER_REGEX_TIMEOUT_MS": "600000"}
    from config.celery import app
    from inventory.tasks import analyze_batch_task, ingest_drain_task

    for task in (analyze_batch_task, ingest_drain_task):  # the messages this process's sweep sends, too
        monkeypatch.setattr(task, "time_limit", 4)
        monkeypatch.setattr(task, "soft_time_limit", None)
    app.control.purge()  # messages earlier tests left in the queue carry the default limits
    web = start_web(process_env(**limits))
    worker = None
    try:
        # Three hosts, so that learning never merges their endpoints into one.
        for n in (1, 2):
            assert post(web.base_url, key, legitimate(n, host=f"shop{n}.example.com")) == 200
        assert post(web.base_url, key, costly) == 200
        assert post(web.base_url, key, legitimate(3, host="shop3.example.com")) == 200
        worker = start_worker("celery", concurrency=1, **limits)

        def settled():
            if IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).exists():
                batches_requeue(older_than=timedelta(0))  # beat's sweep, now: re-sends rows whose lease ended
                time.sleep(1)
                return False
            return True

        wait_for(settled, timeout=240, interval=0, message=lambda: worker.tail() + str(
            list(IngestBatch.objects.values_list("id", "status", "attempts", "lost_claims", "claim_traces"))))
    finally:
        if worker is not None:
            log = worker.log()
            worker.stop()
        web.stop()

    killed = [line for line in log.splitlines() if "Hard time limit" in line or "TimeLimitExceeded" in line]
    assert killed, "\n".join(line for line in log.splitlines() if "ERROR" in line or "WARNING" in line)[-3000:] + str(
        list(IngestBatch.objects.values_list("id", "status", "attempts", "lost_claims", "claim_traces", "error")))
    quarantined = IngestBatch.objects.get(status=IngestBatch.Status.QUARANTINED)
    assert quarantined.traces and quarantined.traces[0]["request"]["url"]["path"] == "/api/slugs"  # kept
    assert (quarantined.lost_claims, quarantined.claim_traces) == (2, 1)  # killed with the others, then alone
    others = IngestBatch.objects.exclude(id=quarantined.id)
    assert set(others.values_list("status", "lost_claims", "alone")) == {(IngestBatch.Status.DONE, 1, True)}
    # The others were analysed once each: one endpoint, one request counted, one stored trace each.
    for n in (1, 2, 3):
        endpoint = Endpoint.objects.get(host__name=f"shop{n}.example.com")
        assert sum(UsageMinute.objects.filter(endpoint=endpoint).values_list("count", flat=True)) == 1
        assert ApiTrace.objects.filter(endpoint=endpoint).count() == 1
    assert not Endpoint.objects.filter(path="/api/slugs").exists()
    # Nothing is sent again: the sweep finds nothing to re-send.
    assert batches_requeue(older_than=timedelta(0)) == 0
    # Counted, and shown in the console.
    health = health_read(ask_workers=False)
    assert health.quarantined_batches == 1
    assert any("quarantined" in what for what, _ in health.problems)
    page = admin_client.get("/admin/inventory/ingestbatch/?status=QUARANTINED").content.decode()
    assert f">{quarantined.id}<" in page or f"/{quarantined.id}/change/" in page
    detail = admin_client.get(f"/admin/inventory/ingestbatch/{quarantined.id}/change/").content.decode()
    assert "/api/slugs" in detail and ("a" * 40) not in detail  # what it was, never its bodies
