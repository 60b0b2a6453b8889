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
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from classification.models import DataField
from classification.services import endpoints_refresh_risk
from core.enums import AlertStatus, AlertType, DataSection
from detections.models import Alert
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
from inventory.models import ApiTrace, Endpoint, ObservedPath
from inventory.patterns.learn import NAMES, WORDS, Known, Learned, is_standout, patterns_learn
from inventory.patterns.regex import pattern_regex, pattern_shape
from inventory.patterns.segments import path_segments, pattern_normalise, segment_has_parameter, segment_is_value

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


# --------------------------------------------------------------------------- splitting word merges
# Before dictionary words were standouts (DECISIONS §9 amended, turn 3), learning merged families of
# words (``/api/users/{id}/details``, ``/history``… into ``/api/users/{param1}/{param2}``). The
# ``split_word_merges`` command takes them apart again; see :func:`word_merges_split`.

SPLIT_RESOLUTION_PREFIX = "Merged into "


@dataclass
class WordSplit:
    """What splitting one learned endpoint did (or would do, in a dry run)."""

    host: str
    method: str
    path: str  # the learned pattern before the split
    kept: str  # the pattern the merged endpoint (its uuid) has after the split
    created: list[str] = field(default_factory=list)  # patterns of the endpoints split out
    joined: list[str] = field(default_factory=list)  # patterns of existing endpoints that received paths
    alerts_reopened: int = 0


def word_split_groups(endpoint: Endpoint, observed: list[tuple[str, int, object]]) -> dict[str, list]:
    """The observed paths of a learned endpoint that hold a dictionary word (or another standout) at a
    learned position, grouped by the pattern they get back: that position literal again."""
    positions = sorted(int(k) for k in (endpoint.learned_segments or {}))
    pattern = path_segments(endpoint.path)
    groups: dict[str, list] = defaultdict(list)
    for path, count, seen in observed:
        segments = path_segments(path)
        if len(segments) != len(pattern):
            continue
        literal = list(pattern)
        for position in positions:
            if position < len(segments) and segment_has_parameter(pattern[position]) and \
                    is_standout(segments[position]) and not segment_is_value(segments[position]):
                literal[position] = segments[position]
        if literal != pattern:
            groups[pattern_normalise("/" + "/".join(literal))].append((path, count, seen))
    return dict(groups)


def word_merges_split(*, dry_run: bool = False, host: str | None = None, progress=None) -> list[WordSplit]:
    """Split every learned endpoint whose observed paths hold dictionary words at a learned position.

    For each such endpoint, one transaction: every word gets its endpoint back (the pattern with the
    word literal, an existing endpoint of that pattern if there is one). What goes where:

    * the merged endpoint keeps its uuid (and the aliases that resolve to it), with its learned pattern
      when other values (names, ids) remain, else with the pattern of the word that had most requests;
    * observed paths and stored traces go with their word; fields are copied to each endpoint split out
      (merging had united them; classes can be removed per field by an operator);
    * the "New Endpoint Detected" alert that was resolved as merged goes back to its word's endpoint and
      is re-opened; of the other alerts resolved as merged, one per type and description is re-opened
      on each endpoint split out (each word had its own before the merge);
    * usage counters (per minute and day) cannot be split exactly and stay on the merged endpoint.

    Idempotent: a second run finds nothing to split. ``progress(line)`` receives one line per split.
    """
    candidates = Endpoint.objects.filter(user_set_path=False).exclude(learned_segments={})
    if host:
        candidates = candidates.filter(host__name=host)
    done = []
    for endpoint_id in list(candidates.order_by("created_at", "uuid").values_list("uuid", flat=True)):
        with transaction.atomic():
            endpoint = Endpoint.objects.select_for_update().select_related("host").filter(uuid=endpoint_id).first()
            if endpoint is None or not endpoint.learned_segments or endpoint.user_set_path:
                continue
            observed = list(ObservedPath.objects.filter(endpoint=endpoint).values_list("path", "count", "last_seen"))
            groups = word_split_groups(endpoint, observed)
            if not groups:
                continue
            split = _endpoint_split(endpoint, observed, groups, dry_run=dry_run)
            if dry_run:
                transaction.set_rollback(True)
        done.append(split)
        if progress is not None:
            progress(f"{split.host} {split.method} {split.path}: kept as {split.kept}; "
                     f"{len(split.created)} endpoint(s) split out, {len(split.joined)} existing one(s) joined, "
                     f"{split.alerts_reopened} alert(s) re-opened")
    if done and not dry_run:
        inventory_changed()
    return done


def _endpoint_split(endpoint: Endpoint, observed: list, groups: dict[str, list], *, dry_run: bool) -> WordSplit:
    split = WordSplit(endpoint.host.name, endpoint.method, endpoint.path, endpoint.path)
    grouped_paths = {path for members in groups.values() for path, _, _ in members}
    remaining = [row for row in observed if row[0] not in grouped_paths]
    existing = {e.path: e for e in Endpoint.objects.select_for_update().filter(
        host_id=endpoint.host_id, method=endpoint.method, path__in=list(groups)).exclude(uuid=endpoint.uuid)}
    requests = {pattern: sum(count for _, count, _ in members) for pattern, members in groups.items()}
    keep_as = None
    if not remaining:
        free = [p for p in groups if p not in existing] or list(groups)
        keep_as = sorted(free, key=lambda p: (-requests[p], p))[0]
    # The merged endpoint's "New Endpoint Detected" alerts (each names its word's pattern in its context,
    # one open, the others resolved as merged) and its other alerts resolved as merged.
    resolved = list(Alert.objects.filter(endpoint=endpoint).filter(
        Q(type=AlertType.NEW_ENDPOINT) | Q(status=AlertStatus.RESOLVED,
                                           resolution_message__startswith=SPLIT_RESOLUTION_PREFIX)))
    fields = list(DataField.objects.filter(endpoint=endpoint))
    touched = [endpoint.uuid]
    for pattern, members in sorted(groups.items()):
        paths = [path for path, _, _ in members]
        if pattern == keep_as and pattern not in existing:
            continue  # the merged endpoint becomes this word's endpoint below
        target = existing.get(pattern)
        if target is None:
            target = _split_target_create(endpoint, pattern, members)
            split.created.append(pattern)
        else:
            split.joined.append(pattern)
        touched.append(target.uuid)
        _paths_move(source=endpoint, target=target, paths=paths)
        _fields_copy(fields, target)
        split.alerts_reopened += _alerts_reopen(resolved, target, pattern)
    if keep_as is not None:
        if keep_as in existing:  # every word has an endpoint already: the merged one goes into the busiest
            target = existing[keep_as]
            counters_move(target=target, sources=[endpoint])
            alerts_move(target=target, sources=[endpoint])
            aliases_record(destination={endpoint.uuid: target.uuid})
            Endpoint.objects.filter(uuid=endpoint.uuid).delete()
            touched.remove(endpoint.uuid)
            split.kept = f"(merged into {keep_as})"
        else:
            split.alerts_reopened += _alerts_reopen(resolved, endpoint, keep_as)
            _pattern_set(endpoint, keep_as)
            split.kept = keep_as
    elif endpoint.learned_segments:
        # Other values remain: the position keeps learning names or ids, never words again.
        endpoint.learned_segments = {k: (NAMES if v == WORDS else v) for k, v in endpoint.learned_segments.items()}
        endpoint.save(update_fields=["learned_segments"])
    if not dry_run:
        traces_prune(endpoint_ids=touched)
        endpoints_refresh_risk(endpoint_ids=touched)
    logger.info("split learned endpoint %s into %d endpoint(s)", endpoint.uuid, len(split.created) + len(split.joined))
    return split


def _split_target_create(endpoint: Endpoint, pattern: str, members: list) -> Endpoint:
    segments, literal = pattern_shape(pattern)
    last = max((seen for _, _, seen in members), default=endpoint.last_active)
    learned = {k: v for k, v in (endpoint.learned_segments or {}).items()
               if segment_has_parameter(path_segments(pattern)[int(k)])}
    target = Endpoint(
        host_id=endpoint.host_id, method=endpoint.method, path=pattern, path_regex=pattern_regex(pattern),
        num_segments=segments, num_literal_segments=literal, first_detected=endpoint.first_detected,
        last_active=last, created_at=endpoint.created_at,
        learned_segments={k: (NAMES if v == WORDS else v) for k, v in learned.items()},
    )
    attributes_merge(target, traffic=[target], settings=[endpoint], first_detected_default=endpoint.first_detected)
    target.last_active = last
    target.save(force_insert=True)
    return target


def _pattern_set(endpoint: Endpoint, pattern: str) -> None:
    segments, literal = pattern_shape(pattern)
    endpoint.path, endpoint.path_regex = pattern, pattern_regex(pattern)
    endpoint.num_segments, endpoint.num_literal_segments = segments, literal
    parts = path_segments(pattern)
    endpoint.learned_segments = {k: (NAMES if v == WORDS else v) for k, v in (endpoint.learned_segments or {}).items()
                                 if int(k) < len(parts) and segment_has_parameter(parts[int(k)])}
    endpoint.updated_at = timezone.now()
    endpoint.save(update_fields=["path", "path_regex", "num_segments", "num_literal_segments", "learned_segments",
                                 "updated_at"])


def _paths_move(*, source: Endpoint, target: Endpoint, paths: list[str]) -> None:
    """Observed paths (counts added) and the stored traces of those paths go to ``target``."""
    from inventory.api.merging import rows_upsert

    rows = list(ObservedPath.objects.filter(endpoint=source, path__in=paths).values_list("path", "count", "last_seen"))
    rows_upsert(ObservedPath, [(target.uuid, p, c, s) for p, c, s in rows], fields=("endpoint", "path", "count",
                "last_seen"), conflict=("endpoint", "path"), add=("count",), greatest=("last_seen",))
    ObservedPath.objects.filter(endpoint=source, path__in=paths).delete()
    ApiTrace.objects.filter(endpoint=source, path__in=paths).update(endpoint_id=target.uuid)


def _fields_copy(fields: list[DataField], target: Endpoint) -> None:
    existing = set(DataField.objects.filter(endpoint=target).values_list("data_section", "status_code", "data_path"))
    copies = []
    for f in fields:
        if (f.data_section, f.status_code, f.data_path) in existing:
            continue
        copies.append(DataField(
            endpoint_id=target.uuid, data_section=f.data_section, status_code=f.status_code, data_path=f.data_path,
            data_type=f.data_type, is_nullable=f.is_nullable, data_classes=list(f.data_classes or []),
            false_positives=list(f.false_positives or []), scanner_identified=list(f.scanner_identified or []),
            content_type=f.content_type, entity=f.entity, created_at=f.created_at, last_seen=f.last_seen,
        ))
    DataField.objects.bulk_create(copies, batch_size=500)


def _alerts_reopen(resolved: list[Alert], target: Endpoint, pattern: str) -> int:
    """Give ``target`` back its alerts: its "New Endpoint Detected" (the one whose context names
    ``pattern``, re-opened if it was resolved as merged) and one of each other (type, description)
    resolved as merged, re-opened. Returns how many were re-opened."""
    reopened, taken = [], set()
    for alert in list(resolved):
        if alert.type == AlertType.NEW_ENDPOINT:
            if (alert.context or {}).get("path") != pattern:
                continue
            key = (alert.type,)
        elif alert.status != AlertStatus.RESOLVED:
            continue
        else:
            key = (alert.type, alert.description)
        if key in taken:
            continue
        taken.add(key)
        reopened.append(alert)
        resolved.remove(alert)
    now = timezone.now()
    count = 0
    for alert in reopened:
        merged = alert.status == AlertStatus.RESOLVED and (alert.resolution_message or "").startswith(
            SPLIT_RESOLUTION_PREFIX)
        alert.endpoint_id, alert.updated_at = target.uuid, now
        if merged:
            alert.status, alert.resolution_message = AlertStatus.OPEN, None
            count += 1
    Alert.objects.bulk_update(reopened, ["endpoint", "status", "resolution_message", "updated_at"])
    return count
