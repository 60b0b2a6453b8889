"""``manage.py run_security_tests``: generate security tests and run them against the testing environment.

Exit status 0 when no test failed or errored (INCONCLUSIVE results do not count), 1 when one
failed or could not run (ERROR).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.enums import HttpMethod
from testgen.coverage import SEVERITY_ORDER, summary_lines
from testgen.errors import TestEndpointNotFound
from testgen.evidence import evidence_lines
from testgen.junit import junit_xml
from testgen.runner import Outcome, TestResult
from testgen.services import AuthTokenUnreadable, RunRefused, run_environment_load, test_run_cli, tests_collect
from testgen.templates import template_names, template_versions

MARK = {Outcome.PASSED: "PASS", Outcome.FAILED: "FAIL", Outcome.ERROR: "ERROR", Outcome.INCONCLUSIVE: "INCONCLUSIVE"}
# What makes the exit status 1 (an inconclusive test could not decide: not a failure; DECISIONS §8).
FAILING = {Outcome.FAILED, Outcome.ERROR}


class Command(BaseCommand):
    help = (
        "Generate security tests for endpoints of the inventory (or read them from a file) and run them "
        "against the global testing environment's baseUrl. Prints progress and a result table; "
        "exits 1 when a test fails or cannot run (an inconclusive test does not)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--host", help="Only endpoints of this host.")
        parser.add_argument("--endpoint", help="One endpoint: path pattern, concrete path or uuid.")
        parser.add_argument("--method", choices=HttpMethod.values, help="Narrow --endpoint to this method.")
        parser.add_argument("--type", choices=template_names(), help="Only this template (default: every applicable template per endpoint).")
        parser.add_argument("--template-version", type=int, help="Template version (with --type).")
        parser.add_argument("--file", help="Run the tests of this JSON file instead of generating: a TestConfig, "
                                           "a list of them, or gen-test-endpoint(s) output.")
        parser.add_argument("--junit", metavar="FILE", help="Also write a JUnit XML report to FILE.")
        parser.add_argument("--base-url", help="Target this URL instead of the environment's baseUrl.")
        parser.add_argument("--insecure", action="store_true", help="Do not verify TLS certificates.")

    def handle(self, *args, **options):
        try:
            environment = run_environment_load(
                overrides={"baseUrl": options["base_url"]} if options.get("base_url") else None)
        except AuthTokenUnreadable as exc:
            raise CommandError(str(exc)) from exc
        if environment is None:
            raise CommandError("No testing environment: set one with PUT /api/v1/testing/global-env "
                               "(or in the admin), or pass --base-url.")
        if options.get("template_version") is not None and (
                not options.get("type") or options["template_version"] not in template_versions(options["type"])):
            raise CommandError("--template-version needs --type and must be a version of that template.")

        tests, not_generated = self._collect(options)
        if not tests:
            self.stdout.write(f"No test to run ({len(not_generated)} endpoint(s) without a test).")
            for item in not_generated:
                self.stdout.write(f"  {item['method']} {item['endpoint']}: {item['msg']}")
            return
        self.stdout.write(f"Running {len(tests)} test(s) against {environment.base_url}")

        def progress(position: int, result: TestResult) -> None:
            self.stdout.write(
                f"[{position}/{len(tests)}] {MARK[result.outcome]:5} {result.template} {result.method} "
                f"{result.endpoint} ({result.num_sent} requests, {result.duration_ms / 1000:.2f} s)"
            )
            self.stdout.flush()

        # {{env.NAME}} reads this command's environment, for the names in TESTING_ENV_ALLOWLIST only.
        try:
            run, results = test_run_cli(environment=environment, tests=tests, not_generated=not_generated,
                                        options=options, environ=os.environ, verify_tls=not options["insecure"],
                                        on_result=progress)
        except RunRefused as exc:
            raise CommandError(str(exc)) from exc
        self._table(results, not_generated, run.coverage or {})
        self.stdout.write(f"Recorded as test run {run.uuid} (GET /api/v1/testing/runs/{run.uuid})")
        if options.get("junit"):
            Path(options["junit"]).write_bytes(junit_xml(results, coverage=run.coverage))
            self.stdout.write(f"JUnit report written to {options['junit']}")
        if any(r.outcome in FAILING for r in results):
            raise SystemExit(1)

    # --- collecting tests -------------------------------------------------------------
    def _collect(self, options) -> tuple[list[dict], int]:
        if options.get("file"):
            return self._from_file(options["file"]), []
        try:
            return tests_collect(host=options.get("host"), endpoint=options.get("endpoint"),
                                 method=options.get("method"), template_name=options.get("type"),
                                 version=options.get("template_version"))
        except TestEndpointNotFound as exc:
            raise CommandError("Could not find endpoint.") from exc

    def _from_file(self, name: str) -> tuple[list[dict], list[dict]]:
        try:
            data = json.loads(Path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read tests from {name}: {exc}") from exc
        items = data if isinstance(data, list) else [data]
        tests = []
        for item in items:
            if isinstance(item, dict) and "requests" not in item and "success" in item:
                if item.get("success") and isinstance(item.get("test"), dict):
                    tests.append(item["test"])
            else:
                tests.append(item)
        return tests

    # --- output ----------------------------------------------------------------------
    def _table(self, results: list[TestResult], not_generated: list[dict], coverage: dict) -> None:
        """The result table, each FAILED or ERROR test's checks and evidence (findings by severity),
        then the summary: findings by severity, what could not be decided and what to configure, what
        was not tested, and the counts."""
        rows = [("RESULT", "TEMPLATE", "METHOD", "ENDPOINT", "HOST", "DETAIL")]
        for r in results:
            rows.append((MARK[r.outcome], r.template, r.method, r.endpoint, r.host, r.message))
        widths = [min(max(len(row[i]) for row in rows), 60) for i in range(5)]
        self.stdout.write("")
        for row in rows:
            cells = [row[i][: widths[i]].ljust(widths[i]) for i in range(5)]
            self.stdout.write("  ".join([*cells, row[5]]).rstrip())
        counts = {o: sum(r.outcome == o for r in results) for o in MARK}
        summary = (f"{counts[Outcome.PASSED]} passed, {counts[Outcome.FAILED]} failed, "
                   f"{counts[Outcome.ERROR]} error(s)")
        if counts[Outcome.INCONCLUSIVE]:
            summary += f", {counts[Outcome.INCONCLUSIVE]} inconclusive"
        if not_generated:
            summary += f"; {len(not_generated)} endpoint(s) without a test"
        ordered = sorted(results, key=lambda r: (r.outcome != Outcome.FAILED, SEVERITY_ORDER.get(r.severity or "", 9)))
        for r in ordered:
            if r.outcome in (Outcome.FAILED, Outcome.ERROR):
                self.stdout.write(f"\n{MARK[r.outcome]} {f'[{r.severity}] ' if r.severity else ''}{r.name}")
                if not r.failures:
                    self.stdout.write(f"  - {r.message}")
                for failure in r.failures:
                    self.stdout.write(f"  - {failure.description}: {failure.message}")
                for line in evidence_lines(r.evidence):
                    self.stdout.write(f"    {line}")
        if coverage:
            for line in summary_lines(results, coverage):
                self.stdout.write(line)
        self.stdout.write("")
        self.stdout.write(summary)
        sys.stdout.flush()
