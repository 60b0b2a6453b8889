#!/usr/bin/env python
"""Ingestion at scale over HTTP: accepted and analysed traces/s, batches and single posts.

    python bench/ingestion.py [--traces 20000] [--single-traces 5000] [--clients 4] [--small]
    python bench/ingestion.py --metlo-singles [--single-traces 4000] [--single-clients 10]

The service runs the production way (``bench/service.py``). The traffic is deterministic
(``--seed``): 20 hosts with 100 endpoints each (2,000 distinct endpoints), numeric ids in the
paths, JSON request and response bodies carrying e-mail addresses, phone numbers and card
numbers, some authenticated, some not.

1. batches: the traces are POSTed to ``/api/v1/log-request/batch`` in batches of 100 by 4
   concurrent clients (threads with keep-alive sessions). Figures: the accept latency per
   100-trace batch (p50/p99), accepted traces/s (first POST to last answer), analysed traces/s
   (first POST until every batch is analysed and the inventory holds all 2,000 endpoints).
2. single posts: fresh traffic over the same endpoints, one trace per POST to
   ``/api/v1/log-request/single``, 4 clients; the same figures.

``--metlo-singles`` runs only Metlo's own single-trace workload instead (issue #16): 4,000
single-trace posts by 10 clients into an EMPTY inventory, each trace posted once, endpoints
visited round-robin (every one of the 2,000 twice). Figures: accept p50/p99, the seconds from
the first post until ``GET /api/v1/endpoints`` lists all 2,000 (``X-Total-Count``, polled over
HTTP), whether every trace was counted (usage equals traces sent: nothing lost) and CPU-ms per
trace of each process: the load client (its threads' CPU), web, worker, PostgreSQL.

A 503 (backpressure) is retried after its Retry-After and counted. The RSS of the web and
worker processes is measured after each phase.
"""
from __future__ import annotations

import json
import queue
import random
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.service import BenchService, CpuMeter, Figures, bench_arguments, in_threads, percentile  # noqa: E402

HOSTS = 20
ENDPOINTS_PER_HOST = 100
WORDS = ["account", "invoice", "order", "customer", "payment", "shipment", "ticket", "report", "device", "session",
         "profile", "address", "contract", "refund", "coupon", "review", "message", "project", "member", "card",
         "wallet", "booking", "policy", "claim", "vendor"]
FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "oscar", "peggy"]
LAST = ["smith", "jones", "garcia", "miller", "davis", "lopez", "wilson", "moore", "taylor", "thomas"]
CARDS = ["4111111111111111", "5555555555554444", "378282246310005", "4012888888881881", "6011111111111117",
         "5105105105105100", "4000056655665556"]


def endpoint_shapes() -> list[tuple[str, str]]:
    """The 100 (method, path template) of one host: 25 resources x 4 shapes; ``{id}`` is a numeric id."""
    shapes = []
    for word in WORDS:
        shapes += [("GET", f"/api/{word}s/{{id}}"), ("PATCH", f"/api/{word}s/{{id}}"),
                   ("GET", f"/api/{word}s/{{id}}/history"), ("POST", f"/api/{word}s")]
    assert len(shapes) == ENDPOINTS_PER_HOST
    return shapes


class Traffic:
    """Deterministic raw agent traces over 20 hosts x 100 endpoints."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.shapes = endpoint_shapes()
        self.hosts = [f"https://svc{i:02d}.bench-corp.com" for i in range(HOSTS)]

    def person(self) -> dict:
        r = self.rng
        first, last = r.choice(FIRST), r.choice(LAST)
        return {"id": r.randint(1000, 999999), "name": f"{first.title()} {last.title()}",
                "email": f"{first}.{last}{r.randint(1, 999)}@example.com",
                "phone": f"+1415{r.randint(200, 999)}{r.randint(1000, 9999)}",
                "plan": r.choice(["free", "pro", "team"]), "active": r.random() < 0.9}

    def trace(self, index: int) -> dict:
        """The ``index``-th trace: endpoints are visited round-robin, so every one is seen early."""
        r = self.rng
        host = self.hosts[index % HOSTS]
        method, template = self.shapes[(index // HOSTS) % ENDPOINTS_PER_HOST]
        path = template.replace("{id}", str(r.randint(1, 10_000_000)))
        # Each resource wraps its object under its own name, so resources differ in shape as in real
        # APIs; 25 resources answering the same keys would be one learned parameter (DECISIONS §9).
        resource = template.split("/")[2].rstrip("s")
        person = self.person()
        authenticated = (index // HOSTS) % 3 != 0
        headers = [{"name": "Accept", "value": "application/json"}, {"name": "User-Agent", "value": "bench/1.0"}]
        if authenticated:
            headers.append({"name": "Authorization", "value": f"Bearer tok{r.getrandbits(64):x}"})
        body = ""
        if method in ("POST", "PATCH"):
            headers.append({"name": "Content-Type", "value": "application/json"})
            body = json.dumps({resource: {"name": person["name"], "email": person["email"], "phone": person["phone"],
                                          "payment": {"card_number": r.choice(CARDS), "exp": "12/29"},
                                          "note": r.choice(["", "call after 5pm", "leave at door"])}})
        response = {resource: {**person, "card_last4": r.choice(CARDS)[-4:], "items": [
            {"id": r.randint(1, 9999), "qty": r.randint(1, 5), "price": round(r.uniform(1, 500), 2)}
            for _ in range(r.randint(1, 3))]}}
        if template.endswith("/history"):
            response = {f"{resource}Events": [
                {"at": "2026-01-31T12:00:00Z", "by": person["email"], "card": r.choice(CARDS)}]}
        return {
            "request": {
                "url": {"host": host, "path": path,
                        "parameters": [{"name": "expand", "value": "items"}] if r.random() < 0.3 else []},
                "headers": headers, "body": body, "method": method,
            },
            "response": {
                "status": 201 if method == "POST" else 200,
                "headers": [{"name": "Content-Type", "value": "application/json"}],
                "body": json.dumps(response),
            },
            "meta": {"environment": "production", "incoming": True, "source": f"81.2.{index % 250}.{r.randint(1, 250)}",
                     "sourcePort": "50000", "destination": f"93.184.{index % HOSTS}.10", "destinationPort": "443"},
        }

    def traces(self, count: int, start: int = 0) -> list[dict]:
        return [self.trace(start + i) for i in range(count)]


def post_all(svc: BenchService, path: str, bodies: list[bytes], clients: int) -> dict:
    """POST every body with ``clients`` threads; latencies, wall time and 503 retries."""
    work: queue.Queue = queue.Queue()
    for body in bodies:
        work.put(body)
    latencies: list[float] = []
    retries = [0]
    client_cpu = [0.0]
    errors: list[str] = []
    lock = threading.Lock()

    def client(_: int) -> None:
        session = svc.session()
        session.headers["Content-Type"] = "application/json"
        mine = []
        while True:
            try:
                body = work.get_nowait()
            except queue.Empty:
                break
            while True:
                started = time.perf_counter()
                response = session.post(svc.base_url + path, data=body, timeout=60)
                mine.append(time.perf_counter() - started)
                if response.status_code == 503:
                    with lock:
                        retries[0] += 1
                    time.sleep(float(response.headers.get("Retry-After", "1")))
                    continue
                if response.status_code != 200:
                    with lock:
                        errors.append(f"{response.status_code} {response.text[:200]}")
                break
        session.close()
        with lock:
            latencies.extend(mine)
            client_cpu[0] += time.thread_time()

    started, seconds = in_threads(client, clients)
    if errors:
        sys.exit(f"ingestion POSTs failed: {errors[:3]}")
    return {"latencies": latencies, "started": started, "seconds": seconds, "retries": retries[0],
            "client_cpu": client_cpu[0]}


def bench_endpoints(svc: BenchService) -> int:
    """Endpoints in the inventory, the warm-up's own left out."""
    return svc.sql("SELECT count(*) FROM inventory_endpoint WHERE host_id NOT IN "
                   "(SELECT id FROM inventory_host WHERE name = %s)", [WARM_UP_HOST.split("://")[1]])[0][0]


def wait_analysed(svc: BenchService, *, started: float, endpoints: int, timeout: float) -> float:
    """Seconds from ``started`` until no batch is pending and the inventory holds ``endpoints`` endpoints."""
    while True:
        pending = svc.sql("SELECT count(*) FROM inventory_ingestbatch WHERE status = 'PENDING'")[0][0]
        known = bench_endpoints(svc)
        if not pending and known >= endpoints:
            return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            sys.exit(f"analysis not finished after {timeout:.0f} s: {pending} batches pending, {known} endpoints")
        time.sleep(0.05)


WARM_UP_HOST = "https://warm-up.bench-corp.com"


def warm_up(svc: BenchService, threads: int) -> None:
    """Single-trace posts from as many clients as the web has threads, all on one endpoint of
    ``WARM_UP_HOST``: every thread opens its database and broker connections and the first-request
    work is done before anything is timed (the first posts of a new process take ~150 ms)."""
    trace = Traffic(0).trace(0)
    trace["request"]["url"]["host"] = WARM_UP_HOST
    body = json.dumps(trace)

    def client(_: int) -> None:
        with svc.session() as session:
            for _ in range(3):
                session.post(svc.base_url + "/api/v1/log-request/single", data=body, timeout=30,
                             headers={"Content-Type": "application/json"}).raise_for_status()

    in_threads(client, threads)
    while svc.sql("SELECT count(*) FROM inventory_ingestbatch WHERE status = 'PENDING'")[0][0]:
        time.sleep(0.05)


def phase(svc: BenchService, figures: Figures, *, label: str, path: str, bodies: list[bytes], traces: int,
          per_request: int, clients: int, endpoints: int) -> None:
    warm_up(svc, svc.web_threads)
    meter = CpuMeter(svc).start()
    result = post_all(svc, path, bodies, clients)
    done = wait_analysed(svc, started=result["started"], endpoints=endpoints, timeout=900)
    cpu = meter.stop()
    ms = [s * 1000 for s in result["latencies"]]
    unit = f"{per_request}-trace POST" if per_request > 1 else "single-trace POST"
    figures.add(f"{label}: accept p50 per {unit}", percentile(ms, 50), "ms")
    if per_request == 100:
        figures.add(f"{label}: accept p99 per {unit}", percentile(ms, 99), "ms", target="≤ 50 ms",
                    ok=percentile(ms, 99) <= 50)
    else:
        figures.add(f"{label}: accept p99 per {unit}", percentile(ms, 99), "ms")
    figures.add(f"{label}: accepted", traces / result["seconds"], "traces/s",
                note=f"{traces} traces, {clients} clients, {result['retries']} 503 retries")
    target = {"target": "≥ 2,000 traces/s", "ok": traces / done >= 2000} if per_request == 100 else {}
    figures.add(f"{label}: analysed", traces / done, "traces/s", note=f"all analysed after {done:.1f} s", **target)
    # Load-independent: CPU per trace of each part, and the rate two idle cores would sustain.
    per_trace = {name: seconds / traces * 1000 for name, seconds in cpu.items()}
    figures.add(f"{label}: CPU per trace", sum(per_trace.values()), "ms",
                note=", ".join(f"{k} {v:.3f}" for k, v in per_trace.items()))
    figures.add(f"{label}: projected on 2 idle cores", 2000 / sum(per_trace.values()), "traces/s",
                note="2 CPU-seconds / CPU per trace; not a measurement")


def listed_endpoints(svc: BenchService, session) -> int:
    """``X-Total-Count`` of ``GET /api/v1/endpoints``: what a user of the API sees."""
    response = session.get(svc.base_url + "/api/v1/endpoints", params={"limit": 1}, timeout=30)
    response.raise_for_status()
    return int(response.headers["X-Total-Count"])


def metlo_singles(svc: BenchService, figures: Figures, *, bodies: list[bytes], clients: int, endpoints: int) -> None:
    """Metlo's single-trace workload on an empty inventory (see the module docstring)."""
    label = f"metlo singles ({len(bodies)} posts, {clients} clients, empty inventory)"
    warm_up(svc, svc.web_threads)
    session = svc.session()
    before = listed_endpoints(svc, session)  # the warm-up's endpoint
    meter = CpuMeter(svc).start()
    posted: dict = {}
    poster = threading.Thread(target=lambda: posted.update(
        post_all(svc, "/api/v1/log-request/single", bodies, clients)))
    started = time.perf_counter()
    poster.start()
    listed_after = None
    while listed_after is None:
        if listed_endpoints(svc, session) - before >= endpoints:
            listed_after = time.perf_counter() - started
        elif time.perf_counter() - started > 900:
            sys.exit("not every endpoint listed after 900 s")
        else:
            time.sleep(0.1)  # each poll is a list request: its CPU counts in the web's figure
    poster.join()
    while svc.sql("SELECT count(*) FROM inventory_ingestbatch WHERE status = 'PENDING'")[0][0]:
        time.sleep(0.05)
    cpu = meter.stop()
    session.close()
    counted = svc.sql("SELECT coalesce(sum(u.count), 0) FROM inventory_usageday u JOIN inventory_endpoint e "
                      "ON e.uuid = u.endpoint_id JOIN inventory_host h ON h.id = e.host_id "
                      "WHERE h.name <> %s", [WARM_UP_HOST.split("://")[1]])[0][0]
    traces = len(bodies)
    ms = [s * 1000 for s in posted["latencies"]]
    figures.add(f"{label}: accept p50 per single-trace POST", percentile(ms, 50), "ms")
    figures.add(f"{label}: accept p99 per single-trace POST", percentile(ms, 99), "ms", target="≤ 50 ms",
                ok=percentile(ms, 99) <= 50)
    figures.add(f"{label}: accepted", traces / posted["seconds"], "traces/s",
                note=f"all posted after {posted['seconds']:.1f} s, {posted['retries']} 503 retries")
    figures.add(f"{label}: all {endpoints} endpoints listed by GET /endpoints", listed_after, "s",
                target="≤ 11 s (aim 6.6 s)", ok=listed_after <= 11)
    figures.add(f"{label}: traces counted in usage", counted, "traces", target=f"= {traces} (nothing lost)",
                ok=counted == traces)
    per_trace = {"client": posted["client_cpu"] / traces * 1000,
                 **{name: seconds / traces * 1000 for name, seconds in cpu.items()}}
    figures.add(f"{label}: CPU per trace", sum(per_trace.values()), "ms", target="≤ 5 ms",
                ok=sum(per_trace.values()) <= 5, note=", ".join(f"{k} {v:.3f}" for k, v in per_trace.items()))


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_ingest")
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--single-traces", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--metlo-singles", action="store_true",
                        help="only Metlo's workload: --single-traces (default 4,000) single posts by "
                             "--single-clients (default 10) into an empty inventory")
    parser.add_argument("--single-clients", type=int, default=None,
                        help="clients of the single-post phase (default: --clients; 10 with --metlo-singles)")
    args = parser.parse_args()
    if args.metlo_singles:
        metlo_main(args)
        return
    if args.small:
        args.traces, args.single_traces = 2000, 200

    figures = Figures("ingestion", json_path=args.json, small=args.small)
    traffic = Traffic(args.seed)
    endpoints = HOSTS * ENDPOINTS_PER_HOST
    batches = [traffic.traces(args.batch, start) for start in range(0, args.traces, args.batch)]
    batch_bodies = [json.dumps(b).encode() for b in batches]
    singles = [json.dumps(t).encode() for t in Traffic(args.seed + 1).traces(args.single_traces)]
    print(f"ingestion: {args.traces} traces in batches of {args.batch} over {HOSTS} hosts / {endpoints} endpoints, "
          f"{args.clients} clients; then {args.single_traces} single-trace posts", flush=True)

    with service(args) as svc:
        phase(svc, figures, label="ingest batches (empty inventory)", path="/api/v1/log-request/batch",
              bodies=batch_bodies, traces=args.traces, per_request=args.batch, clients=args.clients,
              endpoints=min(endpoints, args.traces))
        figures.memory(svc, "after batch ingestion")
        known = bench_endpoints(svc)
        fields = svc.sql("SELECT count(*) FROM classification_datafield")[0][0]
        sensitive = svc.sql("SELECT count(*) FROM classification_datafield WHERE data_classes <> '[]'::jsonb")[0][0]
        print(f"inventory: {known} endpoints, {fields} data fields ({sensitive} with classes)", flush=True)
        if known != min(endpoints, args.traces):
            sys.exit(f"expected {endpoints} endpoints, found {known}")

        phase(svc, figures, label="ingest single posts (known inventory)", path="/api/v1/log-request/single",
              bodies=singles, traces=args.single_traces, per_request=1, clients=args.single_clients or args.clients,
              endpoints=known)
        figures.memory(svc, "after single-post ingestion")
    svc.drop_database()


def service(args) -> BenchService:
    """The service as the command line asks for it (started by ``with``, which prints what it is)."""
    svc = BenchService(db=args.db, redis_db=args.redis_db, web_threads=args.web_threads,
                       worker_concurrency=args.worker_concurrency, worker_pool=args.worker_pool,
                       worker_nice=args.worker_nice)
    print(f"service: {svc.describe()}", flush=True)
    return svc


def metlo_main(args) -> None:
    """``--metlo-singles``: 4,000 single posts (each endpoint twice) by 10 clients into an empty inventory."""
    traces = 400 if args.small else (args.single_traces if args.single_traces != 5_000 else 4_000)
    clients = args.single_clients or 10
    endpoints = min(HOSTS * ENDPOINTS_PER_HOST, traces)
    figures = Figures("ingestion", json_path=args.json, small=args.small)
    bodies = [json.dumps(t).encode() for t in Traffic(args.seed).traces(traces)]
    print(f"ingestion --metlo-singles: {traces} single-trace posts by {clients} clients over {HOSTS} hosts / "
          f"{endpoints} endpoints, empty inventory", flush=True)
    with service(args) as svc:
        metlo_singles(svc, figures, bodies=bodies, clients=clients, endpoints=endpoints)
        figures.memory(svc, "after metlo singles")
    svc.drop_database()


if __name__ == "__main__":
    main()
