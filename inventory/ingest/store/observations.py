"""Usage counters, observed raw paths, callers and host addresses: the rows every batch touches."""
from __future__ import annotations

from collections import defaultdict
from functools import partial

from django.db import transaction

from inventory.models import EndpointCaller, HostAddress, ObservedPath, UsageDay, UsageMinute

from ..addresses import address_is_global
from ..sql import upsert
from ..traces import Trace
from .hosts import destinations
from .rows import LAST_SEEN_RESOLUTION, EndpointRow, HostRow


def observations_store(matched: list[tuple[Trace, EndpointRow]], hosts: dict[str, HostRow]) -> None:
    """Usage counters (exact, per minute and day), observed raw paths, callers and addresses.

    Counters are ``count = count + excluded.count`` upserts: two workers adding to
    the same minute never lose an increment. Raw paths are kept for endpoints with
    parameters (a literal endpoint's only path is its pattern). Callers are kept
    when they can be an edge of the hosts graph: private addresses (services
    calling each other) and addresses some host is served on; internet clients are
    not recorded one by one.
    """
    minutes: dict = defaultdict(int)
    days: dict = defaultdict(int)
    paths: dict = {}
    callers: dict = {}
    served = destinations([t for t, _ in matched])
    served_addresses = _served_addresses(matched, {a for seen in served.values() for a in seen})
    for trace, endpoint in matched:
        at = trace.received_at
        minute = at.replace(second=0, microsecond=0)
        minutes[(endpoint.uuid, minute)] += 1
        days[(endpoint.uuid, minute.date())] += 1
        if endpoint.num_literal_segments != endpoint.num_segments:
            key = (endpoint.uuid, trace.path)
            count, last = paths.get(key, (0, at))
            paths[key] = (count + 1, last if last > at else at)
        address = trace.source_address
        if address and (address in served_addresses or not address_is_global(address)):
            previous = callers.get((endpoint.uuid, address))
            if previous is None or previous < at:
                callers[(endpoint.uuid, address)] = at
    upsert(UsageMinute, [{"endpoint": e, "minute": m, "count": n} for (e, m), n in minutes.items()],
           conflict=("endpoint", "minute"), increment=("count",))
    upsert(UsageDay, [{"endpoint": e, "day": d, "count": n} for (e, d), n in days.items()],
           conflict=("endpoint", "day"), increment=("count",))
    if paths:
        upsert(ObservedPath, [{"endpoint": e, "path": p, "count": n, "last_seen": last}
                              for (e, p), (n, last) in paths.items()],
               conflict=("endpoint", "path"), increment=("count",), greatest=("last_seen",))
    if callers:
        pairs_store(EndpointCaller, "endpoint_id", callers)
    addresses = {(hosts[name].id, address): at for name, seen in served.items() for address, at in seen.items()}
    if addresses:
        pairs_store(HostAddress, "host_id", addresses)


def _served_addresses(matched, in_batch: set[str]) -> set[str]:
    """The global source addresses of the traces that some host is served on (in this batch or known)."""
    sources = {a for t, _ in matched if (a := t.source_address) and a not in in_batch and address_is_global(a)}
    if not sources:
        return in_batch
    return in_batch | set(HostAddress.objects.filter(address__in=sources).values_list("address", flat=True))


# (model, owner id, address) -> last_seen this process wrote or read: pairs refreshed less
# than a minute ago need no query at all. Bounded; cleared when full.
_pair_cache: dict = {}
_PAIR_CACHE_MAX = 200_000


def pairs_store(model, owner: str, pairs: dict) -> None:
    """(owner, address) -> time seen: insert new rows, refresh known ones' ``last_seen`` at most once a minute.

    Known pairs are read first (no lock) so that only new pairs are inserted and
    only stale timestamps rewritten: these rows are shared by every batch of an
    endpoint or host, and rewriting them each time would make workers queue.
    """
    label = model._meta.label
    todo = {pair: at for pair, at in pairs.items()
            if (cached := _pair_cache.get((label, *pair))) is None or cached < at - LAST_SEEN_RESOLUTION}
    if not todo:
        return
    known = {
        (o, a): (pk, last_seen)
        for pk, o, a, last_seen in model.objects.filter(**{f"{owner}__in": {o for o, _ in todo}})
        .filter(address__in={a for _, a in todo}).values_list("pk", owner, "address", "last_seen")
    }
    field_name = owner.removesuffix("_id")
    new = [{field_name: o, "address": a, "last_seen": at} for (o, a), at in todo.items() if (o, a) not in known]
    if new:
        upsert(model, new, conflict=(field_name, "address"))
    stale = [(pk, todo[pair]) for pair, (pk, last_seen) in known.items()
             if pair in todo and last_seen < todo[pair] - LAST_SEEN_RESOLUTION]
    if stale:
        at = max(t for _, t in stale)
        model.objects.filter(pk__in=sorted(pk for pk, _ in stale), last_seen__lt=at).update(last_seen=at)
    entries = {}
    for pair, at in todo.items():
        previous = known.get(pair)
        entries[(label, *pair)] = at if previous is None or previous[1] < at - LAST_SEEN_RESOLUTION else previous[1]
    transaction.on_commit(partial(_pair_cache_update, entries))


def _pair_cache_update(entries: dict) -> None:
    if len(_pair_cache) + len(entries) > _PAIR_CACHE_MAX:
        _pair_cache.clear()
    _pair_cache.update(entries)
