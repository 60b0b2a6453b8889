"""The dashboard (the admin index): what is exposed, what is new, what is broken, in one look.

Every figure but the latest alerts comes from a handful of GROUP BY queries over endpoints, data
fields and alerts; on 100,000 endpoints they take a few hundred milliseconds together, so the
result is kept per process (:func:`cached_figures`). Alert status changes made in the console bump
the inventory version too.
"""
from __future__ import annotations

import datetime as dt
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Q
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone

from classification.models import DataField
from core.enums import RANK_RISK, AlertStatus, AlertType, RiskScore
from detections.models import Alert
from inventory.counts import inventory_version
from inventory.models import Endpoint

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


def _by_host() -> list[tuple[str, int, int, int, int, int]]:
    """(host name, endpoints, HIGH, MEDIUM, LOW endpoints, highest rank) per host with endpoints: one
    GROUP BY that also gives the endpoints by risk (their sums)."""
    return list(Endpoint.objects.values("host", "host__name").annotate(
        n=Count("uuid"), high=Count("uuid", filter=Q(risk_rank=3)), medium=Count("uuid", filter=Q(risk_rank=2)),
        low=Count("uuid", filter=Q(risk_rank=1)), top=Max("risk_rank"),
    ).values_list("host__name", "n", "high", "medium", "low", "top"))


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

    by_host = _by_host()
    hosts = {risk: 0 for risk in RISKS}
    endpoints = {risk: 0 for risk in RISKS}
    for _, n, high, medium, low, top in by_host:
        hosts[RANK_RISK[top]] += 1
        for risk, count in zip(RISKS, (high, medium, low, n - high - medium - low)):
            endpoints[risk] += count
    top_hosts = sorted(by_host, key=lambda r: (-r[2], -r[3], -r[1], r[0]))[:TOP_HOSTS]

    alerts = {}
    for type_, risk, n in (Alert.objects.filter(status=AlertStatus.OPEN).values("type", "risk_score")
                           .annotate(n=Count("uuid")).values_list("type", "risk_score", "n")):
        alerts.setdefault(type_, {})[risk] = n
    new_endpoints = _per_day(Endpoint.objects, "first_detected", since)
    new_fields = _per_day(DataField.objects, "created_at", since)
    return {
        "endpoints_by_risk": endpoints,
        "hosts_by_risk": hosts,
        "open_alerts": {type_: alerts[type_] for type_ in AlertType.values if type_ in alerts},
        "data_classes": _class_counts(),
        "per_day": [(day, new_endpoints.get(day, 0), new_fields.get(day, 0)) for day in days],
        "top_hosts": [HostRisk(name, RANK_RISK[top], n, high, medium)
                      for name, n, high, medium, _, top in top_hosts if top > 0],
    }


# Kept per process: (inventory version, computed at, figures). Under steady ingestion the version
# changes every batch, so a slow result is also served up to STALE_SECONDS old whatever the version.
SLOW_MS = 50
STALE_SECONDS = 10
_cache: dict[str, tuple] = {}
_lock = threading.Lock()


def cached_figures() -> tuple[dict, float]:
    """The figures and their age in seconds (0: computed now). Reused while the inventory is unchanged
    (at most ``INVENTORY_COUNT_CACHE_SECONDS``) or, when computing them was slow (≥ SLOW_MS), for
    ``STALE_SECONDS`` whatever changed. Fast computations (small inventories, the tests) are exact."""
    ttl = settings.INVENTORY_COUNT_CACHE_SECONDS
    version = inventory_version()
    now = time.monotonic()
    entry = _cache.get("figures")
    if ttl > 0 and entry is not None:
        entry_version, at, data = entry
        if (now - at < ttl and version is not None and entry_version == version) or now - at < STALE_SECONDS:
            return data, now - at
    started = time.perf_counter()
    data = figures()
    if ttl > 0 and (time.perf_counter() - started) * 1000 >= SLOW_MS:
        with _lock:
            _cache["figures"] = (version, now, data)
    return data, 0.0


def latest_alerts() -> list[Alert]:
    return list(Alert.objects.select_related("endpoint__host").order_by("-created_at")[:LATEST_ALERTS])


def dashboard_context(request) -> dict:
    data, age = cached_figures()
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
        "figures_age": age,
    }
