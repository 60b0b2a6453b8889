"""Benchmark: GET /api/v1/gen-test-endpoints for a host with 1,000 endpoints.

Creates a throw-away database (``test_<name>`` of DATABASE_URL, PostgreSQL), fills one host
with endpoints shaped like real traffic (observed paths, traces with query/JSON bodies,
data fields; a mix of authenticated reads, writes, searches and logins), then times the
route end to end through the API (query, generation, JSON rendering) and the service alone.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/apiscope_bench python bench/testgen.py [--endpoints 1000] [--runs 5] [--type SQL_INJECTION]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402

HOST = "bench.example.com"


def fill(n: int) -> None:
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
    parser = argparse.ArgumentParser()
    parser.add_argument("--endpoints", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--type", help="Template for every endpoint (default: automatic selection).")
    args = parser.parse_args()

    setup_test_environment()
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        from django.test.utils import CaptureQueriesContext
        from rest_framework.test import APIClient

        from core.models import ApiKey
        from testgen.services import tests_generate_for_host

        started = time.perf_counter()
        fill(args.endpoints)
        print(f"filled {args.endpoints} endpoints in {time.perf_counter() - started:.1f} s")
        _, raw_key = ApiKey.issue(name="bench")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=raw_key)

        api_times, service_times = [], []
        size = 0
        queries = 0
        for _ in range(args.runs):
            started = time.perf_counter()
            with CaptureQueriesContext(connection) as captured:
                response = client.get("/api/v1/gen-test-endpoints",
                                      {"host": HOST, **({"type": args.type} if args.type else {})})
            api_times.append(time.perf_counter() - started)
            assert response.status_code == 200
            size, queries = len(response.content), len(captured)
            started = time.perf_counter()
            items = tests_generate_for_host(host=HOST, template_name=args.type)
            service_times.append(time.perf_counter() - started)
        by_template: dict[str, int] = {}
        for item in items:
            key = item.get("templateName") or "none"
            by_template[key] = by_template.get(key, 0) + 1
        requests = sum(len(i["test"]["requests"]) for i in items if i["success"])
        print(f"items: {len(items)} {by_template}; {requests} test requests; body {size / 1e6:.1f} MB; "
              f"{queries} queries per call")
        print(f"GET /gen-test-endpoints (API, median of {args.runs}): {statistics.median(api_times) * 1000:.0f} ms "
              f"(min {min(api_times) * 1000:.0f}, max {max(api_times) * 1000:.0f})")
        print(f"tests_generate_for_host (service, median): {statistics.median(service_times) * 1000:.0f} ms")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
