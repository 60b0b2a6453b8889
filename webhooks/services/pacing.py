"""Pacing of deliveries per webhook (DECISIONS §7): at most ``policy.max_in_flight()`` deliveries of
one webhook in flight at once, whatever the number of worker processes and threads.

A slot is not a resource of its own: a delivery in flight is a SENDING row claimed less than
``policy.SLOT_LEASE`` ago. So:

* every worker shares the slots (they live in the database, next to the claims);
* a worker that dies holding slots gives them back when their lease runs out; the deliveries it
  held are taken back by the sweep (``policy.CLAIM_LEASE``) and sent again;
* :func:`deliveries_claim` counts a webhook's slots and claims under a transaction-scoped lock of
  that webhook (a PostgreSQL advisory lock, not the row lock: the recording of attempts and the
  admin keep using the row), so two claimers never both take its last slot.

A delivery that finds no free slot stays PENDING and due: it is *waiting*. Nothing polls for it.
Whoever finishes an attempt to the webhook sends the next waiting ones (``webhooks.tasks``), and
the sweep re-sends those of a webhook that nobody is sending to any more.

Why no lost wake-up: a claimer that finds a webhook's slots full saw each holder's claim before the
holder recorded its attempt; every holder looks for waiting deliveries after recording, so it sees
the waiting delivery (committed before the claimer looked).
"""
from __future__ import annotations

import uuid
import zlib

from django.db import connection, transaction
from django.db.models import Count, F

from .. import policy
from ..models import WebhookDelivery

# First key of the advisory locks of webhook slots (the second is derived from the webhook's uuid).
SLOT_LOCK_SPACE = 0x77686B73  # "whks"


def deliveries_claim(*, delivery_ids: list, now) -> list[uuid.UUID]:
    """Claim the deliveries of ``delivery_ids`` that are PENDING and due, oldest first, as many of
    each webhook as it has free slots: PENDING → SENDING, ``attempts + 1``, ``claimed_at = now``.

    One short transaction (a fixed number of queries). Returns the ids claimed; the others are
    finished, held by another worker, not due, gone, or waiting for a slot.
    """
    Status = WebhookDelivery.Status
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.filter(pk__in=delivery_ids, status=Status.PENDING, next_attempt_at__lte=now)
            .order_by("next_attempt_at", "uuid").values_list("uuid", "webhook_id")
        )
        if not due:
            return []
        free = _free_slots({webhook_id for _, webhook_id in due}, now=now)
        chosen = []
        for delivery_id, webhook_id in due:
            if free[webhook_id] > 0:
                chosen.append(delivery_id)
                free[webhook_id] -= 1
        if chosen:
            WebhookDelivery.objects.filter(pk__in=chosen, status=Status.PENDING, next_attempt_at__lte=now).update(
                status=Status.SENDING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now)
    return chosen


def _free_slots(webhook_ids: set, *, now) -> dict:
    """Free slots of each webhook, its slot lock held until the caller's transaction ends."""
    _slots_lock(sorted(webhook_ids))
    busy = in_flight(webhook_ids=webhook_ids, now=now)
    limit = policy.max_in_flight()
    return {webhook_id: max(0, limit - busy.get(webhook_id, 0)) for webhook_id in webhook_ids}


def _slots_lock(webhook_ids: list) -> None:
    """Take the slot lock of each webhook, in a fixed order (no deadlock between claimers), until the
    transaction ends. Other databases (the embedded SQLite of ``make run``) serialise writers anyway."""
    if connection.vendor != "postgresql" or not webhook_ids:
        return
    keys = sorted({zlib.crc32(webhook_id.bytes) - 2**31 for webhook_id in webhook_ids})
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, k) FROM unnest(%s::int[]) AS k ORDER BY k",
                       [SLOT_LOCK_SPACE, keys])


def in_flight(*, webhook_ids=None, now) -> dict:
    """Deliveries in flight (claims younger than ``SLOT_LEASE``) per webhook, of ``webhook_ids`` or
    of every webhook. One query (index ``delivery_webhook_unfinished``)."""
    sending = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.SENDING,
                                             claimed_at__gt=now - policy.SLOT_LEASE)
    if webhook_ids is not None:
        sending = sending.filter(webhook_id__in=webhook_ids)
    return dict(sending.values("webhook_id").annotate(n=Count("uuid")).values_list("webhook_id", "n"))


def deliveries_claim_next(*, webhook_ids, now) -> list[uuid.UUID]:
    """Claim the oldest PENDING and due deliveries of each of ``webhook_ids``, as many as it has free
    slots (``claimed_at = now``), in the caller's transaction (or one of its own). Returns their ids."""
    Status = WebhookDelivery.Status
    with transaction.atomic(savepoint=False):
        free = _free_slots(set(webhook_ids), now=now)
        per_webhook = [
            WebhookDelivery.objects.filter(webhook_id=webhook_id, status=Status.PENDING, next_attempt_at__lte=now)
            .order_by("next_attempt_at", "uuid").values_list("uuid", flat=True)[:slots]
            for webhook_id, slots in sorted(free.items()) if slots
        ]
        chosen = _union(per_webhook)
        if chosen:
            WebhookDelivery.objects.filter(pk__in=chosen, status=Status.PENDING).update(
                status=Status.SENDING, claimed_at=now, attempts=F("attempts") + 1, updated_at=now)
    return chosen


def deliveries_waiting(*, webhook_ids, now) -> list[uuid.UUID]:
    """The oldest PENDING and due deliveries of each of ``webhook_ids``, at most ``max_in_flight``
    each: what a sender of these webhooks would claim next. One query."""
    limit = policy.max_in_flight()
    return _union([
        WebhookDelivery.objects.filter(webhook_id=webhook_id, status=WebhookDelivery.Status.PENDING,
                                       next_attempt_at__lte=now)
        .order_by("next_attempt_at", "uuid").values_list("uuid", flat=True)[:limit]
        for webhook_id in sorted(set(webhook_ids))
    ])


def _union(querysets: list) -> list:
    """The rows of several sliced querysets, in one query."""
    if not querysets:
        return []
    if len(querysets) == 1:
        return list(querysets[0])
    return list(querysets[0].union(*querysets[1:], all=True))
