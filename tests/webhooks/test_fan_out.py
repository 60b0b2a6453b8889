"""Fan-out: alerts and their pending deliveries are written together; sending starts after commit."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from core.enums import AlertType
from detections.models import Alert
from detections.services import AlertCandidate, alerts_raise
from tests.factories import EndpointFactory, HostFactory
from webhooks import policy
from webhooks.models import Webhook, WebhookDelivery, WebhookRun
from webhooks.services.attempt import Attempt, AttemptOutcome, deliveries_attempt
from webhooks.services.sweep import deliveries_sweep, runs_prune

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint():
    return EndpointFactory(host=HostFactory(name="a.example.com"), path="/users/{param1}")


def pii(endpoint, field="email") -> AlertCandidate:
    return AlertCandidate(endpoint.uuid, AlertType.PII_DATA,
                          f"Sensitive data of type email has been detected in field '{field}' of Response Body.")


def test_one_pending_delivery_per_matching_webhook_enqueued_after_commit(endpoint, django_capture_on_commit_callbacks):
    every = Webhook.objects.create(url="http://127.0.0.1:9/a")
    pii_only = Webhook.objects.create(url="http://127.0.0.1:9/b", alert_types=["PII Data Detected"])
    Webhook.objects.create(url="http://127.0.0.1:9/c", alert_types=["Basic Authentication Detected"])
    Webhook.objects.create(url="http://127.0.0.1:9/d", hosts=["b.example.com"])

    with django_capture_on_commit_callbacks() as callbacks:
        [alert] = alerts_raise([pii(endpoint)])
        # Inside the transaction: rows written, nothing enqueued yet.
        assert WebhookDelivery.objects.filter(alert=alert).count() == 2

    deliveries = WebhookDelivery.objects.filter(alert=alert)
    assert {d.webhook_id for d in deliveries} == {every.uuid, pii_only.uuid}
    assert {d.status for d in deliveries} == {"PENDING"}
    # One commit hook enqueues the first attempts of the whole fan-out (one task per 20 deliveries).
    [callback] = callbacks
    assert sorted(callback.keywords["delivery_ids"]) == sorted(d.uuid for d in deliveries)


def test_rolled_back_alert_leaves_no_delivery(endpoint):
    Webhook.objects.create(url="http://127.0.0.1:9/a")

    with pytest.raises(RuntimeError), transaction.atomic():
        alerts_raise([pii(endpoint)])
        raise RuntimeError("analysis failed later in the same transaction")

    assert not Alert.objects.exists()
    assert not WebhookDelivery.objects.exists()


def test_no_webhooks_no_deliveries(endpoint, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        alerts_raise([pii(endpoint, "a"), pii(endpoint, "b")])
    assert Alert.objects.count() == 2
    assert not WebhookDelivery.objects.exists()


def test_fan_out_query_count_does_not_grow_with_alerts(endpoint):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    Webhook.objects.create(url="http://127.0.0.1:9/a")
    Webhook.objects.create(url="http://127.0.0.1:9/b")
    with CaptureQueriesContext(connection) as few:
        alerts_raise([pii(endpoint, f"few{n}") for n in range(2)])
    with CaptureQueriesContext(connection) as many:
        alerts_raise([pii(endpoint, f"many{n}") for n in range(50)])

    assert len(many) == len(few) <= 14
    assert WebhookDelivery.objects.count() == 2 * 52


def test_private_target_is_refused_at_send_without_the_switch(endpoint, settings):
    # Created while the switch was on (or DNS pointed elsewhere); refused when it is sent.
    hook = Webhook.objects.create(url="http://127.0.0.1:9/hook")
    [alert] = alerts_raise([pii(endpoint)])
    delivery = WebhookDelivery.objects.get(alert=alert)
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

    [outcome] = deliveries_attempt(delivery_ids=[delivery.uuid])

    assert outcome.result is Attempt.GIVEN_UP  # not retried
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("FAILED", 1)
    [run] = hook.runs.all()
    assert (run.ok, run.status_code) == (False, None)
    assert run.msg.startswith("Target refused: 127.0.0.1 resolves to a loopback")


def test_connection_failure_ends_the_delivery(endpoint, unused_port):
    Webhook.objects.create(url=f"http://127.0.0.1:{unused_port}/hook", max_retries=3)
    [alert] = alerts_raise([pii(endpoint)])
    delivery = WebhookDelivery.objects.get(alert=alert)

    [outcome] = deliveries_attempt(delivery_ids=[delivery.uuid])

    assert outcome.result is Attempt.GIVEN_UP  # not retried
    delivery.refresh_from_db()
    assert delivery.status == "FAILED"
    [run] = WebhookRun.objects.filter(delivery=delivery)
    assert (run.ok, run.status_code) == (False, None)
    assert run.msg.startswith("Connection failed")


def test_a_finished_delivery_is_not_sent_again(endpoint, unused_port):
    Webhook.objects.create(url=f"http://127.0.0.1:{unused_port}/hook")
    [alert] = alerts_raise([pii(endpoint)])
    delivery = WebhookDelivery.objects.get(alert=alert)
    deliveries_attempt(delivery_ids=[delivery.uuid])

    [again] = deliveries_attempt(delivery_ids=[delivery.uuid])

    assert again.result is Attempt.NOT_CLAIMED
    assert WebhookRun.objects.filter(delivery=delivery).count() == 1



def test_a_delivery_not_due_yet_is_not_attempted_and_says_when_it_falls_due(endpoint):
    Webhook.objects.create(url="http://127.0.0.1:9/hook")
    [alert] = alerts_raise([pii(endpoint)])
    delivery = WebhookDelivery.objects.get(alert=alert)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() + timedelta(seconds=5))

    [outcome] = deliveries_attempt(delivery_ids=[delivery.uuid])

    assert outcome.result is Attempt.NOT_DUE and not outcome.attempted
    assert 4 < outcome.due_in <= 5
    assert outcome.retry_after is None  # "not due yet" is not a retry delay
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("PENDING", 0)
    assert not WebhookRun.objects.exists()


def test_a_delivery_that_no_longer_exists_is_gone():
    [outcome] = deliveries_attempt(delivery_ids=[uuid.uuid4()])

    assert outcome.result is Attempt.GONE


def test_the_batched_task_publishes_the_retries_the_service_reports_and_nothing_else(monkeypatch):
    from webhooks import tasks

    retried, delivered, not_due = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    outcomes = [AttemptOutcome(retried, Attempt.RETRY, retry_after=policy.RETRY_DELAY),
                AttemptOutcome(delivered, Attempt.DELIVERED), AttemptOutcome(not_due, Attempt.NOT_DUE, due_in=3.0)]
    monkeypatch.setattr(tasks, "deliveries_attempt", lambda *, delivery_ids: outcomes)
    published = []
    monkeypatch.setattr(tasks, "delivery_enqueue",
                        lambda *, delivery_id, countdown: published.append((delivery_id, countdown)))

    tasks.deliveries_send_task([str(o.delivery_id) for o in outcomes])

    assert published == [(retried, policy.RETRY_DELAY)]


def test_runs_prune_keeps_the_newest_ten_of_each_webhook():
    hooks = [Webhook.objects.create(url=f"http://127.0.0.1:9/{n}") for n in range(2)]
    for hook in hooks:
        for n in range(13):
            WebhookRun.objects.create(webhook=hook, ok=True, status_code=200, msg=str(n), payload={})

    assert runs_prune() == 6

    for hook in hooks:
        assert sorted(int(m) for m in hook.runs.values_list("msg", flat=True)) == list(range(3, 13))


def test_runs_prune_of_some_webhooks_leaves_the_others_alone():
    pruned, untouched = [Webhook.objects.create(url=f"http://127.0.0.1:9/{n}") for n in range(2)]
    for hook in (pruned, untouched):
        for n in range(12):
            WebhookRun.objects.create(webhook=hook, ok=True, status_code=200, msg=str(n), payload={})

    assert runs_prune(webhook_ids=[pruned.uuid]) == 2

    assert sorted(int(m) for m in pruned.runs.values_list("msg", flat=True)) == list(range(2, 12))
    assert untouched.runs.count() == 12


def test_a_fan_out_is_enqueued_in_tasks_of_twenty_deliveries(endpoint, django_capture_on_commit_callbacks,
                                                              monkeypatch):
    from webhooks.services import fan_out

    hooks = [Webhook.objects.create(url=f"http://127.0.0.1:9/{n}") for n in range(45)]
    sent: list[list] = []
    monkeypatch.setattr(fan_out, "deliveries_enqueue", lambda *, delivery_ids: sent.append(list(delivery_ids)))
    with django_capture_on_commit_callbacks(execute=True):
        [alert] = alerts_raise([pii(endpoint)])

    assert [len(chunk) for chunk in sent] == [20, 20, 5]
    assert sorted(i for chunk in sent for i in chunk) == sorted(
        WebhookDelivery.objects.filter(alert=alert).values_list("uuid", flat=True))
    assert len(hooks) == 45


def test_a_broker_failure_while_enqueueing_a_fan_out_leaves_every_delivery_pending(
        endpoint, django_capture_on_commit_callbacks, monkeypatch, caplog):
    from webhooks.services import fan_out

    for n in range(25):
        Webhook.objects.create(url=f"http://127.0.0.1:9/{n}")
    calls = []

    def broker_down(*, delivery_ids):
        calls.append(delivery_ids)
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(fan_out, "deliveries_enqueue", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        [alert] = alerts_raise([pii(endpoint)])  # no exception reaches the committer

    assert len(calls) == 1  # the first failure stops the loop: the sweep sends them all
    assert Alert.objects.filter(uuid=alert.uuid).exists()
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"PENDING"}
    assert WebhookDelivery.objects.count() == 25
    assert "could not enqueue 25 delivery(ies); the sweep will send them" in caplog.text


def test_a_claim_lost_three_times_is_given_up(endpoint):
    hook = Webhook.objects.create(url="http://127.0.0.1:9/a")
    [alert] = alerts_raise([pii(endpoint)])
    delivery = WebhookDelivery.objects.get(alert=alert)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status="SENDING", claimed_at=timezone.now() - timedelta(minutes=5), reclaims=2, attempts=1
    )

    assert deliveries_sweep()["failed"] == 1

    delivery.refresh_from_db()
    assert delivery.status == "FAILED"
    [run] = hook.runs.all()
    assert run.msg.startswith("Given up")


@pytest.fixture
def unused_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
