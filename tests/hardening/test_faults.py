"""Faults with real processes: a worker killed with SIGKILL, the broker (Redis) killed and restarted,
the database connection of a worker terminated mid-batch. After recovery nothing is lost and nothing
is done twice: every accepted trace is analysed exactly once, every webhook delivery is done, and a
receiver sees at most one duplicate per delivery, carrying the same ``X-Delivery-Id``.

The sweeps run here the way beat runs them (a direct call of the beat task's function); their
waiting periods are shortened with ``monkeypatch`` instead of waiting tens of seconds.
"""
from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from datetime import timedelta

import psycopg
import pytest
from django.db import connection

from core.enums import AlertType
from detections.models import Alert
from detections.services import AlertCandidate, alerts_raise
from inventory.ingest.accept import batches_requeue, ingest_backlog
from inventory.models import ApiTrace, Endpoint, IngestBatch
from tests.factories import EndpointFactory, HostFactory
from tests.inventory.ingest_support import raw_trace, seeded_transactional_db  # noqa: F401 (fixture)
from webhooks import policy
from webhooks.models import WebhookDelivery
from webhooks.services.sweep import deliveries_sweep

from tests.support.processes import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

UNFINISHED = ("PENDING", "SENDING")


# --------------------------------------------------------------------------------- helpers

def webhooks_create(client, receiver) -> None:
    """Two webhooks for every alert: one answering 200, one answering 503 to each first attempt."""
    for path in ("/steady", "/flaky"):
        response = client.post("/api/v1/webhook", {"url": receiver.url + path, "maxRetries": 3}, format="json")
        assert response.status_code == 201, response.content


def pii_alerts(endpoint, names) -> list[Alert]:
    return alerts_raise([
        AlertCandidate(endpoint.uuid, AlertType.PII_DATA,
                       f"Sensitive data of type email has been detected in field '{name}' of Response Body.")
        for name in names
    ])


def deliveries_finish(*, pending_after: float = 1.0, timeout: float = 180.0, monkeypatch) -> None:
    """Run the delivery sweep as beat would (every half second here, with a short pending period)
    until no delivery is left unfinished."""
    monkeypatch.setattr(policy, "SWEEP_PENDING_AFTER", timedelta(seconds=pending_after))

    def finished():
        if not WebhookDelivery.objects.filter(status__in=UNFINISHED).exists():
            return True
        deliveries_sweep()
        time.sleep(0.5)
        return False

    wait_for(finished, timeout=timeout, interval=0,
             message=lambda: f"deliveries left: {list(WebhookDelivery.objects.values_list('status', 'attempts'))}")


def assert_every_delivery_done_with_at_most_one_duplicate(receiver) -> dict[str, int]:
    """Every delivery DONE; the receiver saw each one under its own X-Delivery-Id only, and at most
    one request of each delivery twice. Returns the number of duplicates per delivery id."""
    deliveries = list(WebhookDelivery.objects.select_related("webhook"))
    assert deliveries
    assert Counter(d.status for d in deliveries) == {"DONE": len(deliveries)}
    received = receiver.by_delivery()
    # Every request of one (webhook, alert) pair carries that delivery's id, and no other.
    ids_by_pair: dict = {}
    for delivery_id, requests in received.items():
        for request in requests:
            ids_by_pair.setdefault((request.path, request.json()["alert"]["uuid"]), set()).add(delivery_id)
    expected = {(d.webhook.url.removeprefix(receiver.url), str(d.alert_id)): {str(d.uuid)} for d in deliveries}
    assert ids_by_pair == expected
    duplicates = {}
    for delivery in deliveries:
        requests = received[str(delivery.uuid)]
        attempts = [r.attempt for r in requests]
        duplicates[str(delivery.uuid)] = len(attempts) - len(set(attempts))
        assert duplicates[str(delivery.uuid)] <= 1, (delivery.uuid, attempts)
        assert set(attempts) == set(range(1, delivery.attempts + 1))
        # /flaky answers 503 to attempt 1: the delivery was retried once, as the policy says.
        assert delivery.attempts == (2 if delivery.webhook.url.endswith("/flaky") else 1)
    return duplicates


@contextmanager
def db_locked(statement: str, params=(), *, waiting_on: str):
    """Run ``statement`` (a lock) in a transaction of a connection of our own and hold it. Yields a
    function answering the pids of the database backends waiting for a lock while running a query
    that names ``waiting_on`` (empty when none is). The lock is released on leaving."""
    db = connection.settings_dict
    with psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"],
                         password=db["PASSWORD"] or None, dbname=db["NAME"]) as blocker:
        blocker.execute(statement, params)

        def waiting() -> list[int]:
            # Read from another connection: inside the blocker's transaction pg_stat_activity is a snapshot.
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                    " AND query LIKE %s", [f"%{waiting_on}%"]
                )
                return [pid for (pid,) in cursor.fetchall()]

        yield waiting
        blocker.rollback()


def usage_locked():
    """Writes to the usage table wait: an analysis stops half-way through its transaction (batch
    claimed; hosts, endpoints, fields and traces written; usage not counted yet)."""
    return db_locked("LOCK TABLE inventory_usageminute IN EXCLUSIVE MODE", waiting_on='"inventory_usageminute"')


def webhook_locked(url: str):
    """The webhook row is locked: an attempt to it is sent, then waits to be recorded (the recording
    locks the webhook row). ``NO KEY UPDATE`` lets new deliveries reference the webhook meanwhile."""
    return db_locked("SELECT 1 FROM webhooks_webhook WHERE url = %s FOR NO KEY UPDATE", [url],
                     waiting_on='FROM "webhooks_webhook"')


# --------------------------------------------------------------------------------- worker killed

def test_deliveries_in_flight_when_the_worker_is_killed_are_all_done_after_a_new_worker_starts(
    client, receiver, workers, settings, monkeypatch, seeded_transactional_db
):
    webhooks_create(client, receiver)
    endpoint = EndpointFactory(host=HostFactory(name="shop.example.com"), path="/users/{param1}")
    worker = workers.start_webhooks(settings.WEBHOOK_QUEUE)

    with webhook_locked(receiver.url + "/steady") as waiting:
        pii_alerts(endpoint, [f"f{n}" for n in range(10)])  # 20 deliveries, sent after commit
        # A worker process has sent an attempt to /steady and waits to record it: kill them all.
        wait_for(waiting, timeout=30, message=worker.log)
        worker.kill()
    # Attempts claimed by the dead worker; some reached the receiver and were never recorded.
    claimed = dict(WebhookDelivery.objects.filter(status="SENDING").values_list("uuid", "attempts"))
    received = {(r.delivery_id, r.attempt) for r in receiver.requests}
    unrecorded = {str(d) for d, attempt in claimed.items() if (str(d), attempt) in received}
    assert unrecorded

    # Beat's sweep once the claim lease has run out (shortened here): the dead worker's claim is
    # taken back, and deliveries whose message died with the worker are queued again.
    monkeypatch.setattr(policy, "CLAIM_LEASE", timedelta(0))
    monkeypatch.setattr(policy, "SWEEP_PENDING_AFTER", timedelta(0))
    # (Two worker processes: another attempt may have been in flight too.)
    assert deliveries_sweep()["reclaimed"] >= 1
    monkeypatch.setattr(policy, "CLAIM_LEASE", timedelta(seconds=60))  # a live worker's claims stand
    workers.start_webhooks(settings.WEBHOOK_QUEUE)
    deliveries_finish(monkeypatch=monkeypatch)

    duplicates = assert_every_delivery_done_with_at_most_one_duplicate(receiver)
    assert WebhookDelivery.objects.count() == 20
    # An attempt that reached the receiver but was never recorded is sent once more, same id.
    for delivery_id in unrecorded:
        assert duplicates[delivery_id] == 1
    assert set(WebhookDelivery.objects.filter(reclaims=1).values_list("uuid", flat=True)) == set(claimed)


def backend_gone(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone() == (0,)


def test_a_batch_whose_analysis_worker_is_killed_mid_batch_is_analysed_once_by_the_next_worker(
    client, workers, seeded_transactional_db
):
    worker = workers.start("celery", concurrency=1)
    with usage_locked() as waiting:
        assert post_batch(client, 0).status_code == 200
        [pid] = wait_for(waiting, timeout=120)
        worker.kill()  # half-way through the batch's transaction
    # PostgreSQL rolls the dead worker's transaction back: nothing of the batch is left.
    wait_for(lambda: backend_gone(pid), timeout=120)
    assert (Endpoint.objects.count(), ApiTrace.objects.count()) == (0, 0)
    assert IngestBatch.objects.get().status == IngestBatch.Status.PENDING

    # Its message died unacknowledged with the worker; once the claim's lease ends (the analysis' time
    # limit and a margin: the worker may only have been slow), the requeue sweep sends it again. A batch
    # whose worker died is split: each of its traces is then analysed alone, exactly once.
    batch = IngestBatch.objects.get()
    assert (batch.attempts, batch.claim_traces) == (1, 20) and batch.claimed_until is not None
    workers.start("celery", concurrency=1)

    def analysed():
        if not IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).exists():
            return True
        batches_requeue(older_than=timedelta(seconds=1))
        time.sleep(0.5)
        return False

    wait_for(analysed, timeout=180, interval=0)
    split = IngestBatch.objects.get(id=batch.id)
    assert (split.status, split.lost_claims) == (IngestBatch.Status.DONE, 1) and split.error.startswith("split")
    children = IngestBatch.objects.exclude(id=batch.id)
    assert children.count() == 20 and set(children.values_list("status", "num_traces", "alone")) == {
        (IngestBatch.Status.DONE, 1, True)}
    assert ApiTrace.objects.count() == 20
    for endpoint in Endpoint.objects.all():
        usage = client.get(f"/api/v1/endpoint/{endpoint.uuid}/usage").json()
        assert sum(day["cnt"] for day in usage["dailyUsage"]) == 5
    assert Counter(Alert.objects.values_list("type", flat=True)) == ALERTS_OF_THE_TRAFFIC


# --------------------------------------------------------------------------------- broker restarted

HOST = "shop.example.com"
RESOURCES = ("orders", "carts", "users", "items")


# What traces_batch(0) teaches about the four endpoints: new endpoint, a PII field ('email' in the
# response body), an unauthenticated 2xx answer carrying it.
ALERTS_OF_THE_TRAFFIC = {AlertType.NEW_ENDPOINT: 4, AlertType.PII_DATA: 4, AlertType.UNAUTHENTICATED_SENSITIVE: 4}


def traces_batch(number: int, size: int = 20) -> list[dict]:
    """``size`` traces spread over the four endpoints ``GET /<resource>/{param1}``; the first batch
    also carries an e-mail address in each response body (PII alerts)."""
    return [
        raw_trace(host=HOST, path=f"/{RESOURCES[n % 4]}/{number * 1000 + n}",
                  response_body={"id": n, "email": "ana@example.com"} if number == 0 else {"id": n})
        for n in range(size)
    ]


def post_batch(client, number: int):
    return client.post("/api/v1/log-request/batch", traces_batch(number), format="json")


def test_ingestion_through_a_broker_restart_analyses_every_accepted_trace_exactly_once(
    client, receiver, workers, broker, settings, monkeypatch, seeded_transactional_db
):
    webhooks_create(client, receiver)
    workers.start("celery", settings.WEBHOOK_QUEUE)
    accepted: list[int] = []

    with usage_locked() as waiting:
        # Redis up: batches accepted, messages sent. The usage table is locked, so the worker's
        # analyses stop half-way (nothing commits) and the other messages wait in the broker.
        for number in range(4):
            assert post_batch(client, number).status_code == 200
            accepted.append(number)
        wait_for(waiting, timeout=120)
        broker.kill()  # with it go the queued messages and the worker's unacknowledged ones
        assert ingest_backlog() == 4 * 20

        # Redis down: the route keeps accepting (the batch row is durable, the message unsent)...
        for number in range(4, 7):
            response = post_batch(client, number)
            assert (response.status_code, response.json()) == (200, "OK")
            accepted.append(number)
        assert IngestBatch.objects.count() == 7
        # ...or pushes back with a clean 503 (backlog at its limit): nothing stored, the agent retries.
        settings.INGEST_MAX_BACKLOG = ingest_backlog()
        refused = post_batch(client, 7)
        assert refused.status_code == 503
        assert int(refused["Retry-After"]) >= 1
        assert IngestBatch.objects.count() == 7
        settings.INGEST_MAX_BACKLOG = 200_000
    # Lock released with Redis still down: the analyses in flight commit; the alerts they raise
    # cannot be sent (their deliveries stay PENDING) and their messages cannot be acknowledged.
    wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).exists(), timeout=120)

    broker.start()  # empty: every message queued before the crash is gone
    for number in range(7, 10):  # the refused batch 7, sent again by the agent, then more
        assert post_batch(client, number).status_code == 200
        accepted.append(number)

    # Recovery as beat runs it: pending batches re-sent (duplicates of live messages included),
    # pending deliveries re-sent.
    def analysed():
        if not IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).exists():
            return True
        batches_requeue(older_than=timedelta(seconds=1))
        time.sleep(0.5)
        return False

    wait_for(analysed, timeout=180, interval=0,
             message=lambda: f"batches left: {list(IngestBatch.objects.values_list('status', 'attempts', 'error'))}\n"
                             + workers.tail())
    deliveries_finish(monkeypatch=monkeypatch)

    traces = 20 * len(accepted)
    assert Counter(IngestBatch.objects.values_list("status", flat=True)) == {"DONE": len(accepted)}
    endpoints = client.get("/api/v1/endpoints", {"hosts": [HOST], "limit": 10}).json()
    assert sorted(e["path"] for e in endpoints) == sorted(f"/{r}/{{param1}}" for r in RESOURCES)
    for item in endpoints:
        usage = client.get(f"/api/v1/endpoint/{item['uuid']}/usage").json()
        assert sum(day["cnt"] for day in usage["dailyUsage"]) == traces // 4  # counted once per trace
        detail = client.get(f"/api/v1/endpoint/{item['uuid']}").json()
        assert len(detail["traces"]) == traces // 4  # stored once per trace
    assert ApiTrace.objects.count() == traces
    # Alerts raised once each, each delivered to both webhooks.
    assert Counter(Alert.objects.values_list("type", flat=True)) == ALERTS_OF_THE_TRAFFIC
    assert WebhookDelivery.objects.count() == 2 * 12
    assert_every_delivery_done_with_at_most_one_duplicate(receiver)


def test_deliveries_through_a_broker_restart_are_all_done(
    client, receiver, workers, broker, settings, monkeypatch, seeded_transactional_db
):
    webhooks_create(client, receiver)
    endpoint = EndpointFactory(host=HostFactory(name="shop.example.com"), path="/users/{param1}")
    workers.start_webhooks(settings.WEBHOOK_QUEUE)

    with webhook_locked(receiver.url + "/steady") as waiting:
        pii_alerts(endpoint, [f"f{n}" for n in range(8)])
        wait_for(waiting, timeout=120)
        broker.kill()  # mid-attempt (sent, not recorded yet), the other messages queued or reserved
        # Alerts raised while the broker is down are committed; their sends wait for the sweep.
        assert len(pii_alerts(endpoint, ["down1", "down2"])) == 2
    # The attempts in flight are recorded (the database is fine); their messages cannot be acknowledged.
    broker.start()
    deliveries_finish(monkeypatch=monkeypatch)

    assert WebhookDelivery.objects.count() == 2 * 10
    assert_every_delivery_done_with_at_most_one_duplicate(receiver)


# --------------------------------------------------------------------------------- database connection dropped

def test_a_batch_whose_database_connection_is_dropped_mid_analysis_is_retried_and_analysed_once(
    client, workers, seeded_transactional_db
):
    workers.start("celery", concurrency=1)
    with usage_locked() as waiting:
        assert post_batch(client, 0).status_code == 200
        [pid] = wait_for(waiting, timeout=120)
        # The batch is claimed by that transaction: no other worker can take it meanwhile.
        with connection.cursor() as cursor:
            cursor.execute("SELECT id FROM inventory_ingestbatch WHERE status = 'PENDING' FOR UPDATE SKIP LOCKED")
            assert cursor.fetchall() == []
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
            assert cursor.fetchone() == (True,)

    # The task sees the database error, counts the attempt and retries on a new connection.
    wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).exists(), timeout=180,
             message=lambda: f"batch: {list(IngestBatch.objects.values_list('status', 'attempts', 'error'))}")
    batch = IngestBatch.objects.get()
    # Attempts are counted when the batch is claimed: the one that failed and the one that finished.
    assert (batch.status, batch.attempts, batch.claimed_until) == (IngestBatch.Status.DONE, 2, None)
    assert ApiTrace.objects.count() == 20
    assert Endpoint.objects.count() == 4
    for endpoint in Endpoint.objects.all():
        usage = client.get(f"/api/v1/endpoint/{endpoint.uuid}/usage").json()
        assert sum(day["cnt"] for day in usage["dailyUsage"]) == 5
    assert Counter(Alert.objects.values_list("type", flat=True)) == ALERTS_OF_THE_TRAFFIC
