#!/usr/bin/env python
"""Profile the analysis of ``bench/ingestion.py``'s traffic in this process (pyinstrument).

    python bench/profile_ingest.py [--traces 20000] [--coalesce 1000] [--html out.html] [--small] [--spec]

Stores the traffic as PENDING ``IngestBatch`` rows of 100 traces (what the route does), then
runs ``batch_analyze`` (what the Celery task runs) until none is left, with coalescing as in
production, under pyinstrument. Prints the per-stage wall time the pipeline records, traces/s
of one process, and the profile (text; HTML with ``--html``). pyinstrument is a dev tool:
``pip install pyinstrument``; without it only the stage timings are printed. ``--spec`` first
uploads one OpenAPI spec documenting every host and endpoint of the traffic (its response bodies
match), so every trace also goes through the "Open API Spec Diff" rule's schema validation.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingestion import Traffic, endpoint_shapes  # noqa: E402
from bench.service import BenchService, Figures, bench_arguments, memory_kb  # noqa: E402


def backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a local PostgreSQL backend process; -1e9 when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return -1e9


def bench_spec(hosts: list[str]) -> dict:
    """An OpenAPI document for every host and endpoint shape of the traffic; its bodies validate."""
    person = {"type": "object", "properties": {
        "id": {"type": "integer"}, "name": {"type": "string"}, "email": {"type": "string", "format": "email"},
        "active": {"type": "boolean"}, "items": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "integer"}, "qty": {"type": "integer"}, "price": {"type": "number"}}}},
        "events": {"type": "array", "items": {"type": "object", "properties": {
            "at": {"type": "string", "format": "date-time"}, "by": {"type": "string"}}}}}}
    paths: dict = {}
    for method, template in endpoint_shapes():
        operation = {"responses": {"2XX": {"description": "ok", "content": {"application/json": {"schema": person}}}}}
        item = paths.setdefault(template, {})
        if "{id}" in template:
            item["parameters"] = [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}]
        item[method.lower()] = operation
    return {"openapi": "3.0.3", "info": {"title": "bench", "version": "1"},
            "servers": [{"url": host} for host in hosts], "paths": paths}


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_profile")
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=0,
                        help="analyse this many traces first, unprofiled (e.g. 2000: every endpoint known)")
    parser.add_argument("--html", help="write pyinstrument's HTML report here")
    parser.add_argument("--keep-db", action="store_true", help="leave the database for inspection")
    parser.add_argument("--no-profile", action="store_true", help="stage timings only (no profiler overhead)")
    parser.add_argument("--spec", action="store_true", help="upload a spec documenting the traffic first")
    args = parser.parse_args()
    if args.small:
        args.traces = 1000

    svc = BenchService(db=args.db, redis_db=args.redis_db)
    svc._reset_database()
    svc.manage("migrate", "--noinput")
    svc.django_setup()
    from django.db import connection

    from inventory.ingest.pipeline import batch_analyze
    from inventory.models import IngestBatch

    rss_before = memory_kb(os.getpid())[0]
    traffic = Traffic(args.seed)
    if args.spec:
        from detections.specs import spec_create

        spec_create(name="bench", raw=json.dumps(bench_spec(traffic.hosts)).encode())
    if args.warmup:
        warm = [IngestBatch.objects.create(kind=IngestBatch.Kind.RAW, traces=traffic.traces(args.batch, start),
                                           num_traces=args.batch).id
                for start in range(0, args.warmup, args.batch)]
        for batch_id in warm:
            batch_analyze(batch_id=batch_id)
    ids = [IngestBatch.objects.create(kind=IngestBatch.Kind.RAW, traces=traffic.traces(args.batch, start),
                                      num_traces=args.batch).id
           for start in range(args.warmup, args.warmup + args.traces, args.batch)]
    profiler = None
    if not args.no_profile:
        try:
            from pyinstrument import Profiler
            profiler = Profiler(interval=0.001)
        except ImportError:
            print("pyinstrument is not installed: stage timings only")
    timings: dict[str, float] = {}
    analysed = 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    pg_cpu_before, cpu_before = backend_cpu(backend), time.process_time()
    started = time.perf_counter()
    if profiler:
        profiler.start()
    for batch_id in ids:
        outcome = batch_analyze(batch_id=batch_id)
        if outcome:
            analysed += outcome.traces
            for stage, seconds in outcome.timings.items():
                timings[stage] = timings.get(stage, 0.0) + seconds
    if profiler:
        profiler.stop()
    elapsed = time.perf_counter() - started
    cpu, pg_cpu = time.process_time() - cpu_before, backend_cpu(backend) - pg_cpu_before
    figures = Figures("profile_ingest", json_path=args.json, small=args.small)
    figures.add("analysis in one process" + (" (profiled)" if profiler else ""), analysed / elapsed, "traces/s",
                note=f"{analysed} traces in {elapsed:.1f} s")
    # CPU per trace does not depend on what else runs on the machine: the better guide under load.
    figures.add("analysis CPU per trace: Python", cpu / analysed * 1000, "ms")
    figures.add("analysis CPU per trace: PostgreSQL backend", pg_cpu / analysed * 1000, "ms",
                note="-1 when /proc of the server is not readable" if pg_cpu < 0 else "")
    figures.add("analysis process RSS afterwards", memory_kb(os.getpid())[0] / 1024, "MB",
                note=f"{rss_before / 1024:.0f} MB before the traffic was stored and analysed")
    total = sum(timings.values()) or 1
    print("stages: " + ", ".join(f"{k} {v:.2f}s ({v / total:.0%})" for k, v in timings.items()))
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM inventory_endpoint")
        print(f"endpoints: {cursor.fetchone()[0]}")
    if profiler:
        print(profiler.output_text(unicode=True, color=False, show_all=False))
        if args.html:
            Path(args.html).write_text(profiler.output_html())
    if not args.keep_db:
        svc.drop_database()


if __name__ == "__main__":
    main()
