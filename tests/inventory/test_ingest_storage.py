"""What ingestion stores: redacted traces, their retention, usage counters, exactly-once analysis."""
import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from inventory.ingest.maintenance import ingest_prune
from inventory.ingest.pipeline import batch_analyze
from inventory.models import ApiTrace, Endpoint, IngestBatch, ObservedPath, UsageDay, UsageMinute
from inventory.tasks import analyze_batch_task

from .ingest_support import ingest, raw_trace, sample, seeded_transactional_db  # noqa: F401 (fixtures)
from .ingest_support import stored_traces_text as stored_text

pytestmark = pytest.mark.django_db

V1 = "/api/v1/log-request/batch"

SECRETS = ["Basic YWxpY2U6czNjcmV0", "session=9f8e7d6c5b4a", "key-live-0123456789", "hunter2-password",
           "tok-refresh-abcdef", "s3cr3t-client", "pw-in-query-123", "set-cookie-secret-value", "form-pass-999"]


def test_credentials_are_never_stored_in_clear(ingest):
    ingest(
        raw_trace(
            path="/api/login", method="POST",
            headers={"Authorization": SECRETS[0], "Cookie": SECRETS[1], "X-Api-Key": SECRETS[2],
                     "Content-Type": "application/json"},
            query=[("password", SECRETS[6])],
            body=json.dumps({"user": "alice", "password": SECRETS[3], "nested": {"refresh_token": SECRETS[4]},
                             "client_secret": SECRETS[5]}),
            response_headers={"Set-Cookie": SECRETS[7]},
            response_body={"ok": True},
        ),
        raw_trace(path="/form-login", method="POST", body=f"user=bob&passwd={SECRETS[8]}",
                  headers={"Content-Type": "application/x-www-form-urlencoded"}),
    )
    text = stored_text()
    for secret in SECRETS:
        assert secret not in text
    trace = ApiTrace.objects.get(path="/api/login")
    assert trace.redacted is True
    headers = {h["name"]: h["value"] for h in trace.request_headers}
    assert headers["Authorization"] == "Basic [REDACTED]"  # the scheme word is kept (DECISIONS §4)
    assert headers["X-Api-Key"] == "[REDACTED]"
    assert headers["Cookie"] == "session=[REDACTED]"  # cookie names are kept (DECISIONS §4 turn 3)
    assert headers["Content-Type"] == "application/json"
    body = json.loads(trace.request_body)
    assert body == {"user": "alice", "password": "[REDACTED]", "nested": {"refresh_token": "[REDACTED]"},
                    "client_secret": "[REDACTED]"}
    assert trace.request_parameters == [{"name": "password", "value": "[REDACTED]"}]
    assert "passwd=%5BREDACTED%5D" in ApiTrace.objects.get(path="/form-login").request_body


def test_credentials_stay_redacted_with_full_trace_capture(ingest):
    ingest(raw_trace(path="/me"))
    Endpoint.objects.update(full_trace_capture_enabled=True)
    ingest(raw_trace(path="/me", headers={"Authorization": "Bearer abcdefghijklmnopqrstu"},
                     response_body={"email": "alice@example.com", "api_token": "t-0123456789"}))
    trace = ApiTrace.objects.filter(path="/me").order_by("-created_at").first()
    assert {h["name"]: h["value"] for h in trace.request_headers}["Authorization"] == "Bearer [REDACTED]"
    body = json.loads(trace.response_body)
    assert body == {"email": "alice@example.com", "api_token": "[REDACTED]"}  # sensitive kept, credential not


def test_sensitive_values_are_redacted_without_full_trace_capture(ingest):
    ingest(raw_trace(path="/customers/alice@example.com", query=[("phone", "+14155552671")],
                     response_body={"customer": {"ssn": "123-45-6789", "name": "Alice"}}))
    trace = ApiTrace.objects.get()
    assert trace.redacted is True
    assert trace.path == "/customers/[REDACTED]"
    assert trace.request_parameters == [{"name": "phone", "value": "[REDACTED]"}]
    assert json.loads(trace.response_body) == {"customer": {"ssn": "[REDACTED]", "name": "Alice"}}
    assert "alice@example.com" not in stored_text() and "123-45-6789" not in stored_text()


def test_basic_auth_is_detected_before_redaction(ingest):
    from detections.models import Alert

    ingest(raw_trace(path="/legacy", headers={"Authorization": "Basic YWxpY2U6czNjcmV0"}))
    assert Alert.objects.filter(type="Basic Authentication Detected").count() == 1
    assert "YWxpY2U6czNjcmV0" not in stored_text()


def test_free_text_bodies_are_scrubbed(ingest):
    xml = "<login><user>al</user><password>xml-secret-1</password></login>"
    ingest(raw_trace(path="/soap", method="POST", body=xml, headers={"Content-Type": "application/xml"},
                     response_body="token=txt-secret-2&ok=1", response_headers={"Content-Type": "text/plain"}))
    assert "xml-secret-1" not in stored_text() and "txt-secret-2" not in stored_text()


def test_v2_traces_are_stored_as_the_agent_redacted_them(ingest):
    ingest(*sample("v2-batch-flask-01.json"), url="/api/v2/log-request/batch")
    traces = list(ApiTrace.objects.all())
    assert len(traces) == 2 and all(t.redacted for t in traces)
    assert all(t.request_headers == [] and t.request_body == "" and t.request_parameters == [] for t in traces)


def test_v2_traces_encrypted_for_a_key_we_do_not_hold_are_counted_and_not_stored(client,
                                                                                  django_capture_on_commit_callbacks):
    # DECISIONS §9: a trace that cannot be decrypted is counted and skipped, never half-stored (this
    # captured trace was encrypted for another service's key; it used to be stored as metadata).
    from core.models import TraceDecryptFailure
    from tests.inventory.test_encrypted_traces import run_decrypt_counters

    with django_capture_on_commit_callbacks() as enqueued:
        response = client.post("/api/v2/log-request/batch", sample("v2-batch-extra-encrypted-01.json"), format="json")
    assert response.status_code == 200
    with django_capture_on_commit_callbacks() as after_commit:  # the count is written once the analysis commits
        for callback in enqueued:
            analyze_batch_task(*callback.args)
    run_decrypt_counters(after_commit)
    assert ApiTrace.objects.count() == 0 and Endpoint.objects.count() == 0
    assert TraceDecryptFailure.objects.get(reason="key").count == 1


def test_at_most_100_traces_are_kept_per_endpoint_newest_first(ingest):
    ingest(*[raw_trace(path=f"/items/{i}") for i in range(1, 61)])
    ingest(*[raw_trace(path=f"/items/{i}") for i in range(61, 151)])
    endpoint = Endpoint.objects.get()
    kept = list(endpoint.traces.order_by("-created_at").values_list("path", flat=True))
    assert len(kept) == 100
    assert kept[0] == "/items/150" and kept[-1] == "/items/51"
    assert ObservedPath.objects.filter(endpoint=endpoint).count() == 150  # raw paths are all kept


def test_traces_older_than_seven_days_are_pruned(ingest):
    ingest(raw_trace(path="/a"), raw_trace(path="/b"))
    ApiTrace.objects.filter(path="/a").update(created_at=timezone.now() - timedelta(days=7, minutes=1))
    counts = ingest_prune()
    assert counts["traces"] == 1
    assert list(ApiTrace.objects.values_list("path", flat=True)) == ["/b"]


def test_usage_counters_are_exact_per_minute_and_day(ingest):
    ingest(*[raw_trace(path=f"/orders/{i}") for i in range(7)], raw_trace(path="/health"))
    ingest(*[raw_trace(path=f"/orders/{i}") for i in range(5)])
    orders = Endpoint.objects.get(path="/orders/{param1}")
    minute = UsageMinute.objects.get(endpoint=orders)
    assert minute.count == 12 and minute.minute.second == 0 and minute.minute.microsecond == 0
    assert UsageDay.objects.get(endpoint=orders).count == 12
    assert UsageDay.objects.get(endpoint__path="/health").count == 1


def test_usage_upsert_adds_to_existing_rows_without_losing_increments(ingest):
    """Two batches counted into the same minute row by the SQL upsert (count = count + excluded.count)."""
    ingest(raw_trace(path="/ping"))
    orders = Endpoint.objects.get()
    minute = UsageMinute.objects.get(endpoint=orders)
    from inventory.ingest.sql import upsert

    upsert(UsageMinute, [{"endpoint": orders.uuid, "minute": minute.minute, "count": 41}],
           conflict=("endpoint", "minute"), increment=("count",))
    minute.refresh_from_db()
    assert minute.count == 42 and UsageMinute.objects.count() == 1


def test_a_batch_is_analysed_exactly_once(client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        client.post(V1, [raw_trace(path="/x/1"), raw_trace(path="/x/2")], format="json")
    (batch_id,) = callbacks[0].args
    analyze_batch_task(batch_id)
    analyze_batch_task(batch_id)  # a duplicate message
    assert batch_analyze(batch_id=batch_id) is None
    assert UsageMinute.objects.get().count == 2
    batch = IngestBatch.objects.get()
    assert batch.status == IngestBatch.Status.DONE and batch.traces == [] and batch.processed_at is not None


@pytest.mark.not_on_sqlite("row locks (SELECT ... FOR UPDATE SKIP LOCKED); SQLite serialises writers instead, "
                            "see the next test")
@pytest.mark.django_db(transaction=True)
def test_a_batch_being_analysed_elsewhere_is_skipped(seeded_transactional_db):  # noqa: F811
    """The claim is SELECT ... FOR UPDATE SKIP LOCKED: a second worker returns at once, the first one wins."""
    import threading

    from django.db import connections, transaction

    batch = IngestBatch.objects.create(kind=IngestBatch.Kind.RAW, traces=[raw_trace()], num_traces=1)
    result = {}

    def other_worker():
        try:
            result["outcome"] = batch_analyze(batch_id=batch.id)
        finally:
            connections.close_all()

    with transaction.atomic():
        IngestBatch.objects.select_for_update().get(id=batch.id)  # "worker 1" holds the row
        thread = threading.Thread(target=other_worker)
        thread.start()
        thread.join(10)
        assert not thread.is_alive()
    assert result == {"outcome": None}
    assert Endpoint.objects.count() == 0
    outcome = batch_analyze(batch_id=batch.id)  # the row is free again: analysed once
    assert outcome is not None and outcome.endpoints_created == 1
    assert batch_analyze(batch_id=batch.id) is None


@pytest.mark.skipif(not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"),
                    reason="SQLite only (make test-sqlite): PostgreSQL has row locks, see the previous test")
@pytest.mark.django_db(transaction=True)
def test_on_sqlite_a_second_worker_waits_for_the_first_and_finds_the_batch_done(seeded_transactional_db):  # noqa: F811
    """SQLite has no row locks: every transaction takes the database's write lock when it begins
    (``transaction_mode`` IMMEDIATE, make run's settings), so a second worker waits for the first
    one's commit and then finds the batch analysed: still exactly once."""
    import threading
    import time

    from django.db import connections, transaction

    batch = IngestBatch.objects.create(kind=IngestBatch.Kind.RAW, traces=[raw_trace()], num_traces=1)
    result = {}

    def other_worker():
        try:
            result["outcome"] = batch_analyze(batch_id=batch.id)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other_worker)
    with transaction.atomic():
        first = batch_analyze(batch_id=batch.id)  # "worker 1", its transaction still open
        thread.start()
        time.sleep(0.5)
        assert thread.is_alive()  # waiting for the write lock
    thread.join(10)
    assert not thread.is_alive()
    assert first is not None and first.endpoints_created == 1
    assert result == {"outcome": None}
    assert Endpoint.objects.count() == 1


def test_analysis_of_a_batch_takes_a_bounded_number_of_queries(client, django_capture_on_commit_callbacks,
                                                               django_assert_max_num_queries):
    def batch(n, offset):
        return [raw_trace(path=f"/p{i % 10}/{offset + i}", response_body={"email": f"u{i}@example.com", "n": i},
                          headers={"Authorization": "Bearer abcdefghijklmnop"}, query=[("page", str(i))])
                for i in range(n)]

    for size, offset in ((10, 0), (300, 1000)):
        with django_capture_on_commit_callbacks() as callbacks:
            client.post(V1, batch(size, offset), format="json")
        with django_assert_max_num_queries(40):
            analyze_batch_task(*callbacks[0].args)
    # Each endpoint got 1 + 30 requests; summed per endpoint, as the two batches may be analysed in
    # different UTC minutes (usage is counted per minute).
    per_endpoint = UsageMinute.objects.values("endpoint").annotate(total=Sum("count")).values_list("total", flat=True)
    assert Endpoint.objects.count() == 10 and sorted(per_endpoint) == [31] * 10


def test_the_sweep_re_sends_pending_batches_at_most_once_per_period(monkeypatch):
    from inventory.ingest import accept

    sent, drains = [], []
    monkeypatch.setattr(accept, "batch_enqueue", sent.append)
    monkeypatch.setattr(accept, "drain_send", lambda: drains.append(1))
    old = IngestBatch.objects.create(kind="RAW", traces=[raw_trace()] * 2, num_traces=2,
                                     received_at=timezone.now() - timedelta(minutes=10))
    IngestBatch.objects.create(kind="RAW", traces=[raw_trace()] * 2, num_traces=2)  # fresh: its message is on its way
    IngestBatch.objects.create(kind="RAW", traces=[], num_traces=2, status=IngestBatch.Status.DONE,
                               received_at=timezone.now() - timedelta(minutes=10))
    assert accept.batches_requeue(older_than=timedelta(minutes=2)) == 1
    assert sent == [old.id]
    assert accept.batches_requeue(older_than=timedelta(minutes=2)) == 0  # re-sent a moment ago
    IngestBatch.objects.filter(id=old.id).update(requeued_at=timezone.now() - timedelta(minutes=3))
    assert accept.batches_requeue(older_than=timedelta(minutes=2)) == 1
    assert sent == [old.id, old.id] and drains == []


def test_the_sweep_sends_one_drain_for_every_single_trace_left_pending(monkeypatch):
    from inventory.ingest import accept

    sent, drains = [], []
    monkeypatch.setattr(accept, "batch_enqueue", sent.append)
    monkeypatch.setattr(accept, "drain_send", lambda: drains.append(1))
    for _ in range(5):  # single-trace rows whose drain was lost: no message of their own
        IngestBatch.objects.create(kind="RAW", traces=[raw_trace()], num_traces=1,
                                   received_at=timezone.now() - timedelta(minutes=10))
    assert accept.batches_requeue(older_than=timedelta(minutes=2)) == 5
    assert sent == [] and drains == [1]


def test_a_failing_batch_is_retried_then_marked_failed_not_dropped():
    from inventory.ingest.pipeline import MAX_ATTEMPTS, batch_record_failure

    batch = IngestBatch.objects.create(kind="RAW", traces=[raw_trace()], num_traces=1)
    for attempt in range(1, MAX_ATTEMPTS):
        assert batch_record_failure(batch_id=batch.id, error=RuntimeError("boom")) is False
        batch.refresh_from_db()
        assert (batch.status, batch.attempts) == (IngestBatch.Status.PENDING, attempt)
    assert batch_record_failure(batch_id=batch.id, error=RuntimeError("boom")) is True
    batch.refresh_from_db()
    assert batch.status == IngestBatch.Status.FAILED and batch.error == "RuntimeError"  # never the message


def test_a_failed_batch_records_where_it_failed_but_never_the_quoted_data():
    from inventory.ingest.pipeline import MAX_ATTEMPTS, batch_record_failure

    batch = IngestBatch.objects.create(kind="RAW", traces=[raw_trace()], num_traces=1)
    try:
        int("4242 4242 4242 4242")
    except ValueError as exc:
        for _ in range(MAX_ATTEMPTS):
            batch_record_failure(batch_id=batch.id, error=exc)
    batch.refresh_from_db()
    assert batch.error.startswith("ValueError at test_ingest_storage.py:")
    assert "4242" not in batch.error


def test_a_worker_analyses_pending_batches_together_under_a_backlog(client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        for i in range(3):
            client.post(V1, [raw_trace(path=f"/queue/{i}"), raw_trace(path=f"/queue/{i}")], format="json")
    first, second, third = (c.args[0] for c in callbacks)
    outcome = batch_analyze(batch_id=first)
    assert (outcome.batches, outcome.traces) == (3, 6)
    assert not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()
    assert batch_analyze(batch_id=second) is None and batch_analyze(batch_id=third) is None
    assert UsageMinute.objects.get().count == 6


@pytest.mark.parametrize("limit,expected", [(2, 2), (1000, 3)])
def test_coalescing_stays_under_its_trace_limit(client, django_capture_on_commit_callbacks, settings, limit, expected):
    settings.INGEST_COALESCE_TRACES = limit
    with django_capture_on_commit_callbacks() as callbacks:
        for i in range(3):
            client.post(V1, [raw_trace(path=f"/queue/{i}")], format="json")
    assert batch_analyze(batch_id=callbacks[0].args[0]).batches == expected


def test_each_row_records_its_source_and_the_analysis_counts_per_source(client, api_key):
    """Both accept paths (the single-trace fast path, the DRF batch routes) write the sender on the
    row, the key's name and User-Agent, never the key; a coalesced analysis splits its counts by it."""
    a = "metlo-python-agent/1.0 " + "x" * 300  # cut: the source is at most 200 characters
    assert client.post("/api/v1/log-request/single", raw_trace(), format="json", HTTP_USER_AGENT=a).status_code == 200
    # The second trace is accepted, then skipped by the analysis (a method no endpoint can have).
    assert client.post(V1, [raw_trace(path="/b/2"), raw_trace(path="/b/3", method="BREW")], format="json",
                       HTTP_USER_AGENT="metlo-node-agent/2.0").status_code == 200
    assert client.post("/api/v2/log-request/batch", sample("v2-batch-flask-01.json"), format="json").status_code == 200

    source_a, source_b = f"tests\x1f{a}"[:200], "tests\x1fmetlo-node-agent/2.0"
    assert len(source_a) == 200
    rows = {(kind, n): source for kind, n, source in IngestBatch.objects.values_list("kind", "num_traces", "source")}
    assert rows == {("RAW", 1): source_a, ("RAW", 2): source_b, ("PROCESSED", 2): "tests\x1f(no User-Agent)"}
    assert not any(api_key in source for source in rows.values())

    outcome = batch_analyze(batch_id=IngestBatch.objects.get(kind="RAW", num_traces=1).id)
    # The single row and the batch row (both RAW) were analysed together, each counted for its sender.
    assert outcome.batches == 2
    assert outcome.by_source == {source_a: {"analysed": 1, "skipped": 0}, source_b: {"analysed": 1, "skipped": 1}}
    assert (outcome.analysed, outcome.skipped) == (2, 1)
