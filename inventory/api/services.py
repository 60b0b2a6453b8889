"""What the inventory routes do: read, page, update and delete endpoints and hosts; new detections.

Shared by the views, the admin and commands. Every list is a constant number
of queries whatever the page size. update-paths lives in ``inventory.api.merge``.
"""
from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.apps import apps
from django.db import connection, transaction
from django.db.models import Count, F, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from classification.models import DataField
from classification.services import class_severities, field_risk
from core.enums import RISK_RANK, RiskScore
from core.errors import ApiError, EndpointNotFound, PayloadTooLarge, ZodError
from inventory.counts import cached_count, inventory_changed
from inventory.models import ApiTrace, Endpoint, EndpointCaller, Host, HostAddress, ObservedPath, UsageDay, UsageMinute
from inventory.patterns.operator_paths import SUGGESTION_SAMPLE, paths_suggest

from . import render
from .filters import HostFilter, endpoints_filter, json_any_q

logger = logging.getLogger(__name__)

MAX_DETAIL_TRACES = 100
USAGE_DAYS = 30
AGG_DAYS = 30
GRAPHQL_SCHEMA_MAX_BYTES = 5 * 1024 * 1024
GRAPHQL_SCHEMA_TOO_LARGE = "GraphQL schema larger than 5 MB."
ENDPOINT_ORDER = (F("risk_rank").desc(), F("last_active").desc(nulls_last=True), "uuid")


@dataclass(frozen=True)
class Page:
    """One page of a list and the number of matches before paging (``X-Total-Count``)."""

    items: list
    total: int


def _page(queryset: QuerySet, *, offset: int, limit: int) -> Page:
    total = queryset.count()
    items = list(queryset[offset:offset + limit]) if limit and offset < total else []
    return Page(items=items, total=total)


# --- Endpoints -------------------------------------------------------------------------

def endpoint_key(endpoint_id: str) -> uuid.UUID:
    """Parse an endpoint id from a URL; a malformed id is ``EndpointNotFound`` like an unknown one."""
    try:
        return uuid.UUID(str(endpoint_id))
    except ValueError:
        raise EndpointNotFound() from None


def endpoint_get(*, endpoint_id: str, for_update: bool = False) -> Endpoint:
    """The endpoint with this id (host joined); ``EndpointNotFound`` for an unknown or malformed id."""
    queryset = Endpoint.objects.select_related("host")
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    endpoint = queryset.filter(uuid=endpoint_key(endpoint_id)).first()
    if endpoint is None:
        raise EndpointNotFound()
    return endpoint


# Past this offset the page's keys are found first (an index-only scan without filters),
# then its rows; past the middle of the result the index is read from the other end.
DEEP_OFFSET = 1000
# A filtered result this small is ordered here: PostgreSQL then uses the filters' own indexes
# instead of walking the list-order index until it has seen ``offset + limit`` matches.
SMALL_RESULT = 2000
_REVERSED_ORDER = (F("risk_rank").asc(), F("last_active").asc(nulls_first=True), F("uuid").desc())


def _freeze(value):
    """A hashable form of validated query values (cache keys)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _list_order_key(row: tuple) -> tuple:
    """(uuid, risk_rank, last_active) -> the GET /endpoints order: risk DESC, lastActive DESC NULLS LAST, uuid."""
    uuid_, rank, last = row
    if last is None:
        return (-rank, 1, 0, uuid_)
    if last.tzinfo is None:
        last = last.replace(tzinfo=dt.UTC)
    return (-rank, 0, -((last - _EPOCH) // dt.timedelta(microseconds=1)), uuid_)


def _rows_by_id(ids: list) -> list[tuple]:
    """List-item rows of these endpoints, in the order of ``ids``."""
    rows = {row[0]: row for row in render.endpoint_rows(Endpoint.objects.filter(uuid__in=ids))}
    return [rows[i] for i in ids if i in rows]


def endpoints_page(*, filters: dict, offset: int, limit: int) -> Page:
    """GET /endpoints: filter (``EndpointFilter``'s lookups), order risk HIGH→NONE, lastActive newest
    (nulls last), uuid. Items are list-item rows (``render.ENDPOINT_COLUMNS``).

    The total comes from :func:`inventory.counts.cached_count`. The page: one query for
    shallow pages of large results; for a small filtered result (≤ ``SMALL_RESULT``) the
    keys of all matches, ordered here, then the page's rows; for deep offsets the page's
    keys from the closer end of the list-order index, then the rows.
    """
    queryset = endpoints_filter(Endpoint.objects.all(), filters)
    active = {k: v for k, v in filters.items() if v not in (None, "", [], ()) and not (k == "hostType" and v == "ANY")}
    total = cached_count(("endpoints", _freeze(active)), queryset.count)
    if not limit or offset >= total:
        return Page(items=[], total=total)
    if active and total <= SMALL_RESULT:
        keys = sorted(queryset.values_list("uuid", "risk_rank", "last_active"), key=_list_order_key)
        return Page(items=_rows_by_id([k[0] for k in keys[offset:offset + limit]]), total=total)
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
    """The stored OpenAPI spec named by ``openapi_spec_name`` (its parsed document), or ``None``.

    Specs are stored by the alerts/spec work as ``detections.OpenApiSpec`` (``name``, JSON
    ``spec``); while that model is not installed, no endpoint has one.
    """
    if not endpoint.openapi_spec_name:
        return None
    try:
        model = apps.get_model("detections", "OpenApiSpec")
    except LookupError:
        return None
    spec = model.objects.filter(name=endpoint.openapi_spec_name).values_list("spec", flat=True).first()
    return spec if isinstance(spec, dict) else None


def endpoint_detail(*, endpoint_id: str) -> dict:
    """GET /endpoint/{id}: the wire dict (``render.endpoint_detail``) of the endpoint with its fields,
    alerts and traces. Fields by section and path; alerts newest first; traces newest first, at
    most 100. Four queries (five when a spec is named)."""
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    return render.endpoint_detail(endpoint, openapi_spec=endpoint_openapi_spec(endpoint),
                                  traces_limit=MAX_DETAIL_TRACES)


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
    if not endpoints_set_authenticated(endpoint_ids=[endpoint_key(endpoint_id)], authenticated=authenticated):
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
    updated = Endpoint.objects.filter(uuid=endpoint_key(endpoint_id)).update(
        full_trace_capture_enabled=enabled, updated_at=timezone.now()
    )
    if not updated:
        raise EndpointNotFound()


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
    """GET /endpoint/{id}/suggested-paths: patterns suggested from the newest 2,000 observed paths."""
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    paths = (
        ObservedPath.objects.filter(endpoint=endpoint)
        .order_by("-last_seen", "path")
        .values_list("path", flat=True)[:SUGGESTION_SAMPLE]
    )
    return paths_suggest(list(paths))


def graphql_schema_check(*, schema_text: str) -> None:
    """Raise ``ZodError`` (issue at ``["file"]``) unless ``schema_text`` is a valid GraphQL SDL schema."""
    from graphql import GraphQLError, build_schema, validate_schema

    def invalid(message: str) -> ZodError:
        return ZodError([{"code": "custom", "path": ["file"], "message": f"Invalid GraphQL schema: {message}"}])

    try:
        schema = build_schema(schema_text)
    except GraphQLError as exc:
        raise invalid(exc.message) from None
    except (TypeError, ValueError) as exc:  # graphql-core reports invalid SDL as TypeError
        raise invalid(str(exc).strip()) from None
    except RecursionError:
        raise invalid("document nested too deeply") from None
    errors = validate_schema(schema)
    if errors:
        raise invalid("; ".join(error.message for error in errors))


def endpoint_graphql_schema_set(*, endpoint_id: str, upload) -> Endpoint:
    """PUT /endpoint/{id}/graphql-schema: validate and store an SDL schema (DECISIONS §4).

    Raises ``EndpointNotFound``; ``PayloadTooLarge`` (413) above 5 MB; 400
    ``"Endpoint is not a GraphQL endpoint."`` for a non-GraphQL endpoint;
    ``ZodError`` for a file that is not UTF-8 text or not a valid schema.
    """
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    if upload.size > GRAPHQL_SCHEMA_MAX_BYTES:
        raise PayloadTooLarge(GRAPHQL_SCHEMA_TOO_LARGE)
    if not endpoint.is_graphql:
        raise ApiError("Endpoint is not a GraphQL endpoint.")
    raw = upload.read(GRAPHQL_SCHEMA_MAX_BYTES + 1)
    try:
        schema_text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ZodError([{"code": "custom", "path": ["file"], "message": "The schema file is not UTF-8 text."}]) from None
    graphql_schema_check(schema_text=schema_text)
    with transaction.atomic():
        endpoint = endpoint_get(endpoint_id=endpoint_id, for_update=True)
        endpoint.graphql_schema = schema_text
        endpoint.save(update_fields=["graphql_schema", "updated_at"])
    logger.info("graphql schema stored for endpoint %s (%d bytes)", endpoint.uuid, len(raw))
    return endpoint


def endpoint_graphql_schema_clear(*, endpoint_id: str) -> None:
    """DELETE /endpoint/{id}/graphql-schema: remove the stored schema (nothing to remove is fine)."""
    key = endpoint_key(endpoint_id)
    if not Endpoint.objects.filter(uuid=key).update(graphql_schema=None, updated_at=timezone.now()):
        raise EndpointNotFound()


# --- Hosts -----------------------------------------------------------------------------

def hosts_with_endpoints() -> QuerySet[Host]:
    """Hosts annotated with ``num_endpoints``; a host without endpoints is not listed (DECISIONS §4)."""
    return Host.objects.annotate(num_endpoints=Count("endpoints")).filter(num_endpoints__gt=0)


def host_endpoint_counts() -> dict[int, int]:
    """Endpoints per host id (hosts with none are absent): one aggregate over the endpoints,
    cached like the list totals (``inventory.counts``)."""
    return cached_count(("host_counts",), lambda: dict(
        Endpoint.objects.order_by().values("host_id").annotate(n=Count("uuid")).values_list("host_id", "n")
    ))


def hosts_page(*, filters: dict, sort_by: str, sort_order: str, offset: int, limit: int) -> Page:
    """GET /hosts: ``searchQuery`` on the name, ``hostType``; by endpoint count or name (ties by name).

    Items are ``render.host_item`` dicts. The endpoint counts come from :func:`host_endpoint_counts`;
    the hosts (filtered in SQL) are joined, ordered and paged here.
    """
    counts = host_endpoint_counts()
    descending = sort_order == "DESC"
    # Names are ordered by the database (its collation), counts here with a stable sort: ties by name.
    by_name = F("name").desc() if sort_by == "NAME" and descending else F("name").asc()
    hosts = [
        (name, counts[host_id], public)
        for host_id, name, public in HostFilter(data=filters, queryset=Host.objects.order_by(by_name)).qs
        .values_list("id", "name", "is_public")
        if counts.get(host_id)
    ]
    if sort_by != "NAME":
        hosts.sort(key=lambda h: h[1], reverse=descending)
    return Page(items=[render.host_item(*h) for h in hosts[offset:offset + limit]] if limit else [],
                total=len(hosts))


def hosts_delete(*, names: Sequence[str]) -> int:
    """DELETE /hosts: remove the hosts with all their endpoints (and everything under those).

    Unknown names are ignored; returns how many hosts were deleted.
    """
    with transaction.atomic():
        _, per_model = Host.objects.filter(name__in=list(names)).delete()
        inventory_changed()
    deleted = per_model.get(Host._meta.label, 0)
    logger.info("deleted %d host(s) and %d endpoint(s)", deleted, per_model.get(Endpoint._meta.label, 0))
    return deleted


def hosts_graph() -> dict:
    """GET /hosts-graph (DECISIONS §4).

    Nodes: the listed hosts (with endpoints). An edge src→dst exists when an
    endpoint of dst was called from an address src's traffic was served on;
    ``numEndpoints`` counts such dst endpoints. Self-loops are left out. Two queries.
    """
    hosts = {
        host_id: (name, count, public)
        for host_id, name, count, public in hosts_with_endpoints().order_by("name").values_list(
            "id", "name", "num_endpoints", "is_public"
        )
    }
    caller, endpoint, address = EndpointCaller._meta, Endpoint._meta, HostAddress._meta
    sql = f"""
        SELECT src.{address.get_field('host').column}, e.{endpoint.get_field('host').column},
               COUNT(DISTINCT e.{endpoint.pk.column})
        FROM {caller.db_table} c
        JOIN {endpoint.db_table} e ON e.{endpoint.pk.column} = c.{caller.get_field('endpoint').column}
        JOIN {address.db_table} src ON src.{address.get_field('address').column} = c.{caller.get_field('address').column}
        WHERE src.{address.get_field('host').column} <> e.{endpoint.get_field('host').column}
        GROUP BY src.{address.get_field('host').column}, e.{endpoint.get_field('host').column}
    """
    with connection.cursor() as cursor:
        cursor.execute(sql)
        rows = cursor.fetchall()
    edges = [
        {"srcHost": hosts[src][0], "dstHost": hosts[dst][0], "numEndpoints": count}
        for src, dst, count in rows
        if src in hosts and dst in hosts
    ]
    edges.sort(key=lambda e: (e["srcHost"], e["dstHost"]))
    return {
        "hosts": {name: {"numEndpoints": count, "isPublic": public} for name, count, public in hosts.values()},
        "edges": edges,
    }


# --- New detections --------------------------------------------------------------------

def field_risk_q(risk_scores: Sequence[str], severities: dict[str, str]) -> Q:
    """Data fields whose risk (highest severity of their classes) is one of ``risk_scores``."""
    by_rank: dict[int, list[str]] = {rank: [] for rank in RISK_RANK.values()}
    for name, severity in severities.items():
        by_rank[RISK_RANK[severity]].append(name)
    condition = Q(pk__in=[])
    for risk in set(risk_scores):
        rank = RISK_RANK[risk]
        higher = [name for r, names in by_rank.items() if r > rank for name in names]
        exact = by_rank[rank]
        is_max = ~json_any_q(DataField, "data_classes", higher) if higher else Q(pk__isnull=False)
        if risk == RiskScore.NONE:
            condition |= is_max
        else:
            condition |= json_any_q(DataField, "data_classes", exact) & is_max
    return condition


def new_detections(*, params: dict) -> Page:
    """GET /new-detections: endpoints (by firstDetected) or data fields (by creation) in [start, end].

    Newest first. ``detectionRiskScores`` filters on the endpoint's riskScore, or
    on a field's own risk (highest severity of its classes); ``detectionHosts`` on
    hostnames. Items are endpoint list-item rows (``render.ENDPOINT_COLUMNS``), or data
    fields carrying ``risk_score`` and their endpoint (host joined). The total is cached
    like the list totals (``inventory.counts``). Two queries (three for data fields).
    """
    start, end = params.get("start"), params.get("end")
    hosts, risks = params["detectionHosts"], params["detectionRiskScores"]
    offset, limit = params["detectionOffset"], params["detectionLimit"]
    key = ("new_detections", _freeze(dict(params, detectionOffset=None, detectionLimit=None)))
    if params["detectionType"] == "ENDPOINT":
        queryset = Endpoint.objects.filter(first_detected__isnull=False)
        if start:
            queryset = queryset.filter(first_detected__gte=start)
        if end:
            queryset = queryset.filter(first_detected__lte=end)
        if hosts:
            queryset = queryset.filter(host__name__in=hosts)
        if risks:
            queryset = queryset.filter(risk_score__in=risks)
        total = cached_count(key, queryset.count)
        items = render.endpoint_rows(queryset.order_by("-first_detected", "uuid")[offset:offset + limit]) \
            if limit and offset < total else []
        return Page(items=items, total=total)

    severities = class_severities()
    queryset = DataField.objects.select_related("endpoint__host")
    if start:
        queryset = queryset.filter(created_at__gte=start)
    if end:
        queryset = queryset.filter(created_at__lte=end)
    if hosts:
        queryset = queryset.filter(endpoint__host__name__in=hosts)
    if risks:
        queryset = queryset.filter(field_risk_q(risks, severities))
    total = cached_count(key, queryset.count)
    items = list(queryset.order_by("-created_at", "uuid")[offset:offset + limit]) if limit and offset < total else []
    for field in items:
        field.risk_score = field_risk(field.data_classes, severities)
    return Page(items=items, total=total)


def new_detections_agg(*, now: dt.datetime | None = None, days: int = AGG_DAYS) -> list[dict]:
    """GET /new-detections-agg: per UTC day of the last 30 (today included, oldest first, days
    without detections included as zeros), the endpoints first detected and fields created."""
    now = now or timezone.now()
    today = now.astimezone(dt.UTC).date()
    first_day = today - dt.timedelta(days=days - 1)
    since = dt.datetime(first_day.year, first_day.month, first_day.day, tzinfo=dt.UTC)

    def per_day(queryset: QuerySet, field: str) -> dict[dt.date, int]:
        return dict(
            queryset.filter(**{f"{field}__gte": since})
            .annotate(day=TruncDate(field, tzinfo=dt.UTC))
            .values("day")
            .annotate(n=Count("pk"))
            .values_list("day", "n")
        )

    endpoints = per_day(Endpoint.objects.all(), "first_detected")
    fields = per_day(DataField.objects.all(), "created_at")
    result = []
    for offset in range(days):
        day = first_day + dt.timedelta(days=offset)
        result.append({"day": day, "numEndpoints": endpoints.get(day, 0), "numFields": fields.get(day, 0)})
    return result


def traces_prune(*, endpoint_ids: Iterable, keep: int = MAX_DETAIL_TRACES) -> int:
    """Keep the newest ``keep`` traces of each endpoint; returns how many were deleted."""
    deleted = 0
    for endpoint_id in endpoint_ids:
        newest = ApiTrace.objects.filter(endpoint_id=endpoint_id).order_by("-created_at", "uuid").values("uuid")[:keep]
        deleted += ApiTrace.objects.filter(endpoint_id=endpoint_id).exclude(uuid__in=newest).delete()[0]
    return deleted
