"""Latency of the inventory list routes on a large inventory (gunicorn + PostgreSQL, production settings).

    python bench/inventory_routes.py [--endpoints 50000] [--hosts 200] [--requests 40]

Seeds the inventory directly (bulk inserts), then times each route over HTTP and
prints p50/p99, plus PostgreSQL's plan for a ``searchQuery``. The bench database is
dropped and re-created and the Redis db given is flushed: pick one nobody else uses.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.service import BenchService, summary_ms  # noqa: E402

CLASSES = ["email", "ssn", "credit_card", "phone_number", "ip_address", "dob", "address", "api_key"]
SEVERITY = {"email": 2, "ssn": 3, "credit_card": 3, "phone_number": 2, "ip_address": 1, "dob": 2, "address": 2,
            "api_key": 3}
RISK = {0: "NONE", 1: "LOW", 2: "MEDIUM", 3: "HIGH"}


def seed(num_endpoints: int, num_hosts: int) -> None:
    import django

    django.setup()
    from django.utils import timezone

    from classification.models import DataField
    from inventory.models import Endpoint, Host
    from inventory.patterns import pattern_compile

    rng = random.Random(7)
    now = timezone.now()
    hosts = Host.objects.bulk_create(
        [Host(name=f"svc{i}.{'example.com' if i % 3 else 'internal'}", is_public_detected=bool(i % 3))
         for i in range(num_hosts)]
    )
    words = ["users", "orders", "payments", "items", "carts", "accounts", "sessions", "reports", "files", "teams"]
    batch, fields = [], []
    for n in range(num_endpoints):
        path = f"/api/v{n % 3 + 1}/{rng.choice(words)}{n}/{{param1}}/{rng.choice(words)}"
        pattern = pattern_compile(path)
        classes = sorted(set(rng.sample(CLASSES, rng.randint(0, 3))))
        rank = max((SEVERITY[c] for c in classes), default=0)
        batch.append(Endpoint(
            host=hosts[n % num_hosts], method=rng.choice(["GET", "POST", "PUT", "DELETE"]), path=pattern.path,
            path_regex=pattern.regex, num_segments=pattern.num_segments,
            num_literal_segments=pattern.num_literal_segments, risk_score=RISK[rank], risk_rank=rank,
            data_classes=classes, owner=rng.choice(["", "team-a", "team-b", "payments-team"]),
            is_authenticated_detected=rng.random() < 0.6,
            first_detected=now - rng.random() * (now - now.replace(year=now.year - 1)),
            last_active=now - rng.random() * (now - now.replace(month=1, day=1)),
        ))
        if len(batch) == 5000:
            created = Endpoint.objects.bulk_create(batch)
            fields += [DataField(endpoint=e, data_section="RESPONSE_BODY", data_path=f"f.{c}", data_classes=[c],
                                 status_code=200) for e in created for c in e.data_classes]
            DataField.objects.bulk_create(fields)
            batch, fields = [], []
    created = Endpoint.objects.bulk_create(batch)
    DataField.objects.bulk_create([DataField(endpoint=e, data_section="RESPONSE_BODY", data_path=f"f.{c}",
                                             data_classes=[c], status_code=200)
                                   for e in created for c in e.data_classes])
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def explain_search() -> str:
    from django.db import connection

    from inventory.api.filters import search_q
    from inventory.models import Endpoint

    queryset = Endpoint.objects.filter(search_q("payments-team")).order_by("-risk_rank")[:10]
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoints", type=int, default=50_000)
    parser.add_argument("--hosts", type=int, default=200)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--redis-db", type=int, default=2, help="Redis db to use (it is flushed!)")
    args = parser.parse_args()

    with BenchService(db="apiscope_bench_routes", redis_db=args.redis_db) as svc:
        os.environ.update({k: v for k, v in svc.env.items() if k in {
            "DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SECURE_SSL_REDIRECT"}})
        started = time.monotonic()
        seed(args.endpoints, args.hosts)
        print(f"seeded {args.endpoints} endpoints on {args.hosts} hosts in {time.monotonic() - started:.1f}s")
        session = svc.session()
        from inventory.models import Endpoint

        some = str(Endpoint.objects.values_list("uuid", flat=True).first())
        cases = {
            "GET /endpoints (default page)": ("/api/v1/endpoints", {}),
            "GET /endpoints limit=500": ("/api/v1/endpoints", {"limit": 500}),
            "GET /endpoints searchQuery": ("/api/v1/endpoints", {"searchQuery": "payments1"}),
            "GET /endpoints dataClasses": ("/api/v1/endpoints", {"dataClasses": ["ssn", "api_key"]}),
            "GET /endpoints combined": ("/api/v1/endpoints", {
                "riskScores": "HIGH", "methods": ["GET", "POST"], "isAuthenticated": "false",
                "hostType": "EXTERNAL", "hosts": ["svc1.example.com", "svc2.example.com"]}),
            "GET /endpoints offset=40000": ("/api/v1/endpoints", {"offset": 40_000}),
            "GET /endpoint/{id}": (f"/api/v1/endpoint/{some}", {}),
            "GET /hosts": ("/api/v1/hosts", {}),
            "GET /hosts-graph": ("/api/v1/hosts-graph", {}),
            "GET /new-detections": ("/api/v1/new-detections", {"detectionRiskScores": "HIGH"}),
            "GET /new-detections DATA_FIELD": ("/api/v1/new-detections", {"detectionType": "DATA_FIELD",
                                                                          "detectionRiskScores": "MEDIUM"}),
            "GET /new-detections-agg": ("/api/v1/new-detections-agg", {}),
        }
        for name, (path, params) in cases.items():
            samples = []
            for _ in range(args.requests):
                t0 = time.perf_counter()
                response = session.get(svc.base_url + path, params=params, timeout=30)
                samples.append(time.perf_counter() - t0)
                assert response.status_code == 200, (name, response.status_code, response.text[:200])
            print(f"{name:34s} {summary_ms(samples)} total={response.headers.get('X-Total-Count', '-')}")
        print("\nsearchQuery plan:\n" + explain_search())


if __name__ == "__main__":
    main()
