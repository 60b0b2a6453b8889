"""Test runs: collect tests, run them against the testing environment, record the outcome.

Used by the API (``POST /testing/runs``: a run in the Celery worker) and by
``manage.py run_security_tests`` (a run in the command's process). Tests are
sent outside any database transaction; results are written in one.

Before anything is sent a run is checked (``run_policy``: which ``{{env.NAME}}`` it may
read, none for API runs) and its ``baseUrl`` vetted (``testgen.targets``); a run that
fails either, or whose requests reach a refused target, ends FAILED with the reason.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from core.errors import ConflictError
from core.logsafe import withheld
from core.outbound import TargetRefused
from core.testmarker import marked_run_close, marked_run_open
from inventory.models import Host

from ..coverage import coverage_report
from ..identities import LoginFailed
from ..models import TestRun, TestRunResult
from ..runner import TestResult, tests_run
from ..templates import template_get
from .environment import AuthTokenUnreadable, RunEnvironment, run_environment_load
from .generation import endpoint_find, host_endpoints, test_generate, tests_generate_every, tests_generate_for_host
from .run_policy import RunRefused, env_allowed, env_references_check

logger = logging.getLogger(__name__)

NO_ENVIRONMENT = "No testing environment configured."
# A PENDING run older than this lost its message (broker restart): enqueue it again.
REENQUEUE_AFTER = timedelta(minutes=2)


def tests_collect(*, host: str | None = None, endpoint: str | None = None, method: str | None = None,
                  template_name: str | None = None, version: int | None = None) -> tuple[list[dict], list[dict]]:
    """Generate the tests a run covers: one endpoint (``endpoint``, narrowed by host/method),
    every endpoint of ``host``, or every endpoint of every host. Without ``template_name`` every
    applicable template runs on each endpoint (DECISIONS §8 and issue #15); with it, that one.
    Returns the tests and the items of the endpoints that got none (``{endpoint, method, msg, host}``:
    excluded from testing, no suitable template). Raises ``TestEndpointNotFound``."""
    options = {"template_name": template_name, "version": version}
    if endpoint:
        found = endpoint_find(endpoint=endpoint, host=host, method=method)
        results = (tests_generate_every(endpoints=[found]) if template_name is None
                   else [{**test_generate(endpoint=found, **options), "endpoint": found.path,
                          "method": found.method}])
        for item in results:
            item.setdefault("host", found.host.name)
    else:
        hosts = [host] if host else list(
            Host.objects.filter(endpoints__isnull=False).distinct().order_by("name").values_list("name", flat=True))
        results = []
        for name in hosts:
            if template_name is None:
                host_id, endpoints = host_endpoints(name)
                items = tests_generate_every(endpoints=endpoints, host_id=host_id)
            else:
                items = tests_generate_for_host(host=name, **options)
            results += [{**item, "host": name} for item in items]
    tests = [r["test"] for r in results if r.get("success")]
    # Stable: USER_ENUMERATION first (before failed logins lock the test user out), DELETE tests last (they
    # remove the test identities' objects the other tests name), deeper paths first among them (deleting
    # /articles/{a} removes its comments, which DELETE /articles/{a}/comments/{c} needs); the rest keep
    # their order.
    tests.sort(key=lambda test: (not _runs_first(test), test.get("method") == "DELETE",
                                 -str(test.get("endpoint", "")).count("/") if test.get("method") == "DELETE" else 0))
    return tests, [{k: r.get(k, "") for k in ("host", "endpoint", "method", "msg")} for r in results
                   if not r.get("success")]


def _runs_first(test: dict) -> bool:
    template = template_get(test.get("templateName", ""), test.get("templateVersion"))
    return bool(template and template.runs_first)


def _environment_or_conflict() -> RunEnvironment:
    try:
        environment = run_environment_load()
    except AuthTokenUnreadable as exc:
        raise ConflictError(str(exc)) from exc
    if environment is None:
        raise ConflictError(NO_ENVIRONMENT)
    return environment


def test_run_start(*, host: str | None = None, endpoint: str | None = None, method: str | None = None,
                   template_name: str | None = None, version: int | None = None) -> TestRun:
    """Create a PENDING run and hand it to the worker after commit.

    Raises ``ConflictError`` (409) without a usable testing environment and
    ``TestEndpointNotFound`` (SPEC's 404 body) for an unknown endpoint; nothing is written then.
    """
    environment = _environment_or_conflict()
    if endpoint:
        endpoint_find(endpoint=endpoint, host=host, method=method)
    with transaction.atomic():
        run = TestRun.objects.create(
            source=TestRun.Source.API, host=host or "", endpoint=endpoint or "", method=method or "",
            template_name=template_name or "", template_version=version, base_url=environment.base_url,
        )
        transaction.on_commit(partial(_run_enqueue, str(run.uuid)))
    logger.info("Test run %s queued", run.uuid)
    return run


def _run_enqueue(run_id: str) -> None:
    """Commit hook of :func:`test_run_start`: hand the run to the worker. A broker failure is logged,
    not raised (the run is committed and the client gets its 202): the run stays PENDING and
    :func:`test_runs_sweep` sends it later."""
    from ..tasks import test_run_execute_task

    try:
        test_run_execute_task.delay(run_id)
    except Exception:  # noqa: BLE001 - broker unreachable
        logger.warning("could not enqueue test run %s; the sweep will send it", run_id)


def test_run_execute(*, run_id) -> TestRun | None:
    """Run a PENDING run (the worker's side). A second call for the same run does nothing
    (the run is claimed with a conditional update); a run that is gone is ignored.

    No environment variable is ever read: a ``{{env.…}}`` reference fails the run before any
    request, and so does a refused ``baseUrl`` (the run's ``error`` says why)."""
    claimed = TestRun.objects.filter(uuid=run_id, status=TestRun.Status.PENDING).update(
        status=TestRun.Status.RUNNING, started_at=timezone.now())
    if not claimed:
        return None
    run = TestRun.objects.get(uuid=run_id)
    try:
        environment = _environment_or_conflict()
        tests, not_generated = tests_collect(
            host=run.host or None, endpoint=run.endpoint or None, method=run.method or None,
            template_name=run.template_name or None, version=run.template_version)
        env_references_check(environment=environment, tests=tests, allowlist=None)
    except RunRefused as exc:
        test_run_fail(run=run, error=str(exc))
        logger.warning("Test run %s refused: it refers to environment variables", run.uuid)
        return run
    except Exception as exc:  # the endpoint was deleted, the environment removed...
        message = getattr(exc, "body", None)
        test_run_fail(run=run, error=message if isinstance(message, str) else (
            message.get("msg") if isinstance(message, dict) else "The run could not start."))
        logger.info("Test run %s failed to start (%s)", run.uuid, type(exc).__name__)
        return run
    try:
        results = tests_run(tests=tests, environment=environment, environ={}, marker=marked_run_open(str(run.uuid)))
    except (TargetRefused, ImproperlyConfigured, LoginFailed) as exc:
        test_run_fail(run=run, error=str(exc))
        logger.warning("Test run %s could not start (%s)", run.uuid, type(exc).__name__)
        return run
    except Exception as exc:
        logger.error("Test run %s stopped on an unexpected error", run.uuid, exc_info=withheld(exc))
        test_run_fail(run=run, error="The run stopped on an unexpected error.")
        return run
    finally:
        marked_run_close(str(run.uuid))
    test_run_record(run=run, results=results, not_generated=not_generated)
    return run


def test_run_fail(*, run: TestRun, error: str) -> None:
    TestRun.objects.filter(uuid=run.uuid).update(status=TestRun.Status.FAILED, error=error,
                                                 finished_at=timezone.now())
    run.refresh_from_db()


def test_run_record(*, run: TestRun, results: list[TestResult], not_generated: list[dict] | int = ()) -> TestRun:
    """Store the results of a run and its coverage report (``not_generated``: the generation items of
    the endpoints that got no test) and close it DONE, in one transaction."""
    items = [] if isinstance(not_generated, int) else list(not_generated)
    count = not_generated if isinstance(not_generated, int) else len(items)
    with transaction.atomic():
        TestRunResult.objects.filter(run=run).delete()
        TestRunResult.objects.bulk_create([
            TestRunResult(
                run=run, position=position, test_id=r.test_id[:64], name=r.name[:2048], template_name=r.template[:64],
                host=r.host[:255], method=r.method[:10], endpoint=r.endpoint[:2048], outcome=r.outcome,
                message=r.message, num_requests=r.num_sent, duration_ms=round(r.duration_ms, 1),
                checks=[{"description": a.description, "outcome": a.outcome, "message": a.message,
                         "precondition": a.precondition} for a in r.assertions],
                evidence=r.evidence, severity=r.severity or "",
            )
            for position, r in enumerate(results)
        ])
        run.status = TestRun.Status.DONE
        run.num_tests = len(results)
        run.num_passed = sum(r.outcome == TestRunResult.Outcome.PASSED for r in results)
        run.num_failed = sum(r.outcome == TestRunResult.Outcome.FAILED for r in results)
        run.num_errors = sum(r.outcome == TestRunResult.Outcome.ERROR for r in results)
        run.num_inconclusive = sum(r.outcome == TestRunResult.Outcome.INCONCLUSIVE for r in results)
        run.num_not_generated = count
        run.coverage = coverage_report(results, items)
        run.finished_at = timezone.now()
        run.save()
    logger.info("Test run %s done: %d passed, %d failed, %d errors, %d inconclusive", run.uuid, run.num_passed,
                run.num_failed, run.num_errors, run.num_inconclusive)
    return run


def test_run_cli(*, environment: RunEnvironment, tests: list[dict], not_generated: list[dict], options: dict,
                 environ: Mapping[str, str], verify_tls: bool,
                 on_result: Callable[[int, TestResult], None] | None = None) -> tuple[TestRun, list[TestResult]]:
    """A run of the command: recorded like API runs (source CLI), run in this process.

    ``{{env.NAME}}`` reads ``environ`` for the names in ``TESTING_ENV_ALLOWLIST`` only. Raises
    :class:`RunRefused` (the run recorded FAILED with the reason) for any other name, a refused
    target or an invalid ``TESTING_ALLOWED_TARGETS``."""
    run = TestRun.objects.create(
        source=TestRun.Source.CLI, status=TestRun.Status.RUNNING, started_at=timezone.now(),
        host=options.get("host") or "", endpoint=options.get("endpoint") or "", method=options.get("method") or "",
        template_name=options.get("type") or "", template_version=options.get("template_version"),
        base_url=environment.base_url,
    )
    try:
        env_references_check(environment=environment, tests=tests, allowlist=settings.TESTING_ENV_ALLOWLIST)
        results = tests_run(tests=tests, environment=environment, environ=env_allowed(environ),
                            verify_tls=verify_tls, on_result=on_result, marker=marked_run_open(str(run.uuid)))
    except (RunRefused, TargetRefused, ImproperlyConfigured, LoginFailed) as exc:
        test_run_fail(run=run, error=str(exc))
        raise RunRefused(str(exc)) from None
    finally:
        marked_run_close(str(run.uuid))
    return test_run_record(run=run, results=results, not_generated=not_generated), results


def test_runs_sweep(*, stale_after: timedelta) -> dict[str, int]:
    """Close runs whose worker was lost (RUNNING longer than ``stale_after``: FAILED) and
    enqueue again runs whose message was lost (PENDING for more than two minutes)."""
    from ..tasks import test_run_execute_task

    now = timezone.now()
    lost = TestRun.objects.filter(status=TestRun.Status.RUNNING, started_at__lt=now - stale_after).update(
        status=TestRun.Status.FAILED, error="The run did not finish (worker lost or time limit reached).",
        finished_at=now)
    pending = list(TestRun.objects.filter(status=TestRun.Status.PENDING, created_at__lt=now - REENQUEUE_AFTER,
                                          source=TestRun.Source.API).values_list("uuid", flat=True)[:100])
    for run_id in pending:
        test_run_execute_task.delay(str(run_id))
    if lost or pending:
        logger.info("Test run sweep: %d lost, %d enqueued again", lost, len(pending))
    return {"lost": lost, "requeued": len(pending)}


for _service in (test_run_start, test_run_execute, test_run_fail, test_run_record, test_run_cli, test_runs_sweep,
                 tests_collect):
    _service.__test__ = False
