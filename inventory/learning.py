"""Learned parameterisation on the database (DECISIONS §9): literal endpoints of one family become one.

After an analysis created endpoints, the worker calls :func:`paths_learn` for each
(host, method, segment count) that got new ones. The rule is the pure
:func:`inventory.patterns.learn.patterns_learn`, fed with the group's patterns and each
endpoint's key set (its query, request-body and 2xx response-body data fields). For
each learned pattern the endpoints gathered are merged into one with the update-paths
parts (``inventory.api.merging``): fields, alerts, usage, callers, observed paths and
traces move; one "New Endpoint Detected" alert stays, the others are resolved as merged;
the old ids keep resolving (``EndpointAlias``). Operator-set patterns are never changed
nor merged. ``PATH_LEARNING=false`` turns learning off (suggested-paths still offers
what it would learn).

Concurrency: one learner per group at a time (a transaction-scoped advisory lock on
PostgreSQL), endpoint rows locked in primary-key order, and a short ``lock_timeout`` so
that in any wait cycle with an analysis it is the learner that gives up (the caller
retries later), never the analysis of a batch. SQLite (``make run``) has one writer at a
time and needs neither.
"""
from __future__ import annotations

import logging
import uuid
import zlib
from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from classification.models import DataField
from classification.services import endpoints_refresh_risk
from core.enums import DataSection
from inventory.api.lookup import traces_prune
from inventory.api.merging import (
    ATTRIBUTES,
    aliases_record,
    alerts_move,
    attributes_merge,
    counters_move,
    fields_move,
    literal_paths_observe,
    traffic_move,
)
from inventory.counts import inventory_changed
from inventory.models import Endpoint
from inventory.patterns.learn import Known, Learned, patterns_learn
from inventory.patterns.regex import pattern_regex, pattern_shape

logger = logging.getLogger(__name__)

SHAPE_SECTIONS = (DataSection.REQUEST_QUERY, DataSection.REQUEST_BODY, DataSection.RESPONSE_BODY)
MAX_GROUP = 5000  # endpoints of one group considered (oldest first)
LOCK_TIMEOUT = "250ms"  # below PostgreSQL's deadlock_timeout (1 s): the learner is the one to give up


def endpoint_shapes(endpoint_ids: Iterable) -> dict[uuid.UUID, frozenset]:
    """Each endpoint's key set: (section, dataPath) of its query, request-body and 2xx response-body fields
    (a body that is not a JSON object or array, stored at dataPath ``""``, has no keys)."""
    shapes: dict[uuid.UUID, set] = defaultdict(set)
    for endpoint_id, section, status, path in DataField.objects.filter(
        endpoint_id__in=list(endpoint_ids), data_section__in=SHAPE_SECTIONS
    ).values_list("endpoint_id", "data_section", "status_code", "data_path"):
        if not path or (section == DataSection.RESPONSE_BODY and not 200 <= status < 300):
            continue  # a whole non-JSON body ("") says nothing about keys
        shapes[endpoint_id].add((section, path))
    return {key: frozenset(value) for key, value in shapes.items()}


def group_known(*, host_id: int, method: str, num_segments: int) -> list[Known]:
    """The endpoints of one group as the pure rule sees them."""
    rows = list(
        Endpoint.objects.filter(host_id=host_id, method=method, num_segments=num_segments)
        .order_by("created_at", "uuid")
        .values_list("uuid", "path", "user_set_path", "learned_segments")[:MAX_GROUP]
    )
    shapes = endpoint_shapes(r[0] for r in rows)
    return [
        Known(key, path, shapes.get(key), fixed, tuple((int(k), v) for k, v in (learned or {}).items()))
        for key, path, fixed, learned in rows
    ]


def learned_suggestions(*, endpoint: Endpoint) -> list[str]:
    """The learned patterns that would gather this endpoint (suggested-paths offers them, learning on or off)."""
    known = group_known(host_id=endpoint.host_id, method=endpoint.method, num_segments=endpoint.num_segments)
    return [learned.path for learned in patterns_learn(known) if endpoint.uuid in learned.members]


def paths_learn(*, host_id: int, method: str, num_segments: int) -> list[uuid.UUID]:
    """Learn the group's parameters and merge each learned family; returns the resulting endpoints' ids.

    Nothing happens with ``PATH_LEARNING`` off. One transaction. Raises ``OperationalError`` when a
    row stays locked past ``LOCK_TIMEOUT`` (nothing is changed then; call again later).
    """
    if not settings.PATH_LEARNING:
        return []
    merged: list[uuid.UUID] = []
    with transaction.atomic():
        _group_lock(host_id, method, num_segments)
        for learned in patterns_learn(group_known(host_id=host_id, method=method, num_segments=num_segments)):
            target = _family_merge(learned, host_id=host_id, method=method)
            if target is not None:
                merged.append(target)
        if merged:
            inventory_changed()
    if merged:
        logger.info("learned %d parameterised endpoint(s) on host %s %s", len(merged), host_id, method)
    return merged


def _group_lock(host_id: int, method: str, num_segments: int) -> None:
    if connection.vendor != "postgresql":
        return
    key = zlib.crc32(f"learn:{host_id}:{method}:{num_segments}".encode())
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [0x1EA2, key - 2**31])
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [LOCK_TIMEOUT])


def _family_merge(learned: Learned, *, host_id: int, method: str) -> uuid.UUID | None:
    """Merge one learned family; ``None`` when what was read changed meanwhile (too few left to merge)."""
    ids = sorted({*learned.members, *([learned.target] if learned.target else [])})
    locked = {e.uuid: e for e in Endpoint.objects.select_for_update().filter(uuid__in=ids).order_by("uuid")}
    target = locked.get(learned.target) if learned.target else None
    if target is None:
        target = (Endpoint.objects.select_for_update().filter(host_id=host_id, method=method, path=learned.path)
                  .first())
    sources = [locked[k] for k in learned.members
               if k in locked and not locked[k].user_set_path and (target is None or k != target.uuid)]
    if len(sources) < (1 if target is not None else 2):
        return None
    existed = target is not None
    if target is None:
        target = _target_create(learned, host_id=host_id, method=method, sources=sources)
    literal_paths_observe(endpoints=sources)
    traffic_move(target=target, sources=sources)
    fields_move(target=target, sources=sources)
    alerts_move(target=target, sources=sources, resolve_as=f"Merged into {learned.path} (learned from traffic).")
    counters_move(target=target, sources=sources)
    traffic = [target, *sources] if existed else sources
    attributes_merge(target, traffic=traffic, settings=traffic, first_detected_default=target.first_detected)
    target.learned_segments = {**(target.learned_segments or {}), **{str(k): v for k, v in learned.kinds.items()}}
    target.save(update_fields=[*ATTRIBUTES, "learned_segments"])
    aliases_record(destination={s.uuid: target.uuid for s in sources})
    Endpoint.objects.filter(uuid__in=[s.uuid for s in sources]).delete()
    traces_prune(endpoint_ids=[target.uuid])
    endpoints_refresh_risk(endpoint_ids=[target.uuid])
    logger.info("endpoint %s learned from %d endpoint(s)", target.uuid, len(sources))
    return target.uuid


def _target_create(learned: Learned, *, host_id: int, method: str, sources: list[Endpoint]) -> Endpoint:
    segments, literal = pattern_shape(learned.path)
    first = min((s.first_detected for s in sources if s.first_detected), default=None)
    Endpoint.objects.bulk_create([Endpoint(
        host_id=host_id, method=method, path=learned.path, path_regex=pattern_regex(learned.path),
        num_segments=segments, num_literal_segments=literal, first_detected=first,
        created_at=min(s.created_at for s in sources) if sources else timezone.now(),
    )], ignore_conflicts=True)
    return Endpoint.objects.select_for_update().get(host_id=host_id, method=method, path=learned.path)
