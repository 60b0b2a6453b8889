"""Ingestion health: per-source counts written on the accept path and by the analysis, read back by
the console's page; red lines for what is stuck (no worker here), the backlog as the API's."""
from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from console.health import health_read
from core.models import ApiKey
from inventory.ingest.health import beat_seen
from inventory.models import IngestBatch
from tests.inventory.ingest_support import raw_trace, sample, seeded_transactional_db, send  # noqa: F401 (fixture)
from tests.support.processes import start_worker, wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_health_counters():
    """Each test reads the counters of its own traffic: the page lists the top sources only, and the
    sources of earlier tests (in this Redis db) would otherwise compete with this test's."""
    from inventory.counts import redis_client
    from inventory.ingest.health import PREFIX

    client = redis_client()
    keys = list(client.scan_iter(f"{PREFIX}:*")) if client is not None else []
    if keys:
        client.delete(*keys)


def _source(health, key: str, agent: str):
    return next((s for s in health.sources if (s.key, s.agent) == (key, agent)), None)


def test_each_source_is_counted_on_the_accept_path_and_the_page_says_what_is_stuck(
        admin_browser, django_capture_on_commit_callbacks):
    agent = f"metlo-python-agent/{uuid.uuid4().hex[:8]}"  # a source of this test's own
    _, raw = ApiKey.issue(name="edge agent", scope="ingest")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=raw)
    before = health_read(ask_workers=False).analysis_hour["analysed"]

    ok = send(api, django_capture_on_commit_callbacks, "/api/v1/log-request/batch",
              [raw_trace(), raw_trace(path="/api/v1/orders/7")])
    assert ok.status_code == 200
    bad = api.post("/api/v1/log-request/batch", [{"request": {}}], format="json", HTTP_USER_AGENT=agent)
    assert bad.status_code == 400
    ok_again = api.post("/api/v1/log-request/batch", [raw_trace()], format="json", HTTP_USER_AGENT=agent)
    assert ok_again.status_code == 200
    wrong = APIClient().post("/api/v1/log-request/batch", [raw_trace()], format="json",
                             HTTP_AUTHORIZATION="not-a-key", HTTP_USER_AGENT=agent)
    assert wrong.status_code == 401

    health = health_read(ask_workers=False)
    ours = _source(health, "edge agent", agent)
    assert ours is not None
    assert ours.hour == {"accepted": 1, "analysed": 0, "skipped": 0, "failed": 0, "rejected_503": 0,
                         "rejected_4xx": 1, "truncated": 0, "quarantined": 0} and ours.day == ours.hour
    # (ok_again's batch is not analysed)
    assert ours.metlo_source == "python/flask" and ours.last_status == 200 and ours.accepted_at is not None
    assert health.analysis_hour["analysed"] == before + 2  # the batch sent with send() was analysed
    unknown = _source(health, "(no valid key)", agent)
    assert unknown.hour["rejected_4xx"] == 1 and unknown.accepted_at is None

    response = admin_browser.get("/admin/health/")
    assert response.status_code == 200
    html = response.content.decode()
    assert agent in html and "edge agent" in html
    problems = " ".join(what for what, _ in response.context["health"].problems)
    assert "No Celery worker answered" in problems  # no worker runs in this test
    assert f"edge agent / {agent}: 1 request(s) refused with 4xx in the last hour (last refusal 400)" in problems
    assert ours.refused_status == 400 and unknown.refused_status == 401
    assert response.context["health"].backlog == 1  # ok_again's batch waits: nobody analysed it
    assert 'class="console-problem"' in html


def test_beat_liveness_is_read_from_its_heartbeat(settings):
    settings.QUEUES_CHECK_INTERVAL = 60
    beat_seen()
    health = health_read(ask_workers=False)
    assert health.beat_age is not None and 0 <= health.beat_age < 60
    assert not any("Beat has not been seen" in what for what, _ in health.problems)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_counts_what_each_source_got_analysed_and_what_failed(seeded_transactional_db, admin_browser):
    """Two agents with their own keys and User-Agents; one batch of the second fails analysis for good.
    The worker attributes analysed and failed traces to the row's source: each source shows its own."""
    tag = uuid.uuid4().hex[:8]
    agents = {}
    for name, agent in ((f"edge-a-{tag}", f"metlo-python-agent/{tag}"), (f"edge-b-{tag}", f"metlo-node-agent/{tag}")):
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=ApiKey.issue(name=name, scope="ingest")[1], HTTP_USER_AGENT=agent)
        agents[name] = (agent, api)
    (ua_a, a), (ua_b, b) = agents[f"edge-a-{tag}"], agents[f"edge-b-{tag}"]
    source_b = f"edge-b-{tag}\x1f{ua_b}"
    # Sent before any worker runs: A two single traces (the fast path) and a batch of three, B a batch
    # of two and a v2 batch (of its own kind: analysed apart from the others).
    for path in ("/a/1", "/a/2"):
        assert a.post("/api/v1/log-request/single", raw_trace(path=path), format="json").status_code == 200
    assert a.post("/api/v1/log-request/batch", [raw_trace(path=f"/a/b{i}") for i in range(3)],
                  format="json").status_code == 200
    assert b.post("/api/v1/log-request/batch", [raw_trace(path="/b/1"), raw_trace(path="/b/2")],
                  format="json").status_code == 200
    assert b.post("/api/v2/log-request/batch", sample("v2-batch-flask-01.json"), format="json").status_code == 200
    # Its stored traces made unreadable as a whole, as a bug of the analysis would: every attempt fails.
    assert IngestBatch.objects.filter(kind="PROCESSED", source=source_b).update(traces=5) == 1

    worker = start_worker("celery")
    try:
        assert wait_for(lambda: not IngestBatch.objects.filter(status="PENDING").exists(), timeout=120,
                        message=lambda: (worker.tail(), list(IngestBatch.objects.values_list("status", "attempts"))))
        assert IngestBatch.objects.get(kind="PROCESSED").status == "FAILED"
        # The worker counts after its commits: wait for the counts, not only for the rows.

        def counted():
            health = health_read(ask_workers=False)
            ours_a, ours_b = _source(health, f"edge-a-{tag}", ua_a), _source(health, f"edge-b-{tag}", ua_b)
            return (ours_a.hour["analysed"], ours_b.hour["analysed"], ours_b.hour["failed"]) == (5, 2, 2)

        wait_for(counted, timeout=30, interval=0.5, message=worker.tail)
    finally:
        worker.stop()

    health = health_read(ask_workers=False)
    ours_a, ours_b = _source(health, f"edge-a-{tag}", ua_a), _source(health, f"edge-b-{tag}", ua_b)
    assert {k: ours_a.hour[k] for k in ("accepted", "analysed", "skipped", "failed")} == {
        "accepted": 5, "analysed": 5, "skipped": 0, "failed": 0}
    assert {k: ours_b.hour[k] for k in ("accepted", "analysed", "skipped", "failed")} == {
        "accepted": 4, "analysed": 2, "skipped": 0, "failed": 2}
    assert ours_a.day == ours_a.hour and ours_b.day == ours_b.hour
    assert (ours_a.failed_batches, ours_b.failed_batches) == (0, 1)
    problems = [what for what, _ in health.problems]
    assert f"edge-b-{tag} / {ua_b}: 2 trace(s) failed analysis for good in the last hour." in problems
    assert not any(f"edge-a-{tag}" in what for what in problems)

    html = admin_browser.get("/admin/health/").content.decode()
    table = html[html.index('<table id="sources">'):]
    row_a = table[table.index(ua_a):].split("</tr>", 1)[0]
    row_b = table[table.index(ua_b):].split("</tr>", 1)[0]
    assert '<td data-figure="source-analysed-hour">5 / 5</td>' in row_a
    assert '<td data-figure="source-failed-hour">0 / 0</td>' in row_a
    assert '<td data-figure="source-analysed-hour">2 / 2</td>' in row_b
    assert ('<td data-figure="source-failed-hour" class="console-failing">2 / 2 (1 FAILED batch(es) kept)</td>'
            in row_b)
    assert f"edge-b-{tag} / {ua_b}: 2 trace(s) failed analysis for good" in html


def test_a_thousand_sources_make_a_bounded_page_the_rest_folded_into_one_line(admin_browser):
    """1,000 ingestion requests with distinct User-Agents (the flood of issue #24): the page lists the
    top sources by volume and by failures, and one line adding up the rest, with one red line for them."""
    _, raw = ApiKey.issue(name="flood agent", scope="ingest")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=raw)
    for n in range(5):  # a few sources that send a lot
        for _ in range(n + 2):
            assert api.post("/api/v1/log-request/batch", [raw_trace()], format="json",
                            HTTP_USER_AGENT=f"busy-agent/{n}").status_code == 200
    flood = APIClient()
    for n in range(1000):  # refused: no valid key, each with a User-Agent of its own
        assert flood.post("/api/v1/log-request/batch", [raw_trace()], format="json", HTTP_AUTHORIZATION="nope",
                          HTTP_USER_AGENT=f"flood/{n:04d}").status_code == 401

    health = health_read(ask_workers=False)
    from console.health import TOP_BY_FAILURES, TOP_BY_VOLUME

    assert len(health.sources) <= TOP_BY_VOLUME + TOP_BY_FAILURES
    assert {f"busy-agent/{n}" for n in range(5)} <= {s.agent for s in health.sources}  # the biggest are listed
    listed_refusals = sum(s.hour["rejected_4xx"] for s in health.sources)
    assert health.others.count == 1005 - len(health.sources)
    assert health.others.hour["rejected_4xx"] + listed_refusals == 1000  # nothing lost in the fold
    from console.health import RED_LINE_SOURCES

    refusal_lines = [what for what, _ in health.problems if "refused" in what]
    assert len(refusal_lines) == RED_LINE_SOURCES + 1
    assert refusal_lines[-1] == (f"{1000 - RED_LINE_SOURCES} other source(s): 0 trace(s) failed, 0 request(s) "
                                 f"refused with 503 and {1000 - RED_LINE_SOURCES} with 4xx in the last hour.")

    html = admin_browser.get("/admin/health/").content.decode()
    assert html.count("flood/") <= TOP_BY_FAILURES + RED_LINE_SOURCES  # listed rows and their red lines
    assert 'id="sources-others"' in html and f"{health.others.count} other sources, added up" in html
    assert html.count('class="console-problem"') <= RED_LINE_SOURCES + 6
