"""Schemathesis against our own OpenAPI document (GET /api/v1/schema), every operation.

The WSGI app runs in this process on the test database (one transaction per test, rolled
back): nothing is committed, so no Celery message is ever published (``on_commit`` never
fires) — the broker check at the end proves it. Traces the fuzz gets accepted are analysed
right here with the worker's own function, so junk that passes ingestion also goes through
the analysis.

Every operation runs its explicit examples, the coverage phase (boundary and invalid values,
missing key) and ``FUZZ_MAX_EXAMPLES`` generated cases (valid and invalid, ``mode = all``)
from a fixed seed, with an inventory seeded through the real routes so path parameters can
name existing rows. A stateful run then chains operations through the links Schemathesis
infers from the schema (``POST /webhook`` → ``GET /webhook/{webhook_id}``, ``GET /alerts`` →
``PUT /alert/{alert_id}``…), every scenario from the same seeded state. docs/hardening.md:
``FUZZ_MAX_EXAMPLES``, ``FUZZ_SEED``, ``FUZZ_STATEFUL_EXAMPLES``, ``FUZZ_STATEFUL_STEPS`` run it longer.
"""
from __future__ import annotations

import os
import uuid
import zlib
from collections import Counter, defaultdict

import pytest
import redis
import schemathesis
from django.conf import settings as django_settings
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, seed, settings
from rest_framework.test import APIClient
from schemathesis import checks as st_checks
from schemathesis.config import SchemathesisConfig

from .support import analyse_pending, seed_inventory

SEED = int(os.environ.get("FUZZ_SEED", "20260131"))
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "25"))
STATEFUL_STEPS = int(os.environ.get("FUZZ_STATEFUL_STEPS", "15"))
STATEFUL_EXAMPLES = int(os.environ.get("FUZZ_STATEFUL_EXAMPLES", "40"))
MIN_CASES = 1000
STATEFUL = "stateful sequences"

pytestmark = pytest.mark.django_db

CHECKS = [
    st_checks.not_a_server_error,
    st_checks.status_code_conformance,
    st_checks.content_type_conformance,
    st_checks.response_schema_conformance,
    st_checks.response_headers_conformance,
]
INGEST_PATHS = ("/api/v1/log-request/single", "/api/v1/log-request/batch", "/api/v2/log-request/batch")

config = SchemathesisConfig.from_dict({
    "seed": SEED,
    "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "database": "none"},
    # No values taken from earlier responses (uuids, timestamps): the same seed sends the same cases.
    "phases": {"fuzzing": {"extra-data-sources": {"responses": False}}, "stateful": {"max-steps": STATEFUL_STEPS}},
})
schema = schemathesis.openapi.from_wsgi("/api/v1/schema", get_wsgi_application(), config=config)

# Answers, by operation and status; the last test checks the number of cases and prints them.
SENT: dict[str, Counter] = defaultdict(Counter)
SEEDED_IDS: dict[str, list[str]] = {}


@pytest.fixture(scope="module")
def broker_untouched():
    """The fuzz must publish nothing: no queue of the broker grows while it runs."""
    connection = redis.Redis.from_url(django_settings.CELERY_BROKER_URL)

    def queues() -> dict[bytes, int]:
        return {key: connection.llen(key) for key in connection.scan_iter(count=1000)
                if connection.type(key) == b"list"}

    before = queues()
    yield
    grown = {key: length for key, length in queues().items() if length > before.get(key, 0)}
    assert grown == {}


@pytest.fixture(scope="module")
def seeded(django_db_setup, django_db_blocker, broker_untouched):
    """A realistic inventory, seeded once for the module inside a transaction rolled back at its end.

    Returns the raw API key and the seeded ids (also published in ``SEEDED_IDS`` for the
    parameter substitution below).
    """
    from core.models import ApiKey

    with django_db_blocker.unblock():
        module_transaction = transaction.atomic()
        module_transaction.__enter__()
        try:
            _, api_key = ApiKey.issue(name="fuzz")
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=api_key)
            SEEDED_IDS.clear()
            SEEDED_IDS.update(seed_inventory(client).ids)
            yield api_key
        finally:
            transaction.set_rollback(True)
            module_transaction.__exit__(None, None, None)


@pytest.fixture
def api(seeded):
    """Requests through the raw WSGI app; yields the API key.

    At the end of a request Django closes a connection that is inside a transaction; the
    test client avoids that by disconnecting ``close_old_connections`` around each request,
    and so does this fixture for the raw app. (Each test runs in its own savepoint: django_db.)
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield seeded
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _is_uuid(value) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


def _use_known_ids(case) -> None:
    """Point three cases in four at seeded rows (path ids, host and endpoint filters), deterministically.

    A generated uuid is replaced by a seeded uuid (``endpoint`` of GET /alerts is a uuid, of
    gen-test-endpoint a path pattern or a uuid)."""
    for container in (case.path_parameters, case.query):
        if not container:
            continue
        for name, value in list(container.items()):
            known = SEEDED_IDS.get(name)
            if known and _is_uuid(value):
                known = [k for k in known if _is_uuid(k)]
            if not known:
                continue
            digest = zlib.crc32(repr(value).encode())
            if digest % 4:
                container[name] = known[digest % len(known)]


def _send(case, api_key: str):
    response = case.call(headers={"Authorization": api_key})
    SENT[case.operation.label][response.status_code] += 1
    case.validate_response(response, checks=CHECKS, headers={"Authorization": api_key})
    if case.operation.path in INGEST_PATHS and response.status_code == 200:
        # Accepted traces must analyse without error (a failure would be retried, then the batch dropped).
        analyse_pending()
    return response


@schema.parametrize()
@settings(suppress_health_check=list(HealthCheck))
def test_operation_answers_as_documented(case, api):
    _use_known_ids(case)
    _send(case, api)


APIWorkflow = schema.as_state_machine()


def test_stateful_sequences_answer_as_documented(api):
    """Chains of calls along the links Schemathesis infers (e.g. POST /webhook → GET /webhook/{id}),
    each scenario from the same seeded state (a savepoint rolled back after it), so runs repeat."""

    class Workflow(APIWorkflow):
        def setup(self):
            self._scenario = transaction.atomic()
            self._scenario.__enter__()

        def teardown(self):
            transaction.set_rollback(True)
            self._scenario.__exit__(None, None, None)

        def get_call_kwargs(self, case):
            return {"headers": {"Authorization": api}}

        def call(self, case, **kwargs):
            response = case.call(**kwargs)
            SENT[STATEFUL][response.status_code] += 1
            if case.operation.path in INGEST_PATHS and response.status_code == 200:
                analyse_pending()
            return response

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, headers=kwargs.get("headers"))

    seed(SEED)(Workflow).run(settings=settings(
        max_examples=STATEFUL_EXAMPLES, stateful_step_count=STATEFUL_STEPS, deadline=None,
        database=None, suppress_health_check=list(HealthCheck),
    ))


def test_the_fuzz_sent_enough_cases():
    operations = sum(1 for result in schema.get_all_operations() if result.ok())
    if len([label for label in SENT if label != STATEFUL]) < operations or STATEFUL not in SENT:
        pytest.skip("only part of the fuzz ran")
    total = sum(sum(statuses.values()) for statuses in SENT.values())
    print(f"\nfuzz: {total} cases over {operations} operations, {sum(SENT[STATEFUL].values())} of them "
          f"in stateful sequences (seed {SEED}, {MAX_EXAMPLES} generated examples per operation)")
    for label, statuses in sorted(SENT.items()):
        answers = ", ".join(f"{status}: {n}" for status, n in sorted(statuses.items()))
        print(f"  {sum(statuses.values()):5d}  {label}  ({answers})")
    assert total >= MIN_CASES
