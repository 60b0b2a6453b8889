"""GET /new-detections and GET /new-detections-agg: endpoints first detected and fields created per period."""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from classification.models import DataField
from classification.services import class_severities, field_risk
from core.enums import RISK_RANK, RiskScore
from inventory.counts import cached_count
from inventory.models import Endpoint

from . import render
from .filters import json_any_q
from .lookup import Page, _freeze

AGG_DAYS = 30


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
        queryset = _in_window(Endpoint.objects.filter(first_detected__isnull=False), "first_detected", start, end)
        if hosts:
            queryset = queryset.filter(host__name__in=hosts)
        if risks:
            queryset = queryset.filter(risk_score__in=risks)
        total = cached_count(key, queryset.count)
        items = render.endpoint_rows(queryset.order_by("-first_detected", "uuid")[offset:offset + limit]) \
            if limit and offset < total else []
        return Page(items=items, total=total)

    severities = class_severities()
    queryset = _in_window(DataField.objects.select_related("endpoint__host"), "created_at", start, end)
    if hosts:
        queryset = queryset.filter(endpoint__host__name__in=hosts)
    if risks:
        queryset = queryset.filter(field_risk_q(risks, severities))
    total = cached_count(key, queryset.count)
    items = list(queryset.order_by("-created_at", "uuid")[offset:offset + limit]) if limit and offset < total else []
    for field in items:
        field.risk_score = field_risk(field.data_classes, severities)
    return Page(items=items, total=total)


def _in_window(queryset: QuerySet, field: str, start, end) -> QuerySet:
    """Rows whose ``field`` lies in [start, end]; an absent bound does not limit."""
    if start:
        queryset = queryset.filter(**{f"{field}__gte": start})
    if end:
        queryset = queryset.filter(**{f"{field}__lte": end})
    return queryset


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

