"""The dashboard (the admin index): what is exposed, what is new, what is broken, in one look.

Every figure but the latest alerts comes from a handful of GROUP BY queries over endpoints, data
fields and alerts; on 100,000 endpoints they take a few hundred milliseconds together, so the
result goes through ``inventory.counts.cached_count`` (kept per process until the inventory
changes, at most ``INVENTORY_COUNT_CACHE_SECONDS``; a fast computation is never cached, so small
inventories are always exact). Alert status changes made here bump the inventory version too.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Max, Q
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone

from classification.models import DataField
from core.enums import RANK_RISK, AlertStatus, AlertType, RiskScore
from detections.models import Alert
from inventory.counts import cached_count
from inventory.models import Endpoint, Host

from .svg import daily_bars_svg

DAYS = 30
TOP_HOSTS = 10
LATEST_ALERTS = 10
RISKS = [RiskScore.HIGH, RiskScore.MEDIUM, RiskScore.LOW, RiskScore.NONE]


@dataclass(frozen=True)
class HostRisk:
    name: str
    risk: str
    endpoints: int
    high: int
    medium: int


def _by_host() -> list[tuple[int, int, int, int, int]]:
    """(host id, endpoints, HIGH endpoints, MEDIUM endpoints, highest rank) per host with endpoints."""
    return list(Endpoint.objects.values("host").annotate(
        n=Count("uuid"), high=Count("uuid", filter=Q(risk_rank=3)), medium=Count("uuid", filter=Q(risk_rank=2)),
        top=Max("risk_rank"),
    ).values_list("host", "n", "high", "medium", "top"))


def _class_counts() -> list[tuple[str, int]]:
    """Endpoints carrying each data class, most first (one statement over the JSON lists)."""
    table = Endpoint._meta.db_table
    if connection.vendor == "postgresql":
        sql = (f"SELECT c, count(*) FROM {table}, jsonb_array_elements_text({table}.data_classes) c "
               "GROUP BY c ORDER BY count(*) DESC, c")
    else:
        sql = (f"SELECT j.value, count(*) FROM {table}, json_each({table}.data_classes) j "
               "GROUP BY j.value ORDER BY count(*) DESC, j.value")
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [(name, count) for name, count in cursor.fetchall()]


def _per_day(queryset, field: str, since: dt.datetime) -> dict[dt.date, int]:
    rows = (queryset.filter(**{f"{field}__gte": since}).annotate(day=TruncDate(field, tzinfo=dt.timezone.utc))
            .values("day").annotate(n=Count("pk")).values_list("day", "n"))
    return dict(rows)


def figures(now: dt.datetime | None = None) -> dict:
    """The dashboard's aggregates (uncached): plain data, the same numbers the API's filters give."""
    now = now or timezone.now()
    today = now.astimezone(dt.timezone.utc).date()
    days = [today - dt.timedelta(days=back) for back in range(DAYS - 1, -1, -1)]
    since = dt.datetime.combine(days[0], dt.time.min, tzinfo=dt.timezone.utc)

    endpoints = dict(Endpoint.objects.values("risk_score").annotate(n=Count("uuid")).values_list("risk_score", "n"))
    by_host = _by_host()
    names = dict(Host.objects.filter(id__in=[row[0] for row in by_host]).values_list("id", "name"))
    hosts = {risk: 0 for risk in RISKS}
    for *_, top in by_host:
        hosts[RANK_RISK[top]] += 1
    top_hosts = sorted(by_host, key=lambda r: (-r[2], -r[3], -r[1], names.get(r[0], "")))[:TOP_HOSTS]

    alerts = {}
    for type_, risk, n in (Alert.objects.filter(status=AlertStatus.OPEN).values("type", "risk_score")
                           .annotate(n=Count("uuid")).values_list("type", "risk_score", "n")):
        alerts.setdefault(type_, {})[risk] = n
    new_endpoints = _per_day(Endpoint.objects, "first_detected", since)
    new_fields = _per_day(DataField.objects, "created_at", since)
    return {
        "endpoints_by_risk": {risk: endpoints.get(risk, 0) for risk in RISKS},
        "hosts_by_risk": hosts,
        "open_alerts": {type_: alerts[type_] for type_ in AlertType.values if type_ in alerts},
        "data_classes": _class_counts(),
        "per_day": [(day, new_endpoints.get(day, 0), new_fields.get(day, 0)) for day in days],
        "top_hosts": [HostRisk(names.get(h, str(h)), RANK_RISK[top], n, high, medium)
                      for h, n, high, medium, top in top_hosts if top > 0],
    }


def latest_alerts() -> list[Alert]:
    return list(Alert.objects.select_related("endpoint__host").order_by("-created_at")[:LATEST_ALERTS])


def dashboard_context(request) -> dict:
    data = cached_count(("console", "dashboard", timezone.now().date()), figures)
    open_by_type = [
        {"type": AlertType(type_).label, "value": type_, "total": sum(by_risk.values()),
         "by_risk": [by_risk.get(risk, 0) for risk in RISKS]}
        for type_, by_risk in data["open_alerts"].items()
    ]
    alert_list = reverse("admin:detections_alert_changelist")
    return {
        "risks": RISKS,
        "endpoints_total": sum(data["endpoints_by_risk"].values()),
        "endpoints_by_risk": [(risk, data["endpoints_by_risk"][risk]) for risk in RISKS],
        "hosts_total": sum(data["hosts_by_risk"].values()),
        "hosts_by_risk": [(risk, data["hosts_by_risk"][risk]) for risk in RISKS],
        "open_alerts": open_by_type,
        "open_alerts_total": sum(row["total"] for row in open_by_type),
        "open_alerts_by_risk": [(risk, sum(row["by_risk"][i] for row in open_by_type)) for i, risk in enumerate(RISKS)],
        "alert_list_url": alert_list,
        "data_classes": data["data_classes"],
        "per_day_svg": daily_bars_svg(data["per_day"], labels=("new endpoints", "new fields")),
        "per_day_totals": (sum(r[1] for r in data["per_day"]), sum(r[2] for r in data["per_day"])),
        "top_hosts": data["top_hosts"],
        "latest_alerts": latest_alerts(),
        "days": DAYS,
    }
