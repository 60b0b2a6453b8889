"""Benchmark: GET /api/v1/gen-test-endpoints for a host with 1,000 endpoints.

    python bench/testgen.py [--endpoints 1000] [--runs 5] [--type SQL_INJECTION] [--small]

Runs the service the production way (``bench.service.BenchService``), fills one host with
endpoints shaped like real traffic (observed paths, traces with query/JSON bodies, data
fields; a mix of authenticated reads, writes, searches and logins), then times the route end
to end over HTTP (query, generation, JSON rendering), and the generation alone in this process.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.service import BenchService, Figures, bench_arguments  # noqa: E402

HOST = "bench.example.com"


def fill(n: int) -> None:
    from django.utils import timezone

    from classification.models import DataField
    from inventory.models import ApiTrace, Endpoint, Host, ObservedPath

    host = Host.objects.create(name=HOST, is_public_detected=True)
    now = timezone.now()
    endpoints, paths, traces, fields = [], [], [], []
    for i in range(n):
        kind = i % 4
        if kind == 0:    # authenticated item read
            method, path, auth = "GET", f"/api/v1/res{i}/{{param1}}", True
        elif kind == 1:  # authenticated write with a JSON body
            method, path, auth = "PATCH", f"/api/v1/res{i}/{{param1}}", True
        elif kind == 2:  # public search
            method, path, auth = "GET", f"/api/v1/search{i}", False
        else:            # login-like POST
            method, path, auth = "POST", f"/api/v1/auth{i}/login", False
        segments = [s for s in path.split("/") if s]
        e = Endpoint(host=host, method=method, path=path, is_authenticated_detected=auth,
                     path_regex="^/" + "/".join("[^/]+" if s.startswith("{") else s for s in segments) + "$",
                     num_segments=len(segments), num_literal_segments=sum(not s.startswith("{") for s in segments),
                     first_detected=now, last_active=now)
        endpoints.append(e)
        concrete = path.replace("{param1}", "1")
        for k in range(1, 6 if "{param1}" in path else 1):
            paths.append(ObservedPath(endpoint=e, path=path.replace("{param1}", str(k)), last_seen=now))
        headers = [{"name": "Authorization", "value": "[REDACTED]"}] if auth else []
        query, body = [], ""
        if kind == 2:
            query = [{"name": "q", "value": "shoes"}, {"name": "page", "value": "2"}, {"name": "sort", "value": "asc"}]
        if kind in (1, 3):
            headers.append({"name": "Content-Type", "value": "application/json"})
            body = json.dumps({"name": "x", "email": "[REDACTED]", "age": 30} if kind == 1
                              else {"username": "u", "password": "[REDACTED]"})
        for _ in range(3):
            traces.append(ApiTrace(endpoint=e, host=HOST, path=concrete, method=method, request_parameters=query,
                                   request_headers=headers, request_body=body, response_status=200,
                                   response_body='{"id": 1, "name": "x"}', created_at=now))
        for name in ("q", "page", "sort") if kind == 2 else ():
            fields.append(DataField(endpoint=e, data_section="REQUEST_QUERY", data_path=name, data_type="string"))
        for name, data_type in ({"name": "string", "email": "string", "age": "integer"}.items() if kind == 1 else
                                {"username": "string", "password": "string"}.items() if kind == 3 else ()):
            fields.append(DataField(endpoint=e, data_section="REQUEST_BODY", data_path=name, data_type=data_type,
                                    content_type="application/json"))
        for name in ("id", "name"):
            fields.append(DataField(endpoint=e, data_section="RESPONSE_BODY", data_path=name, status_code=200,
                                    data_type="integer" if name == "id" else "string"))
    Endpoint.objects.bulk_create(endpoints, batch_size=1000)
    ObservedPath.objects.bulk_create(paths, batch_size=2000)
    ApiTrace.objects.bulk_create(traces, batch_size=2000)
    DataField.objects.bulk_create(fields, batch_size=2000)


def main() -> None:
    parser = bench_arguments(__doc__, db="apiscope_bench_testgen", redis_db=12)
    parser.add_argument("--endpoints", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--type", help="Template for every endpoint (default: automatic selection).")
    args = parser.parse_args()
    if args.small:
        args.endpoints, args.runs = 40, 2

    figures = Figures("testgen", json_path=args.json, small=args.small)
    with BenchService(db=args.db, redis_db=args.redis_db, web_threads=args.web_threads,
                      worker_concurrency=args.worker_concurrency, worker_pool=args.worker_pool) as svc:
        svc.django_setup()
        from testgen.services import tests_generate_for_host

        started = time.perf_counter()
        fill(args.endpoints)
        print(f"service: {svc.describe()}; filled {args.endpoints} endpoints in "
              f"{time.perf_counter() - started:.1f} s", flush=True)
        http = svc.session()
        params = {"host": HOST, **({"type": args.type} if args.type else {})}
        api_times, service_times, cpu_times = [], [], []
        size = 0
        for _ in range(args.runs):
            started = time.perf_counter()
            response = http.get(f"{svc.base_url}/api/v1/gen-test-endpoints", params=params, timeout=120)
            api_times.append(time.perf_counter() - started)
            response.raise_for_status()
            size = len(response.content)
            started, cpu = time.perf_counter(), time.process_time()
            items = tests_generate_for_host(host=HOST, template_name=args.type)
            service_times.append(time.perf_counter() - started)
            cpu_times.append(time.process_time() - cpu)
        by_template: dict[str, int] = {}
        for item in items:
            key = item.get("templateName") or "none"
            by_template[key] = by_template.get(key, 0) + 1
        generated = sum(len(i["test"]["requests"]) for i in items if i["success"])
        what = (f"{args.endpoints} endpoints, median of {args.runs}; {generated} test requests generated, "
                f"body {size / 1e6:.1f} MB; {by_template}")
        figures.add("gen-test-endpoints over HTTP", statistics.median(api_times) * 1000, "ms",
                    target="≤ 2,000 ms", ok=statistics.median(api_times) <= 2, note=what)
        figures.add("gen-test-endpoints over HTTP, slowest run", max(api_times) * 1000, "ms")
        figures.add("test generation alone (in process)", statistics.median(service_times) * 1000, "ms")
        figures.add("test generation alone, CPU time (in process; steadier than wall time under load)",
                    statistics.median(cpu_times) * 1000, "ms")
        figures.memory(svc, "after test generation")
    svc.drop_database()


if __name__ == "__main__":
    main()
