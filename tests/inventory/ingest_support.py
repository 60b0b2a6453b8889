"""Builders and helpers shared by the ingestion tests."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from inventory.models import IngestBatch
from inventory.tasks import analyze_batch_task

FIXTURES = Path(__file__).parent / "fixtures"


def sample(name: str):
    """A captured Metlo agent payload (tests/inventory/fixtures, copied from real agent traffic)."""
    return json.loads((FIXTURES / name).read_text())


def raw_trace(
    *,
    host: str = "api.example.com",
    path: str = "/api/v1/users/42",
    method: str = "GET",
    status: int = 200,
    query: list | None = None,
    headers: dict | None = None,
    body: str = "",
    response_headers: dict | None = None,
    response_body: object = "",
    source: str = "10.0.0.7",
    destination: str = "10.0.0.1",
    destination_port: str | int | None = "443",
) -> dict:
    """A raw trace as Metlo's pure-Python agent sends it."""
    if not isinstance(response_body, str):
        response_body = json.dumps(response_body)
    response_headers = {"Content-Type": "application/json", **(response_headers or {})}
    return {
        "request": {
            "url": {"host": host, "path": path, "parameters": [{"name": k, "value": v} for k, v in (query or [])]},
            "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
            "body": body,
            "method": method,
        },
        "response": {
            "status": status,
            "headers": [{"name": k, "value": v} for k, v in response_headers.items()],
            "body": response_body,
        },
        "meta": {
            "environment": "production", "incoming": True, "source": source, "sourcePort": "51234",
            "destination": destination, "destinationPort": destination_port, "metloSource": "python/flask",
        },
    }


def processed_trace(**overrides) -> dict:
    """A v2 processed trace (shape of Metlo 0.1.5's), with overrides merged in."""
    trace = copy.deepcopy(sample("v2-batch-flask-01.json")[0])
    for key, value in overrides.items():
        trace[key] = value
    return trace


def send(client, captured, url: str, payload) -> object:
    """POST a payload like an agent does, then run the analysis of every batch it enqueued.

    ``captured`` is pytest-django's ``django_capture_on_commit_callbacks``: the
    route enqueues after commit, and the test runs exactly what the worker runs
    (the task function) with the enqueued id.
    """
    with captured() as callbacks:
        response = client.post(url, payload, format="json")
    for callback in callbacks:
        analyze_batch_task(*callback.args)
    return response


@pytest.fixture
def ingest(client, django_capture_on_commit_callbacks):
    """``ingest(*traces, url=...)``: post raw traces to an ingestion route (200 asserted), then run the
    analysis of what it enqueued (see :func:`send`)."""
    def _ingest(*traces, url="/api/v1/log-request/batch"):
        response = send(client, django_capture_on_commit_callbacks, url, list(traces))
        assert response.status_code == 200, response.content
    return _ingest


def stored_traces_text() -> str:
    """Every stored trace's path, parameters, headers and bodies as one JSON text (to search for values)."""
    from inventory.models import ApiTrace

    return json.dumps(list(ApiTrace.objects.values(
        "path", "request_parameters", "request_headers", "request_body", "response_headers", "response_body")))


@pytest.fixture
def seeded_transactional_db(transactional_db):
    """For ``transaction=True`` tests: the built-in data classes (a previous flush may have removed them)."""
    from tests.conftest import seed_builtin_data_classes

    seed_builtin_data_classes()


def pending_batches() -> int:
    return IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).count()
