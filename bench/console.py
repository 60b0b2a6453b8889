#!/usr/bin/env python
"""The console on the 100,000-endpoint dataset: server time of the dashboard and of an endpoint page.

    python bench/console.py [--endpoints 100000] [--requests 20] [--small] [--reuse-db --keep-db]

The dataset is ``bench/reads.py``'s bulk load (its ``seed``: 500 hosts, 100,000 endpoints, 1,000,000
data fields, alerts and traces on 200 endpoints). Each page is requested in this process through
Django's test client as a logged-in superuser (the whole request: middleware, admin, queries,
templates), so the figure is the server's time without the network. "cold" is a request whose
dashboard aggregates are recomputed (nothing kept), "warm" the steady state (``console.dashboard``
keeps them while the inventory is unchanged, or for 10 s when computing them was slow). Wall time and this process's CPU time are printed: on a shared
machine the CPU time is the steadier figure.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.reads import DETAIL_ENDPOINTS, seed  # noqa: E402
from bench.service import BenchService, Figures, bench_arguments, percentile  # noqa: E402

TARGET_MS = 200


def timed(client, url: str, count: int, before=None) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``count`` GETs of ``url`` (``before()`` runs untimed before each)."""
    walls, cpus = [], []
    for _ in range(count):
        if before is not None:
            before()
        wall, cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"{url}: {response.status_code}")
    return walls, cpus


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_console", redis_db=15)
    parser.add_argument("--endpoints", type=int, default=100_000)
    parser.add_argument("--fields-per-endpoint", type=int, default=10)
    parser.add_argument("--hosts", type=int, default=500)
    parser.add_argument("--requests", type=int, default=20, help="warm requests per page")
    parser.add_argument("--keep-db", action="store_true", help="keep the database (reuse it with --reuse-db)")
    parser.add_argument("--reuse-db", action="store_true", help="skip seeding: reuse a database kept earlier")
    args = parser.parse_args()
    if args.small:
        args.endpoints, args.hosts, args.requests = 2000, 20, 3

    figures = Figures("console", json_path=args.json, small=args.small)
    with BenchService(db=args.db, redis_db=args.redis_db, web_threads=1, worker_concurrency=1,
                      fresh=not args.reuse_db) as svc:
        started = time.perf_counter()
        if not args.reuse_db:
            seed(svc, endpoints=args.endpoints, fields_per_endpoint=args.fields_per_endpoint, hosts=args.hosts)
        print(f"seeded in {time.perf_counter() - started:.1f} s", flush=True)
        svc.stop()  # only the database is needed: the pages are requested in this process
        svc.django_setup()
        from django.conf import settings
        from django.contrib.auth.models import User
        from django.test import Client

        from console import dashboard
        from inventory.models import Endpoint

        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        user = User.objects.filter(username="bench").first() or User.objects.create_superuser("bench", "", "bench")
        client = Client()
        client.force_login(user)
        endpoint = Endpoint.objects.order_by("uuid").values_list("uuid", flat=True)[: DETAIL_ENDPOINTS][0]
        print(f"{Endpoint.objects.count():,} endpoints", flush=True)
        pages = {"dashboard": "/admin/", "endpoint page": f"/admin/inventory/endpoint/{endpoint}/change/"}
        for name, url in pages.items():
            timed(client, url, 1)  # imports, templates, connections
            cold_wall, cold_cpu = timed(client, url, 3, before=dashboard._cache.clear)
            walls, cpus = timed(client, url, args.requests)
            figures.add(f"{name} server time (warm) p50", percentile(walls, 50), "ms", target=f"≤ {TARGET_MS} ms",
                        ok=percentile(walls, 50) <= TARGET_MS,
                        note=f"CPU p50 {percentile(cpus, 50):.1f} ms; wall min {min(walls):.1f}, p90 {percentile(walls, 90):.1f} ms")
            figures.add(f"{name} server time (cold: figures recomputed) max", max(cold_wall), "ms",
                        note=f"CPU max {max(cold_cpu):.1f} ms")
    if not args.keep_db:
        svc.drop_database()


if __name__ == "__main__":
    main()
