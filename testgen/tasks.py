"""Celery entry points of the testgen app."""
from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from .services.runs import test_run_execute, test_runs_sweep


@shared_task(soft_time_limit=settings.TESTGEN_RUN_TIME_LIMIT, time_limit=settings.TESTGEN_RUN_TIME_LIMIT + 60)
def test_run_execute_task(run_id: str) -> None:
    """Run a queued test run. Claiming is a conditional update, so a duplicate message is harmless.
    The worker's environment variables are never read: ``{{env.NAME}}`` fails such a run (DECISIONS §8)."""
    test_run_execute(run_id=run_id)


@shared_task
def test_runs_sweep_task() -> None:
    """Close runs left RUNNING past the time limit; enqueue again runs left PENDING."""
    test_runs_sweep(stale_after=timedelta(seconds=settings.TESTGEN_RUN_TIME_LIMIT + 300))


test_run_execute_task.__test__ = False
