"""Start apiscope the production way for benchmarks, and the helpers every ``bench/*.py`` script shares.

The service is what the Procfile runs: gunicorn (one process, threads) and ONE Celery worker
consuming both queues (``celery`` for analysis and test runs, ``webhooks`` for deliveries), on
PostgreSQL and Redis with ``config.settings.production``::

    with BenchService(db="apiscope_bench_x", redis_db=8) as svc:
        svc.base_url, svc.key        # http://127.0.0.1:PORT, a fresh API key
        svc.django_setup()           # this process talks to the service's database too
        svc.rss_mb()                 # {"web": ..., "worker": ...} resident memory incl. children

The database is dropped and re-created (migrated) on entry unless ``fresh=False``; the Redis db
given is flushed (pick one nobody else uses). Processes are stopped on exit, whatever happens.

Every figure a script measures goes through :class:`Figures`: one ``FIGURE`` line per figure on
stdout (name, value, unit, target, load average) and, with ``--json PATH``, a JSON record that
``bench/report.py`` turns into the README table.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379")


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


def load_average() -> str:
    """The 1/5/15-minute load averages and the CPU count, as printed next to every figure."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}/{five:.2f}/{fifteen:.2f} on {os.cpu_count()} CPUs"


def process_tree(pid: int) -> list[int]:
    """A process and all its live descendants."""
    found, pids = [], [pid]
    while pids:
        current = pids.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as fh:
                pids.extend(int(p) for p in fh.read().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process and all its descendants, in KiB.

    RSS counts a page shared by forked processes once per process; PSS divides it among them,
    so the PSS sum is the memory the tree really holds (a prefork pool's children share most
    of the parent's pages).
    """
    each = memory_kb_each(pid)
    return sum(r for r, _ in each), sum(p for _, p in each)


def memory_kb_each(pid: int) -> list[tuple[int, int]]:
    """(RSS, PSS) in KiB of each process of the tree, one by one."""
    return [memory_kb_one(current) for current in process_tree(pid)]


def memory_kb_one(pid: int) -> tuple[int, int]:
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return rss, pss


def proc_cpu_seconds(pid: int, *, children: bool = True) -> float:
    """CPU seconds (user + system) of a process, its reaped children and (``children``) its live descendants."""
    total = 0.0
    pids = [pid]
    tick = os.sysconf("SC_CLK_TCK")
    while pids:
        current = pids.pop()
        try:
            with open(f"/proc/{current}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
            if children:
                with open(f"/proc/{current}/task/{current}/children") as fh:
                    pids.extend(int(p) for p in fh.read().split())
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
    return total


def in_threads(target, count: int) -> tuple[float, float]:
    """Run ``target(index)`` in ``count`` threads and wait for all; (start time, seconds taken)."""
    threads = [threading.Thread(target=target, args=(index,)) for index in range(count)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return started, time.perf_counter() - started


class CpuMeter:
    """CPU seconds used by the service's processes and its PostgreSQL backends between start() and stop().

    Backends come and go, so a thread samples them every 0.2 s and keeps each one's latest reading.
    CPU per unit of work does not depend on what else runs on the machine, unlike wall-clock rates.
    """

    def __init__(self, svc: BenchService):
        self.svc = svc
        self._stop = threading.Event()
        self._backends: dict[int, list[float]] = {}
        self._initial_pids: set[int] = set()
        self._procs: dict[str, float] = {}
        self._thread: threading.Thread | None = None

    def _sample_backends(self) -> None:
        try:
            pids = [r[0] for r in self.svc.sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [self.svc.db])]
        except Exception:  # noqa: BLE001 - sampling is best effort
            return
        for pid in pids:
            seconds = proc_cpu_seconds(pid, children=False)
            first_last = self._backends.setdefault(pid, [seconds, seconds])
            first_last[1] = max(first_last[1], seconds)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self._sample_backends()

    def start(self) -> CpuMeter:
        self._procs = {name: proc_cpu_seconds(p.pid) for name, p in self.svc.procs.items()}
        self._sample_backends()
        self._initial_pids = set(self._backends)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> dict[str, float]:
        """{"web": s, "worker": s, ..., "postgres": s} CPU seconds since start()."""
        self._stop.set()
        if self._thread:
            self._thread.join()
        self._sample_backends()
        used = {name: proc_cpu_seconds(p.pid) - self._procs.get(name, 0.0) for name, p in self.svc.procs.items()}
        # A backend first seen after start() was born during the run: all of its CPU counts.
        used["postgres"] = sum(last - (first if pid in self._initial_pids else 0.0)
                               for pid, (first, last) in self._backends.items())
        return used


def bench_arguments(description: str, *, db: str, redis_db: int = 8) -> argparse.ArgumentParser:
    """The options every script takes: ``--small`` (CI smoke sizes), ``--json``, ``--db``, ``--redis-db``."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="tiny sizes: checks the script works (CI smoke)")
    parser.add_argument("--json", metavar="PATH", help="append the figures as JSON lines to this file")
    parser.add_argument("--db", default=db, help=f"PostgreSQL database (dropped and re-created; default {db})")
    parser.add_argument("--redis-db", type=int, default=redis_db,
                        help=f"Redis db number (flushed!; default {redis_db})")
    parser.add_argument("--web-threads", type=int, default=int(os.environ.get("WEB_THREADS", 8)))
    parser.add_argument("--worker-concurrency", type=int, default=int(os.environ.get("WORKER_CONCURRENCY", 2)))
    parser.add_argument("--worker-nice", type=int, default=int(os.environ.get("WORKER_NICE", 0)),
                        help="run the Celery worker under nice -n N (the web answers first)")
    parser.add_argument("--worker-pool", default=os.environ.get("WORKER_POOL", "prefork"),
                        choices=["prefork", "threads", "solo"])
    return parser


class Figures:
    """Collects and prints the figures of one script run (and writes them as JSON lines on request)."""

    def __init__(self, script: str, *, json_path: str | None = None, small: bool = False):
        self.script, self.json_path, self.small = script, json_path, small
        self.rows: list[dict] = []

    def add(self, name: str, value: float, unit: str, *, target: str = "", ok: bool | None = None,
            note: str = "") -> None:
        """Record one figure; ``target`` is the issue's target in words, ``ok`` whether it is met."""
        row = {"script": self.script, "name": name, "value": round(value, 2), "unit": unit, "target": target,
               "ok": ok, "note": note, "load": load_average(), "small": self.small,
               "at": time.strftime("%Y-%m-%d %H:%M:%S")}
        self.rows.append(row)
        verdict = "" if ok is None else (" MET" if ok else " MISSED")
        target_text = f" (target {target}{verdict})" if target else ""
        note_text = f" [{note}]" if note else ""
        print(f"FIGURE {name}: {value:,.{2 if abs(value) < 10 else 1}f} {unit}{target_text}{note_text}; load {row['load']}", flush=True)
        if self.json_path:
            with open(self.json_path, "a") as fh:
                fh.write(json.dumps(row) + "\n")

    def memory(self, svc: BenchService, label: str) -> None:
        """RSS of the web and worker processes (with their children) after a run, against the targets."""
        memory = svc.memory_mb()
        for name, (rss, pss) in memory.items():
            limit = 150 if name == "web" else 250
            self.add(f"{label}: {name} RSS", rss, "MB", target=f"≤ {limit} MB", ok=rss <= limit,
                     note=f"PSS {pss} MB: shared pages counted once; {len(process_tree(svc.procs[name].pid))} processes")
        # The web target is per process: the gunicorn worker (the master holds ~26 MB of its own).
        # Measured at once and after 2 s idle: the web returns glibc's free pages every second
        # (core/malloc.py), so the first figure may still count the last answers' buffers.
        if "web" in memory:
            for when, pause in (("at once", 0), ("2 s idle", 2)):
                time.sleep(pause)
                rss, pss = max(memory_kb_each(svc.procs["web"].pid))
                self.add(f"{label}: web RSS per process, {when}", rss / 1024, "MB", target="≤ 150 MB",
                         ok=rss / 1024 <= 150, note=f"largest process of the web (its gunicorn worker); "
                                                    f"PSS {pss / 1024:.1f} MB")


class BenchService:
    """gunicorn + one Celery worker (both queues) on a bench database; see the module docstring.

    ``webhook_worker=True`` starts the layout the webhooks work first had instead (a second Celery
    worker only for the ``webhooks`` queue), to compare.
    """

    def __init__(self, *, db: str = "apiscope_bench", redis_db: int = 8, web_workers: int = 1,
                 web_threads: int = 8, worker_concurrency: int = 2, worker_pool: str = "prefork",
                 webhook_worker: bool = False, webhook_worker_concurrency: int = 8,
                 webhook_worker_pool: str = "threads", fresh: bool = True,
                 worker_nice: int = 0, extra_env: dict | None = None):
        self.db = db
        self.redis_url = f"{REDIS}/{redis_db}"
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.web_workers, self.web_threads = web_workers, web_threads
        self.worker_concurrency, self.worker_pool = worker_concurrency, worker_pool
        self.worker_nice = worker_nice
        self.webhook_worker, self.webhook_worker_concurrency = webhook_worker, webhook_worker_concurrency
        self.webhook_worker_pool = webhook_worker_pool
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
            "VAR_DIR": str(ROOT / "var" / f"bench-{db}"),
            **(extra_env or {}),
        }
        self.procs: dict[str, subprocess.Popen] = {}
        self.key = ""
        self.var_dir = Path(self.env["VAR_DIR"])
        self.log_path = self.var_dir / "service.log"
        self._log = None

    def describe(self) -> str:
        nice = f", nice {self.worker_nice}" if self.worker_nice else ""
        worker = f"Celery worker ({self.worker_pool} x{self.worker_concurrency}{nice}, queues celery+webhooks)"
        if self.webhook_worker:
            worker = (f"Celery worker ({self.worker_pool} x{self.worker_concurrency}, queue celery) + webhooks "
                      f"worker ({self.webhook_worker_pool} x{self.webhook_worker_concurrency})")
        return f"gunicorn ({self.web_workers} process x {self.web_threads} threads) + {worker}, PostgreSQL, Redis"

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

    def drop_database(self) -> None:
        """Drop the bench database (scripts call it at the end unless asked to keep it)."""
        import psycopg

        from django.apps import apps

        if apps.ready:
            from django.db import connections

            connections.close_all()
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.db}" WITH (FORCE)')

    def __enter__(self) -> BenchService:
        import redis

        if self.fresh:
            self._reset_database()
        redis.Redis.from_url(self.redis_url).flushdb()
        self.manage("migrate", "--noinput")
        self.key = self.manage("createapikey", "bench").strip().splitlines()[-1]
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def _celery(self, *args: str) -> list[str]:
        nice = ["nice", "-n", str(self.worker_nice)] if self.worker_nice else []
        return [*nice, sys.executable, "-m", "celery", "-q", "-A", "config", "worker", "--loglevel", "WARNING",
                "--without-gossip", "--without-mingle", "--without-heartbeat", *args]

    def _spawn(self, name: str, command: list[str]) -> None:
        self.procs[name] = subprocess.Popen(command, cwd=ROOT, env=self.env, start_new_session=True,
                                            stdout=self._log, stderr=subprocess.STDOUT)

    def start(self) -> None:
        (self.var_dir / "static").mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "w")
        self._spawn("web", [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{self.port}",
             "--workers", str(self.web_workers), "--threads", str(self.web_threads), "--log-level", "warning"])
        queue = self.env.get("WEBHOOK_QUEUE", "webhooks")
        queues = "celery" if self.webhook_worker else f"celery,{queue}"
        self._spawn("worker", self._celery("-Q", queues, "-P", self.worker_pool,
                                           "--concurrency", str(self.worker_concurrency)))
        if self.webhook_worker:
            self._spawn("webhooks", self._celery("-Q", queue, "-n", "webhooks@%h",
                                                 "-P", self.webhook_worker_pool,
                                                 "--concurrency", str(self.webhook_worker_concurrency)))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"the benchmark {name} process exited with {proc.returncode}:\n"
                                       + self.log_tail())
            try:
                if requests.get(f"{self.base_url}/api/v1", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.2)
        raise RuntimeError("the benchmark service did not start within 60 s:\n" + self.log_tail())

    def stop(self) -> None:
        """SIGTERM to each main process (gunicorn and Celery shut down warmly), SIGKILL to the group after 30 s."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # leftovers of the group, if any
            except ProcessLookupError:
                pass
            proc.wait(timeout=5)
        self.procs.clear()
        if self._log:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        """The end of the service processes' log (stderr and stdout of web and worker)."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- helpers -------------------------------------------------------------
    def session(self) -> requests.Session:
        s = requests.Session()
        s.headers["Authorization"] = self.key
        return s

    def django_setup(self) -> None:
        """Configure Django in this process on the service's database (to seed data, read state)."""
        for name in ("DJANGO_SETTINGS_MODULE", "SECRET_KEY", "SECURE_SSL_REDIRECT", "DATABASE_URL", "REDIS_URL",
                     "WEBHOOK_ALLOW_PRIVATE_TARGETS", "LOG_LEVEL", "VAR_DIR"):
            os.environ[name] = self.env[name]
        import django

        django.setup()

    def sql(self, query: str, params=None) -> list[tuple]:
        """Run one statement on the bench database with a fresh connection (outside Django)."""
        import psycopg

        with psycopg.connect(f"{PG}/{self.db}", autocommit=True) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def rss_mb(self) -> dict[str, float]:
        return {name: rss for name, (rss, _) in self.memory_mb().items()}

    def memory_mb(self) -> dict[str, tuple[float, float]]:
        """{"web": (RSS, PSS), "worker": (RSS, PSS)} in MB, each process with its children."""
        return {name: tuple(round(kb / 1024, 1) for kb in memory_kb(proc.pid)) for name, proc in self.procs.items()}
