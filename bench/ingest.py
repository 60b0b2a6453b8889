#!/usr/bin/env python
"""Ingestion benchmark: accept latency of the route and analysis throughput of the pipeline.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/apiscope python bench/ingest.py [--traces 10000]

Runs on its own database, ``<DATABASE_URL's name>_bench`` (created if missing,
migrated, emptied), never on the one named. Deterministic: the traffic is
``inventory.ingest.demo`` with a fixed seed (five hosts, sixteen endpoints,
personal data, tokens, GraphQL, 404s).

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

The machine's load average is printed too: other processes skew timings.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from multiprocessing import get_context
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def bench_database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    parts = urlsplit(url)
    if not parts.scheme.startswith("postgres"):
        sys.exit("DATABASE_URL must be a postgres:// URL (the benchmark measures the PostgreSQL pipeline).")
    name = parts.path.lstrip("/") or "apiscope"
    bench_name = name if name.endswith("_bench") else f"{name}_bench"
    import psycopg

    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [bench_name]).fetchone():
            conn.execute(f'CREATE DATABASE "{bench_name}"')
    return urlunsplit(parts._replace(path=f"/{bench_name}"))


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


def _analyse_worker(database_url: str, queue, results) -> None:
    setup_django(database_url)
    from inventory.ingest.pipeline import batch_analyze

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=100, help="traces per POST (default 100)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                        help="analysis processes for the parallel runs (default: CPU count)")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    database_url = bench_database_url()
    setup_django(database_url)
    reset_database()
    from inventory.ingest.demo import demo_traces
    from inventory.models import ApiTrace, Endpoint

    print(f"apiscope ingestion benchmark: {args.traces} traces, {args.batch} per request, seed {args.seed}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")

    runs = [("cold, 1 process", 1, args.seed), ("warm, 1 process", 1, args.seed + 1),
            (f"warm, {args.workers} processes", args.workers, args.seed + 2)]
    for label, workers, seed in runs:
        traces = list(demo_traces(args.traces, seed=seed))
        batch_ids, latencies = accept(traces, args.batch)
        q = statistics.quantiles(latencies, n=100, method="inclusive")
        print(f"\n[{label}]")
        print(f"  accept  {len(latencies)} requests of {args.batch} traces: p50 {q[49] * 1000:.1f} ms, "
              f"p95 {q[94] * 1000:.1f} ms, p99 {q[98] * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms "
              f"({len(traces) / sum(latencies):.0f} traces/s accepted)")
        analysed, seconds, timings = analyse(database_url, batch_ids, workers)
        print(f"  analyse {analysed} traces in {seconds:.2f} s: {analysed / seconds:.0f} traces/s")
        busy = sum(timings.values())
        print("  stages  " + ", ".join(f"{stage} {t / busy:.0%}" for stage, t in timings.items()))
    print(f"\ninventory: {Endpoint.objects.count()} endpoints, {ApiTrace.objects.count()} stored traces; "
          f"load average now {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
