"""End to end with a real Celery worker process on Redis: an accepted batch gets analysed."""
import time

import pytest

from classification.models import DataField
from detections.models import Alert
from inventory.ingest.accept import batches_requeue
from inventory.models import Endpoint, IngestBatch

from tests.support.processes import start_worker, wait_for

from .ingest_support import raw_trace, sample, seeded_transactional_db  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]



@pytest.fixture
def worker(seeded_transactional_db):
    """``celery -A config worker`` on the test database and the test Redis; stopped after the test."""
    process = start_worker("celery")
    yield process
    process.stop()


def test_a_real_worker_analyses_accepted_batches(client, worker):
    response = client.post("/api/v1/log-request/single", sample("v1-single-django-02.json"), format="json")
    assert response.status_code == 200
    response = client.post("/api/v2/log-request/batch", sample("v2-batch-flask-01.json"), format="json")
    assert response.status_code == 200
    assert wait_for(lambda: not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()), (
        worker.process.poll(), IngestBatch.objects.values_list("status", "error"))
    assert IngestBatch.objects.filter(status=IngestBatch.Status.DONE).count() == 2
    assert set(Endpoint.objects.values_list("path", flat=True)) == {"/login", "/users/{param1}"}
    assert DataField.objects.get(endpoint__path="/users/{param1}", data_path="user.email").data_classes == ["email"]
    assert Alert.objects.filter(type="New Endpoint Detected").count() == 2


def test_a_batch_whose_message_was_lost_is_re_sent_and_analysed(worker):
    batch = IngestBatch.objects.create(kind=IngestBatch.Kind.RAW, traces=[raw_trace(path="/lost/1")], num_traces=1)
    time.sleep(1.0)
    assert IngestBatch.objects.get(id=batch.id).status == IngestBatch.Status.PENDING  # no message: nothing happens
    from datetime import timedelta

    assert batches_requeue(older_than=timedelta(seconds=0)) == 1
    assert wait_for(lambda: IngestBatch.objects.get(id=batch.id).status == IngestBatch.Status.DONE)
    assert Endpoint.objects.get().path == "/lost/{param1}"


def test_two_worker_processes_learn_a_username_family_posted_one_trace_at_a_time(client, seeded_transactional_db):
    """Learned parameterisation in the real worker (two processes analysing concurrently): 20 VAmPI-style
    usernames posted as 20 requests end as one parameterised endpoint holding all 20 traces."""
    from detections.models import Alert
    from inventory.models import ApiTrace

    # Usernames that are not dictionary words (bob, carol, frank… are words: they stay literal endpoints).
    names = ["alice", "dmitri", "oscar", "dave", "erin", "quentin", "ursula", "heidi", "ivan", "judy", "mallory",
             "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "xavier", "walter", "yolanda"]
    process = start_worker("celery", concurrency=2)
    try:
        for name in names:
            trace = raw_trace(host="vampi.example.com", path=f"/users/v1/{name}",
                              response_body={"username": name, "email": f"{name}@example.com"})
            assert client.post("/api/v1/log-request/single", trace, format="json").status_code == 200

        def settled():
            done = not IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists()
            return done and list(Endpoint.objects.values_list("path", flat=True)) == ["/users/v1/{param1}"]

        assert wait_for(settled, timeout=60, message=lambda: list(Endpoint.objects.values_list("path", flat=True)))
        endpoint = Endpoint.objects.get()
        assert ApiTrace.objects.filter(endpoint=endpoint).count() == 20
        assert Alert.objects.filter(type="New Endpoint Detected", status="Open").count() == 1
        assert Alert.objects.exclude(endpoint=endpoint).count() == 0
    finally:
        process.stop()
