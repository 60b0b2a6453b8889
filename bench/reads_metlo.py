#!/usr/bin/env python
"""Metlo's read scenarios on Metlo's inventory size: 2,000 endpoints on 20 hosts, 10 clients.

    python bench/reads_metlo.py [--seconds 15] [--clients 10] [--only TEXT] [--small]

The service runs the production way (``bench/service.py``). The inventory is made by real ingestion:
``bench/ingestion.py``'s deterministic traffic (20 hosts x 100 endpoints, numeric ids, bodies with
e-mails, phone and card numbers) posted in batches of 100, two traces per endpoint, then analysed.
Every endpoint then carries cards (HIGH), so ``riskScores=HIGH`` and ``dataClasses=email`` match
(nearly) every row: the filters that match most rows.

Each scenario is one request shape sent by 10 concurrent keep-alive clients for ``--seconds``:
req/s next to Metlo's figure (issue #16, same machine kind, same load client) and the ratio, and
the CPU milliseconds per request of the web process and of PostgreSQL (CPU per request does not
depend on what else runs on a shared machine; req/s does).
"""
from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingestion import ENDPOINTS_PER_HOST, HOSTS, Traffic  # noqa: E402
from bench.reads import run_clients  # noqa: E402
from bench.service import BenchService, CpuMeter, Figures, bench_arguments, percentile  # noqa: E402

# Metlo's req/s at 10 clients on this machine kind (issue #16).
METLO = {
    "GET /endpoints?limit=10": 48,
    "GET /endpoints offset=<random>": 44,
    "GET /endpoints hosts=<one>": 269,
    "GET /endpoints riskScores=HIGH": 291,
    "GET /endpoints riskScores=NONE": 44,
    "GET /endpoints dataClasses=email": 29,
    "GET /endpoints searchQuery=orders": 181,
    "GET /endpoints combined": 380,
    "GET /endpoint/{id}": 232,
    "GET /hosts": 366,
}


def seed(svc: BenchService, *, traces_per_endpoint: int, seed: int) -> int:
    """Post the traffic in batches of 100 and wait until it is analysed; the number of endpoints."""
    traffic = Traffic(seed)
    count = HOSTS * ENDPOINTS_PER_HOST * traces_per_endpoint
    session = svc.session()
    session.headers["Content-Type"] = "application/json"
    for start in range(0, count, 100):
        body = json.dumps(traffic.traces(min(100, count - start), start)).encode()
        while True:
            response = session.post(f"{svc.base_url}/api/v1/log-request/batch", data=body, timeout=60)
            if response.status_code != 503:
                break
            time.sleep(float(response.headers.get("Retry-After", "1")))
        response.raise_for_status()
    # One endpoint (the first host's first shape) gets its full 100 traces: the detail scenario reads it.
    body = json.dumps([traffic.trace(i * HOSTS * ENDPOINTS_PER_HOST) for i in range(100)]).encode()
    session.post(f"{svc.base_url}/api/v1/log-request/batch", data=body, timeout=60).raise_for_status()
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        pending = svc.sql("SELECT count(*) FROM inventory_ingestbatch WHERE status = 'PENDING'")[0][0]
        if not pending:
            break
        time.sleep(0.5)
    return svc.sql("SELECT count(*) FROM inventory_endpoint")[0][0]


def scenarios(svc: BenchService) -> dict[str, tuple]:
    """name -> (path, params or a callable making them per request)."""
    total = svc.sql("SELECT count(*) FROM inventory_endpoint")[0][0]
    host = svc.sql("SELECT name FROM inventory_host ORDER BY name LIMIT 1")[0][0]
    detail = svc.sql("SELECT e.uuid FROM inventory_endpoint e JOIN inventory_apitrace t ON t.endpoint_id = e.uuid "
                     "GROUP BY e.uuid ORDER BY count(*) DESC, e.uuid LIMIT 1")[0][0]
    rng = random.Random(7)
    return {
        "GET /endpoints?limit=10": ("/api/v1/endpoints", {"limit": 10}),
        "GET /endpoints offset=<random>": ("/api/v1/endpoints",
                                           lambda: {"limit": 10, "offset": rng.randrange(max(total - 10, 1))}),
        "GET /endpoints hosts=<one>": ("/api/v1/endpoints", {"limit": 10, "hosts": host}),
        "GET /endpoints riskScores=HIGH": ("/api/v1/endpoints", {"limit": 10, "riskScores": "HIGH"}),
        "GET /endpoints riskScores=NONE": ("/api/v1/endpoints", {"limit": 10, "riskScores": "NONE"}),
        "GET /endpoints dataClasses=email": ("/api/v1/endpoints", {"limit": 10, "dataClasses": "email"}),
        "GET /endpoints searchQuery=orders": ("/api/v1/endpoints", {"limit": 10, "searchQuery": "orders"}),
        "GET /endpoints combined": ("/api/v1/endpoints", {"limit": 10, "hosts": host, "riskScores": "HIGH",
                                                          "dataClasses": "email", "methods": "GET"}),
        "GET /endpoint/{id}": (f"/api/v1/endpoint/{detail}", {}),
        "GET /hosts": ("/api/v1/hosts", {}),
    }


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_reads_metlo")
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=15.0, help="per scenario")
    parser.add_argument("--traces-per-endpoint", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="run only the scenarios whose name contains this text")
    parser.add_argument("--web-workers", type=int, default=1, help="gunicorn processes")
    parser.add_argument("--keep-db", action="store_true", help="keep the database (and reuse it with --reuse-db)")
    parser.add_argument("--reuse-db", action="store_true", help="skip ingestion: reuse a database kept earlier")
    args = parser.parse_args()
    if args.small:
        args.seconds, args.traces_per_endpoint = 0.5, 1

    figures = Figures("reads_metlo", json_path=args.json, small=args.small)
    with BenchService(db=args.db, redis_db=args.redis_db, web_workers=args.web_workers, web_threads=args.web_threads,
                      worker_concurrency=args.worker_concurrency, worker_pool=args.worker_pool,
                      worker_nice=args.worker_nice, fresh=not args.reuse_db) as svc:
        print(f"service: {svc.describe()}", flush=True)
        started = time.perf_counter()
        endpoints = (svc.sql("SELECT count(*) FROM inventory_endpoint")[0][0] if args.reuse_db
                     else seed(svc, traces_per_endpoint=args.traces_per_endpoint, seed=args.seed))
        print(f"ingested: {endpoints} endpoints in {time.perf_counter() - started:.1f} s", flush=True)
        for name, (path, params) in scenarios(svc).items():
            if args.only and args.only not in name:
                continue
            sessions = [svc.session() for _ in range(args.clients)]
            url = svc.base_url + path

            def http(index, state, url=url, params=params, sessions=sessions):
                query = params() if callable(params) else params
                response = sessions[index].get(url, params=query, timeout=60)
                if state is not None and response.status_code != 200:
                    raise RuntimeError(f"{response.status_code} {response.text[:200]}")
                return response

            first = http(0, None)
            matches = first.headers.get("X-Total-Count", "-")
            meter = CpuMeter(svc).start()
            client_cpu = time.process_time()
            latencies, rate = run_clients(args.clients, args.seconds, http, name)
            client_cpu = time.process_time() - client_cpu
            cpu = meter.stop()
            for s in sessions:
                s.close()
            n = max(len(latencies), 1)
            ms = [x * 1000 for x in latencies]
            metlo = METLO[name]
            figures.add(f"{name}: req/s", rate, "req/s", target=f"≥ {2 * metlo} (2× Metlo's {metlo})",
                        ok=rate >= 2 * metlo,
                        note=f"ratio {rate / metlo:.1f}× Metlo; CPU per request web {cpu['web'] / n * 1000:.2f} ms, "
                             f"PostgreSQL {cpu['postgres'] / n * 1000:.2f} ms, load client {client_cpu / n * 1000:.2f} ms; p50 {percentile(ms, 50):.1f} ms "
                             f"p99 {percentile(ms, 99):.1f} ms; {args.clients} clients; matches {matches}; "
                             f"{len(first.content):,} bytes")
        figures.memory(svc, "after reads")
    if not args.keep_db:
        svc.drop_database()


if __name__ == "__main__":
    main()
