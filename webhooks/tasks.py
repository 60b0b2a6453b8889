"""Celery entry points of webhook delivery: load by id, call a service, decide about running again."""
from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(bind=True, max_retries=None, ignore_result=True, soft_time_limit=30, time_limit=60)
def delivery_send_task(self, delivery_id: str) -> None:
    """One attempt of a delivery. Safe to run twice: the service claims the row with a conditional
    update and returns quietly when there is nothing to claim. The message is acknowledged on
    receipt: a delivery whose worker dies is taken back and re-sent by the sweep (its claim lease
    runs out), sooner than Redis would redeliver a late-acknowledged message, and without the
    worker crash a late acknowledgement racing a broker restart causes (see ``inventory.tasks``)."""
    outcome = services.delivery_attempt(delivery_id=delivery_id)
    if outcome.retry_in is not None:  # a 5xx with retries left (counted in the database), or not due yet
        raise self.retry(countdown=outcome.retry_in, queue=services.webhook_queue())


@shared_task(ignore_result=True, soft_time_limit=30, time_limit=60)
def deliveries_send_task(delivery_ids: list[str]) -> None:
    """First attempts of the deliveries of one fan-out, POSTed concurrently (see
    ``services.deliveries_attempt``). Safe to run twice for the same reason as ``delivery_send_task``;
    a delivery to retry continues as a ``delivery_send_task`` of its own."""
    services.deliveries_attempt(delivery_ids=delivery_ids)


@shared_task(ignore_result=True, soft_time_limit=120)
def deliveries_sweep_task() -> dict:
    """Beat: re-send deliveries left pending (lost message) or claimed by a worker that died."""
    return services.deliveries_sweep()


@shared_task(ignore_result=True, soft_time_limit=300)
def webhooks_prune_task() -> dict:
    """Beat: keep the newest 10 attempt records per webhook; drop old finished deliveries."""
    return {"runs": services.runs_prune(), "deliveries": services.deliveries_prune()}
