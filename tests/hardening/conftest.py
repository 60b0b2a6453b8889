"""Real processes for the fault tests: a Redis server of our own (killed and restarted at will),
Celery workers (killed with SIGKILL at will) and an HTTP webhook receiver.

The Redis server listens on ``FAULTS_REDIS_PORT`` (default 6392), never on the suite's shared
Redis: these tests kill it. While a test runs, this process's Celery app publishes to it too.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
REDIS_PORT = int(os.environ.get("FAULTS_REDIS_PORT", "6392"))


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.05, message=None):
    """Poll until ``predicate()`` is truthy; return its value or fail after ``timeout`` seconds
    (with ``message()`` when given: what is left, read at that moment)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(message() if message else f"condition not met within {timeout} s")
        time.sleep(interval)


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

def _database_url() -> str:
    db = connection.settings_dict
    auth = db.get("USER") or "postgres"
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@dataclass
class Worker:
    """One ``celery worker`` process group (the prefork parent and its children)."""

    process: subprocess.Popen
    log_path: str
    queues: list[str]
    done: bool = False

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the whole group: no warm shutdown, no message handed back, no attempt recorded."""
        if not self.done:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            self.done = True

    def stop(self) -> None:
        if self.done:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.done = True


@dataclass
class Workers:
    """Starts workers on the test database and the test's own Redis; stops them all at the end."""

    broker: RedisServer
    started: list = field(default_factory=list)

    def start(self, *queues: str, concurrency: int = 2) -> Worker:
        log = tempfile.NamedTemporaryFile(prefix="faults-worker-", suffix=".log", delete=False)
        log.close()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": _database_url(),
            "REDIS_URL": self.broker.url,
            "WEBHOOK_QUEUE": settings.WEBHOOK_QUEUE,
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
        }
        with open(log.name, "w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "prefork", "-c", str(concurrency),
                 "-Q", ",".join(queues), "-n", f"faults-{uuid.uuid4().hex[:8]}@%h", "--without-gossip",
                 "--without-mingle", "--without-heartbeat", "-l", "INFO"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        worker = Worker(process, log.name, list(queues))
        self.started.append(worker)
        wait_for(lambda: "ready." in worker.log() or process.poll() is not None, timeout=60)
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited:\n{worker.log()}")
        return worker

    def stop_all(self) -> None:
        for worker in self.started:
            worker.stop()
            os.unlink(worker.log_path)


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

@dataclass
class Received:
    path: str
    headers: dict
    body: bytes

    @property
    def delivery_id(self) -> str:
        return self.headers["X-Delivery-Id"]

    @property
    def attempt(self) -> int:
        return int(self.headers["X-Delivery-Attempt"])

    def json(self):
        return json.loads(self.body)


class Receiver:
    """A webhook receiver on 127.0.0.1 recording every POST. Answers 200 at once, except on ``/flaky``
    where the first attempt of each delivery gets a 503 (so it is retried 500 ms later)."""

    def __init__(self):
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.requests.append(Received(self.path, dict(self.headers.items()), body))
                first = self.headers.get("X-Delivery-Attempt") == "1"
                status = 503 if self.path == "/flaky" and first else 200
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.send_header("Connection", "close")
                    self.end_headers()
                except OSError:
                    pass  # the sender is gone

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def by_delivery(self) -> dict[str, list[Received]]:
        with self.lock:
            grouped: dict[str, list[Received]] = {}
            for request in self.requests:
                grouped.setdefault(request.delivery_id, []).append(request)
            return grouped

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()
