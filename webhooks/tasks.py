"""Celery entry points of webhook delivery: load by id, call a service, decide about running again."""
from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(bind=True, acks_late=True, max_retries=None, ignore_result=True, soft_time_limit=30, time_limit=60)
def delivery_send_task(self, delivery_id: str) -> None:
    """One attempt of a delivery. Safe to run twice: the service claims the row with a conditional
    update and returns quietly when there is nothing to claim, hence ``acks_late`` (a message whose
    worker died is redelivered rather than lost)."""
    outcome = services.delivery_attempt(delivery_id=delivery_id)
    if outcome.retry_in is not None:  # a 5xx with retries left (counted in the database), or not due yet
        raise self.retry(countdown=outcome.retry_in, queue=services.webhook_queue())


@shared_task(ignore_result=True, soft_time_limit=120)
def deliveries_sweep_task() -> dict:
    """Beat: re-send deliveries left pending (lost message) or claimed by a worker that died."""
    return services.deliveries_sweep()


@shared_task(ignore_result=True, soft_time_limit=300)
def webhooks_prune_task() -> dict:
    """Beat: keep the newest 10 attempt records per webhook; drop old finished deliveries."""
    return {"runs": services.runs_prune(), "deliveries": services.deliveries_prune()}
