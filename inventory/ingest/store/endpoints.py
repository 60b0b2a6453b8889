"""Endpoints of a batch: each trace matched to the most specific pattern or a new one; activity,
GraphQL, authentication and risk written set-based, last in the transaction."""
from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import datetime

from django.utils import timezone

from classification.models import DataField
from core.enums import RISK_RANK
from inventory.models import Endpoint
from inventory.patterns.regex import PatternMatcher, pattern_regex, pattern_shape
from inventory.patterns.segments import path_parameterize, path_segments

from ..classes import ClassConfig
from ..sql import bulk_set
from ..traces import Trace
from .rows import LAST_ACTIVE_RESOLUTION, NO_ENDPOINT_STATUSES, EndpointRow, HostRow


def endpoints_resolve(traces: list[Trace], hosts: dict[str, HostRow]) -> tuple[list[tuple[Trace, EndpointRow]], int]:
    """Match each trace to an endpoint, creating endpoints for new patterns (never for 404/405).

    Returns ((trace, endpoint) pairs for the traces that have an endpoint, number created).
    """
    by_id = {h.id: h for h in hosts.values()}
    methods = {t.method for t in traces}
    lengths = {len(path_segments(t.path)) for t in traces}
    lengths |= {pattern_shape(t.endpoint_path)[0] for t in traces if t.endpoint_path}
    matchers: dict[tuple[int, str], PatternMatcher] = defaultdict(PatternMatcher)
    for r in Endpoint.objects.filter(host_id__in=by_id, method__in=methods, num_segments__in=lengths).values(
        "uuid", "host_id", "method", "path", "path_regex", "num_segments", "num_literal_segments", "user_set_path",
        "learned_segments", "full_trace_capture_enabled", "is_graphql", "last_active",
    ):
        host = by_id[r.pop("host_id")]
        matchers[(host.id, r["method"])].add(EndpointRow(host=host, **r))

    matched: list[tuple[Trace, EndpointRow]] = []
    created: dict[EndpointRow, datetime] = {}
    for trace in traces:
        host = hosts[trace.host]
        matcher = matchers[(host.id, trace.method)]
        own = trace.endpoint_path or path_parameterize(trace.path)
        endpoint = matcher.match(own if trace.endpoint_path else trace.path, own)
        if endpoint is None:
            if trace.status in NO_ENDPOINT_STATUSES or len(own) > 2048:
                continue
            regex = pattern_regex(own)
            if len(regex) > 4096:
                continue
            segments, literal = pattern_shape(own)
            endpoint = EndpointRow(uuid=uuid.uuid4(), host=host, method=trace.method, path=own, path_regex=regex,
                                   num_segments=segments, num_literal_segments=literal, created=True)
            matcher.add(endpoint)
            created[endpoint] = trace.received_at
        matched.append((trace, endpoint))

    if created:
        order = sorted(created, key=lambda e: (e.host.id, e.method, e.path))
        Endpoint.objects.bulk_create(
            [
                Endpoint(uuid=e.uuid, host_id=e.host.id, method=e.method, path=e.path, path_regex=e.path_regex,
                         num_segments=e.num_segments, num_literal_segments=e.num_literal_segments,
                         first_detected=created[e], last_active=created[e], created_at=created[e])
                for e in order
            ],
            ignore_conflicts=True,
        )
        # A concurrent worker may have created some of them first: adopt its rows.
        stored = {
            (r["host_id"], r["method"], r["path"]): r
            for r in Endpoint.objects.filter(
                host_id__in={e.host.id for e in order}, path__in={e.path for e in order}
            ).values("uuid", "host_id", "method", "path", "full_trace_capture_enabled", "is_graphql", "last_active")
        }
        for e in order:
            row = stored.get((e.host.id, e.method, e.path))
            if row is not None and row["uuid"] != e.uuid:
                e.uuid, e.created = row["uuid"], False
                e.full_trace_capture_enabled, e.is_graphql = row["full_trace_capture_enabled"], row["is_graphql"]
                e.last_active = row["last_active"]
            elif row is not None:
                e.last_active = created[e]
    return matched, sum(1 for e in created if e.created)


def endpoint_risks(endpoint_ids: set, config: ClassConfig) -> dict:
    """Endpoints whose fields gained classes: (data_classes, risk) recomputed from all their fields."""
    if not endpoint_ids:
        return {}
    classes: dict = defaultdict(set)
    for endpoint_id, names in DataField.objects.filter(endpoint_id__in=endpoint_ids).values_list(
        "endpoint_id", "data_classes"
    ):
        classes[endpoint_id].update(names or ())
    return {e: (sorted(classes[e]), config.risk(classes[e])) for e in endpoint_ids}


def endpoints_update(matched, results, risk_changes) -> bool:
    """Activity, GraphQL, authentication detection, risk (DECISIONS §4): set-based, last in the transaction.

    Returns True when something a list item shows or the list filters read changed (lastActive,
    GraphQL, authentication, risk): the cached list answers (``inventory.counts``) are then dropped."""
    changed = bool(risk_changes)
    newest: dict = {}
    rows: dict = {}
    for trace, endpoint in matched:
        rows[endpoint.uuid] = endpoint
        if endpoint.uuid not in newest or newest[endpoint.uuid] < trace.received_at:
            newest[endpoint.uuid] = trace.received_at
    # lastActive to the second: these rows are touched by every batch of their endpoint.
    stale = sorted(e for e, at in newest.items()
                   if rows[e].last_active is None or rows[e].last_active < at - LAST_ACTIVE_RESOLUTION)
    if stale:
        bulk_set(Endpoint, [{"pk": e, "last_active": newest[e]} for e in stale], greatest=["last_active"])
        changed = True
    graphql = sorted({ep.uuid for r, ep in results if r.is_graphql and not ep.is_graphql})
    if graphql:
        changed |= bool(Endpoint.objects.filter(uuid__in=graphql, is_graphql=False)
                        .update(is_graphql=True, updated_at=timezone.now()))
    unauthenticated, authenticated = set(), set()
    for result, endpoint in results:
        if 200 <= result.trace.status < 300:
            (authenticated if result.has_credentials else unauthenticated).add(endpoint.uuid)
    for trace, endpoint in matched:
        # Partial (usage-only) v2 traces still say whether credentials were sent.
        if trace.partial and 200 <= trace.status < 300 and trace.auth_provided is not None:
            (authenticated if trace.auth_provided else unauthenticated).add(endpoint.uuid)
    if unauthenticated:
        changed |= bool(Endpoint.objects.filter(
            uuid__in=sorted(unauthenticated), unauthenticated_success_seen=False
        ).update(unauthenticated_success_seen=True, is_authenticated_detected=False))
    authenticated -= unauthenticated
    if authenticated:
        changed |= bool(Endpoint.objects.filter(
            uuid__in=sorted(authenticated), unauthenticated_success_seen=False, is_authenticated_detected=False
        ).update(is_authenticated_detected=True))
    if risk_changes:
        now = timezone.now()
        bulk_set(
            Endpoint,
            [{"pk": e, "data_classes": names, "risk_score": risk, "risk_rank": RISK_RANK[risk], "updated_at": now}
             for e, (names, risk) in sorted(risk_changes.items())],
            replace=["data_classes", "risk_score", "risk_rank", "updated_at"],
        )
    return changed
