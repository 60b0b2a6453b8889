"""Real processes for the tests that need them: Celery workers on the pytest database, and polling.

Every test that runs a worker goes through :func:`start_worker`, so the worker sees the same
database (pytest-django's ``test_<name>``), the broker the test chooses, and is always stopped.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


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


def test_database_url() -> str:
    """A DATABASE_URL naming the database this test process uses (the pytest test database)."""
    db = connection.settings_dict
    auth = db.get("USER") or "postgres"
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    return f"postgres://{auth}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def process_env(**overrides: str) -> dict[str, str]:
    """The environment of a child process of the service on the test database and test Redis."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": test_database_url(),
        "REDIS_URL": settings.CELERY_BROKER_URL,
        "WEBHOOK_QUEUE": settings.WEBHOOK_QUEUE,
        "WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
        **overrides,
    }


@dataclass
class Worker:
    """One ``celery worker`` process group (the parent and its pool children)."""

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
        """Warm shutdown (SIGTERM), SIGKILL after 20 s; the log file is removed."""
        if not self.done:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.done = True
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)


def start_worker(*queues: str, pool: str = "prefork", concurrency: int = 1, **env: str) -> Worker:
    """Start ``celery -A config worker`` consuming ``queues`` and wait until it is ready.

    ``env`` overrides the child's environment (e.g. ``REDIS_URL`` of a broker of the test's own).
    """
    queues = queues or ("celery",)
    log = tempfile.NamedTemporaryFile(prefix="celery-worker-", suffix=".log", delete=False)
    log.close()
    with open(log.name, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", pool, "-c", str(concurrency),
             "-Q", ",".join(queues), "-n", f"test-{uuid.uuid4().hex[:8]}@%h", "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-l", "INFO"],
            cwd=ROOT, env=process_env(**env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    worker = Worker(process, log.name, list(queues))
    try:
        wait_for(lambda: "ready." in worker.log() or process.poll() is not None, timeout=60)
    except AssertionError:
        worker.stop()
        raise
    if process.poll() is not None:
        output = worker.log()
        worker.stop()
        raise RuntimeError(f"celery worker exited:\n{output}")
    return worker
