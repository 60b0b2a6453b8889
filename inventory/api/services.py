"""What the inventory routes do: read, page, update and delete endpoints; the other routes' services
re-exported (hosts, new detections, GraphQL schemas), so views, the admin and commands import one module.

Every list is a constant number of queries whatever the page size. update-paths lives in
``inventory.api.merge``; shared lookups in ``inventory.api.lookup``.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable

from django.apps import apps
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.errors import EndpointNotFound
from inventory.counts import cached_count, cached_keys, inventory_changed
from inventory.models import Endpoint, ObservedPath, UsageDay, UsageMinute
from inventory.learning import learned_suggestions
from inventory.patterns.operator_paths import MAX_SUGGESTIONS, SUGGESTION_SAMPLE, paths_suggest

from . import render
from .filters import endpoints_filter
from .graphql import (  # noqa: F401 (re-exported)
    GRAPHQL_SCHEMA_MAX_BYTES,
    GRAPHQL_SCHEMA_TOO_LARGE,
    endpoint_graphql_schema_clear,
    endpoint_graphql_schema_set,
    graphql_schema_check,
)
from .hosts import host_endpoint_counts, hosts_delete, hosts_graph, hosts_page, hosts_with_endpoints  # noqa: F401
from .lookup import (  # noqa: F401 (re-exported)
    MAX_DETAIL_TRACES,
    Page,
    _freeze,
    endpoint_get,
    endpoint_key,
    endpoint_resolve,
    traces_prune,
)
from .new_detections import field_risk_q, new_detections, new_detections_agg  # noqa: F401

logger = logging.getLogger(__name__)

USAGE_DAYS = 30
ENDPOINT_ORDER = (F("risk_rank").desc(), F("last_active").desc(nulls_last=True), "uuid")


# Past this offset the page's keys are found first (an index-only scan without filters),
# then its rows; past the middle of the result the index is read from the other end.
DEEP_OFFSET = 1000
# A filtered result this small is ordered by PostgreSQL's top-N sort over the filters' own
# indexes: ordering by ``risk_rank + 0`` (same order) keeps the planner from walking the
# list-order index until it has seen ``offset + limit`` matches, which for a rare match is
# most of the index. Filters on the risk alone are the list-order index's own prefix: a scan
# of that index stops at the page whatever the result's size.
SMALL_RESULT = 2000
_REVERSED_ORDER = (F("risk_rank").asc(), F("last_active").asc(nulls_first=True), F("uuid").desc())
_SORTED_ORDER = ((F("risk_rank") + 0).desc(), F("last_active").desc(nulls_last=True), "uuid")
_INDEX_ORDERED_FILTERS = frozenset({"riskScores"})
# While whole answers are cached (``inventory.counts``), the pages past the first of a result this
# small are slices of its ordered keys, read once per cache time-to-live: a random offset then
# costs one primary-key query instead of an index walk past ``offset`` entries.
KEYS_KEPT = 5000


def _rows_by_id(ids: list) -> list[tuple]:
    """List-item rows of these endpoints, in the order of ``ids``."""
    rows = {row[0]: row for row in render.endpoint_rows(Endpoint.objects.filter(uuid__in=ids))}
    return [rows[i] for i in ids if i in rows]


def endpoints_page(*, filters: dict, offset: int, limit: int) -> Page:
    """GET /endpoints: filter (``EndpointFilter``'s lookups), order risk HIGH→NONE, lastActive newest
    (nulls last), uuid. Items are list-item rows (``render.ENDPOINT_COLUMNS``).

    The total comes from :func:`inventory.counts.cached_count`. The page: one query for
    shallow pages (index-ordered, or sorted by PostgreSQL for a small filtered result, see
    ``SMALL_RESULT``); for deep offsets the page's keys from the closer end of the list-order
    index, then the rows.
    """
    queryset = endpoints_filter(Endpoint.objects.all(), filters)
    active = {k: v for k, v in filters.items() if v not in (None, "", [], ()) and not (k == "hostType" and v == "ANY")}
    total = cached_count(("endpoints", _freeze(active)), queryset.count)
    if not limit or offset >= total:
        return Page(items=[], total=total)
    if offset and total <= KEYS_KEPT:
        keys = cached_keys(("endpoint-keys", _freeze(active)),
                           lambda: list(queryset.order_by(*ENDPOINT_ORDER).values_list("uuid", flat=True)))
        if keys is not None:
            return Page(items=_rows_by_id(keys[offset:offset + limit]), total=total)
    if active and total <= SMALL_RESULT and not set(active) <= _INDEX_ORDERED_FILTERS:
        return Page(items=render.endpoint_rows(queryset.order_by(*_SORTED_ORDER)[offset:offset + limit]), total=total)
    if offset >= DEEP_OFFSET:
        count = min(limit, total - offset)
        if total - offset < offset + count:  # nearer the end: read the index backwards
            start = total - offset - count
            ids = list(queryset.order_by(*_REVERSED_ORDER).values_list("uuid", flat=True)[start:start + count])
            ids.reverse()
        else:
            ids = list(queryset.order_by(*ENDPOINT_ORDER).values_list("uuid", flat=True)[offset:offset + count])
        return Page(items=_rows_by_id(ids), total=total)
    return Page(items=render.endpoint_rows(queryset.order_by(*ENDPOINT_ORDER)[offset:offset + limit]), total=total)


def endpoint_openapi_spec(endpoint: Endpoint) -> dict | None:
    """The parsed document of the uploaded spec documenting the endpoint (``openapi_spec_name``),
    else its host's generated spec (DECISIONS §10) cut down to the endpoint's path, or ``None``. One query."""
    try:
        model = apps.get_model("detections", "OpenApiSpec")
    except LookupError:
        return None
    if not endpoint.openapi_spec_name:
        from detections.openapi.generate.service import generated_spec_excerpt

        return generated_spec_excerpt(host_id=endpoint.host_id, pattern=endpoint.path)
    spec = model.objects.filter(name=endpoint.openapi_spec_name).values_list("spec", flat=True).first()
    return spec if isinstance(spec, dict) else None


def endpoint_detail(*, endpoint_id: str, rendered_traces: bool = False) -> dict:
    """GET /endpoint/{id}: the wire dict (``render.endpoint_detail``) of the endpoint with its fields,
    alerts and traces. Fields by section and path; alerts newest first; traces newest first, at
    most 100 (``rendered_traces``: as ready JSON, ``render.traces_rendered``: the JSON stored with each).
    Five queries; the fifth reads the uploaded or generated spec.
    The route answers :func:`endpoint_detail_body` (these bytes, from prepared SQL on PostgreSQL)."""
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    return render.endpoint_detail(endpoint, openapi_spec=endpoint_openapi_spec(endpoint),
                                  traces_limit=MAX_DETAIL_TRACES, rendered_traces=rendered_traces)


def endpoint_detail_body(*, endpoint_id: str) -> bytes:
    """GET /endpoint/{id} rendered (``ORJSONRenderer`` of :func:`endpoint_detail`): on PostgreSQL from
    prepared statements (``detail_sql``), else, or for data only the ORM path renders exactly, that path."""
    from django.db import connection

    from core.renderers import ORJSONRenderer

    if connection.vendor == "postgresql":
        from .detail_sql import endpoint_detail_body as sql_body

        body = sql_body(endpoint_key(endpoint_id), traces_limit=MAX_DETAIL_TRACES)
        if body is not None:
            return body
    return ORJSONRenderer().render(endpoint_detail(endpoint_id=endpoint_id, rendered_traces=True))


def endpoint_usage(*, endpoint_id: str, now: dt.datetime | None = None) -> dict:
    """GET /endpoint/{id}/usage (DECISIONS §4).

    ``dailyUsage``: one item per UTC day with traffic in the last 30 days (today
    included), oldest first. ``last1MinCnt``: requests in the last 60 seconds,
    from the per-minute counters: the current minute's count plus the previous
    minute's count weighted by the part of it still inside the window.
    """
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    now = now or timezone.now()
    today = now.astimezone(dt.UTC).date()
    days = (
        UsageDay.objects.filter(endpoint=endpoint, day__gt=today - dt.timedelta(days=USAGE_DAYS), day__lte=today)
        .order_by("day")
        .values_list("day", "count")
    )
    minute = now.replace(second=0, microsecond=0)
    previous_minute = minute - dt.timedelta(minutes=1)
    counts = dict(
        UsageMinute.objects.filter(endpoint=endpoint, minute__gte=previous_minute, minute__lte=minute)
        .values_list("minute", "count")
    )
    elapsed = (now - minute).total_seconds()
    last_minute = counts.get(minute, 0) + round(counts.get(previous_minute, 0) * (60 - elapsed) / 60)
    return {
        "dailyUsage": [
            {"day": dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC), "cnt": count} for day, count in days
        ],
        "last1MinCnt": last_minute,
    }


def endpoint_set_authenticated(*, endpoint_id: str, authenticated: bool) -> None:
    """PUT /endpoint/{id}/authenticated: the operator's setting (wins over detection)."""
    if not endpoints_set_authenticated(endpoint_ids=[endpoint_resolve(endpoint_id)], authenticated=authenticated):
        raise EndpointNotFound()


def endpoints_set_authenticated(*, endpoint_ids: Iterable, authenticated: bool | None) -> int:
    """Set (or with ``None`` unset) the operator's authentication setting of several endpoints."""
    updated = Endpoint.objects.filter(uuid__in=list(endpoint_ids)).update(
        is_authenticated_user_set=authenticated, updated_at=timezone.now()
    )
    if updated:
        inventory_changed()
    return updated


def endpoint_set_full_trace_capture(*, endpoint_id: str, enabled: bool) -> None:
    """PUT /endpoint/{id}/enable-full-trace-capture: store unredacted sensitive values from now on, or stop."""
    updated = Endpoint.objects.filter(uuid=endpoint_resolve(endpoint_id)).update(
        full_trace_capture_enabled=enabled, updated_at=timezone.now()
    )
    if not updated:
        raise EndpointNotFound()
    inventory_changed()  # fullTraceCaptureEnabled and updatedAt are list-item columns


def endpoints_delete(*, endpoint_ids: Iterable) -> int:
    """Delete endpoints with everything under them (fields, alerts, traces, usage, observed paths,
    callers). Unknown ids are ignored; returns how many endpoints were deleted."""
    ids = list(endpoint_ids)
    if not ids:
        return 0
    with transaction.atomic():
        _, per_model = Endpoint.objects.filter(uuid__in=ids).delete()
        inventory_changed()
    deleted = per_model.get(Endpoint._meta.label, 0)
    logger.info("deleted %d endpoint(s)", deleted)
    return deleted


def endpoint_delete(*, endpoint_id: str) -> None:
    """DELETE /endpoint/{id}; ``EndpointNotFound`` when it does not exist."""
    if not endpoints_delete(endpoint_ids=[endpoint_key(endpoint_id)]):
        raise EndpointNotFound()


def endpoint_suggested_paths(*, endpoint_id: str) -> list[str]:
    """GET /endpoint/{id}/suggested-paths: first the patterns learned from cardinality that would gather
    this endpoint with its siblings (``inventory.learning``, offered whether learning is on or off), then
    the patterns suggested from its newest 2,000 observed paths (DECISIONS §4); the endpoint's own
    parameter names are kept in them. Distinct, at most 100."""
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    paths = (
        ObservedPath.objects.filter(endpoint=endpoint)
        .order_by("-last_seen", "path")
        .values_list("path", flat=True)[:SUGGESTION_SAMPLE]
    )
    suggestions = [*learned_suggestions(endpoint=endpoint), *paths_suggest(list(paths), names_from=endpoint.path)]
    return list(dict.fromkeys(suggestions))[:MAX_SUGGESTIONS]

