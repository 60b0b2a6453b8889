"""The yardstick's measurement: a twin's traffic ingested through the real ingest URL and a real
worker, the global environment set through the API as docs/testgen.md tells users, tests generated
and run by ``manage.py run_security_tests``, and every result read back through the runs API."""
from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

from django.core.management import call_command
from django.test import override_settings

from inventory.models import Endpoint, IngestBatch
from tests.support.processes import wait_for
from tests.testgen.owasp.books_app import BooksApp
from tests.testgen.target_app import RunningTarget

TEMPLATES = ("BOLA", "AUTH_BYPASS", "MASS_ASSIGNMENT", "SQL_INJECTION", "XSS", "RATE_LIMIT", "DATA_EXPOSURE",
             "USER_ENUMERATION")
# The second test user, as docs/testgen.md tells operators to configure one: a login recipe (BOLA/BFLA
# compare two real users; its password is only ever put back, never guessed) and its own book.
SECOND_USER = {"name": "bob", "userId": "bob", "objectIds": {"book": "2"},
               "login": {"url": "/users/v1/login", "body": {"username": "bob", "password": "Bob-pw-2"},
                         "tokenPath": "auth_token"}}
FAST = {"TESTGEN_SQLI_DELAY_SECONDS": 1, "TESTGEN_RATE_LIMIT_BURST": 8, "TESTGEN_MAX_INPUTS": 5,
        "TESTING_ALLOWED_TARGETS": ["127.0.0.1"]}


@dataclass(frozen=True)
class Flaw:
    """One row of the table: the flaw switched on alone in the vulnerable twin, the template(s)
    whose FAILED result on a matching endpoint counts as detecting it, and what #15 must build."""

    name: str
    owasp: str
    templates: tuple[str, ...]
    endpoint: str  # regex on "METHOD /path/pattern" of the inventory's endpoints
    missing: str


@dataclass
class Result:
    template: str
    method: str
    endpoint: str
    outcome: str
    message: str

    def matches(self, templates, endpoint: str) -> bool:
        return self.template in templates and re.fullmatch(endpoint, f"{self.method} {self.endpoint}") is not None


@dataclass
class Measure:
    results: list[Result] = field(default_factory=list)
    runs: int = 0

    def failed(self, templates=TEMPLATES, endpoint: str = ".*") -> list[Result]:
        return [r for r in self.results if r.outcome == "FAILED" and r.matches(templates, endpoint)]


def ingest(client, traces: list[dict], hosts: set[str], worker) -> None:
    """Post the traces as an agent does; wait until every batch is analysed and the inventory has
    settled (paths are learned right after a batch commits, sometimes a little later)."""
    response = client.post("/api/v1/log-request/batch", traces, format="json")
    assert response.status_code == 200, response.content
    seen: list = []

    def settled() -> bool:
        if IngestBatch.objects.exclude(status=IngestBatch.Status.DONE).exists():
            return False
        seen.append(sorted(Endpoint.objects.filter(host__name__in=hosts).values_list("host__name", "method", "path")))
        return {h for h, _, _ in seen[-1]} >= hosts and len(seen) >= 6 and seen[-6] == seen[-1]

    wait_for(settled, timeout=120, interval=0.5, message=lambda: worker.log()[-3000:])


def endpoints(host: str, pattern: str = ".*") -> list[tuple[str, str]]:
    """(method, path pattern) of the host's endpoints matching ``pattern``."""
    rows = Endpoint.objects.filter(host__name=host).values_list("method", "path")
    return sorted((m, p) for m, p in rows if re.fullmatch(pattern, f"{m} {p}"))


def measure(client, app: BooksApp, host: str, plan: list[tuple[str, tuple[str, str] | None]]) -> Measure:
    """Serve ``app``, point the global environment at it (alice's bearer token, as an operator pastes
    it; bob as the second identity, logging in by himself), run each (template or None for the default selection, endpoint or None for the whole host)
    and collect every result."""
    target = RunningTarget(app)
    found = Measure()
    try:
        env = {"baseUrl": target.base_url, "authToken": f"Bearer {app.token_for('alice')}",
               "testUserId": "alice", "timeout": 5000, "retries": 0, "identities": [SECOND_USER]}
        response = client.put("/api/v1/testing/global-env", env, format="json")
        assert response.status_code == 200, response.content
        with override_settings(**FAST):
            for template, endpoint in plan:
                found.results += _run(client, host, template, endpoint)
                found.runs += 1
    finally:
        target.stop()
    return found


def _run(client, host: str, template: str | None, endpoint: tuple[str, str] | None) -> list[Result]:
    """One run; ``template`` None is a run without ``--type`` (the default selection)."""
    args = ["--host", host] + (["--type", template] if template else [])
    if endpoint:
        args += ["--method", endpoint[0], "--endpoint", endpoint[1]]
    try:
        call_command("run_security_tests", *args, stdout=io.StringIO())
    except SystemExit:
        pass  # exit status 1: some test failed or errored; the results say which
    newest = client.get("/api/v1/testing/runs?limit=1").json()[0]
    detail = client.get(f"/api/v1/testing/runs/{newest['uuid']}").json()
    assert detail["status"] == "DONE", detail
    return [Result(r["templateName"], r["method"], r["endpoint"], r["outcome"], r["message"])
            for r in detail["results"]]
