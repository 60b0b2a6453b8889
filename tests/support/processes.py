"""Real processes for the tests that need them: Celery workers and beat on the pytest database
(gunicorn: ``tests/support/web.py``), and polling.

Every test that runs a worker or beat goes through :func:`start_worker` or :func:`start_beat`, so
the process sees the same database (pytest-django's ``test_<name>``), the broker the test
chooses, runs in a process group of its own and is always stopped whole.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
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
    """The environment of a child process of the service on the test database and test Redis.

    On the SQLite job (``config.settings.test_sqlite``): ``make run``'s configuration, the local
    settings with no ``REDIS_URL`` (the filesystem broker under ``VAR_DIR``, the folder this process
    publishes to) on the test database's file."""
    if connection.vendor == "sqlite":
        inherited = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        return {
            **inherited,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
            "VAR_DIR": str(settings.VAR_DIR),
            "WEBHOOK_QUEUE": settings.WEBHOOK_QUEUE,
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
            **overrides,
        }
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
class ProcessGroup:
    """One child process group (the parent and its children, in a session of their own) and its log."""

    process: subprocess.Popen
    log_path: str
    done: bool = False

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")

    def tail(self, lines: int = 40) -> str:
        """The end of the log, and whether the process still runs: for failure messages."""
        state = f"exited {self.process.returncode}" if self.process.poll() is not None else "running"
        return "\n".join([f"({state})", *self.log().splitlines()[-lines:]])

    def _signal(self, signum: int) -> None:
        try:
            os.killpg(self.process.pid, signum)
        except ProcessLookupError:  # the whole group has exited already
            pass

    def kill(self) -> None:
        """SIGKILL the whole group: no warm shutdown, no message handed back, no attempt recorded."""
        if not self.done:
            self._signal(signal.SIGKILL)
            self.process.wait()
            self.done = True

    def stop(self) -> None:
        """Warm shutdown (SIGTERM), SIGKILL after 20 s; the log file is removed."""
        if not self.done:
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.process.wait()
            self.done = True
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)


@dataclass
class Worker(ProcessGroup):
    """One ``celery worker`` process group (the parent and its pool children); ``queues`` are
    those given with ``-Q`` (empty: every declared queue)."""

    queues: list[str] = field(default_factory=list)


def spawn(argv: list[str], env: dict[str, str], *, log_prefix: str) -> tuple[subprocess.Popen, str]:
    """Start ``argv`` in the project root, in a session of its own, its output to a new log file;
    return the process and the log's path."""
    log = tempfile.NamedTemporaryFile(prefix=log_prefix, suffix=".log", delete=False)
    log.close()
    with open(log.name, "w") as out:
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    return process, log.name


def wait_started(group: ProcessGroup, ready, *, what: str, interval: float = 0.05) -> None:
    """Wait up to 60 s for ``ready()``. If the process exits first, or is not ready in time (or
    anything else goes wrong), stop the group and raise, with its log."""
    try:
        wait_for(lambda: group.process.poll() is not None or ready(), timeout=60, interval=interval)
    except AssertionError:
        output = group.log()
        group.stop()
        raise AssertionError(f"{what} not ready within 60 s:\n{output}") from None
    except BaseException:
        group.stop()
        raise
    if group.process.poll() is not None:
        output = group.log()
        group.stop()
        raise RuntimeError(f"{what} exited:\n{output}")


def start_worker(*queues: str, pool: str = "prefork", concurrency: int = 1, plain: bool = False,
                 **env: str) -> Worker:
    """Start ``celery -A config worker`` consuming ``queues`` and wait until it is ready.

    ``plain``: exactly ``celery -A config worker``, the README's minimal line (every declared queue,
    Celery's default pool, concurrency and log level, node ``celery@<host>``), ready when that node
    answers a ping on this process's broker; give no ``queues``, ``pool`` or ``concurrency`` then.
    ``env`` overrides the child's environment (e.g. ``REDIS_URL`` of a broker of the test's own).
    """
    if plain:
        if queues:
            raise TypeError("a plain worker consumes every declared queue: give no queues")
        from config.celery import app

        node = f"celery@{socket.gethostname()}"
        process, log_path = spawn([sys.executable, "-m", "celery", "-A", "config", "worker"], process_env(**env),
                                  log_prefix="celery-worker-")
        worker = Worker(process, log_path)
        wait_started(worker, lambda: app.control.ping(destination=[node], timeout=0.5), what="celery worker")
        return worker
    queues = queues or ("celery",)
    process, log_path = spawn(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", pool, "-c", str(concurrency),
         "-Q", ",".join(queues), "-n", f"test-{uuid.uuid4().hex[:8]}@%h", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "-l", "INFO"],
        process_env(**env), log_prefix="celery-worker-",
    )
    worker = Worker(process, log_path, queues=list(queues))
    wait_started(worker, lambda: "ready." in worker.log(), what="celery worker")
    return worker


def start_beat(var_dir: str, **env: str) -> ProcessGroup:
    """Start ``celery -A config beat`` with ``VAR_DIR=var_dir`` (its schedule file goes there, not
    into the project's ``var/``) and wait until it has printed its configuration.
    ``env`` overrides the child's environment further."""
    process, log_path = spawn([sys.executable, "-m", "celery", "-A", "config", "beat"],
                              process_env(VAR_DIR=var_dir, **env), log_prefix="celery-beat-")
    beat = ProcessGroup(process, log_path)
    wait_started(beat, lambda: "Configuration ->" in beat.log(), what="celery beat", interval=0.2)
    return beat
