"""Single-trace posts are coalesced (inventory/ingest/drain.py): one drain per window, no message per
trace, analysis in batches by the real worker, and nothing accepted is left behind when a drain is
lost (the next signal or the requeue sweep drains it)."""
import time

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from core.models import ApiKey
from inventory.ingest import drain
from inventory.models import Endpoint, IngestBatch

from tests.support.processes import start_worker, wait_for

from .ingest_support import raw_trace, seeded_transactional_db  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

SINGLE = "/api/v1/log-request/single"


@pytest.fixture
def agent(seeded_transactional_db):
    """An API client with an ``ingest`` key, as Metlo's agents hold."""
    _, raw = ApiKey.issue(name="agent", scope="ingest")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=raw)
    return client


@pytest.fixture
def drains(monkeypatch):
    """The drain tasks the web side sends (really sent: the real ``drain_send`` is called), counted;
    this process's window starts closed."""
    sent = []
    real = drain.drain_send

    def counted(**kwargs):
        sent.append(kwargs)
        real(**kwargs)

    monkeypatch.setattr(drain, "drain_send", counted)
    monkeypatch.setattr(drain, "_window_ends", 0.0)
    return sent


def post(agent, number: int) -> None:
    response = agent.post(SINGLE, raw_trace(host="shop.example.com", path=f"/orders/{number}/items/{number}",
                                            response_body={"email": "ada@example.com"}), format="json")
    assert (response.status_code, response.json()) == (200, "OK")


def purge_broker() -> int:
    """Drop every message waiting in the broker (what a broker restarted empty does)."""
    from config.celery import app

    return app.control.purge()


@override_settings(INGEST_DRAIN_WINDOW=1.0)
def test_single_posts_send_one_drain_per_window_and_the_plain_worker_analyses_them_in_batches(agent, drains):
    worker = start_worker(plain=True)  # the README's minimal `celery -A config worker`
    try:
        started = time.monotonic()
        for number in range(40):
            agent.post(SINGLE, raw_trace(host=f"h{number}.example.com", path=f"/users/{number}"), format="json")
        elapsed = time.monotonic() - started
        # One drain per window opened, however many posts: no message per trace.
        assert 1 <= len(drains) <= int(elapsed / 1.0) + 1 < 40
        assert all(sent == {"countdown": 1.0} for sent in drains)
        assert wait_for(lambda: not IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).exists(),
                        timeout=60), worker.tail()
    finally:
        worker.stop()
    assert IngestBatch.objects.filter(status=IngestBatch.Status.DONE).count() == 40
    assert Endpoint.objects.count() == 40
    # Rows analysed together share their processed_at (one analysis marks its rows DONE at once).
    analyses = IngestBatch.objects.values("processed_at").distinct().count()
    assert analyses < 40


@override_settings(INGEST_DRAIN_WINDOW=2.0)
def test_a_trace_whose_drain_died_with_the_worker_is_analysed_after_the_next_signal(agent, drains):
    worker = start_worker("celery")
    post(agent, 1)  # opens the window: its drain waits 2 s in the worker (a countdown)
    assert len(drains) == 1
    time.sleep(0.5)  # the worker has taken the message
    worker.kill()  # SIGKILL: the countdown dies with it
    purge_broker()  # and the broker hands nothing to the next worker
    worker = start_worker("celery")
    try:
        time.sleep(2.0)  # past the window: nothing was going to analyse trace 1
        assert IngestBatch.objects.get().status == IngestBatch.Status.PENDING
        post(agent, 2)  # a new window, a new drain: it takes what is left too
        assert len(drains) == 2
        assert wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).count() == 2,
                        timeout=60), worker.tail()
    finally:
        worker.stop()
    assert Endpoint.objects.get().path == "/orders/{param1}/items/{param2}"
    assert sorted(IngestBatch.objects.values_list("num_traces", flat=True)) == [1, 1]


@override_settings(INGEST_DRAIN_WINDOW=30.0, INGEST_REQUEUE_AFTER=0)
def test_single_traces_whose_drain_was_lost_are_drained_by_the_requeue_sweep(agent, drains):
    from inventory.tasks import ingest_requeue_task

    purge_broker()  # messages earlier tests' workers left behind (countdown tasks restored at their stop)
    for number in range(5):
        post(agent, number)  # one window of 30 s: one drain for the five
    assert len(drains) == 1
    assert purge_broker() == 1  # the drain is lost with the broker's messages
    worker = start_worker("celery")
    try:
        time.sleep(1.0)
        assert IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).count() == 5
        assert ingest_requeue_task() == 5  # what beat runs: one drain for every pending single row
        assert len(drains) == 1  # the sweep's drain is its own (no countdown, not this web's window)
        assert wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).count() == 5,
                        timeout=60), worker.tail()
    finally:
        worker.stop()
    assert Endpoint.objects.count() == 1
