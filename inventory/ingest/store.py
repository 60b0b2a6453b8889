"""The analysis' database side: one read per table for a whole batch, bulk writes, no per-row round trips.

Concurrency rules (several workers analyse batches at once):

* every multi-row write sorts its rows by key, so transactions lock rows in the
  same order and cannot deadlock on one table;
* rows that every batch touches (usage counters, endpoints, observed paths,
  addresses) are written last, just before commit, and rows that only need a
  timestamp refresh are rewritten at most once a second or minute, so workers
  queue behind each other briefly, not for a whole analysis;
* creations use ``ON CONFLICT DO NOTHING`` and re-read, adopting a row another
  worker created first.
"""
from __future__ import annotations

import uuid

import orjson
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from classification.models import DataField
from core.enums import RISK_RANK
from inventory.counts import inventory_changed
from inventory.models import (
    ApiTrace,
    Endpoint,
    EndpointCaller,
    Host,
    HostAddress,
    ObservedPath,
    UsageDay,
    UsageMinute,
)

from .analysis import REQUEST_SECTIONS, TraceResult, _merge_type
from .classes import ClassConfig
from inventory.patterns.regex import PatternMatcher, pattern_regex, pattern_shape
from inventory.patterns.segments import path_parameterize, path_segments

from .addresses import address_is_global, address_normalize, host_name_is_public
from .redact import trace_redact
from .sql import bulk_insert, bulk_set, pg_cursor, upsert
from .traces import Trace

MAX_FIELDS_PER_ENDPOINT = 200
TRACES_KEPT_PER_ENDPOINT = 100
LAST_SEEN_RESOLUTION = timedelta(minutes=1)
LAST_ACTIVE_RESOLUTION = timedelta(seconds=1)
NO_ENDPOINT_STATUSES = frozenset({404, 405})


@dataclass(slots=True)
class HostRow:
    id: int
    name: str
    is_public: bool
    is_public_detected: bool
    public_override: bool | None
    address_seen: bool


@dataclass(slots=True, eq=False)
class EndpointRow:
    uuid: uuid.UUID
    host: HostRow
    method: str
    path: str
    path_regex: str
    num_segments: int
    num_literal_segments: int
    user_set_path: bool = False
    learned_segments: dict | None = None  # inventory.patterns.learn: what learned parameters take
    full_trace_capture_enabled: bool = False
    is_graphql: bool = False
    last_active: datetime | None = None
    created: bool = False


# ---------------------------------------------------------------- hosts

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


# ---------------------------------------------------------------- endpoints

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

    Returns True when something the list filters read changed (authentication, risk)."""
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
    graphql = sorted({ep.uuid for r, ep in results if r.is_graphql and not ep.is_graphql})
    if graphql:
        Endpoint.objects.filter(uuid__in=graphql, is_graphql=False).update(is_graphql=True, updated_at=timezone.now())
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


# ---------------------------------------------------------------- data fields

@dataclass(slots=True)
class FieldRow:
    uuid: uuid.UUID
    classes: list[str]
    false_positives: set[str]
    dtype: str
    nullable: bool
    content_type: str
    last_seen: datetime | None
    new: bool = False
    changed: bool = False
    seen_at: datetime | None = None
    # Classes this batch put on the field; replaced (never mutated in place), so rows loaded
    # from the database can share one empty set.
    added: frozenset[str] | set[str] = frozenset()


class FieldState:
    """The batch's view of the data fields of its endpoints: loaded once, merged in memory, written in bulk."""

    def __init__(self):
        self.rows: dict[tuple, FieldRow] = {}
        self.counts: dict = defaultdict(int)
        # (endpoint, section, status, path, class) for every class newly put on a field.
        self.class_events: list[tuple] = []
        # Only fields with false positives, by endpoint (few): looked up once per trace.
        self._fps: dict = defaultdict(list)
        self._fp_cache: dict = {}

    @classmethod
    def load(cls, endpoint_ids: set) -> FieldState:
        state = cls()
        rows, counts, fps_by_endpoint = state.rows, state.counts, state._fps
        no_fps: frozenset = frozenset()
        # The batch's largest read (every field of every endpoint seen): one pass, no intermediate rows.
        for uid, endpoint_id, section, status, path, classes, fps, dtype, nullable, content_type, last_seen in (
            _fields_of(endpoint_ids)
        ):
            rows[(endpoint_id, section, status, path)] = FieldRow(
                uid, classes, set(fps) if fps else no_fps, dtype, nullable, content_type, last_seen
            )
            counts[endpoint_id] += 1
            if fps:
                fps_by_endpoint[endpoint_id].append((section, status, path, set(fps)))
        return state

    def false_positives(self, endpoint_id, status: int) -> dict[tuple[str, str], set[str]]:
        """(section, dataPath) -> classes an operator removed, for a trace with this status."""
        key = (endpoint_id, status)
        cached = self._fp_cache.get(key)
        if cached is None:
            cached = {
                (section, path): fps
                for section, code, path, fps in self._fps.get(endpoint_id, ())
                if code == (-1 if section in REQUEST_SECTIONS else status)
            }
            self._fp_cache[key] = cached
        return cached

    def classes_of(self, endpoint_id, section, status, path) -> list[str]:
        row = self.rows.get((endpoint_id, section, status, path))
        return row.classes if row else []

    def merge(self, endpoint_id, result: TraceResult) -> None:
        """Fold one trace's observations into the fields (at most 200 per endpoint, false positives kept out)."""
        at = result.trace.received_at
        for (section, path), obs in result.fields.items():
            key = (endpoint_id, section, result.status_of(section), path)
            row = self.rows.get(key)
            if row is None:
                if self.counts[endpoint_id] >= MAX_FIELDS_PER_ENDPOINT:
                    continue  # DECISIONS §5: at most 200 fields per endpoint
                self.counts[endpoint_id] += 1
                row = FieldRow(uuid.uuid4(), sorted(obs.classes), set(), obs.dtype, obs.nullable, obs.content_type,
                               None, new=True, seen_at=at, added=set(obs.classes))
                self.rows[key] = row
                for name in sorted(obs.classes):
                    self.class_events.append(key + (name,))
                continue
            add = obs.classes.difference(row.classes, row.false_positives)
            if add:
                row.classes = sorted({*row.classes, *add})
                row.added = row.added | add
                row.changed = True
                for name in sorted(add):
                    self.class_events.append(key + (name,))
            dtype = _merge_type(row.dtype, obs.dtype)
            if dtype != row.dtype:
                row.dtype, row.changed = dtype, True
            if obs.nullable and not row.nullable:
                row.nullable, row.changed = True, True
            if obs.content_type and obs.content_type != row.content_type:
                row.content_type, row.changed = obs.content_type, True
            if row.seen_at is None or row.seen_at < at:
                row.seen_at = at

    def endpoints_with_new_classes(self) -> set:
        return {key[0] for key, row in self.rows.items() if row.added}

    def write(self) -> int:
        """Insert new fields and update changed ones (re-read under lock). Returns the number inserted."""
        now = timezone.now()
        new = sorted(((k, r) for k, r in self.rows.items() if r.new), key=lambda kr: tuple(map(str, kr[0])))
        if new:
            # ON CONFLICT DO NOTHING: a concurrent worker may have created the same field.
            upsert(
                DataField,
                [{"uuid": r.uuid, "endpoint": k[0], "data_section": k[1], "status_code": k[2], "data_path": k[3],
                  "data_classes": r.classes, "false_positives": [], "scanner_identified": [], "data_type": r.dtype,
                  "is_nullable": r.nullable, "content_type": r.content_type, "entity": None,
                  "created_at": r.seen_at, "updated_at": now, "last_seen": r.seen_at}
                 for k, r in new],
                conflict=("endpoint", "data_section", "status_code", "data_path"),
            )
        changed = {r.uuid: r for r in self.rows.values() if r.changed and not r.new}
        if changed:
            # Re-read under lock: an operator (update-classes) or another worker may have
            # changed these rows since the batch loaded them; merge onto the current state.
            updates = []
            for uid, classes, fps, dtype, nullable in _changed_fields_locked(sorted(changed)):
                ours = changed[uid]
                fps = set(fps or ())
                merged = sorted(set(classes or ()) | (ours.added - fps))
                ours.classes = merged
                ours.added = ours.added & set(merged)  # an operator just removed one: no alert for it
                updates.append({
                    "pk": uid, "data_classes": merged, "data_type": _merge_type(dtype, ours.dtype),
                    "is_nullable": nullable or ours.nullable, "content_type": ours.content_type,
                    "last_seen": ours.seen_at, "updated_at": now,
                })
            bulk_set(DataField, updates, lock=False,  # locked just above
                     replace=["data_classes", "data_type", "is_nullable", "content_type", "last_seen", "updated_at"])
        return len(new)

    def touch(self) -> None:
        """Fields only seen again: ``last_seen`` refreshed at most once a minute per field."""
        stale = [r for r in self.rows.values()
                 if r.seen_at is not None and not r.new and not r.changed
                 and (r.last_seen is None or r.last_seen < r.seen_at - LAST_SEEN_RESOLUTION)]
        if stale:
            at = max(r.seen_at for r in stale)
            DataField.objects.filter(uuid__in=sorted(r.uuid for r in stale), last_seen__lt=at).update(last_seen=at)


_FIELD_COLUMNS = ("uuid", "endpoint_id", "data_section", "status_code", "data_path", "data_classes",
                  "false_positives", "data_type", "is_nullable", "content_type", "last_seen")


def _fields_of(endpoint_ids) -> Iterator[tuple]:
    """Every data field of these endpoints as tuples in ``_FIELD_COLUMNS`` order (JSON lists decoded).

    On PostgreSQL a binary, server-bound query whose JSON lists are decoded with orjson (the
    common empty list without a call): five times less CPU than the ORM's rows.
    """
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        for row in DataField.objects.filter(endpoint_id__in=endpoint_ids).values_list(*_FIELD_COLUMNS):
            yield (*row[:5], list(row[5] or ()), list(row[6] or ()), *row[7:])
        return
    loads = orjson.loads
    with pg_cursor(binary=True) as cursor:
        cursor.execute(
            "SELECT uuid, endpoint_id, data_section, status_code, data_path, data_classes::text, "
            "false_positives::text, data_type, is_nullable, content_type, last_seen "
            "FROM classification_datafield WHERE endpoint_id = ANY(%s)",
            [list(endpoint_ids)],
        )
        for u, e, sec, st, p, c, f, t, n, ct, ls in cursor.fetchall():
            yield u, e, sec, st, p, [] if c == "[]" else loads(c), () if f == "[]" else loads(f), t, n, ct, ls


def _changed_fields_locked(field_ids: list) -> list[tuple]:
    """(uuid, data_classes, false_positives, data_type, is_nullable) of these fields, locked in uuid order."""
    return list(
        DataField.objects.select_for_update().filter(uuid__in=field_ids).order_by("uuid")
        .values_list("uuid", "data_classes", "false_positives", "data_type", "is_nullable")
    )


# ---------------------------------------------------------------- traces

def trace_rows(results: list[tuple[TraceResult, EndpointRow]]) -> list[dict]:
    """The redacted ApiTrace rows to store: the newest 100 of the batch per endpoint."""
    per_endpoint: dict = defaultdict(list)
    for result, endpoint in results:
        per_endpoint[endpoint].append(result)
    rows = []
    for endpoint, items in per_endpoint.items():
        for result in items[-TRACES_KEPT_PER_ENDPOINT:]:
            values = trace_redact(result, full_capture=endpoint.full_trace_capture_enabled)
            # Microseconds keep the batch's order (and are unique within a batch).
            values.update(uuid=uuid.uuid4(), endpoint=endpoint.uuid,
                          created_at=result.trace.received_at + timedelta(microseconds=result.trace.index))
            rows.append(values)
    return rows


_PRUNE_SQL = """
DELETE FROM inventory_apitrace WHERE uuid IN (
    SELECT t.uuid FROM unnest(%s::uuid[]) AS e(id)
    CROSS JOIN LATERAL (
        SELECT created_at FROM inventory_apitrace
        WHERE endpoint_id = e.id ORDER BY created_at DESC OFFSET %s LIMIT 1
    ) AS cut
    JOIN inventory_apitrace AS t ON t.endpoint_id = e.id AND t.created_at <= cut.created_at
    ORDER BY t.uuid
    FOR UPDATE OF t SKIP LOCKED
)
"""


def traces_store(rows: list[dict]) -> int:
    """Insert trace rows, then delete traces beyond the newest 100 of each endpoint touched.

    PostgreSQL finds each endpoint's cut-off with one index probe (``trace_endpoint_recent``,
    a LATERAL ``OFFSET 100 LIMIT 1``) and locks what it deletes ``SKIP LOCKED``: two
    workers pruning the same endpoint never wait for or deadlock with each other
    (what one skips, the next batch prunes). Elsewhere a window function ranks them.
    """
    if not rows:
        return 0
    bulk_insert(ApiTrace, rows)
    endpoint_ids = sorted({r["endpoint"] for r in rows})
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql":
        with pg_cursor() as cursor:  # the uuid list travels as one array parameter, not quoted in Python
            cursor.execute(_PRUNE_SQL, [endpoint_ids, TRACES_KEPT_PER_ENDPOINT])
    else:
        ranked = ApiTrace.objects.filter(endpoint_id__in=endpoint_ids).annotate(
            rank=Window(RowNumber(), partition_by=[F("endpoint_id")],
                        order_by=[F("created_at").desc(), F("uuid").desc()])
        )
        ApiTrace.objects.filter(uuid__in=ranked.filter(rank__gt=TRACES_KEPT_PER_ENDPOINT).values("uuid")).delete()
    return len(rows)


# ---------------------------------------------------------------- usage, paths, callers, addresses

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
