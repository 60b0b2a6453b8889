"""Ingestion health: per-source counts written on the accept path and by the analysis, read back by
the console's page; red lines for what is stuck (no worker here), the backlog as the API's."""
from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from console.health import health_read
from core.models import ApiKey
from inventory.ingest.health import beat_seen
from tests.inventory.ingest_support import raw_trace, send

pytestmark = pytest.mark.django_db


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
    assert ours.hour == {"accepted": 1, "rejected_503": 0, "rejected_4xx": 1} and ours.day == ours.hour
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
