#!/usr/bin/env python
"""Metlo's own workload on this machine, side by side with Metlo's figures (issues #16, #25).

    python bench/metlo_workload.py [--web-workers 1] [--seconds 15] [--clients 10] [--small]
                                   [--traffic metlo|history]

The service runs the production way (``bench/service.py``), learned parameterisation on (the
default, ``PATH_LEARNING``). The traffic (``--traffic``):

* ``metlo`` (default): Metlo's own path shape, as its load generator makes it: 20 hosts, each with
  ``/api/{resource}/{id}/{sub}`` for 10 resources x 10 sub-resources (``details``, ``history``,
  ``settings``, ``notes``, ``comments``, ``tags``, ``events``, ``files``, ``messages``, ``shipments``),
  numeric ids, every answer of one shape (an owner with e-mail and phone, a card, items), POST for
  every fourth endpoint with a JSON body: 2,000 distinct endpoints that learning must keep apart.
* ``history``: ``bench/ingestion.py``'s traffic (issue #16's runs: 25 resources x 4 shapes, one
  ``history`` sub-path per resource, answers of a shape per resource).

1. 4,000 single-trace posts (``POST /api/v1/log-request/single``, one trace per request, the way Metlo's
   Python agent sends) by 10 clients, while a poller reads ``GET /api/v1/endpoints?limit=1``: the time
   from the first post until ``X-Total-Count`` shows all 2,000 endpoints (Metlo: 33.1 s), accept
   p50/p99, traces lost (stored traces against accepted posts) and CPU-ms per trace by process; and
   how many endpoints ``GET /endpoints`` lists once every trace is analysed (2,000 expected: a learned
   merge of word sub-resources shows here as fewer).
2. 16,000 traces in batches of 100 by 4 clients (``/log-request/batch``); 3. 5,000 more, all for one host.
4. Each read scenario for ``--seconds`` (15) at ``--clients`` (10): requests/s, p50/p99 and CPU-ms per
   request by process, printed with Metlo's requests/s at 10 clients beside it and the ratio.
"""
from __future__ import annotations

import json
import random
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingestion import ENDPOINTS_PER_HOST, HOSTS, WARM_UP_HOST, Traffic, post_all, warm_up  # noqa: E402
from bench.reads import run_clients  # noqa: E402
from bench.service import BenchService, CpuMeter, Figures, bench_arguments, percentile  # noqa: E402

# Metlo's figures on this machine kind (issue #16's table): seconds, then requests/s at 10 clients.
METLO_SINGLE_POSTS_SECONDS = 33.1
METLO_READS = {
    "GET /endpoints?limit=10": 48,
    "…&offset=<random>": 44,
    "…&hosts=<one>": 269,
    "…&riskScores=HIGH": 291,
    "…&riskScores=NONE": 44,
    "…&dataClasses=email": 29,
    "…&searchQuery=orders": 181,
    "combined filters": 380,
    "GET /endpoint/{id}": 232,
    "GET /hosts": 366,
    "GET /gen-test-endpoints?host=… (100 endpoints)": 112,
}


# Metlo's load generator's path shape (its loadgen_metlo_workload.py): 10 resources x 10 sub-resources.
METLO_RESOURCES = ["users", "orders", "products", "accounts", "invoices", "payments", "customers", "items", "carts",
                   "reviews"]
METLO_SUBRESOURCES = ["details", "history", "settings", "notes", "comments", "tags", "events", "files", "messages",
                      "shipments"]
METLO_CARDS = ["4111 1111 1111 1111", "5555555555554444", "378282246310005", "6011111111111117"]


class MetloTraffic:
    """Raw agent traces with Metlo's path shape: trace ``i`` visits endpoint ``i % 2,000`` (round-robin, so the
    first 2,000 traces name every endpoint once), round ``i // 2,000`` gives the id; one answer shape for all."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.hosts = [f"https://host-{h:02d}.perf.example.com" for h in range(HOSTS)]

    def trace(self, index: int) -> dict:
        endpoint, rnd = index % (HOSTS * ENDPOINTS_PER_HOST), index // (HOSTS * ENDPOINTS_PER_HOST)
        host, k = divmod(endpoint, ENDPOINTS_PER_HOST)
        resource, sub = METLO_RESOURCES[k // 10], METLO_SUBRESOURCES[k % 10]
        method = "POST" if k % 4 == 0 else "GET"
        object_id = 100_000 + rnd * 7_919 + endpoint
        email = f"user{endpoint}.r{rnd}@example.com"
        phone = f"(415) 555-{(endpoint * 7 + rnd) % 10_000:04d}"
        headers = [{"name": "user-agent", "value": "bench/1.0"}, {"name": "accept", "value": "application/json"},
                   {"name": "x-request-id", "value": f"req-{index}"}]
        body = ""
        if method == "POST":
            headers.append({"name": "content-type", "value": "application/json"})
            body = json.dumps({"email": email, "phone": phone, "quantity": index % 5 + 1,
                               "comment": "please deliver after 5pm"})
        answer = {"id": object_id, "owner": {"name": f"User {endpoint}", "email": email, "phone": phone},
                  "payment": {"card": METLO_CARDS[(endpoint + rnd) % len(METLO_CARDS)], "expiry": "12/29"},
                  "status": "ok", "items": [{"sku": f"SKU-{endpoint}-{n}", "price": 9.99 + n} for n in range(3)]}
        return {
            "request": {"url": {"host": self.hosts[host], "path": f"/api/{resource}/{object_id}/{sub}",
                                "parameters": [{"name": "page", "value": str(rnd)}]},
                        "headers": headers, "body": body, "method": method},
            "response": {"status": 200, "headers": [{"name": "content-type", "value": "application/json"}],
                         "body": json.dumps(answer)},
            "meta": {"incoming": True, "source": f"10.0.{host}.{endpoint % 250 + 1}", "sourcePort": "40000",
                     "destination": f"10.1.0.{host + 1}", "destinationPort": "443"},
        }

    def traces(self, count: int, start: int = 0) -> list[dict]:
        return [self.trace(start + i) for i in range(count)]

    def one_host(self, count: int, start: int) -> list[dict]:
        """``count`` traces for the 100 endpoints of the first host, rounds after ``start``'s."""
        first_round = start // (HOSTS * ENDPOINTS_PER_HOST) + 1
        return [self.trace((first_round + k // ENDPOINTS_PER_HOST) * HOSTS * ENDPOINTS_PER_HOST + k % ENDPOINTS_PER_HOST)
                for k in range(count)]


def _bench_traces(svc: BenchService) -> int:
    """Traces stored for the benchmark's hosts (the warm-up's left out)."""
    return svc.sql("SELECT count(*) FROM inventory_apitrace WHERE host <> %s", [WARM_UP_HOST.split("://")[1]])[0][0]


def wait_stored(svc: BenchService, *, before: int, count: int, started: float, timeout: float = 900) -> float:
    """Seconds from ``started`` until ``count`` more traces are stored, or until nothing is pending and no
    trace was stored for 5 s (the rest is lost: the caller counts it)."""
    last, last_change = -1, time.perf_counter()
    while True:
        stored = _bench_traces(svc) - before
        now = time.perf_counter()
        if stored >= count:
            return now - started
        if stored != last:
            last, last_change = stored, now
        pending = svc.sql("SELECT count(*) FROM inventory_ingestbatch WHERE status = 'PENDING'")[0][0]
        if (not pending and now - last_change > 5) or now - started > timeout:
            return last_change - started
        time.sleep(0.05)


def _listed(svc: BenchService) -> int:
    """Endpoints GET /endpoints lists (its X-Total-Count)."""
    with svc.session() as session:
        response = session.get(f"{svc.base_url}/api/v1/endpoints", params={"limit": 1}, timeout=30)
        response.raise_for_status()
        return int(response.headers["X-Total-Count"])


def _cpu_note(cpu: dict[str, float], client: float, count: int, unit: str) -> str:
    parts = {**cpu, "client": client}
    per = {name: seconds / max(count, 1) * 1000 for name, seconds in parts.items()}
    return f"CPU-ms per {unit}: total {sum(per.values()):.2f} (" + ", ".join(f"{k} {v:.2f}" for k, v in per.items()) + ")"


def single_posts(svc: BenchService, figures: Figures, traffic: Traffic, *, count: int, clients: int) -> None:
    """Phase 1: single-trace posts; time until GET /endpoints lists every endpoint they name."""
    bodies = [json.dumps(t).encode() for t in traffic.traces(count)]
    endpoints = min(count, HOSTS * ENDPOINTS_PER_HOST)
    warm_up(svc, svc.web_threads)
    expected = _listed(svc) + endpoints
    traces_before = _bench_traces(svc)
    listed_at: list[float] = []
    posting = threading.Event()
    stop = threading.Event()

    def poll() -> None:  # GET /endpoints as a user would, 10 times a second
        posting.wait()
        with svc.session() as session:
            while not stop.is_set():
                response = session.get(f"{svc.base_url}/api/v1/endpoints", params={"limit": 1}, timeout=30)
                if response.ok and int(response.headers["X-Total-Count"]) >= expected:
                    listed_at.append(time.perf_counter())
                    return
                stop.wait(0.1)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    meter = CpuMeter(svc).start()
    client_cpu = time.process_time()
    posting.set()
    result = post_all(svc, "/api/v1/log-request/single", bodies, clients)
    analysed = wait_stored(svc, before=traces_before, count=count, started=result["started"])
    # Every trace is analysed: the listing follows within seconds (learning runs in the same task, list
    # totals are cached briefly), or never (endpoints merged: the count stays below).
    poller.join(timeout=min(30.0, max(0.0, 900 - (time.perf_counter() - result["started"]))))
    stop.set()
    client_cpu = time.process_time() - client_cpu
    cpu = meter.stop()
    listed = _listed(svc) - (expected - endpoints)
    figures.add(f"{count:,} single posts: endpoints GET /endpoints lists once all are analysed (learning on)",
                listed, "endpoints", target=f"{endpoints:,}", ok=listed == endpoints,
                note="fewer: learned parameterisation merged endpoints that are distinct routes")
    if not listed_at:
        figures.add(f"{count:,} single posts: first post → all {endpoints:,} endpoints listed", float("nan"), "s",
                    target="≤ 11 s (≥ 3× Metlo)", ok=False, note=f"never: {listed:,} listed")
        return
    seconds = listed_at[0] - result["started"]
    lost = count - (_bench_traces(svc) - traces_before)
    ms = [s * 1000 for s in result["latencies"]]
    label = f"{count:,} single posts, {clients} clients"
    figures.add(f"{label}: first post → all {endpoints:,} endpoints listed", seconds, "s",
                target="≤ 11 s (≥ 3× Metlo)", ok=seconds <= 11,
                note=f"Metlo {METLO_SINGLE_POSTS_SECONDS} s; ratio {METLO_SINGLE_POSTS_SECONDS / seconds:.1f}×; "
                     f"every trace analysed after {analysed:.1f} s; {result['retries']} 503 retries")
    figures.add(f"{label}: accept p50", percentile(ms, 50), "ms")
    figures.add(f"{label}: accept p99", percentile(ms, 99), "ms", target="≤ 50 ms", ok=percentile(ms, 99) <= 50)
    figures.add(f"{label}: traces lost", lost, "traces", target="0", ok=lost == 0,
                note=f"{count} accepted, {count - lost} stored")
    per_trace = sum(cpu.values()) + client_cpu
    figures.add(f"{label}: CPU per trace", per_trace / count * 1000, "ms", target="≤ 5 ms",
                ok=per_trace / count * 1000 <= 5, note=_cpu_note(cpu, client_cpu, count, "trace"))


def batch_posts(svc: BenchService, figures: Figures, label: str, traces: list[dict], *, batch: int,
                clients: int) -> None:
    """Phases 2 and 3: batches of ``batch`` traces; accepted and analysed rates, CPU per trace."""
    bodies = [json.dumps(traces[i:i + batch]).encode() for i in range(0, len(traces), batch)]
    before = _bench_traces(svc)
    meter = CpuMeter(svc).start()
    client_cpu = time.process_time()
    result = post_all(svc, "/api/v1/log-request/batch", bodies, clients)
    analysed = wait_stored(svc, before=before, count=len(traces), started=result["started"])
    client_cpu = time.process_time() - client_cpu
    cpu = meter.stop()
    ms = [s * 1000 for s in result["latencies"]]
    count = len(traces)
    figures.add(f"{label}: analysed", count / analysed, "traces/s",
                note=f"all {count:,} analysed {analysed:.1f} s after the first post; accepted "
                     f"{count / result['seconds']:,.0f} traces/s; accept p50 {percentile(ms, 50):.1f} ms, "
                     f"p99 {percentile(ms, 99):.1f} ms per {batch}-trace POST; {result['retries']} 503 retries")
    stored = _bench_traces(svc) - before
    figures.add(f"{label}: traces lost", count - stored, "traces", target="0", ok=stored == count)
    figures.add(f"{label}: CPU per trace", (sum(cpu.values()) + client_cpu) / count * 1000, "ms",
                note=_cpu_note(cpu, client_cpu, count, "trace"))


def one_host_traces(traffic, *, count: int, start: int) -> list[dict]:
    """``count`` traces all for the first host (for ``Traffic``: every ``HOSTS``-th index of its round-robin)."""
    if isinstance(traffic, MetloTraffic):
        return traffic.one_host(count, start)
    first = start + (-start) % HOSTS
    return [traffic.trace(first + k * HOSTS) for k in range(count)]


def read_scenarios(svc: BenchService, hosts: list[str]) -> dict[str, callable]:
    """Each scenario: a function giving (path, query) for one request (random parts drawn per request)."""
    total = svc.sql("SELECT count(*) FROM inventory_endpoint")[0][0]
    ids = [str(r[0]) for r in svc.sql("SELECT uuid FROM inventory_endpoint ORDER BY uuid")]
    rng = random.Random(11)
    one = hosts[3 % len(hosts)]
    endpoints = "/api/v1/endpoints"
    return {
        "GET /endpoints?limit=10": lambda: (endpoints, {"limit": 10}),
        "…&offset=<random>": lambda: (endpoints, {"limit": 10, "offset": rng.randrange(max(total - 10, 1))}),
        "…&hosts=<one>": lambda: (endpoints, {"limit": 10, "hosts": one}),
        "…&riskScores=HIGH": lambda: (endpoints, {"limit": 10, "riskScores": "HIGH"}),
        "…&riskScores=NONE": lambda: (endpoints, {"limit": 10, "riskScores": "NONE"}),
        "…&dataClasses=email": lambda: (endpoints, {"limit": 10, "dataClasses": "email"}),
        "…&searchQuery=orders": lambda: (endpoints, {"limit": 10, "searchQuery": "orders"}),
        "combined filters": lambda: (endpoints, {"limit": 10, "hosts": one, "riskScores": ["HIGH", "MEDIUM"],
                                                 "dataClasses": "email", "methods": ["GET", "POST"],
                                                 "searchQuery": "orders"}),
        "GET /endpoint/{id}": lambda: (f"/api/v1/endpoint/{rng.choice(ids)}", {}),
        "GET /hosts": lambda: ("/api/v1/hosts", {}),
        "GET /gen-test-endpoints?host=… (100 endpoints)": lambda: ("/api/v1/gen-test-endpoints", {"host": one}),
    }


def reads(svc: BenchService, figures: Figures, traffic, *, clients: int, seconds: float, only: str | None) -> None:
    """Each read scenario at ``clients`` clients for ``seconds``, against Metlo's requests/s."""
    hosts = [t.split("://")[1] for t in traffic.hosts]
    for name, request in read_scenarios(svc, hosts).items():
        if only and only not in name:
            continue
        sessions = [svc.session() for _ in range(clients)]
        sizes: list[int] = []

        def work(index, state, request=request, sessions=sessions, sizes=sizes):
            path, params = request()
            response = sessions[index].get(svc.base_url + path, params=params, timeout=60)
            if response.status_code != 200:
                raise RuntimeError(f"{response.status_code} {response.text[:200]}")
            if state is None:  # the warm-up request of this client (not timed)
                sizes.append(len(response.content))
            return True

        work(0, None)  # the scenario's first request (gen-test-endpoints: the one that generates) is not timed
        meter = CpuMeter(svc).start()
        client_cpu = time.process_time()
        latencies, rate = run_clients(clients, seconds, work, name)
        client_cpu = time.process_time() - client_cpu
        cpu = meter.stop()
        for s in sessions:
            s.close()
        metlo = METLO_READS[name]
        ms = [x * 1000 for x in latencies]
        figures.add(f"{name}", rate, "req/s", target=f"≥ 2× Metlo ({2 * metlo} req/s)", ok=rate >= 2 * metlo,
                    note=f"Metlo {metlo} req/s; ratio {rate / metlo:.1f}×; p50 {percentile(ms, 50):.1f} ms, "
                         f"p99 {percentile(ms, 99):.1f} ms; answer {max(sizes or [0]) / 1000:,.1f} KB; "
                         + _cpu_note(cpu, client_cpu, len(latencies), "request"))


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_metlo", redis_db=2)
    parser.add_argument("--web-workers", type=int, default=1, help="gunicorn processes (the issue allows 1 or 2)")
    parser.add_argument("--single-traces", type=int, default=4_000)
    parser.add_argument("--single-clients", type=int, default=10)
    parser.add_argument("--batch-traces", type=int, default=16_000)
    parser.add_argument("--batch-clients", type=int, default=4)
    parser.add_argument("--one-host-traces", type=int, default=5_000)
    parser.add_argument("--clients", type=int, default=10, help="read clients")
    parser.add_argument("--seconds", type=float, default=15.0, help="per read scenario")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--only", help="run only the read scenarios whose name contains this text")
    parser.add_argument("--keep-db", action="store_true", help="keep the database afterwards (to inspect it)")
    parser.add_argument("--traffic", choices=["metlo", "history"], default="metlo",
                        help="Metlo's path shape (10 word sub-resources per resource), or issue #16's traffic")
    args = parser.parse_args()
    if args.small:
        args.single_traces, args.batch_traces, args.one_host_traces, args.seconds = 400, 400, 200, 0.5

    figures = Figures("metlo_workload", json_path=args.json, small=args.small)
    traffic = MetloTraffic(args.seed) if args.traffic == "metlo" else Traffic(args.seed)
    with BenchService(db=args.db, redis_db=args.redis_db, web_workers=args.web_workers,
                      web_threads=args.web_threads, worker_concurrency=args.worker_concurrency,
                      worker_pool=args.worker_pool, worker_nice=args.worker_nice) as svc:
        layout = "one gunicorn process" if args.web_workers == 1 else f"{args.web_workers} gunicorn processes"
        print(f"service: {svc.describe()}; web layout: {layout}", flush=True)
        print(f"traffic: {args.traffic}; learned parameterisation on (PATH_LEARNING default)", flush=True)
        print(f"workload: {HOSTS} hosts x {ENDPOINTS_PER_HOST} endpoints; {args.single_traces:,} single posts by "
              f"{args.single_clients} clients; {args.batch_traces:,} traces in batches of 100 by "
              f"{args.batch_clients} clients; {args.one_host_traces:,} more for one host; reads {args.seconds:g} s "
              f"per scenario at {args.clients} clients", flush=True)
        single_posts(svc, figures, traffic, count=args.single_traces, clients=args.single_clients)
        if args.batch_traces:
            batch_posts(svc, figures, f"{args.batch_traces:,} traces in batches of 100, {args.batch_clients} clients",
                        traffic.traces(args.batch_traces, args.single_traces), batch=100, clients=args.batch_clients)
        if args.one_host_traces:
            batch_posts(svc, figures, f"{args.one_host_traces:,} more traces for one host",
                        one_host_traces(traffic, count=args.one_host_traces, start=args.single_traces + args.batch_traces),
                        batch=100, clients=args.batch_clients)
        figures.memory(svc, "after ingestion")
        reads(svc, figures, traffic, clients=args.clients, seconds=args.seconds, only=args.only)
        figures.memory(svc, "after reads")
    if not args.keep_db:
        svc.drop_database()


if __name__ == "__main__":
    main()
