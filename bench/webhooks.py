"""Alert-commit → receiver latency of webhook delivery, over 1,000 alerts.

Runs the service the production way (``bench.service.BenchService``: gunicorn, the analysis
worker and the Procfile's dedicated ``webhooks`` worker on PostgreSQL and Redis), registers one
webhook pointing at a receiver in this process, then raises alerts here through
``detections.services.alerts_raise`` — each in its own transaction, as the analysis pipeline
does — and measures, per alert, from the moment its transaction commits to the moment the
receiver gets the POST.

Two runs:

* ``paced``: 1,000 alerts at a steady rate (default 50/s) — the latency a single alert sees;
* ``burst``: 1,000 alerts committed back to back — queueing included, and the delivery throughput.

Usage::

    python bench/webhooks.py [--alerts 1000] [--rate 50] [--webhook-concurrency 4]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.service import BenchService, percentile  # noqa: E402


class Receiver:
    """Records the arrival time of each alert (by uuid); answers 200 at once."""

    def __init__(self):
        self.arrivals: dict[str, float] = {}
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
                    receiver.arrivals.setdefault(alert_id, arrived)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def run(label: str, *, alerts: int, interval: float, endpoint, receiver: Receiver) -> dict:
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
    deadline = time.time() + 300
    while len(receiver.arrivals.keys() & committed.keys()) < alerts and time.time() < deadline:
        time.sleep(0.05)
    latencies = [(receiver.arrivals[a] - t) * 1000 for a, t in committed.items() if a in receiver.arrivals]
    span = max(receiver.arrivals[a] for a in committed if a in receiver.arrivals) - min(committed.values())
    return {
        "run": label,
        "alerts": alerts,
        "delivered": len(latencies),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p90_ms": round(percentile(latencies, 90), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
        "max_ms": round(max(latencies), 1),
        "throughput_per_s": round(len(latencies) / span, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--alerts", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=50.0, help="alerts per second in the paced run")
    parser.add_argument("--webhook-concurrency", type=int, default=4)
    parser.add_argument("--db", default="apiscope_bench_webhooks")
    parser.add_argument("--redis-db", type=int, default=13)
    args = parser.parse_args()

    receiver = Receiver()
    with BenchService(db=args.db, redis_db=args.redis_db,
                      webhook_worker_concurrency=args.webhook_concurrency) as svc:
        http = svc.session()
        created = http.post(f"{svc.base_url}/api/v1/webhook", json={"url": receiver.url}, timeout=10)
        created.raise_for_status()

        # This process writes alerts straight into the service's database, like the analysis worker.
        for name in ("DJANGO_SETTINGS_MODULE", "SECRET_KEY", "SECURE_SSL_REDIRECT", "DATABASE_URL", "REDIS_URL",
                     "WEBHOOK_ALLOW_PRIVATE_TARGETS", "LOG_LEVEL"):
            os.environ[name] = svc.env[name]
        import django

        django.setup()
        from classification.models import DataField
        from inventory.models import Endpoint, Host

        host = Host.objects.create(name="bench.example.com", is_public_detected=True)
        endpoint = Endpoint.objects.create(host=host, method="GET", path="/users/{param1}",
                                           path_regex="^/users/[^/]+$", num_segments=2, num_literal_segments=1,
                                           risk_score="MEDIUM", risk_rank=2)
        for path in ("email", "profile.phone", "address.street"):
            DataField.objects.create(endpoint=endpoint, data_section="RESPONSE_BODY", data_path=path,
                                     status_code=200, data_classes=["email"])

        run("warmup", alerts=20, interval=0.02, endpoint=endpoint, receiver=receiver)
        load_before = os.getloadavg()[0]
        results = [
            run("paced", alerts=args.alerts, interval=1 / args.rate, endpoint=endpoint, receiver=receiver),
            run("burst", alerts=args.alerts, interval=0.0, endpoint=endpoint, receiver=receiver),
        ]
        rss = svc.rss_mb()
        load_after = os.getloadavg()[0]
    print(f"webhook worker: prefork concurrency {args.webhook_concurrency}; receiver answers 200 at once; "
          f"{os.cpu_count()} CPUs, 1-min load average {load_before:.1f} before / {load_after:.1f} after")
    for result in results:
        print(json.dumps(result))
    print(json.dumps({"rss_mb": rss}))


if __name__ == "__main__":
    main()
