"""Deliveries need no dedicated worker (DECISIONS §7, issue #14): the README's minimal process set
delivers webhooks, and work left in a queue no worker consumes is reported, not silently kept. A
burst of 900 alerts to one plain threaded receiver is delivered whole, paced per webhook, both by
the minimal set and by the Procfile's processes.

The process tests start the service's real processes (gunicorn, Celery worker and beat) on the
pytest database and Redis, never eager mode; every process group is stopped whatever happens.
"""
from __future__ import annotations

import os
import re
import shlex
import socket
import time
import uuid
from collections import Counter
from contextlib import ExitStack

import pytest
import redis
import requests
from django.db.models import Max, Min
from kombu import Exchange, Queue

from config.settings import test as configured
from core.queues import queue_names, queues_check, queues_status, queues_unconsumed
from tests.inventory.ingest_support import raw_trace
from tests.support.procfile import start_procfile
from tests.support.processes import ROOT, process_env, start_beat, start_worker, wait_for
from tests.support.web import free_port, start_web
from tests.webhooks.plain_receiver import PlainReceiver
from webhooks import policy
from webhooks.models import WebhookDelivery

# The README's minimal process set, as its Processes section spells it.
MINIMAL_SET = ["gunicorn config.wsgi", "celery -A config worker", "celery -A config beat"]
ALERT_TYPE = "Basic Authentication Detected"
# A trace that raises ALERT_TYPE once analysed.
TRACE = raw_trace(path="/legacy/export", headers={"Authorization": "Basic YWxpY2U6czNjcmV0"})
# The node name of a worker started without -n.
PLAIN_NODE = f"celery@{socket.gethostname()}"


@pytest.fixture
def processes():
    """``processes(started)`` keeps a started process; each one's group is stopped at the end."""
    with ExitStack() as stack:
        def keep(process):
            stack.callback(process.stop)
            return process

        yield keep


@pytest.fixture
def own_webhook_queue(settings) -> str:
    """A webhook queue of this test's own, declared as ``WEBHOOK_QUEUE`` is: in this process and
    (through ``process_env``) in the processes the test starts. Neither stray messages of other
    tests nor another test's worker (the session's ``celery_worker`` consumes a queue of its own)
    ever touch it. Its Redis key is deleted afterwards."""
    queue = f"webhooks-{uuid.uuid4().hex[:8]}"
    settings.WEBHOOK_QUEUE = queue
    settings.CELERY_TASK_QUEUES = [settings.CELERY_TASK_QUEUES[0], Queue(queue, Exchange(queue), routing_key=queue)]
    yield queue
    redis.Redis.from_url(settings.REDIS_URL).delete(queue)


def logs(**started) -> str:
    """The end of each named process's log, for failure messages."""
    return "\n".join(f"--- {name} {process.tail()}" for name, process in started.items())


def worker_queues(command: str) -> set[str] | None:
    """The queues a Procfile ``celery -A config worker`` line consumes (``None``: not a worker)."""
    expanded = re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m[1], m[2]), command)
    args = shlex.split(expanded)
    if args[:4] != ["celery", "-A", "config", "worker"]:
        return None
    option = lambda flag: set(args[args.index(flag) + 1].split(",")) if flag in args else set()  # noqa: E731
    return option("-Q") or set(configured_queues()) - option("-X")


def configured_queues() -> list[str]:
    """The declared queues as configured (a session fixture may have changed ``settings`` since)."""
    return [queue.name for queue in configured.CELERY_TASK_QUEUES]


# --------------------------------------------------------------------------------- declared queues

def test_every_queue_a_task_is_sent_to_is_declared():
    assert configured_queues() == [configured.CELERY_TASK_DEFAULT_QUEUE, configured.WEBHOOK_QUEUE] == ["celery", "webhooks"]
    beat_queues = {entry.get("options", {}).get("queue") for entry in configured.CELERY_BEAT_SCHEDULE.values()}
    assert beat_queues - {None} <= set(configured_queues())
    assert not getattr(configured, "CELERY_TASK_ROUTES", None)  # a route would name a queue of its own


def test_the_readme_documents_the_minimal_process_set():
    section = (ROOT / "README.md").read_text().split("\n## Processes\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```\w*\n(.*?)```", section, re.S)
    assert block and block[1].strip().splitlines() == MINIMAL_SET


def test_the_procfile_runs_deliveries_on_their_own_worker_and_every_queue_is_consumed():
    lines = dict(line.split(": ", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip())
    consumed = {name: worker_queues(command) for name, command in lines.items()}
    assert consumed["worker"] == set(configured_queues()) - {configured.WEBHOOK_QUEUE}
    assert consumed["webhooks"] == {configured.WEBHOOK_QUEUE}
    assert set().union(*(q for q in consumed.values() if q)) == set(configured_queues())


@pytest.fixture
def broker_down(monkeypatch):
    """The queue checks of this process talk to a port nothing listens on."""
    from kombu import Connection

    from config.celery import app

    monkeypatch.setattr(app, "connection_for_read", lambda: Connection(f"redis://127.0.0.1:{free_port()}/0"))


def test_a_broker_that_does_not_answer_is_a_warning_of_the_check_not_an_error(broker_down, caplog):
    assert queues_check() == []
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "queue check: the broker did not answer (OperationalError); will try again"]


@pytest.mark.django_db
def test_the_admin_queues_page_says_when_the_broker_does_not_answer(broker_down, admin_client):
    page = admin_client.get("/admin/queues/")
    assert page.status_code == 200
    assert "The broker did not answer (OperationalError)" in page.content.decode()


# --------------------------------------------------------------------------------- real processes

@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_readmes_minimal_process_set_delivers_an_alert_to_a_webhook(processes, own_webhook_queue, receiver,
                                                                        api_key, tmp_path):
    web = processes(start_web(process_env(), plain=True))
    worker = processes(start_worker(plain=True))
    beat = processes(start_beat(str(tmp_path)))
    # The plain worker consumes every declared queue, the webhook queue included.
    assert [state.name for state in queues_status(ask_workers=True) if PLAIN_NODE in state.consumers] == queue_names()

    url, route = receiver.route()
    api = requests.Session()
    api.headers["Authorization"] = api_key
    created = api.post(f"{web.base_url}/api/v1/webhook", json={"url": url, "alertTypes": [ALERT_TYPE]}, timeout=10)
    assert created.status_code == 201, created.text
    ingested = api.post(f"{web.base_url}/api/v1/log-request/batch", json=[TRACE], timeout=10)
    assert ingested.status_code == 200, ingested.text

    request = wait_for(lambda: route.requests and route.requests[0], timeout=60,
                       message=lambda: "no delivery reached the receiver\n" + logs(web=web, worker=worker, beat=beat))
    assert request.json()["alert"]["type"] == ALERT_TYPE
    assert request.json()["alert"]["apiEndpoint"]["path"] == "/legacy/export"
    delivery = WebhookDelivery.objects.get()
    assert request.headers["X-Delivery-Id"] == str(delivery.uuid)
    wait_for(lambda: WebhookDelivery.objects.filter(pk=delivery.pk, status="DONE").exists(),
             message=lambda: f"delivery {WebhookDelivery.objects.get().status}\n" + logs(worker=worker))
    assert len(route.requests) == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_deliveries_waiting_in_a_queue_no_worker_consumes_are_reported_until_a_worker_takes_them(
        processes, own_webhook_queue, receiver, client, admin_client, tmp_path):
    queue = own_webhook_queue
    # A worker of the default queue only (the layout of issue #14), and beat checking every second.
    analysis = processes(start_worker("celery"))
    beat = processes(start_beat(str(tmp_path), QUEUES_CHECK_INTERVAL="1"))
    url, route = receiver.route()
    assert client.post("/api/v1/webhook", {"url": url, "alertTypes": [ALERT_TYPE]}, format="json").status_code == 201
    assert client.post("/api/v1/log-request/batch", [TRACE], format="json").status_code == 200

    # The worker analyses the batch; the delivery waits in the unread queue, and beat says so.
    warning = re.compile(rf"WARNING.* (\d+) task\(s\) wait in Celery queue '{queue}' and no running worker "
                         rf"consumes it: .*`celery -A config worker` without -Q .* -Q {queue}\b")
    wait_for(lambda: warning.search(beat.log()), timeout=60,
             message=lambda: "beat logged no warning\n" + logs(analysis=analysis, beat=beat))
    assert "queue 'celery'" not in beat.log()  # consumed: never reported
    assert WebhookDelivery.objects.get().status == "PENDING"
    [state] = queues_unconsumed()
    assert (state.name, state.consumers) == (queue, ()) and state.waiting >= 1
    page = admin_client.get("/admin/queues/")
    assert page.status_code == 200
    assert f"wait in queue “{queue}” and no running worker consumes it" in page.content.decode()
    assert 'href="/admin/queues/"' in admin_client.get("/admin/").content.decode()  # the index links it

    # The fix the warning names: a plain worker consumes every queue; the delivery goes out.
    fixed = processes(start_worker(plain=True))
    wait_for(lambda: WebhookDelivery.objects.filter(status="DONE").exists(), timeout=60,
             message=lambda: "the delivery was not sent\n" + logs(analysis=analysis, fixed=fixed, beat=beat))
    assert len(route.requests) == 1
    assert queues_unconsumed() == []
    consumers = {state.name: state.consumers for state in queues_status(ask_workers=True)}
    assert PLAIN_NODE in consumers[queue]


# --------------------------------------------------------------------------------- a burst of alerts

# 300 new endpoints in one ingest (one host each: nothing for the inventory to merge), each raising
# these three alerts: 900 deliveries to one webhook at once (issue #14).
BURST_TYPES = ["New Endpoint Detected", "PII Data Detected", "Unauthenticated Endpoint returning Sensitive Data"]
BURST_TRACES = [raw_trace(host=f"shop{n}.example.com", path="/api/account",
                          response_body={"id": n, "email": f"customer{n}@example.com"}) for n in range(300)]


@pytest.fixture
def plain_receiver():
    receiver = PlainReceiver()
    yield receiver
    receiver.close()


def burst_delivered(base_url: str, api_key: str, receiver: PlainReceiver, started: dict) -> float:
    """Register ``receiver`` for the burst's alert types, ingest the burst through ``base_url``,
    wait until no delivery is left unfinished, checking on the way that no more than
    ``max_in_flight`` were in flight whenever sampled; return (and print) the seconds from the
    ingest to the last one."""
    api = requests.Session()
    api.headers["Authorization"] = api_key
    created = api.post(f"{base_url}/api/v1/webhook", json={"url": receiver.url, "alertTypes": BURST_TYPES}, timeout=10)
    assert created.status_code == 201, created.text
    began = time.monotonic()
    ingested = api.post(f"{base_url}/api/v1/log-request/batch", json=BURST_TRACES, timeout=30)
    assert ingested.status_code == 200, ingested.text

    sending: list[int] = []

    def drained() -> bool:
        deliveries = WebhookDelivery.objects.all()
        sending.append(deliveries.filter(status="SENDING").count())  # in flight, sampled
        return deliveries.count() >= 900 and not deliveries.filter(status__in=["PENDING", "SENDING"]).exists()

    wait_for(drained, timeout=180, interval=0.2, message=lambda: (
        f"deliveries: {Counter(WebhookDelivery.objects.values_list('status', flat=True))}\n" + logs(**started)))
    seconds = time.monotonic() - began
    span = WebhookDelivery.objects.aggregate(first=Min("created_at"), last=Max("finished_at"))
    print(f"\n900 deliveries: {seconds:.1f} s from the ingest to the last one; "
          f"{(span['last'] - span['first']).total_seconds():.1f} s from the alerts' commit; "
          f"at most {max(sending)} in flight when sampled, {receiver.most} at once at the receiver")
    assert max(sending) <= policy.max_in_flight() == 4  # paced, across every worker process and thread
    return seconds


def assert_every_delivery_done_and_received_once(receiver: PlainReceiver) -> None:
    statuses = Counter(WebhookDelivery.objects.values_list("status", flat=True))
    assert statuses == {"DONE": 900}, statuses
    assert Counter(WebhookDelivery.objects.values_list("payload__alert__type", flat=True)) == {t: 300 for t in BURST_TYPES}
    assert sorted(receiver.delivery_ids) == sorted(str(i) for i in WebhookDelivery.objects.values_list("uuid", flat=True))
    assert 1 <= receiver.most <= policy.max_in_flight()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_burst_of_900_alerts_reaches_a_plain_threaded_receiver_with_the_minimal_process_set(
        processes, own_webhook_queue, plain_receiver, api_key, tmp_path):
    web = processes(start_web(process_env(), plain=True))
    worker = processes(start_worker(plain=True))
    beat = processes(start_beat(str(tmp_path)))

    burst_delivered(web.base_url, api_key, plain_receiver, {"web": web, "worker": worker, "beat": beat})

    assert_every_delivery_done_and_received_once(plain_receiver)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_burst_of_900_alerts_reaches_a_plain_threaded_receiver_with_the_procfiles_processes(
        processes, own_webhook_queue, plain_receiver, api_key, tmp_path):
    started = {name: processes(group) for name, group in start_procfile(process_env(VAR_DIR=str(tmp_path))).items()}
    assert set(started) == {"web", "worker", "beat", "webhooks"}

    burst_delivered(started["web"].base_url, api_key, plain_receiver, started)

    assert_every_delivery_done_and_received_once(plain_receiver)
