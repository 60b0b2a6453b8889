#!/usr/bin/env python
"""Reads at scale: the inventory routes on 100,000 endpoints and 1,000,000 data fields.

    python bench/reads.py [--endpoints 100000] [--fields-per-endpoint 10] [--clients 8] [--seconds 4] [--small]

The service runs the production way (``bench/service.py``). The database is bulk-loaded with SQL
(``generate_series``, deterministic: every value derives from the row number): 500 hosts (a third
internal), 100,000 endpoints (GET/POST/PUT/DELETE, owners, 60% authenticated, risk from their
fields), 10 data fields each (30% carrying one or two of the 13 classes), 5 alerts and 100 traces
on each of the 200 endpoints the detail route reads, first detections spread over 60 days.

Each case is a fixed request (GET /endpoints without filter, with each filter, filters combined,
a deep offset and the middle one; GET /endpoint/{id}; GET /hosts; GET /new-detections) sent by 8
concurrent clients for a few seconds: p50/p99 latency and requests/s. Then the same SQL statements
the route runs in the steady state (captured from the route itself, repeated: cached totals are not
counted again) are sent by 8 concurrent psycopg connections: the ratio route / bare SQL is the cost
of Django, DRF and rendering. "uncached SQL" is the time of the statements of the first request
(totals counted). ``--explain`` prints EXPLAIN ANALYZE of every query of the first request.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.service import PG, BenchService, CpuMeter, Figures, bench_arguments, in_threads, percentile  # noqa: E402

CLASSES = ["email", "phone_number", "credit_card", "ssn", "address", "dob", "ip_address", "api_key",
           "authentication_token", "passport_number", "driver_license", "mac_address", "user_id"]
SEVERITY = {"email": 2, "phone_number": 2, "credit_card": 3, "ssn": 3, "address": 2, "dob": 2, "ip_address": 1,
            "api_key": 3, "authentication_token": 3, "passport_number": 3, "driver_license": 3,
            "mac_address": 1, "user_id": 1}
DETAIL_ENDPOINTS = 200


def seed(svc: BenchService, *, endpoints: int, fields_per_endpoint: int, hosts: int) -> None:
    """Bulk-load the inventory with SQL (a few seconds for 100k endpoints / 1M fields)."""
    import psycopg

    classes = "(ARRAY[" + ", ".join(f"'{c}'" for c in CLASSES) + "])"
    severity_case = "CASE c " + " ".join(f"WHEN '{c}' THEN {s}" for c, s in SEVERITY.items()) + " END"
    words = "ARRAY['users','orders','payments','items','carts','accounts','sessions','reports','files','teams']"
    statements = [
        f"""INSERT INTO inventory_host (name, is_public_detected, public_override, is_public, address_seen,
                                        created_at, updated_at)
            SELECT CASE WHEN h % 3 = 0 THEN 'svc' || h || '.internal.svc' ELSE 'api' || h || '.example.com' END,
                   h % 3 <> 0, NULL, h % 3 <> 0, false, now() - interval '90 days', now()
            FROM generate_series(0, {hosts - 1}) h""",
        # Endpoints: row n on host n % hosts; uuid from md5(n) (deterministic).
        f"""INSERT INTO inventory_endpoint (uuid, host_id, method, path, path_regex, num_segments,
                num_literal_segments, user_set_path, risk_score, risk_rank, data_classes, resource_permissions,
                owner, openapi_spec_name, is_authenticated_detected, unauthenticated_success_seen,
                is_authenticated_user_set, full_trace_capture_enabled, is_graphql, graphql_schema,
                learned_segments, first_detected, last_active, created_at, updated_at)
            SELECT md5('endpoint' || n)::uuid, h.id,
                   (ARRAY['GET','POST','PUT','DELETE'])[1 + n % 4],
                   '/api/v' || (1 + n % 3) || '/' || ({words})[1 + n % 10] || n || '/{{param1}}/'
                       || ({words})[1 + (n / 10) % 10],
                   '^/api/v' || (1 + n % 3) || '/' || ({words})[1 + n % 10] || n || '/[^/]+/'
                       || ({words})[1 + (n / 10) % 10] || '$',
                   4, 3, false, 'NONE', 0, '[]'::jsonb,
                   CASE WHEN n % 7 = 0 THEN '["read:users"]'::jsonb WHEN n % 11 = 0 THEN '["admin"]'::jsonb
                        ELSE '[]'::jsonb END,
                   (ARRAY['', 'team-a', 'team-b', 'payments-team'])[1 + n % 4],
                   CASE WHEN n % 50 = 0 THEN 'spec-' || (n % 20) ELSE NULL END,
                   (n * 7) % 10 < 6, (n * 7) % 10 >= 6,
                   CASE WHEN n % 97 = 0 THEN true ELSE NULL END, false, false, NULL, '{{}}'::jsonb,
                   now() - ((n * 37) % 86400) * interval '1 minute',
                   CASE WHEN n % 13 = 0 THEN NULL ELSE now() - ((n * 53) % 100000) * interval '1 second' END,
                   now() - interval '60 days', now()
            FROM generate_series(0, {endpoints - 1}) n
            JOIN inventory_host h ON h.id = (SELECT min(id) FROM inventory_host) + n % {hosts}""",
        # Data fields: k = 0..F-1 per endpoint; 30% carry one class, 1 in 10 of those a second one.
        f"""INSERT INTO classification_datafield (uuid, endpoint_id, data_section, status_code, data_path,
                data_classes, false_positives, scanner_identified, data_type, content_type, is_nullable, entity,
                created_at, updated_at, last_seen)
            SELECT md5('field' || e.uuid || '-' || k)::uuid, e.uuid,
                   (ARRAY['REQUEST_QUERY','REQUEST_HEADER','REQUEST_BODY','RESPONSE_HEADER','RESPONSE_BODY'])
                       [1 + (k % 5)],
                   CASE WHEN k % 5 < 3 THEN -1 ELSE 200 END,
                   'field' || k || '.' || ({words})[1 + (e.n + k) % 10],
                   CASE WHEN (e.n * 31 + k * 17) % 10 < 3 THEN
                        CASE WHEN (e.n + k) % 10 = 0
                             THEN jsonb_build_array({classes}[1 + (e.n + k) % 13], {classes}[1 + (e.n + k + 5) % 13])
                             ELSE jsonb_build_array({classes}[1 + (e.n + k) % 13]) END
                        ELSE '[]'::jsonb END,
                   '[]'::jsonb, '[]'::jsonb, (ARRAY['string','integer','number','boolean'])[1 + k % 4],
                   'application/json', false, NULL,
                   now() - ((e.n * 37 + k) % 86400) * interval '1 minute', now(), now()
            FROM (SELECT uuid, ('x' || substr(md5(uuid::text), 1, 6))::bit(24)::int AS n
                  FROM inventory_endpoint) e
            CROSS JOIN generate_series(0, {fields_per_endpoint - 1}) k""",
        # Endpoint classes and risk from their fields (DECISIONS §4).
        f"""UPDATE inventory_endpoint e SET data_classes = f.classes, risk_rank = f.rank,
                   risk_score = (ARRAY['NONE','LOW','MEDIUM','HIGH'])[1 + f.rank]
            FROM (SELECT endpoint_id, jsonb_agg(DISTINCT c ORDER BY c) AS classes, max({severity_case}) AS rank
                  FROM classification_datafield, jsonb_array_elements_text(data_classes) c
                  GROUP BY endpoint_id) f
            WHERE e.uuid = f.endpoint_id""",
        # Detail endpoints: 5 alerts and 100 traces each.
        f"""INSERT INTO detections_alert (uuid, endpoint_id, type, risk_score, status, description, context,
                resolution_message, created_at, updated_at, dedup_key)
            SELECT md5('alert' || e.uuid || a)::uuid, e.uuid, 'PII Data Detected', 'medium', 'Open',
                   'Sensitive data of type email has been detected in field ''f' || a || ''' of Response Body.',
                   '{{}}'::jsonb, NULL, now() - a * interval '1 hour', now(), md5(e.uuid::text || a)
            FROM (SELECT uuid FROM inventory_endpoint ORDER BY uuid LIMIT {DETAIL_ENDPOINTS}) e
            CROSS JOIN generate_series(1, 5) a""",
        f"""INSERT INTO inventory_apitrace (uuid, endpoint_id, host, path, method, request_parameters,
                request_headers, request_body, response_status, response_headers, response_body, meta,
                redacted, created_at)
            SELECT md5('trace' || e.uuid || t)::uuid, e.uuid, 'api1.example.com', '/api/v1/users' || t || '/42',
                   'GET', '[{{"name": "expand", "value": "items"}}]'::jsonb,
                   '[{{"name": "Authorization", "value": "[REDACTED]"}}, {{"name": "Accept", "value": "*/*"}}]'::jsonb,
                   '', 200, '[{{"name": "Content-Type", "value": "application/json"}}]'::jsonb,
                   '{{"id": 42, "name": "Alice", "email": "[REDACTED]", "items": [{{"sku": "A1", "qty": 2}}]}}',
                   '{{"source": "10.0.0.1", "destination": "10.0.0.2"}}'::jsonb, true,
                   now() - t * interval '1 minute'
            FROM (SELECT uuid FROM inventory_endpoint ORDER BY uuid LIMIT {DETAIL_ENDPOINTS}) e
            CROSS JOIN generate_series(1, 100) t""",
        "VACUUM ANALYZE",
    ]
    with psycopg.connect(f"{PG}/{svc.db}", autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def cases(svc: BenchService) -> dict[str, tuple[str, dict]]:
    """The requests measured: (path, query parameters) by name."""
    detail = svc.sql("SELECT uuid FROM inventory_endpoint ORDER BY uuid LIMIT 1")[0][0]
    hosts = [r[0] for r in svc.sql("SELECT name FROM inventory_host ORDER BY id LIMIT 3")]
    total = svc.sql("SELECT count(*) FROM inventory_endpoint")[0][0]
    return {
        "GET /endpoints (no filter)": ("/api/v1/endpoints", {}),
        "GET /endpoints hosts": ("/api/v1/endpoints", {"hosts": hosts[:2]}),
        "GET /endpoints riskScores": ("/api/v1/endpoints", {"riskScores": ["HIGH", "MEDIUM"]}),
        "GET /endpoints methods": ("/api/v1/endpoints", {"methods": ["POST"]}),
        "GET /endpoints dataClasses": ("/api/v1/endpoints", {"dataClasses": ["ssn", "passport_number"]}),
        "GET /endpoints resourcePermissions": ("/api/v1/endpoints", {"resourcePermissions": ["admin"]}),
        "GET /endpoints searchQuery": ("/api/v1/endpoints", {"searchQuery": "payments12"}),
        "GET /endpoints isAuthenticated": ("/api/v1/endpoints", {"isAuthenticated": "false"}),
        "GET /endpoints hostType": ("/api/v1/endpoints", {"hostType": "INTERNAL"}),
        "GET /endpoints combined": ("/api/v1/endpoints", {
            "riskScores": ["HIGH"], "methods": ["GET", "POST"], "isAuthenticated": "true",
            "hostType": "EXTERNAL", "dataClasses": ["email", "ssn", "credit_card"], "searchQuery": "users"}),
        "GET /endpoints deep offset": ("/api/v1/endpoints", {"offset": max(0, total - 100), "limit": 50}),
        "GET /endpoints middle offset": ("/api/v1/endpoints", {"offset": total // 2, "limit": 50}),
        "GET /endpoints limit=500": ("/api/v1/endpoints", {"limit": 500}),
        "GET /endpoint/{id}": (f"/api/v1/endpoint/{detail}", {}),
        "GET /hosts": ("/api/v1/hosts", {}),
        "GET /new-detections": ("/api/v1/new-detections", {}),
        "GET /new-detections DATA_FIELD HIGH": ("/api/v1/new-detections", {"detectionType": "DATA_FIELD",
                                                                          "detectionRiskScores": ["HIGH"]}),
    }


def run_clients(clients: int, seconds: float, work, label: str) -> tuple[list[float], float]:
    """Call ``work(client_index)`` in ``clients`` threads for ``seconds``; latencies and requests/s."""
    latencies: list[float] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds
    errors: list[str] = []

    def client(index: int) -> None:
        mine = []
        try:
            state = work(index, None)
            while time.perf_counter() < stop:
                started = time.perf_counter()
                work(index, state)
                mine.append(time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"{label}: {exc!r}")
        with lock:
            latencies.extend(mine)

    _, seconds = in_threads(client, clients)
    if errors:
        sys.exit(errors[0])
    return latencies, len(latencies) / seconds


def captured_sql(svc: BenchService, path: str, params: dict) -> tuple[list[str], list[str]]:
    """The SQL statements the route runs for this request in this process (the service's settings):
    (first request: nothing cached, steady state: the request repeated)."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_AUTHORIZATION=svc.key)
    runs = []
    for _ in range(2):
        with CaptureQueriesContext(connection) as captured:
            response = client.get(path, params)
        assert response.status_code == 200, (path, response.status_code, response.content[:200])
        runs.append([q["sql"] for q in captured.captured_queries])
    return runs[0], runs[1]


def sql_time_ms(svc: BenchService, statements: list[str]) -> float:
    """Milliseconds to run these statements once, in order, on a fresh connection (best of 3)."""
    import psycopg

    best = float("inf")
    with psycopg.connect(f"{PG}/{svc.db}", autocommit=True) as conn:
        for _ in range(3):
            started = time.perf_counter()
            for sql in statements:
                conn.execute(sql).fetchall()
            best = min(best, time.perf_counter() - started)
    return best * 1000


def explain(svc: BenchService, statements: list[str]) -> list[str]:
    out = []
    for sql in statements:
        if not sql.lstrip().upper().startswith("SELECT") or "core_apikey" in sql:
            continue
        rows = svc.sql("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        out.append(sql[:300] + ("…" if len(sql) > 300 else ""))
        out.extend("    " + r[0] for r in rows)
    return out


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_reads")
    parser.add_argument("--endpoints", type=int, default=100_000)
    parser.add_argument("--fields-per-endpoint", type=int, default=10)
    parser.add_argument("--hosts", type=int, default=500)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=4.0, help="per case, HTTP and SQL each")
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of every query")
    parser.add_argument("--keep-db", action="store_true", help="keep the database (and reuse it with --reuse-db)")
    parser.add_argument("--reuse-db", action="store_true", help="skip seeding: reuse a database kept earlier")
    parser.add_argument("--only", help="run only the cases whose name contains this text")
    args = parser.parse_args()
    if args.small:
        args.endpoints, args.hosts, args.seconds = 2000, 20, 0.5

    figures = Figures("reads", json_path=args.json, small=args.small)
    with BenchService(db=args.db, redis_db=args.redis_db, web_threads=args.web_threads,
                      worker_concurrency=args.worker_concurrency, worker_pool=args.worker_pool,
                      worker_nice=args.worker_nice, fresh=not args.reuse_db) as svc:
        print(f"service: {svc.describe()}", flush=True)
        started = time.perf_counter()
        if not args.reuse_db:
            seed(svc, endpoints=args.endpoints, fields_per_endpoint=args.fields_per_endpoint, hosts=args.hosts)
        counts = svc.sql("SELECT (SELECT count(*) FROM inventory_endpoint), (SELECT count(*) FROM "
                         "classification_datafield), (SELECT count(*) FROM inventory_host)")[0]
        print(f"seeded {counts[0]:,} endpoints, {counts[1]:,} data fields, {counts[2]} hosts "
              f"in {time.perf_counter() - started:.1f} s", flush=True)
        svc.django_setup()
        from django.conf import settings

        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
        import psycopg

        for name, (path, params) in cases(svc).items():
            if args.only and args.only not in name:
                continue
            first, statements = captured_sql(svc, path, params)
            cold_ms = sql_time_ms(svc, first)
            # A repeat served from the answer cache runs no SQL at all: the bare-SQL yardstick is then
            # the statements of the uncached request (the work the cache spares), not an empty list.
            statements = [sql for sql in statements if "inventory_" in sql or "classification_" in sql] or first
            sessions = [svc.session() for _ in range(args.clients)]
            url = svc.base_url + path

            def http(index, state, url=url, params=params, sessions=sessions):
                if state is None:
                    return sessions[index].get(url, params=params, timeout=60)  # warm-up, connection
                response = sessions[index].get(url, params=params, timeout=60)
                if response.status_code != 200:
                    raise RuntimeError(f"{response.status_code} {response.text[:200]}")
                return None

            meter = CpuMeter(svc).start()
            client_cpu = time.process_time()
            latencies, rate = run_clients(args.clients, args.seconds, http, name)
            client_cpu = time.process_time() - client_cpu
            cpu = meter.stop()
            total = sessions[0].get(url, params=params, timeout=60).headers.get("X-Total-Count", "-")
            for s in sessions:
                s.close()
            connections = [psycopg.connect(f"{PG}/{svc.db}", autocommit=True) for _ in range(args.clients)]

            def bare(index, state, statements=statements, connections=connections):
                for sql in statements:
                    connections[index].execute(sql).fetchall()

            sql_latencies, sql_rate = run_clients(args.clients, args.seconds, bare, name + " (SQL)")
            for c in connections:
                c.close()
            ms = [x * 1000 for x in latencies]
            sql_ms = [x * 1000 for x in sql_latencies]
            p50, p99, sql_p50, sql_p99 = (percentile(ms, 50), percentile(ms, 99), percentile(sql_ms, 50),
                                          percentile(sql_ms, 99))
            listing = name.startswith("GET /endpoints") and "limit=500" not in name
            target = {}
            if listing or name.startswith("GET /endpoint/"):
                target = {"target": "≤ 25 ms" + (" and ≤ 3× bare SQL" if listing else ""),
                          "ok": p99 <= 25 and (not listing or p99 <= 3 * max(sql_p99, 1e-9))}
            figures.add(f"{name}: p99", p99, "ms", **target,
                        note=f"p50 {p50:.1f} ms, {rate:.0f} req/s, {args.clients} clients, total {total}; "
                             f"bare SQL ({len(statements)} statements) p50 {sql_p50:.1f} p99 {sql_p99:.1f} ms, "
                             f"{sql_rate:.0f}/s; ratio p99 {p99 / max(sql_p99, 1e-9):.1f}×; uncached SQL "
                             f"({len(first)} statements) {cold_ms:.1f} ms; CPU per request: "
                             + ", ".join(f"{k} {v / max(len(latencies), 1) * 1000:.2f}"
                                         for k, v in {**cpu, "bench client": client_cpu}.items()) + " ms")
            if args.explain:
                print("\n".join(explain(svc, first)), flush=True)
        figures.memory(svc, "after reads")
    if not args.keep_db:
        svc.drop_database()


if __name__ == "__main__":
    main()
