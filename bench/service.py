"""Start apiscope the production way for benchmarks: gunicorn + one Celery worker on PostgreSQL and Redis.

Used by every ``bench/*.py`` script::

    with BenchService(db="apiscope_bench") as svc:
        svc.base_url, svc.key        # http://127.0.0.1:PORT, a fresh API key
        svc.rss_mb()                 # {"web": ..., "worker": ...} resident memory incl. children

The database is dropped and re-created (migrated) on entry unless ``fresh=False``;
the Redis db given is flushed. Processes are stopped on exit.
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PG = "postgres://postgres@127.0.0.1:5432"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(samples: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; 0.0 for no samples."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    index = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def summary_ms(samples_s: list[float]) -> str:
    ms = [s * 1000 for s in samples_s]
    return (f"n={len(ms)} p50={percentile(ms, 50):.1f}ms p99={percentile(ms, 99):.1f}ms "
            f"mean={statistics.fmean(ms) if ms else 0:.1f}ms")


def rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants, in KiB."""
    total = 0
    pids = [pid]
    while pids:
        current = pids.pop()
        try:
            with open(f"/proc/{current}/status") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
            with open(f"/proc/{current}/task/{current}/children") as fh:
                pids.extend(int(p) for p in fh.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


class BenchService:
    def __init__(self, *, db: str = "apiscope_bench", redis_db: int = 5, web_workers: int = 1,
                 web_threads: int = 8, worker_concurrency: int = 1, fresh: bool = True,
                 extra_env: dict | None = None, webhook_worker_concurrency: int = 4):
        self.db = db
        self.redis_url = f"redis://127.0.0.1:6379/{redis_db}"
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.web_workers, self.web_threads = web_workers, web_threads
        self.worker_concurrency = worker_concurrency
        self.webhook_worker_concurrency = webhook_worker_concurrency
        self.fresh = fresh
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "SECRET_KEY": secrets.token_urlsafe(60),
            "SECURE_SSL_REDIRECT": "false",
            "DATABASE_URL": f"{PG}/{db}",
            "REDIS_URL": self.redis_url,
            "LOG_LEVEL": "WARNING",
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
            **(extra_env or {}),
        }
        self.procs: dict[str, subprocess.Popen] = {}
        self.key = ""

    # -- lifecycle ---------------------------------------------------------
    def manage(self, *args: str, capture: bool = True) -> str:
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env,
                                capture_output=capture, text=True, check=True)
        return result.stdout if capture else ""

    def _reset_database(self) -> None:
        import psycopg

        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.db}"')

    def __enter__(self) -> BenchService:
        import redis

        if self.fresh:
            self._reset_database()
        redis.Redis.from_url(self.redis_url).flushdb()
        self.manage("migrate", "--noinput")
        self.key = self.manage("createapikey", "bench").strip().splitlines()[-1]
        self.start()
        return self

    def start(self) -> None:
        self.procs["web"] = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(self.web_workers), "--threads", str(self.web_threads), "--log-level", "warning"],
            cwd=ROOT, env=self.env, start_new_session=True,
        )
        self.procs["worker"] = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel", "WARNING",
             "--concurrency", str(self.worker_concurrency), "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=self.env, start_new_session=True,
        )
        # As in the Procfile: webhook deliveries have a worker of their own on the webhooks queue.
        self.procs["webhooks"] = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.env.get("WEBHOOK_QUEUE", "webhooks"), "-n", "webhooks@%h",
             "--loglevel", "WARNING", "--concurrency", str(self.webhook_worker_concurrency),
             "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=self.env, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.base_url}/api/v1", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.2)
        raise RuntimeError("the benchmark service did not start within 60 s")

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.procs.clear()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- helpers -------------------------------------------------------------
    def session(self) -> requests.Session:
        s = requests.Session()
        s.headers["Authorization"] = self.key
        return s

    def rss_mb(self) -> dict[str, float]:
        return {name: round(rss_kb(proc.pid) / 1024, 1) for name, proc in self.procs.items()}
