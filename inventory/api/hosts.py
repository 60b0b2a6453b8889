"""GET /hosts, DELETE /hosts and GET /hosts-graph (DECISIONS §4)."""
from __future__ import annotations

import logging
from collections.abc import Sequence

from django.db import connection, transaction
from django.db.models import Count, F, QuerySet

from inventory.counts import cached_count, inventory_changed
from inventory.models import Endpoint, EndpointCaller, Host, HostAddress

from . import render
from .filters import HostFilter
from .lookup import Page

logger = logging.getLogger(__name__)


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

