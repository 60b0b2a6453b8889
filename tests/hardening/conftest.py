"""Real processes for the fault tests: a Redis server of our own (killed and restarted at will),
Celery workers (killed with SIGKILL at will) and an HTTP webhook receiver.

The Redis server listens on ``FAULTS_REDIS_PORT`` (default 6392), never on the suite's shared
Redis: these tests kill it. While a test runs, this process's Celery app publishes to it too.
"""
from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass, field

import pytest
import redis
from django.conf import settings

from tests.support.processes import Worker, start_worker, wait_for
from tests.support.receiver import Answer, Received, Receiver

REDIS_PORT = int(os.environ.get("FAULTS_REDIS_PORT", "6392"))


# --------------------------------------------------------------------------------- Redis

class RedisServer:
    """``redis-server`` without persistence: a kill loses every queued message, like a broker
    restarted from scratch."""

    def __init__(self, port: int):
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        def answers():
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server on port {self.port} exited (port taken?)")
            try:
                return client.ping()
            except redis.ConnectionError:
                return False
        wait_for(answers, timeout=10)

    def kill(self) -> None:
        """SIGKILL: no shutdown, queued and unacknowledged messages are gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


def _app_broker_set(url: str) -> None:
    """Point this process's Celery app (the publisher of ``.delay()``) at another broker."""
    from kombu import pools

    from config.celery import app

    app.conf.broker_url = url
    app._pool = None
    app.amqp._producer_pool = None
    pools.reset()  # close every pooled broker connection; the next publish connects to ``url``


@pytest.fixture
def broker():
    """A Redis server of our own for one test; this process publishes to it meanwhile."""
    server = RedisServer(REDIS_PORT)
    server.start()
    previous = settings.CELERY_BROKER_URL
    _app_broker_set(server.url)
    try:
        yield server
    finally:
        _app_broker_set(previous)
        server.kill()


# --------------------------------------------------------------------------------- workers

@dataclass
class Workers:
    """Starts workers on the test database and the test's own Redis; stops them all at the end."""

    broker: RedisServer
    started: list = field(default_factory=list)

    def start(self, *queues: str, concurrency: int = 2, pool: str = "prefork") -> Worker:
        worker = start_worker(*queues, pool=pool, concurrency=concurrency, REDIS_URL=self.broker.url)
        self.started.append(worker)
        return worker

    def start_webhooks(self, queue: str) -> Worker:
        """The Procfile's ``webhooks`` worker: the threads pool, 8 threads, the webhook queue only."""
        return self.start(queue, pool="threads", concurrency=8)

    def stop_all(self) -> None:
        for worker in self.started:
            worker.stop()

    def tail(self, lines: int = 40) -> str:
        """The end of each worker's log, for failure messages (did one die? why?)."""
        return "\n".join(f"--- worker {n} {w.tail(lines)}" for n, w in enumerate(self.started))


@pytest.fixture
def workers(broker, settings):
    """Factory of real Celery workers; deliveries go to a queue of this test's own."""
    settings.WEBHOOK_QUEUE = f"webhooks-faults-{uuid.uuid4().hex[:8]}"
    pool = Workers(broker)
    try:
        yield pool
    finally:
        pool.stop_all()


# --------------------------------------------------------------------------------- receiver

def _first_attempt_on_flaky_fails(request: Received) -> Answer:
    """200 at once, except on ``/flaky`` where the first attempt of each delivery gets a 503 (so
    it is retried 500 ms later)."""
    first = request.headers.get("X-Delivery-Attempt") == "1"
    return Answer(503 if request.path == "/flaky" and first else 200, body=b"")


@pytest.fixture
def receiver():
    """A webhook receiver on 127.0.0.1 (tests/support/receiver.py) recording every POST."""
    server = Receiver(_first_attempt_on_flaky_fails)
    yield server
    server.close()
