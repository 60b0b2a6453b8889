"""THE delivery attempt: claim, POST, record, and say what happened (DECISIONS §7).

One service, :func:`deliveries_attempt`, serves both send tasks: the batched first attempts of a
fan-out (up to ``policy.DELIVERIES_PER_TASK`` deliveries, POSTed concurrently) and the single
delivery of a retry or a sweep re-send (a batch of one). It returns one :class:`AttemptOutcome`
per delivery and never enqueues anything: whether and when to run again is the task's decision
(``webhooks.tasks``).

Contract:

* claim: PENDING and due → SENDING, ``attempts + 1``, ``claimed_at`` set — one conditional update
  for the whole batch, within each webhook's free slots (``services.pacing``), so a duplicate
  message, a late retry or a sweep re-send finds nothing to claim and gets
  :attr:`Attempt.NOT_CLAIMED` / :attr:`Attempt.NOT_DUE` / :attr:`Attempt.GONE`, and a delivery whose
  webhook has ``policy.max_in_flight()`` deliveries in flight gets :attr:`Attempt.WAITING`;
* no transaction is open during the requests; each request has the whole-request budget
  ``policy.REQUEST_TIMEOUT`` and carries ``X-Delivery-Id`` (the delivery's uuid, the same on every
  attempt) and ``X-Delivery-Attempt``;
* one transaction then records every attempt of the claim: the webhooks are locked (NO KEY
  UPDATE, in key order), the runs written, each webhook's history pruned to ``policy.RUNS_KEPT``,
  and each delivery moved — only where its claim still stands — to DONE (2xx), PENDING due
  ``policy.RETRY_DELAY`` later (a 5xx with retries left, ``policy.should_retry``) or FAILED.
"""
from __future__ import annotations

import enum
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

import orjson
from django.db import transaction
from django.utils import timezone

from .. import http, policy
from ..models import Webhook, WebhookDelivery, WebhookRun
from . import pacing
from .sweep import runs_prune

logger = logging.getLogger(__name__)

USER_AGENT = "apiscope-webhooks/1.0"


class Attempt(enum.StrEnum):
    """What became of one delivery in :func:`deliveries_attempt`."""

    DELIVERED = "delivered"      # sent, 2xx: DONE
    RETRY = "retry"              # sent, 5xx with retries left: PENDING, due ``retry_after`` seconds later
    GIVEN_UP = "given up"        # sent or refused, anything else (or no retries left): FAILED
    NOT_DUE = "not due"          # PENDING but due later (an early copy of its message): due in ``due_in`` seconds
    WAITING = "waiting"          # PENDING and due, its webhook's slots all taken: the webhook's senders take it next
    NOT_CLAIMED = "not claimed"  # finished, or another worker holds it: nothing to do
    GONE = "gone"                # the delivery no longer exists (its webhook was deleted)


@dataclass(frozen=True)
class AttemptOutcome:
    """The outcome of one delivery. ``retry_after`` is set only for :attr:`Attempt.RETRY` (the pause
    before the next attempt); ``due_in`` only for :attr:`Attempt.NOT_DUE` (when the delivery falls due);
    ``webhook_id`` whenever the delivery exists (the webhook whose waiting deliveries come next)."""

    delivery_id: uuid.UUID
    result: Attempt
    retry_after: float | None = None
    due_in: float | None = None
    webhook_id: uuid.UUID | None = None

    @property
    def attempted(self) -> bool:
        """Whether this call made (and recorded) an attempt of the delivery."""
        return self.result in (Attempt.DELIVERED, Attempt.RETRY, Attempt.GIVEN_UP)


def deliveries_attempt(*, delivery_ids: list) -> list[AttemptOutcome]:
    """Attempt each delivery of ``delivery_ids`` that is due and that nobody else holds.

    Claimed in one conditional update (within the webhooks' free slots), POSTed concurrently
    (inline for a single delivery), recorded in one transaction (see the module's contract).
    Returns one outcome per distinct id, in the order given. Safe to call twice with the same ids:
    the second call claims nothing.
    """
    ids = list(dict.fromkeys(uuid.UUID(str(i)) for i in delivery_ids))
    now = timezone.now()
    chosen = pacing.deliveries_claim(delivery_ids=ids, now=now)
    outcomes: dict = {}
    if chosen:
        recorded, _ = _claimed_send(chosen, claimed_at=now)
        outcomes.update((o.delivery_id, o) for o in recorded)
    unclaimed = [i for i in ids if i not in outcomes]
    if unclaimed:
        outcomes.update(_unclaimed_outcomes(unclaimed, now=now))
    return [outcomes[i] for i in ids]


def waiting_deliveries_attempt(*, webhook_ids: list, seconds: float, on_retry=None) -> list[AttemptOutcome]:
    """Send the deliveries waiting for slots of ``webhook_ids`` (pacing, DECISIONS §7), round after round.

    A round claims the oldest due deliveries of each webhook, as many as it has free slots, POSTs
    them concurrently and records them; the transaction that records a round claims the next one,
    so the slots just freed stay with this sender (a burst goes out in rounds of
    ``policy.max_in_flight()``, not scattered among workers one delivery each). Stops when nothing
    is claimable (none waiting, or other senders hold every slot: they carry on) or after
    ``seconds``. ``on_retry(outcome)`` is called as soon as a :attr:`Attempt.RETRY` is recorded.
    Returns the outcomes of every attempt made.
    """
    deadline = time.monotonic() + seconds
    if seconds <= 0:
        return []
    now = timezone.now()
    with transaction.atomic():
        chosen = pacing.deliveries_claim_next(webhook_ids=webhook_ids, now=now)
    outcomes: list[AttemptOutcome] = []
    while chosen:
        next_at = timezone.now() if time.monotonic() < deadline else None
        recorded, chosen = _claimed_send(chosen, claimed_at=now, claim_next_at=next_at)
        now = next_at
        outcomes += recorded
        for outcome in recorded:
            if outcome.result is Attempt.RETRY and on_retry is not None:
                on_retry(outcome)
    return outcomes


def _claimed_send(chosen: list, *, claimed_at, claim_next_at=None) -> tuple[list[AttemptOutcome], list]:
    """POST the deliveries claimed at ``claimed_at`` and record them (with ``claim_next_at``: claim the
    next round in the same transaction). Returns their outcomes and the ids of the next round."""
    claimed = list(WebhookDelivery.objects.select_related("webhook")
                   .filter(pk__in=chosen, status=WebhookDelivery.Status.SENDING, claimed_at=claimed_at)
                   .order_by("uuid"))
    if not claimed:
        return [], []
    if len(claimed) == 1:
        results = [_send(claimed[0])]
    else:
        with ThreadPoolExecutor(max_workers=min(len(claimed), policy.DELIVERIES_PER_TASK),
                                thread_name_prefix="webhook-send") as senders:
            results = list(senders.map(_send, claimed))
    return _attempts_record(list(zip(claimed, results)), claimed_at=claimed_at, claim_next_at=claim_next_at)


def _unclaimed_outcomes(ids: list, *, now) -> dict:
    """Why each of ``ids`` was not claimed: gone, not due yet (and when it is), or finished/held."""
    rows = {row["uuid"]: row for row in WebhookDelivery.objects.filter(pk__in=ids)
            .values("uuid", "status", "next_attempt_at", "webhook_id")}
    outcomes = {}
    for delivery_id in ids:
        row = rows.get(delivery_id)
        if row is None:
            outcomes[delivery_id] = AttemptOutcome(delivery_id, Attempt.GONE)
            continue
        webhook_id = row["webhook_id"]
        if row["status"] == WebhookDelivery.Status.PENDING and row["next_attempt_at"] <= now:
            outcomes[delivery_id] = AttemptOutcome(delivery_id, Attempt.WAITING, webhook_id=webhook_id)
        elif row["status"] == WebhookDelivery.Status.PENDING:
            due_in = max((row["next_attempt_at"] - now).total_seconds(), policy.NOT_DUE_MIN_WAIT)
            outcomes[delivery_id] = AttemptOutcome(delivery_id, Attempt.NOT_DUE, due_in=due_in, webhook_id=webhook_id)
        else:
            outcomes[delivery_id] = AttemptOutcome(delivery_id, Attempt.NOT_CLAIMED, webhook_id=webhook_id)
    return outcomes


def _send(delivery: WebhookDelivery) -> http.SendResult:
    """POST the delivery's payload snapshot to its webhook (no database access: runs in threads)."""
    return http.post_json(
        delivery.webhook.url,
        orjson.dumps(delivery.payload),
        headers={
            "User-Agent": USER_AGENT,
            "X-Delivery-Id": str(delivery.uuid),
            "X-Delivery-Attempt": str(delivery.attempts),
        },
        timeout=policy.REQUEST_TIMEOUT,
    )


def _attempts_record(sent: list[tuple[WebhookDelivery, http.SendResult]], *, claimed_at,
                     claim_next_at=None) -> tuple[list[AttemptOutcome], list]:
    """Record attempts made under one claim: their runs, each webhook's history pruned, the deliveries'
    next state; with ``claim_next_at``, claim the next waiting deliveries of these webhooks
    (``pacing.deliveries_claim_next``). One transaction, a fixed number of queries; outcomes in the
    order given, and the ids claimed next."""
    Status = WebhookDelivery.Status
    outcomes: list[AttemptOutcome] = []
    with transaction.atomic():
        # Lock the webhooks (in key order: no deadlock between workers): attempts of one webhook are
        # recorded and pruned one transaction at a time, so its history holds exactly the newest
        # RUNS_KEPT even with several workers. NO KEY UPDATE: a fan-out creating deliveries of these
        # webhooks meanwhile (its foreign-key checks take KEY SHARE) does not wait for us.
        hooks = {h.pk: h for h in Webhook.objects.select_for_update(no_key=True)
                 .filter(pk__in={d.webhook_id for d, _ in sent}).order_by("pk")}
        now = timezone.now()
        runs, transitions = [], {}
        for delivery, result in sent:
            hook = hooks.get(delivery.webhook_id)
            if hook is None:  # deleted meanwhile, with its deliveries
                outcomes.append(AttemptOutcome(delivery.uuid, Attempt.GONE))
                continue
            msg = (result.error if result.error and result.status_code is None else result.answer)
            runs.append(WebhookRun(
                webhook=hook, delivery_id=delivery.uuid, attempt=delivery.attempts, ok=result.ok,
                status_code=result.status_code, msg=msg[: policy.MSG_MAX_CHARS], payload=delivery.payload,
                duration_ms=result.duration_ms,
            ))
            retry = policy.should_retry(
                status_code=result.status_code, attempts_made=delivery.attempts, max_retries=hook.max_retries
            )
            state = "retry" if retry else (Status.DONE if result.ok else Status.FAILED)
            transitions.setdefault(state, []).append(delivery.uuid)
            outcomes.append(
                AttemptOutcome(delivery.uuid, Attempt.RETRY, retry_after=policy.RETRY_DELAY,
                               webhook_id=delivery.webhook_id) if retry
                else AttemptOutcome(delivery.uuid, Attempt.DELIVERED if result.ok else Attempt.GIVEN_UP,
                                    webhook_id=delivery.webhook_id))
            logger.info(
                "delivery %s attempt %d to webhook %s: %s",
                delivery.uuid, delivery.attempts, delivery.webhook_id,
                result.status_code if result.status_code is not None else ("timeout" if result.timed_out else "error"),
            )
        WebhookRun.objects.bulk_create(runs)
        runs_prune(webhook_ids=list(hooks))
        for state, ids in transitions.items():
            if state == "retry":
                changes = {"status": Status.PENDING, "enqueued_at": now,
                           "next_attempt_at": now + timedelta(seconds=policy.RETRY_DELAY)}
            else:
                changes = {"status": state, "finished_at": now}
            # Only where our claim still stands (the sweep takes back claims older than CLAIM_LEASE).
            WebhookDelivery.objects.filter(pk__in=ids, status=Status.SENDING, claimed_at=claimed_at).update(
                updated_at=now, **changes)
        chosen = ([] if claim_next_at is None or not hooks
                  else pacing.deliveries_claim_next(webhook_ids=list(hooks), now=claim_next_at))
    return outcomes, chosen
