#!/usr/bin/env python
"""Ingestion benchmark: accept latency of the routes and analysis throughput of the pipeline.

    python bench/ingest.py [--traces 10000] [--mode both|service|pipeline]

Deterministic: the traffic is ``inventory.ingest.demo`` with a fixed seed (five
hosts, sixteen endpoints, personal data, tokens, GraphQL, 404s). Runs on its own
PostgreSQL database ``apiscope_ingest_bench`` (dropped and re-created) and Redis
db 1.

service (``bench/service.py``: gunicorn + Celery worker with ``--workers``
processes, production settings): the traces are POSTed over HTTP in batches of
100 to ``/api/v1/log-request/batch`` while the worker is paused (SIGSTOP), which
gives the accept latency per request alone; then the worker resumes and the time
it takes to drain that backlog gives the analysis rate of the real worker; on an
empty inventory and again on the known one.

pipeline (in this process, the stages measured):

1. accept: the traces are POSTed in batches (default 100) to
   ``/api/v1/log-request/batch`` through Django's full stack (middleware, API-key
   authentication, parsing, validation, backlog check, insert) in this process;
   the enqueue is recorded instead of sent (this script is the worker).
   Prints p50/p95/p99/max per request.
2. analyse: the accepted batches are analysed by ``batch_analyze`` -- the code
   the Celery task runs -- first on an empty inventory (cold: endpoints and
   fields get created), then a second run of fresh traffic on the now known
   inventory (warm), each with one process and with ``--workers`` processes
   (as Celery's prefork pool would run them). Prints traces/s for each.

The machine's load average is printed too: other processes skew timings. The CPU
time of each analysis process and of its PostgreSQL backend is measured as well,
which gives a load-independent capacity estimate (traces/s per core).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import time
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


BENCH_DB = "apiscope_ingest_bench"
REDIS_DB = 1


def service_run(traces_count: int, seed: int, workers: int) -> None:
    """Real processes: gunicorn answers, the Celery worker analyses."""
    import psycopg
    import requests

    from bench.service import PG, BenchService, summary_ms

    sys.path.insert(0, str(ROOT))
    setup_pure()
    from inventory.ingest.demo import demo_traces

    with BenchService(db=BENCH_DB, redis_db=REDIS_DB, worker_concurrency=workers) as svc:
        print(f"\n== service: gunicorn (1 process, 8 threads) + Celery worker ({workers} processes)")
        session = svc.session()
        with psycopg.connect(f"{PG}/{BENCH_DB}", autocommit=True) as db:
            # Warm-up (imports, connections, caches of the web and worker processes), not measured.
            for i in range(10):
                session.post(f"{svc.base_url}/api/v1/log-request/batch", timeout=30,
                             data=json.dumps(list(demo_traces(100, seed=seed + 100 + i))),
                             headers={"Content-Type": "application/json"})
            while db.execute("SELECT count(*) FROM inventory_ingestbatch WHERE status <> 'DONE'").fetchone()[0]:
                time.sleep(0.05)
            for label, run_seed in (("first run", seed), ("second run", seed + 1)):
                traces = list(demo_traces(traces_count, seed=run_seed))
                bodies = [json.dumps(traces[i:i + 100]) for i in range(0, len(traces), 100)]
                # 1. accept with the worker paused (SIGSTOP): the route's latency alone, and a backlog.
                os.killpg(svc.procs["worker"].pid, signal.SIGSTOP)
                latencies = []
                started = time.perf_counter()
                for body in bodies:
                    t0 = time.perf_counter()
                    response = session.post(f"{svc.base_url}/api/v1/log-request/batch", data=body,
                                            headers={"Content-Type": "application/json"}, timeout=30)
                    latencies.append(time.perf_counter() - t0)
                    if response.status_code != 200:
                        os.killpg(svc.procs["worker"].pid, signal.SIGCONT)
                        sys.exit(f"accept failed: {response.status_code} {response.text[:300]}")
                posted = time.perf_counter() - started
                print(f"[{label}] accept 100-trace POSTs over HTTP: {summary_ms(latencies)}; "
                      f"{len(traces) / posted:.0f} traces/s accepted")
                # 2. resume the worker: how fast does it drain the backlog?
                started = time.perf_counter()
                os.killpg(svc.procs["worker"].pid, signal.SIGCONT)
                while db.execute("SELECT count(*) FROM inventory_ingestbatch WHERE status <> 'DONE'").fetchone()[0]:
                    time.sleep(0.05)
                    if time.perf_counter() - started > 600:
                        sys.exit("analysis did not finish within 10 minutes")
                elapsed = time.perf_counter() - started
                print(f"[{label}] Celery worker drained {len(traces)} traces in {elapsed:.2f} s: "
                      f"{len(traces) / elapsed:.0f} traces/s analysed; memory {svc.rss_mb()} MB")
        session.close()
        requests.Session().close()


def setup_pure() -> None:
    """Import paths only (no database): the demo generator is plain Python."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")


def bench_database_url() -> str:
    """The pipeline part's database (created if missing), never the one DATABASE_URL names."""
    import psycopg

    from bench.service import PG

    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [BENCH_DB]).fetchone():
            conn.execute(f'CREATE DATABASE "{BENCH_DB}"')
    return f"{PG}/{BENCH_DB}"


def setup_django(database_url: str) -> None:
    import warnings

    warnings.filterwarnings("ignore", message="No directory at")
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DEBUG"] = "false"
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]


def reset_database() -> None:
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE inventory_host, inventory_ingestbatch, detections_alert, core_apikey RESTART IDENTITY CASCADE"
        )


def accept(traces: list, batch_size: int) -> tuple[list[int], list[float]]:
    """POST the traces through the real route; returns (enqueued batch ids, latencies in seconds)."""
    from django.test import Client

    from core.models import ApiKey
    from inventory.ingest import accept as accept_module

    enqueued: list[int] = []
    accept_module.batch_enqueue = enqueued.append  # this process plays the worker
    _, key = ApiKey.issue(name="bench")
    client = Client(HTTP_AUTHORIZATION=key)
    import orjson

    bodies = [orjson.dumps(traces[i:i + batch_size]) for i in range(0, len(traces), batch_size)]
    client.post("/api/v1/log-request/batch", bodies[0][:0] + b"[]", content_type="application/json")  # warm-up
    latencies = []
    for body in bodies:
        started = time.perf_counter()
        response = client.post("/api/v1/log-request/batch", body, content_type="application/json")
        latencies.append(time.perf_counter() - started)
        if response.status_code != 200:
            sys.exit(f"accept failed: {response.status_code} {response.content[:300]!r}")
    return enqueued, latencies


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _analyse_worker(database_url: str, queue, results) -> None:
    setup_django(database_url)
    from django.db import connection

    from inventory.ingest.pipeline import batch_analyze

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    cpu_start, db_start = time.process_time(), _cpu_seconds(backend)
    done, timings = 0, {}
    while True:
        batch_id = queue.get()
        if batch_id is None:
            break
        outcome = batch_analyze(batch_id=batch_id)
        if outcome:
            done += outcome.traces
            for stage, seconds in outcome.timings.items():
                timings[stage] = timings.get(stage, 0.0) + seconds
    timings["_cpu"] = time.process_time() - cpu_start
    timings["_db_cpu"] = _cpu_seconds(backend) - db_start
    results.put((done, timings))


def analyse(database_url: str, batch_ids: list[int], workers: int) -> tuple[int, float, dict]:
    """Analyse the batches with ``workers`` processes; returns (traces analysed, seconds, seconds per stage)."""
    from django.db import connections

    connections.close_all()  # children open their own connections
    ctx = get_context("fork")
    queue, results = ctx.Queue(), ctx.Queue()
    for batch_id in batch_ids:
        queue.put(batch_id)
    for _ in range(workers):
        queue.put(None)
    started = time.perf_counter()
    processes = [ctx.Process(target=_analyse_worker, args=(database_url, queue, results)) for _ in range(workers)]
    for p in processes:
        p.start()
    total, timings = 0, {}
    for _ in processes:
        done, worker_timings = results.get()
        total += done
        for stage, seconds in worker_timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
    elapsed = time.perf_counter() - started
    for p in processes:
        p.join()
    return total, elapsed, timings


def pipeline_run(traces_count: int, seed: int, workers: int, batch: int) -> None:
    database_url = bench_database_url()
    setup_django(database_url)
    reset_database()
    from inventory.ingest.demo import demo_traces
    from inventory.models import ApiTrace, Endpoint

    print(f"\n== pipeline in this process: {traces_count} traces per run, {batch} per request")
    runs = [("cold, 1 process", 1, seed), ("warm, 1 process", 1, seed + 1),
            (f"warm, {workers} processes", workers, seed + 2)]
    for label, run_workers, run_seed in runs:
        traces = list(demo_traces(traces_count, seed=run_seed))
        batch_ids, latencies = accept(traces, batch)
        q = statistics.quantiles(latencies, n=100, method="inclusive")
        print(f"[{label}]")
        print(f"  accept  {len(latencies)} requests of {batch} traces (Django test client): p50 {q[49] * 1000:.1f} ms, "
              f"p95 {q[94] * 1000:.1f} ms, p99 {q[98] * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
        analysed, seconds, timings = analyse(database_url, batch_ids, run_workers)
        cpu, db_cpu = timings.pop("_cpu"), timings.pop("_db_cpu")
        print(f"  analyse {analysed} traces in {seconds:.2f} s: {analysed / seconds:.0f} traces/s")
        per_trace = (cpu + db_cpu) / analysed
        print(f"  cpu     worker {cpu / analysed * 1e6:.0f} us + PostgreSQL backend {db_cpu / analysed * 1e6:.0f} us "
              f"per trace: {1 / per_trace:.0f} traces/s per core of CPU, "
              f"{(os.cpu_count() or 1) / per_trace:.0f} on {os.cpu_count()} cores (load-independent estimate)")
        busy = sum(timings.values()) or 1
        print("  stages  " + ", ".join(f"{stage} {t / busy:.0%}" for stage, t in timings.items()))
    print(f"inventory: {Endpoint.objects.count()} endpoints, {ApiTrace.objects.count()} stored traces")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100, help="traces per POST in the pipeline part (default 100)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                        help="analysis processes (Celery concurrency; default: CPU count)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mode", choices=["both", "service", "pipeline"], default="both")
    args = parser.parse_args()
    print(f"apiscope ingestion benchmark: seed {args.seed}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f} (other processes skew timings)")
    if args.mode in ("both", "service"):
        service_run(args.traces, args.seed, args.workers)
    if args.mode in ("both", "pipeline"):
        pipeline_run(args.traces, args.seed, args.workers, args.batch)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
