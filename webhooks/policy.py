"""Delivery policy, in one place (SPEC.md "Events" and "Limits", DECISIONS §7)."""
from datetime import timedelta

from django.conf import settings

# Whole-request timeout of one delivery attempt (SPEC: 250 ms).
REQUEST_TIMEOUT = 0.250
# Pause between attempts after a 5xx answer (SPEC: 500 ms).
RETRY_DELAY = 0.500
# Shortest wait before coming back to a delivery that is not due yet (an early copy of its message).
NOT_DUE_MIN_WAIT = 0.01
# Default and maximum number of retries after a 5xx answer (SPEC default 3; DECISIONS 0–10).
DEFAULT_MAX_RETRIES = 3
MAX_RETRIES_LIMIT = 10
# Delivery attempts kept per webhook (SPEC: 10).
RUNS_KEPT = 10
# First attempts of one fan-out travel together: one task per this many deliveries, whose POSTs
# go out concurrently (retries and sweep re-sends go one delivery per task).
DELIVERIES_PER_TASK = 20
# Pacing (DECISIONS §7): a burst to one webhook queues behind a few deliveries in flight.
# A claim holds one of its webhook's slots for at most this long: one attempt takes at most
# REQUEST_TIMEOUT plus a few short queries, so only a claim of a dead worker gets this old; its slot
# is free again then (the delivery itself is taken back by the sweep after CLAIM_LEASE).
SLOT_LEASE = timedelta(seconds=10)
# How long one task keeps sending the deliveries waiting for its webhooks' slots before a new
# message carries on (so a long burst does not hold one worker away from its other queues).
SEND_WAITING_BUDGET = 2.0


def max_in_flight() -> int:
    """Deliveries of one webhook in flight at once (``WEBHOOK_MAX_IN_FLIGHT``, default 4, at least 1)."""
    return max(1, settings.WEBHOOK_MAX_IN_FLIGHT)


# Characters of the error text or receiver's answer kept in an attempt record (DECISIONS §7).
MSG_MAX_CHARS = 1000


def should_retry(*, status_code: int | None, attempts_made: int, max_retries: int) -> bool:
    """Only a 5xx answer is retried, and only while retries are left: ``max_retries`` retries
    after the first attempt. A 4xx, a timeout, a connection failure or a refused target end it."""
    return status_code is not None and 500 <= status_code <= 599 and attempts_made <= max_retries


# --- the safety net (not in SPEC: what makes "nothing lost" hold) ---------------------------
# A PENDING delivery whose message has not been acted on for this long is re-enqueued by the sweep
# (broker lost the message, or enqueueing after commit failed).
SWEEP_PENDING_AFTER = timedelta(seconds=30)
# A SENDING claim older than this belongs to a worker that died mid-attempt: one attempt takes at
# most REQUEST_TIMEOUT plus two short queries, so a minute is far beyond any live attempt.
CLAIM_LEASE = timedelta(seconds=60)
# A delivery whose worker died this many times is given up (FAILED) instead of looping.
MAX_RECLAIMS = 3
# Rows handled per sweep run.
SWEEP_BATCH = 1000
# Finished deliveries are kept this long (their attempts are in the runs history).
FINISHED_KEPT = timedelta(days=7)
