"""Celery entry points of the detections app: generated OpenAPI specs (DECISIONS §10)."""
from __future__ import annotations

from celery import shared_task

from .openapi.generate.service import generated_spec_refresh, generated_specs_sweep


@shared_task(soft_time_limit=600)
def generated_spec_refresh_task(host_id: int) -> None:
    """Rebuild one host's generated spec (published with the debounce countdown). Safe to run
    twice: the refresh claims the host's stale mark first."""
    generated_spec_refresh(host_id=host_id)


@shared_task
def generated_specs_sweep_task() -> dict:
    """Beat: lost refreshes re-published; hosts never built, changed by operators or due their
    periodic refresh marked stale."""
    return generated_specs_sweep()
