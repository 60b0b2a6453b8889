"""Alert-commit → receiver latency of webhook delivery: 1,000 alerts fanned out to 10 webhooks.

    python bench/webhooks.py [--alerts 1000] [--webhooks 10] [--rate 20] [--small]

Runs the service the production way (``bench.service.BenchService``: gunicorn and one Celery
worker consuming the analysis and ``webhooks`` queues, on PostgreSQL and Redis), registers
``--webhooks`` webhooks pointing at a receiver in this process (one URL path each), then raises
alerts here through ``detections.services.alerts_raise`` — each in its own transaction, as the
analysis pipeline does — and measures, per delivery, from the moment its alert's transaction
commits to the moment the receiver gets the POST.

Two runs:

* ``paced``: the alerts at a steady rate (``--rate`` alerts/s, each fanned out to every webhook);
* ``burst``: the alerts committed back to back — queueing included, and the delivery throughput.

A delivery the receiver never gets within five minutes counts as lost.

``--with-ingestion`` repeats the paced run while 4 clients post ``bench/ingestion.py``'s traffic
in 100-trace batches to the same service as fast as it accepts them: the latency of deliveries
when the one worker is also busy analysing (the layout the issue asks about), and the traces/s
analysed meanwhile.

``--burst`` (after the runs above; ``--only-burst``: alone) measures something else (issue #14): 300 new endpoints in one ingest raise 900 alerts
for one webhook, whose receiver is a plain ``http.server.ThreadingHTTPServer`` (no tuning: listen
backlog 5). It runs twice, with the minimal process set's worker (one worker on every queue,
prefork x2) and with the Procfile's (``-Q celery`` prefork x2 + a ``webhooks`` worker, threads x8),
and prints for each the time from the ingest to the last delivery finished, the FAILED count, the
deliveries the receiver got and the most deliveries in flight (SENDING rows, sampled). ``--max-in-flight N`` sets
``WEBHOOK_MAX_IN_FLIGHT`` (a large value shows the service without pacing).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.service import BenchService, Figures, bench_arguments, percentile  # noqa: E402


class ListeningServer(ThreadingHTTPServer):
    """A threading HTTP server with a real server's listen backlog (socketserver's default is 5):
    the concurrent POSTs of a fan-out must all get in, as they would at any web server."""

    request_queue_size = 128


class Receiver:
    """Records the first arrival time of each (webhook path, alert uuid); answers 200 at once."""

    def __init__(self):
        self.arrivals: dict[tuple[str, str], float] = {}
        self.posts = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                arrived = time.time()
                alert_id = json.loads(body)["alert"]["uuid"]
                with receiver.lock:
                    receiver.posts += 1
                    receiver.arrivals.setdefault((self.path, alert_id), arrived)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()

        self.server = ListeningServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def run(label: str, *, alerts: int, interval: float, endpoint, receiver: Receiver, paths: list[str]) -> dict:
    """Raise ``alerts`` alerts ``interval`` seconds apart; per-delivery latencies and the lost count."""
    from django.db import transaction

    from core.enums import AlertType
    from detections.services import AlertCandidate, alerts_raise

    committed: dict[str, float] = {}
    started = time.time()
    for n in range(alerts):
        stamp: list[float] = []
        with transaction.atomic():
            # Registered first, so it runs at commit before the fan-out's enqueue callbacks.
            transaction.on_commit(lambda: stamp.append(time.time()))
            [alert] = alerts_raise([AlertCandidate(
                endpoint.uuid, AlertType.PII_DATA,
                f"Sensitive data of type email has been detected in field '{label}{n}' of Response Body.",
            )])
        committed[str(alert.uuid)] = stamp[0]
        if interval:
            time.sleep(max(0.0, started + (n + 1) * interval - time.time()))
    expected = {(path, alert_id) for path in paths for alert_id in committed}
    deadline = time.time() + 300
    while len(receiver.arrivals.keys() & expected) < len(expected) and time.time() < deadline:
        time.sleep(0.05)
    arrived = {key: receiver.arrivals[key] for key in expected if key in receiver.arrivals}
    latencies = [(at - committed[alert_id]) * 1000 for (_, alert_id), at in arrived.items()]
    span = (max(arrived.values()) - min(committed.values())) if arrived else 1.0
    return {"deliveries": len(expected), "received": len(arrived), "lost": len(expected) - len(arrived),
            "latencies": latencies, "throughput": len(arrived) / span}


def ingestion_bodies(traces: int) -> list[bytes]:
    """bench/ingestion.py's traffic (20 hosts x 100 endpoints) as bodies of 100 traces."""
    from bench.ingestion import Traffic

    traffic = Traffic(11)
    return [json.dumps(traffic.traces(100, start)).encode() for start in range(0, traces, 100)]


def inventory_preload(svc: BenchService, bodies: list[bytes]) -> None:
    """Analyse the ingestion traffic once before any webhook exists: during the measured run the
    endpoints are known, so the traffic keeps the worker busy without raising alerts of its own."""
    from bench.ingestion import post_all

    post_all(svc, "/api/v1/log-request/batch", bodies, 4)
    while svc.sql("SELECT count(*) FROM inventory_ingestbatch WHERE status = 'PENDING'")[0][0]:
        time.sleep(0.1)


def ingest_in_background(svc: BenchService, bodies: list[bytes], stop: threading.Event, clients: int = 4) -> dict:
    """Post these 100-trace batches round and round from ``clients`` threads until ``stop``."""
    posted = {"traces": 0, "refused": 0}
    lock = threading.Lock()

    def client(offset: int) -> None:
        with svc.session() as session:
            session.headers["Content-Type"] = "application/json"
            n = offset
            while not stop.is_set():
                answer = session.post(svc.base_url + "/api/v1/log-request/batch", data=bodies[n % len(bodies)],
                                       timeout=60)
                with lock:
                    if answer.status_code == 200:
                        posted["traces"] += 100
                    else:
                        posted["refused"] += 1
                n += clients
                if answer.status_code == 503:
                    time.sleep(float(answer.headers.get("Retry-After", "1")))

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    posted["threads"] = threads
    return posted


class PlainReceiver:
    """``http.server.ThreadingHTTPServer`` as the standard library ships it (listen backlog 5),
    answering 200; keeps the delivery ids it received."""

    def __init__(self):
        self.received = set()
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.received.add(self.headers.get("X-Delivery-Id"))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


BURST_TYPES = ["New Endpoint Detected", "PII Data Detected", "Unauthenticated Endpoint returning Sensitive Data"]


def burst_traces(endpoints: int) -> list[dict]:
    """One new endpoint per host (nothing to merge), each answering an e-mail to a caller without
    credentials: three alerts each (new endpoint, PII, unauthenticated endpoint returning it)."""
    return [{
        "request": {"url": {"host": f"shop{n}.example.com", "path": "/api/account", "parameters": []},
                    "headers": [], "body": "", "method": "GET"},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}],
                     "body": json.dumps({"id": n, "email": f"customer{n}@example.com"})},
        "meta": {"incoming": True, "source": "10.0.0.7", "sourcePort": "51234",
                 "destination": "10.0.0.1", "destinationPort": "443"},
    } for n in range(endpoints)]


def burst_run(label: str, args, figures: Figures, *, webhook_worker: bool) -> None:
    """One ingest of ``3 x endpoints`` alerts for one webhook, on a fresh service of this layout."""
    endpoints = 30 if args.small else 300
    receiver = PlainReceiver()
    env = {"WEBHOOK_MAX_IN_FLIGHT": str(args.max_in_flight)} if args.max_in_flight else {}
    with BenchService(db=args.db, redis_db=args.redis_db, worker_concurrency=args.worker_concurrency,
                      webhook_worker=webhook_worker, extra_env=env) as svc:
        print(f"service ({label}): {svc.describe()}; {endpoints} new endpoints in one ingest", flush=True)
        http = svc.session()
        http.post(f"{svc.base_url}/api/v1/webhook", json={"url": receiver.url, "alertTypes": BURST_TYPES},
                  timeout=10).raise_for_status()
        started = time.monotonic()
        http.post(f"{svc.base_url}/api/v1/log-request/batch", json=burst_traces(endpoints), timeout=60).raise_for_status()
        expected, unfinished, most_sending = 3 * endpoints, None, 0
        deadline = started + 600
        while time.monotonic() < deadline:
            [(total, unfinished, sending)] = svc.sql(
                "SELECT count(*), count(*) FILTER (WHERE status IN ('PENDING', 'SENDING')), "
                "count(*) FILTER (WHERE status = 'SENDING') FROM webhooks_webhookdelivery")
            most_sending = max(most_sending, sending)
            if total >= expected and not unfinished:
                break
            time.sleep(0.1)
        seconds = time.monotonic() - started
        counts = dict(svc.sql("SELECT status, count(*) FROM webhooks_webhookdelivery GROUP BY status"))
        what = f"{expected} alerts from one ingest, one webhook, plain ThreadingHTTPServer"
        figures.add(f"burst ({label}): ingest → last delivery finished", seconds, "s", note=what)
        figures.add(f"burst ({label}): FAILED deliveries", counts.get("FAILED", 0), "deliveries", target="0",
                    ok=not counts.get("FAILED") and not unfinished, note=f"statuses {counts}")
        figures.add(f"burst ({label}): received", len(receiver.received), "deliveries", target=str(expected),
                    ok=len(receiver.received) == expected)
        figures.add(f"burst ({label}): most deliveries in flight", most_sending, "deliveries",
                    note=f"SENDING rows sampled every 100 ms; WEBHOOK_MAX_IN_FLIGHT={args.max_in_flight or 4}")
    receiver.server.shutdown()
    svc.drop_database()


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_webhooks", redis_db=13)
    parser.add_argument("--alerts", type=int, default=1000)
    parser.add_argument("--webhooks", type=int, default=10)
    parser.add_argument("--rate", type=float, default=20.0, help="alerts per second in the paced run")
    parser.add_argument("--with-ingestion", action="store_true",
                        help="also run the paced alerts while 4 clients post ingestion batches")
    parser.add_argument("--webhook-worker", action="store_true",
                        help="the Procfile's layout: a second Celery worker only for the webhooks queue")
    parser.add_argument("--webhook-worker-pool", default="threads", choices=["threads", "prefork"],
                        help="pool of that second worker (the Procfile's: threads)")
    parser.add_argument("--burst", action="store_true",
                        help="also the burst of one ingest (900 alerts, one webhook), in both process layouts")
    parser.add_argument("--only-burst", action="store_true", help="the burst runs only")
    parser.add_argument("--max-in-flight", type=int, default=0,
                        help="WEBHOOK_MAX_IN_FLIGHT of the service (default: the service's own, 4)")
    args = parser.parse_args()
    if args.small:
        args.alerts, args.webhooks = 20, 2

    figures = Figures("webhooks", json_path=args.json, small=args.small)
    if not args.only_burst:
        main_runs(args, figures)
    if args.burst or args.only_burst:
        burst_run("minimal set", args, figures, webhook_worker=False)
        burst_run("Procfile", args, figures, webhook_worker=True)


def main_runs(args, figures: Figures) -> None:
    """The paced and back-to-back runs (and ``--with-ingestion``'s) on one service."""
    receiver = Receiver()
    paths = [f"/hook/{n}" for n in range(args.webhooks)]
    with BenchService(db=args.db, redis_db=args.redis_db, web_threads=args.web_threads,
                      worker_concurrency=args.worker_concurrency, worker_pool=args.worker_pool,
                      webhook_worker=args.webhook_worker, webhook_worker_pool=args.webhook_worker_pool,
                      webhook_worker_concurrency=8 if args.webhook_worker_pool == "threads" else 4) as svc:
        print(f"service: {svc.describe()}; {args.alerts} alerts x {args.webhooks} webhooks", flush=True)
        bodies = ingestion_bodies(2_000 if args.small else 20_000) if args.with_ingestion else []
        if args.with_ingestion:
            inventory_preload(svc, bodies)
        http = svc.session()
        for path in paths:
            http.post(f"{svc.base_url}/api/v1/webhook", json={"url": receiver.base_url + path},
                      timeout=10).raise_for_status()

        # This process writes alerts straight into the service's database, like the analysis worker.
        svc.django_setup()
        from classification.models import DataField
        from inventory.models import Endpoint, Host

        host = Host.objects.create(name="bench.example.com", is_public_detected=True)
        endpoint = Endpoint.objects.create(host=host, method="GET", path="/users/{param1}",
                                           path_regex="^/users/[^/]+$", num_segments=2, num_literal_segments=1,
                                           risk_score="MEDIUM", risk_rank=2)
        for path in ("email", "profile.phone", "address.street"):
            DataField.objects.create(endpoint=endpoint, data_section="RESPONSE_BODY", data_path=path,
                                     status_code=200, data_classes=["email"])

        run("warmup", alerts=5, interval=0.05, endpoint=endpoint, receiver=receiver, paths=paths)
        for label, interval in (("paced", 1 / args.rate), ("burst", 0.0)):
            result = run(label, alerts=args.alerts, interval=interval, endpoint=endpoint, receiver=receiver,
                         paths=paths)
            ms = result["latencies"]
            what = (f"{args.alerts} alerts x {args.webhooks} webhooks"
                    + (f" at {args.rate:g} alerts/s" if interval else ", back to back"))
            figures.add(f"webhooks {label}: alert commit → receipt p50", percentile(ms, 50), "ms", note=what)
            figures.add(f"webhooks {label}: alert commit → receipt p99", percentile(ms, 99), "ms",
                        target="≤ 200 ms", ok=percentile(ms, 99) <= 200, note=what)
            figures.add(f"webhooks {label}: lost deliveries", result["lost"], "deliveries", target="0",
                        ok=result["lost"] == 0, note=f"{result['received']} of {result['deliveries']} received")
            figures.add(f"webhooks {label}: delivery throughput", result["throughput"], "deliveries/s")
        if args.with_ingestion:
            stop = threading.Event()
            analysed_before = svc.sql("SELECT coalesce(sum(num_traces), 0) FROM inventory_ingestbatch "
                                      "WHERE status = 'DONE'")[0][0]
            started = time.perf_counter()
            posted = ingest_in_background(svc, bodies, stop)
            time.sleep(2)  # the backlog builds up: the worker is analysing when the alerts start
            result = run("ingesting", alerts=args.alerts, interval=1 / args.rate, endpoint=endpoint,
                         receiver=receiver, paths=paths)
            stop.set()
            for t in posted.pop("threads"):
                t.join()
            analysed = svc.sql("SELECT coalesce(sum(num_traces), 0) FROM inventory_ingestbatch "
                               "WHERE status = 'DONE'")[0][0] - analysed_before
            seconds = time.perf_counter() - started
            ms = result["latencies"]
            what = (f"{args.alerts} alerts x {args.webhooks} webhooks at {args.rate:g} alerts/s while "
                    f"{posted['traces']} traces were posted and {analysed} analysed in {seconds:.0f} s")
            figures.add("webhooks while ingesting: alert commit → receipt p50", percentile(ms, 50), "ms", note=what)
            figures.add("webhooks while ingesting: alert commit → receipt p99", percentile(ms, 99), "ms",
                        target="≤ 200 ms", ok=percentile(ms, 99) <= 200, note=what)
            figures.add("webhooks while ingesting: lost deliveries", result["lost"], "deliveries", target="0",
                        ok=result["lost"] == 0, note=f"{result['received']} of {result['deliveries']} received")
            figures.add("webhooks while ingesting: traces analysed meanwhile", analysed / seconds, "traces/s")
        figures.memory(svc, "after webhooks")
    svc.drop_database()


if __name__ == "__main__":
    main()
