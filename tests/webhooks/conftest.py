"""A real HTTP receiver on 127.0.0.1 and a real Celery worker on Redis for the delivery tests."""
from __future__ import annotations

import uuid

import pytest
import redis
from django.conf import settings

from tests.support.processes import start_worker
from tests.support.receiver import Answer, Receiver


@pytest.fixture(scope="session")
def receiver():
    """The suite's receiver (tests/support/receiver.py): each test takes routes of its own with
    ``receiver.route(...)``; any other path is answered 404."""
    server = Receiver(Answer(404, body=b'{"answer": 404}'))
    yield server
    server.close()


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """``celery -A config worker`` as the Procfile's ``webhooks`` worker runs it (threads pool) on the
    pytest database and Redis, consuming a queue of its own, so stray messages of other runs never
    reach it. Tests using it need ``transactional_db``: the worker only sees committed rows."""
    queue = f"webhooks-test-{uuid.uuid4().hex[:10]}"
    worker = start_worker(queue, pool="threads", concurrency=8, WEBHOOK_QUEUE=queue)
    try:
        previous = settings.WEBHOOK_QUEUE
        settings.WEBHOOK_QUEUE = queue
        yield worker
        settings.WEBHOOK_QUEUE = previous
    finally:
        worker.stop()
        redis.Redis.from_url(settings.REDIS_URL).delete(queue)
