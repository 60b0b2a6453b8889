"""Pacing per webhook (DECISIONS §7, issue #14 point 5): at most ``WEBHOOK_MAX_IN_FLIGHT`` (4)
deliveries of one webhook in flight at once, across workers; a burst waits for slots instead of
flooding the receiver, and nothing is lost when a worker dies holding slots.

The service-level tests call the services and tasks in this process against a real receiver on
127.0.0.1; the end-to-end bursts through real processes are in ``test_burst.py``.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core.enums import AlertType
from detections.services import AlertCandidate, alerts_raise
from tests.factories import EndpointFactory, HostFactory
from tests.support.receiver import Answer, Receiver
from webhooks import policy, tasks
from webhooks.models import Webhook, WebhookDelivery, WebhookRun
from webhooks.services import pacing
from webhooks.services.attempt import Attempt, deliveries_attempt
from webhooks.services.sweep import deliveries_sweep

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint():
    return EndpointFactory(host=HostFactory(name="a.example.com"), path="/users/{param1}")


@pytest.fixture
def published(monkeypatch) -> list:
    """Messages the code under test publishes, recorded instead of sent: (task name, args, countdown)."""
    sent: list = []

    def recorder(name):
        return lambda args=(), kwargs=None, countdown=None, **options: sent.append((name, args, countdown))

    for task in (tasks.delivery_send_task, tasks.deliveries_send_task, tasks.waiting_deliveries_send_task):
        monkeypatch.setattr(task, "apply_async", recorder(task.name.rsplit(".", 1)[-1]))
    return sent


def burst(endpoint, count: int) -> list[WebhookDelivery]:
    """``count`` alerts in one transaction: one PENDING delivery each per webhook (not sent: no commit hook
    runs, or, in a ``transaction=True`` test, its message is recorded by ``published``)."""
    alerts_raise([AlertCandidate(endpoint.uuid, AlertType.PII_DATA,
                                 f"Sensitive data of type email has been detected in field 'f{n}' of Response Body.")
                  for n in range(count)])
    return list(WebhookDelivery.objects.order_by("created_at", "uuid"))


def ids(deliveries) -> list:
    return [d.uuid for d in deliveries]


def test_a_webhook_has_four_slots_by_default(endpoint):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    deliveries = burst(endpoint, 10)

    claimed = pacing.deliveries_claim(delivery_ids=ids(deliveries), now=timezone.now())

    assert policy.max_in_flight() == 4
    assert len(claimed) == 4
    assert pacing.deliveries_claim(delivery_ids=ids(deliveries), now=timezone.now()) == []  # no slot left
    assert WebhookDelivery.objects.filter(status="SENDING").count() == 4
    # A finished attempt frees its slot for exactly one more.
    WebhookDelivery.objects.filter(pk=claimed[0]).update(status="DONE", finished_at=timezone.now())
    assert len(pacing.deliveries_claim(delivery_ids=ids(deliveries), now=timezone.now())) == 1


def test_the_setting_changes_the_slots_and_slots_are_per_webhook(endpoint, settings):
    settings.WEBHOOK_MAX_IN_FLIGHT = 2
    Webhook.objects.create(url="http://127.0.0.1:9/a")
    Webhook.objects.create(url="http://127.0.0.1:9/b")
    deliveries = burst(endpoint, 5)  # 5 for each webhook

    claimed = pacing.deliveries_claim(delivery_ids=ids(deliveries), now=timezone.now())

    by_webhook = WebhookDelivery.objects.filter(pk__in=claimed).values_list("webhook_id", flat=True)
    assert sorted(list(by_webhook).count(w) for w in set(by_webhook)) == [2, 2]


def test_the_oldest_deliveries_are_claimed_first(endpoint):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    deliveries = burst(endpoint, 6)
    now = timezone.now()
    for n, delivery in enumerate(deliveries):  # each one more overdue than the one before
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=now - timedelta(seconds=10 + n))

    assert set(pacing.deliveries_claim(delivery_ids=ids(deliveries), now=now)) == set(ids(deliveries[2:]))


def test_a_delivery_without_a_free_slot_is_waiting_not_attempted(endpoint):
    hook = Webhook.objects.create(url="http://127.0.0.1:9/hook")
    deliveries = burst(endpoint, 5)
    pacing.deliveries_claim(delivery_ids=ids(deliveries[:4]), now=timezone.now())

    [outcome] = deliveries_attempt(delivery_ids=[deliveries[4].uuid])

    assert outcome.result is Attempt.WAITING and not outcome.attempted
    assert outcome.webhook_id == hook.uuid
    assert WebhookDelivery.objects.get(pk=deliveries[4].pk).status == "PENDING"
    assert not WebhookRun.objects.exists()


def test_slots_of_a_worker_that_died_holding_them_are_free_after_the_lease(endpoint):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    deliveries = burst(endpoint, 8)
    long_ago = timezone.now() - policy.SLOT_LEASE - timedelta(seconds=1)
    pacing.deliveries_claim(delivery_ids=ids(deliveries[:4]), now=long_ago)  # a worker that died since

    assert pacing.in_flight(now=timezone.now()) == {}
    assert len(pacing.deliveries_claim(delivery_ids=ids(deliveries[4:]), now=timezone.now())) == 4


@pytest.mark.django_db(transaction=True)
def test_concurrent_claimers_never_take_more_than_the_slots(endpoint, published):
    # transaction=True: the burst's commit runs the fan-out's hook; ``published`` keeps its send
    # message from reaching a worker (or running eagerly) and claiming slots before the threads do.
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    deliveries = burst(endpoint, 40)
    start = threading.Barrier(8)
    claimed: list = []

    def claimer(part):
        try:
            start.wait()
            claimed.extend(pacing.deliveries_claim(delivery_ids=ids(part), now=timezone.now()))
        finally:
            connection.close()

    threads = [threading.Thread(target=claimer, args=(deliveries[n::8],)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(claimed) == len(set(claimed)) == 4
    assert WebhookDelivery.objects.filter(status="SENDING").count() == 4


@pytest.fixture
def slow_receiver():
    # ThreadingHTTPServer as the standard library ships it (backlog 5); a little work per request:
    # overlaps are visible.
    receiver = Receiver(Answer(delay=0.02, body=b"ok"), backlog=5)
    yield receiver
    receiver.close()


def test_a_burst_sent_by_one_task_goes_out_four_at_a_time_and_every_delivery_is_done(
        endpoint, slow_receiver, published):
    Webhook.objects.create(url=f"{slow_receiver.url}/hook")
    deliveries = burst(endpoint, 30)

    tasks.deliveries_send_task([str(d.uuid) for d in deliveries[:20]])  # the fan-out's first task

    assert WebhookDelivery.objects.filter(status="DONE").count() == 30  # the other 10 were waiting: sent too
    assert sorted(r.delivery_id for r in slow_receiver.requests) == sorted(str(d.uuid) for d in deliveries)
    assert slow_receiver.most == 4
    assert published == []  # no message polled for a slot


def test_a_task_finding_every_slot_taken_returns_at_once_and_leaves_its_deliveries_waiting(
        endpoint, receiver, published):
    url, route = receiver.route()
    Webhook.objects.create(url=url)
    deliveries = burst(endpoint, 10)
    pacing.deliveries_claim(delivery_ids=ids(deliveries[:4]), now=timezone.now())  # held by other workers

    started = time.monotonic()
    tasks.deliveries_send_task([str(d.uuid) for d in deliveries[4:]])

    assert time.monotonic() - started < 1.0  # no waiting, no polling
    assert route.requests == [] and published == []
    assert WebhookDelivery.objects.filter(status="PENDING").count() == 6


def test_a_sender_out_of_time_hands_the_rest_to_a_new_message(endpoint, receiver, published, monkeypatch):
    url, route = receiver.route()
    hook = Webhook.objects.create(url=url)
    deliveries = burst(endpoint, 10)
    monkeypatch.setattr(policy, "SEND_WAITING_BUDGET", 0.0)

    tasks.deliveries_send_task([str(d.uuid) for d in deliveries])

    assert len(route.requests) == 4  # its own round, then out of time
    assert published == [("waiting_deliveries_send_task", ([str(hook.uuid)],), None)]
    monkeypatch.setattr(policy, "SEND_WAITING_BUDGET", 30.0)
    tasks.waiting_deliveries_send_task([str(hook.uuid)])  # the worker runs that message
    assert len(route.requests) == 10
    assert WebhookDelivery.objects.filter(status="DONE").count() == 10


def test_the_sweep_leaves_waiting_deliveries_to_the_webhooks_senders_until_they_are_gone(endpoint, published):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    deliveries = burst(endpoint, 10)
    long_ago = timezone.now() - timedelta(minutes=5)
    WebhookDelivery.objects.update(next_attempt_at=long_ago, enqueued_at=long_ago)
    pacing.deliveries_claim(delivery_ids=ids(deliveries[:4]), now=timezone.now())  # live senders

    assert deliveries_sweep()["requeued"] == 0  # the 6 others wait for the live senders

    # The senders die: their slots' lease runs out, then the waiting deliveries are re-sent.
    WebhookDelivery.objects.filter(status="SENDING").update(
        claimed_at=timezone.now() - policy.SLOT_LEASE - timedelta(seconds=1))
    assert deliveries_sweep()["requeued"] == 6
    assert sorted(args[0] for _, args, _ in published) == sorted(str(d.uuid) for d in deliveries[4:])

