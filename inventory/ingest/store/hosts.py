"""Hosts of a batch: found or created, public or private from their destination addresses (DECISIONS §4)."""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from django.utils import timezone

from inventory.counts import inventory_changed
from inventory.models import Host

from ..addresses import address_is_global, address_normalize, host_name_is_public
from ..traces import Trace
from .rows import HostRow


def destinations(traces: list[Trace]) -> dict[str, dict[str, datetime]]:
    """host name -> {destination IP address -> newest time seen}."""
    out: dict[str, dict[str, datetime]] = defaultdict(dict)
    for trace in traces:
        address = address_normalize(trace.meta.get("destination"))
        if address:
            seen = out[trace.host]
            if address not in seen or seen[address] < trace.received_at:
                seen[address] = trace.received_at
    return out


_HOST_COLUMNS = ("id", "name", "is_public", "is_public_detected", "public_override", "address_seen")


def hosts_resolve(traces: list[Trace]) -> tuple[dict[str, HostRow], int]:
    """Find or create the hosts of the traces and apply public/private from destination addresses.

    A new host is public when one of its addresses is global, or, with none seen,
    when its name is a public DNS name; a known host becomes public when a global
    address shows up (DECISIONS §4). Returns (hosts by name, number created).
    """
    addresses = destinations(traces)
    names = {t.host for t in traces}
    rows = {r["name"]: HostRow(**r) for r in Host.objects.filter(name__in=names).values(*_HOST_COLUMNS)}
    missing = sorted(names - rows.keys())
    if missing:
        first_seen = {}
        for trace in traces:
            if trace.host in missing and (trace.host not in first_seen or trace.received_at < first_seen[trace.host]):
                first_seen[trace.host] = trace.received_at
        new = []
        for name in missing:
            seen = addresses.get(name)
            detected = any(address_is_global(a) for a in seen) if seen else host_name_is_public(name)
            new.append(Host(name=name, is_public_detected=detected, is_public=detected, address_seen=bool(seen),
                            created_at=first_seen[name]))
        Host.objects.bulk_create(new, ignore_conflicts=True)
        for r in Host.objects.filter(name__in=missing).values(*_HOST_COLUMNS):
            rows[r["name"]] = HostRow(**r)
    for name, seen in addresses.items():
        row = rows[name]
        detected = (row.is_public_detected if row.address_seen else False) or any(address_is_global(a) for a in seen)
        if detected != row.is_public_detected or not row.address_seen:
            # Rare (first address of a host, first global one): one small update.
            row.is_public_detected, row.address_seen = detected, True
            row.is_public = row.public_override if row.public_override is not None else detected
            Host.objects.filter(id=row.id).update(
                is_public_detected=detected, address_seen=True, is_public=row.is_public, updated_at=timezone.now()
            )
            inventory_changed()  # hostType filters
    return rows, len(missing)
