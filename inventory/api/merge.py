"""POST /endpoint/{id}/update-paths: replace an endpoint's pattern by operator-given patterns.

DECISIONS §4: each path becomes an endpoint of the same host and method;
endpoints whose pattern or observed paths match it are merged into it (their
fields, alerts, traces and usage move; duplicates collapse).

Parameter names are the operator's: ``/catalog/{itemId}`` is stored as written (an
unnamed ``{}`` is numbered ``{paramN}``). The ids of merged endpoints keep resolving to
the endpoint they went into (``EndpointAlias``). The moving parts are shared with learned
parameterisation (``inventory.api.merging``).

How the service reads that, for the endpoints of the same host, method and
segment count (the *siblings*; the new patterns are the *targets*):

* A target is the existing endpoint whose pattern equals it, else a new endpoint.
* A sibling whose own pattern falls under a target (``/users/7`` under
  ``/users/{param1}``; the most specific target wins, ties to the earlier path)
  is merged into it whole.
* Concrete traffic (observed paths and traces) goes to the most specific
  target matching the concrete path, when that target is more specific (more
  literal segments) than the sibling holding it.
* The endpoint named in the URL is always replaced: unless it is itself a
  target, everything it has left (fields, alerts, usage, callers, traffic
  no target matched) goes to its *primary* target, the one that received
  most of its observed requests (else the first path). A sibling all of
  whose observed paths moved is dissolved the same way.
* Merging sums usage counters and observed-path counts, unions classes (minus
  false positives), permissions and callers, keeps the earliest first detection
  and the latest activity, and collapses duplicate fields (same section, status
  and data path) and duplicate alerts (same type and description; one "New
  Endpoint Detected" per endpoint), keeping the most relevant (Open, then
  Ignored, then Resolved; oldest first).
"""
from __future__ import annotations

import logging
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from classification.services import endpoints_refresh_risk
from core.errors import ApiError, EndpointNotFound
from inventory.counts import inventory_changed
from inventory.models import ApiTrace, Endpoint, ObservedPath
from inventory.patterns.operator_paths import operator_pattern, path_problem
from inventory.patterns.regex import Pattern, pattern_best_match, pattern_shape
from inventory.patterns.segments import path_segments

from .lookup import endpoint_get, traces_prune
from .merging import (
    ATTRIBUTES,
    aliases_record,
    alerts_move,
    attributes_merge,
    counters_move,
    fields_move,
    literal_paths_observe,
    rows_upsert,
)

logger = logging.getLogger(__name__)

@dataclass
class _Plan:
    """Where everything goes: per pattern path its target endpoint; per consumed sibling its destination."""

    targets: dict[str, Endpoint]
    patterns: list[Pattern]
    new_ids: set[uuid.UUID] = field(default_factory=set)  # targets created by this update
    destination: dict[uuid.UUID, Endpoint] = field(default_factory=dict)  # consumed sibling → target
    sources: dict[uuid.UUID, list[Endpoint]] = field(default_factory=lambda: defaultdict(list))  # target → consumed


def update_paths_check(*, current_path: str, paths: Sequence[str]) -> None:
    """Raise 400 ``"<path>: <reason>"`` for the first path that is not acceptable (DECISIONS §4)."""
    num_segments = len(path_segments(current_path))
    for path in paths:
        reason = path_problem(path, num_segments=num_segments)
        if reason:
            raise ApiError(f"{path}: {reason}")


def endpoint_paths_update(*, endpoint_id: str, paths: Sequence[str]) -> list[Endpoint]:
    """Replace the endpoint's pattern by ``paths``; return the resulting endpoints in ``paths`` order.

    Raises ``EndpointNotFound`` and ``ApiError`` (400 ``"<path>: <reason>"``). One
    transaction; the host's endpoints of that method are locked (primary-key
    order) for its duration, so concurrent ingestion waits rather than writes
    into an endpoint being dissolved.
    """
    current = endpoint_get(endpoint_id=endpoint_id)
    update_paths_check(current_path=current.path, paths=paths)
    # Paths that differ only in parameter names are one pattern: the first spelling is kept.
    patterns: list[Pattern] = []
    for pattern in map(operator_pattern, paths):
        if all(p.regex != pattern.regex for p in patterns):
            patterns.append(pattern)
    num_segments = len(path_segments(current.path))

    with transaction.atomic():
        siblings = [
            e for e in Endpoint.objects.select_for_update()
            .filter(host_id=current.host_id, method=current.method)
            .select_related("host")
            .order_by("uuid")
            if len(path_segments(e.path)) == num_segments
        ]
        by_id = {e.uuid: e for e in siblings}
        current = by_id.get(current.uuid)
        if current is None:
            raise EndpointNotFound()
        # The URL's endpoint first: attributes of new endpoints prefer its values.
        siblings.sort(key=lambda e: e.uuid != current.uuid)

        literal_paths_observe(endpoints=[e for e in siblings if any(p.matches(e.path) for p in patterns)])
        plan = _plan(current=current, siblings=siblings, patterns=patterns)
        _move_traffic(plan=plan, current=current, siblings=siblings)
        consumed = list(plan.destination)
        for target in {t.uuid: t for t in plan.targets.values()}.values():
            incoming = plan.sources.get(target.uuid, [])
            if incoming:
                fields_move(target=target, sources=incoming)
                alerts_move(target=target, sources=incoming)
                counters_move(target=target, sources=incoming)
        _merge_attributes(plan=plan, current=current)
        aliases_record(destination={old: plan.destination[old].uuid for old in consumed})
        Endpoint.objects.filter(uuid__in=consumed).delete()
        target_ids = [t.uuid for t in plan.targets.values()]
        traces_prune(endpoint_ids=target_ids)
        endpoints_refresh_risk(endpoint_ids=target_ids)
        inventory_changed()

    logger.info(
        "endpoint %s paths updated: %d target(s), %d endpoint(s) merged", current.uuid, len(patterns), len(consumed)
    )
    results = {e.uuid: e for e in Endpoint.objects.select_related("host").filter(uuid__in=target_ids)}
    return [results[plan.targets[p.path].uuid] for p in patterns]


def _plan(*, current: Endpoint, siblings: list[Endpoint], patterns: list[Pattern]) -> _Plan:
    """Find or create the targets; decide which siblings are merged whole."""
    existing = {e.path: e for e in siblings}
    targets: dict[str, Endpoint] = {}
    new = []
    for pattern in patterns:
        endpoint = existing.get(pattern.path)
        if endpoint is None:
            endpoint = Endpoint(
                host=current.host, method=current.method, path=pattern.path, path_regex=pattern.regex,
                num_segments=pattern.num_segments, num_literal_segments=pattern.num_literal_segments,
                first_detected=None, last_active=None, created_at=timezone.now(),
            )
            new.append(endpoint)
        targets[pattern.path] = endpoint
    Endpoint.objects.bulk_create(new)
    plan = _Plan(targets=targets, patterns=patterns, new_ids={e.uuid for e in new})
    target_ids = {t.uuid for t in targets.values()}
    for sibling in siblings:
        if sibling.uuid in target_ids:
            continue
        match = pattern_best_match(sibling.path, patterns)
        if match is not None:
            plan.destination[sibling.uuid] = targets[match.path]
            plan.sources[targets[match.path].uuid].append(sibling)
    return plan


def _pattern_q(patterns: list[Pattern]) -> Q:
    condition = Q(pk__in=[])
    for pattern in patterns:
        condition |= Q(path__regex=pattern.regex)
    return condition


def _move_traffic(*, plan: _Plan, current: Endpoint, siblings: list[Endpoint]) -> None:
    """Move observed paths and traces to the targets matching them; dissolve emptied siblings."""
    literal = {e.uuid: pattern_shape(e.path)[1] for e in siblings}
    target_ids = {t.uuid for t in plan.targets.values()}

    def owner(holder_id: uuid.UUID, concrete_path: str) -> uuid.UUID | None:
        """The target a concrete path moves to, or None when it stays (or follows a whole merge later)."""
        match = pattern_best_match(concrete_path, plan.patterns)
        target = plan.targets[match.path] if match else None
        consumed = holder_id in plan.destination or (holder_id == current.uuid and holder_id not in target_ids)
        if target is not None and target.uuid != holder_id and (
            consumed or match.num_literal_segments > literal[holder_id]
        ):
            return target.uuid
        return None

    sibling_ids = [e.uuid for e in siblings]
    observed = list(
        ObservedPath.objects.filter(endpoint_id__in=sibling_ids)
        .filter(_pattern_q(plan.patterns) | Q(endpoint_id__in=[*plan.destination, current.uuid]))
        .values_list("id", "endpoint_id", "path", "count", "last_seen")
    )
    totals = Counter(
        dict(
            ObservedPath.objects.filter(endpoint_id__in=sibling_ids)
            .values("endpoint_id")
            .annotate(n=Count("id"))
            .values_list("endpoint_id", "n")
        )
    )
    moves: dict[uuid.UUID, list[tuple]] = defaultdict(list)  # new owner → rows
    moved_from: Counter = Counter()
    received: dict[uuid.UUID, Counter] = defaultdict(Counter)  # holder → target → requests
    for row_id, holder_id, path, count, last_seen in observed:
        new_owner = owner(holder_id, path)
        if new_owner is not None:
            moves[new_owner].append((row_id, path, count, last_seen))
            moved_from[holder_id] += 1
            received[holder_id][new_owner] += count

    # Dissolve: the URL's endpoint unless it is a target; any sibling whose observed paths all moved.
    for sibling in siblings:
        if sibling.uuid in target_ids or sibling.uuid in plan.destination:
            continue
        everything_moved = totals.get(sibling.uuid, 0) > 0 and moved_from[sibling.uuid] == totals[sibling.uuid]
        if sibling.uuid == current.uuid or everything_moved:
            primary = _primary(plan, received[sibling.uuid])
            plan.destination[sibling.uuid] = primary
            plan.sources[primary.uuid].append(sibling)

    # Rows of dissolved or wholly merged siblings that no target claimed follow their sibling.
    for row_id, holder_id, path, count, last_seen in observed:
        if holder_id in plan.destination and owner(holder_id, path) is None:
            moves[plan.destination[holder_id].uuid].append((row_id, path, count, last_seen))

    for new_owner, rows in moves.items():
        rows_upsert(
            ObservedPath, [(new_owner, path, count, last_seen) for _, path, count, last_seen in rows],
            fields=("endpoint", "path", "count", "last_seen"), conflict=("endpoint", "path"),
            add=("count",), greatest=("last_seen",),
        )
        ObservedPath.objects.filter(id__in=[row[0] for row in rows]).delete()

    traces = ApiTrace.objects.filter(endpoint_id__in=sibling_ids).filter(
        _pattern_q(plan.patterns) | Q(endpoint_id__in=list(plan.destination))
    ).values_list("uuid", "endpoint_id", "path")
    trace_moves: dict[uuid.UUID, list[uuid.UUID]] = defaultdict(list)
    for trace_id, holder_id, path in traces:
        new_owner = owner(holder_id, path)
        if new_owner is None and holder_id in plan.destination:
            new_owner = plan.destination[holder_id].uuid
        if new_owner is not None:
            trace_moves[new_owner].append(trace_id)
    for new_owner, ids in trace_moves.items():
        ApiTrace.objects.filter(uuid__in=ids).update(endpoint_id=new_owner)


def _primary(plan: _Plan, received: Counter) -> Endpoint:
    """The target that received most requests from a dissolved endpoint; else the first path's."""
    order = {plan.targets[p.path].uuid: i for i, p in reversed(list(enumerate(plan.patterns)))}
    if received:
        best = max(received.items(), key=lambda item: (item[1], -order.get(item[0], 0)))[0]
        return next(t for t in plan.targets.values() if t.uuid == best)
    return plan.targets[plan.patterns[0].path]


def _merge_attributes(*, plan: _Plan, current: Endpoint) -> None:
    """Set each target's attributes from itself and the endpoints merged into it
    (:func:`~.merging.attributes_merge`).

    Timestamps come from the traffic actually merged (a new endpoint nothing was
    merged into keeps the URL endpoint's first detection and no activity);
    operator settings and metadata prefer the target's own, then the URL endpoint's.
    """
    changed = []
    for target in {t.uuid: t for t in plan.targets.values()}.values():
        incoming = plan.sources.get(target.uuid, [])
        traffic = incoming if target.uuid in plan.new_ids else [target, *incoming]
        attributes_merge(target, traffic=traffic, settings=traffic or [current],
                         first_detected_default=current.first_detected)
        target.user_set_path = True  # operator-written: its parameters absorb any segment value in ingestion
        target.learned_segments = {}  # no longer a learned pattern: learning leaves it alone
        changed.append(target)
    Endpoint.objects.bulk_update(changed, [*ATTRIBUTES, "user_set_path", "learned_segments"])
