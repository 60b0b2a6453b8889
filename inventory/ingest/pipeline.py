"""Batch analysis: from accepted agent traces to hosts, endpoints, fields, traces, usage and alerts.

``batch_analyze`` is what the Celery task runs. It claims the ``IngestBatch`` row
(``SELECT ... FOR UPDATE SKIP LOCKED`` where status is PENDING), analyses its
traces and marks it DONE in the same transaction: a batch is analysed exactly
once, however many times its message is delivered, and a crash leaves it
PENDING for the sweep to re-send.

The analysis of a batch costs a bounded number of queries whatever its size
(about twenty): every table is read once for the whole batch and written with
bulk inserts, set-based updates and ``ON CONFLICT`` upserts; pure-Python work
(parsing, detection) runs before any row is locked, so concurrent workers hold
row locks only for the short write phase.
"""
from __future__ import annotations

import logging
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from classification.models import DataField
from core.enums import RISK_RANK, DataSection
from detections.services import alerts_raise
from detections.specdiff import spec_diff_batch
from inventory.models import (
    ApiTrace,
    Endpoint,
    EndpointCaller,
    Host,
    HostAddress,
    IngestBatch,
    ObservedPath,
    UsageDay,
    UsageMinute,
)

from .alerts import AlertCollector
from .analysis import REQUEST_SECTIONS, Detections, TraceResult, _merge_type, trace_analyze
from .classes import ClassConfig, class_config_load
from .paths import (
    PatternMatcher,
    address_is_global,
    address_normalize,
    host_name_is_public,
    path_parameterize,
    pattern_regex,
    pattern_shape,
)
from .redact import trace_redact
from .sql import upsert
from .traces import METHODS, Trace, trace_from_agent

logger = logging.getLogger(__name__)

MAX_FIELDS_PER_ENDPOINT = 200
TRACES_KEPT_PER_ENDPOINT = 100
LAST_SEEN_RESOLUTION = timedelta(minutes=1)
NO_ENDPOINT_STATUSES = frozenset({404, 405})
BODY_SECTIONS_FOR_PII = frozenset({DataSection.REQUEST_BODY, DataSection.REQUEST_HEADER,
                                   DataSection.RESPONSE_BODY, DataSection.RESPONSE_HEADER})


@dataclass
class Outcome:
    """Counts of one analysed batch (logged; returned to commands and the benchmark)."""

    traces: int = 0
    analysed: int = 0
    skipped: int = 0
    hosts_created: int = 0
    endpoints_created: int = 0
    fields_created: int = 0
    traces_stored: int = 0
    alerts_raised: int = 0


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
    full_trace_capture_enabled: bool = False
    is_graphql: bool = False
    created: bool = False


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
    seen: bool = False
    added: set[str] = field(default_factory=set)


# ---------------------------------------------------------------- entry point

def batch_analyze(*, batch_id: int) -> Outcome | None:
    """Claim a PENDING batch, analyse it and mark it DONE, all in one transaction.

    Returns ``None`` (and does nothing) when the batch is gone, already done, or
    being analysed by another worker. Exceptions roll everything back; the batch
    stays PENDING (see ``batch_record_failure``).
    """
    with transaction.atomic():
        batch = (
            IngestBatch.objects.select_for_update(skip_locked=True)
            .filter(id=batch_id, status=IngestBatch.Status.PENDING)
            .first()
        )
        if batch is None:
            return None
        outcome = traces_analyze(
            batch.traces, processed=batch.kind == IngestBatch.Kind.PROCESSED, received_at=batch.received_at
        )
        IngestBatch.objects.filter(id=batch.id).update(
            status=IngestBatch.Status.DONE, processed_at=timezone.now(), traces=[], error=""
        )
    logger.info(
        "batch %s analysed: %s traces, %s skipped, %s new endpoints, %s new fields, %s alerts",
        batch_id, outcome.traces, outcome.skipped, outcome.endpoints_created, outcome.fields_created,
        outcome.alerts_raised,
    )
    return outcome


MAX_ATTEMPTS = 5


def batch_record_failure(*, batch_id: int, error: BaseException) -> bool:
    """Count a failed attempt; after ``MAX_ATTEMPTS`` the batch becomes FAILED. True when it did."""
    with transaction.atomic():
        batch = IngestBatch.objects.select_for_update().filter(id=batch_id, status=IngestBatch.Status.PENDING).first()
        if batch is None:
            return False
        batch.attempts += 1
        # The exception's type and message only: messages of our code never carry payload values.
        batch.error = f"{type(error).__name__}: {str(error)[:500]}"
        if batch.attempts >= MAX_ATTEMPTS:
            batch.status = IngestBatch.Status.FAILED
            batch.traces = []
        batch.save(update_fields=["attempts", "error", "status", "traces"])
        return batch.status == IngestBatch.Status.FAILED


# ---------------------------------------------------------------- the analysis

def traces_analyze(raw_traces: list, *, processed: bool, received_at: datetime) -> Outcome:
    """Analyse agent traces (already validated) and write everything they teach. Runs in the caller's transaction."""
    outcome = Outcome(traces=len(raw_traces))
    config = class_config_load()
    detections = Detections(config)

    traces: list[Trace] = []
    for index, raw in enumerate(raw_traces):
        try:
            trace = trace_from_agent(raw, index, processed=processed)
        except (TypeError, ValueError, AttributeError):
            logger.warning("trace %s of a batch could not be read; skipped", index)
            outcome.skipped += 1
            continue
        if not trace.host or trace.method not in METHODS:
            outcome.skipped += 1
            continue
        traces.append(trace)
    if not traces:
        return outcome

    hosts = _hosts_resolve(traces, received_at, outcome)
    matched = _endpoints_resolve(traces, hosts, received_at, outcome)
    outcome.skipped += len(traces) - len(matched)
    outcome.analysed = len(matched)
    if not matched:
        return outcome

    fields = _FieldState.load({ep.uuid for _, ep in matched})
    alerts = AlertCollector()
    results: list[tuple[TraceResult, EndpointRow]] = []
    for trace, endpoint in matched:
        if trace.partial:
            continue
        result = trace_analyze(
            trace,
            detections=detections,
            false_positives=fields.false_positives(endpoint.uuid, trace.status),
            pattern=endpoint.path,
        )
        fields.merge(endpoint.uuid, result)
        results.append((result, endpoint))

    # ---- writes (row locks from here to commit)
    outcome.fields_created = fields.write(received_at)
    risk_changes = _endpoint_risks(fields.endpoints_with_new_classes(), config)
    outcome.traces_stored = _traces_store(results, received_at)
    _observations_store(matched, received_at)
    _endpoints_update(matched, results, risk_changes, received_at)

    for endpoint in {ep for _, ep in matched if ep.created}:
        alerts.new_endpoint(endpoint)
    for endpoint_id, section, path, name in fields.class_events:
        if section in BODY_SECTIONS_FOR_PII:
            alerts.pii(endpoint_id, section, path, name)
    for result, endpoint in results:
        _trace_alerts(result, endpoint, fields, alerts)
    # Open API Spec Diff: the batch's responses compared with the uploaded specs of their hosts
    # (one query when no host has a spec).
    spec_diffs = spec_diff_batch((endpoint, result.trace) for result, endpoint in results)
    outcome.alerts_raised = len(alerts_raise([*alerts.candidates(), *spec_diffs]))
    return outcome


# ---------------------------------------------------------------- hosts

def _hosts_resolve(traces: list[Trace], received_at: datetime, outcome: Outcome) -> dict[str, HostRow]:
    """Find or create the batch's hosts; update public/private from destination addresses (DECISIONS §4)."""
    addresses: dict[str, set[str]] = defaultdict(set)
    for trace in traces:
        address = address_normalize(trace.meta.get("destination"))
        if address:
            addresses[trace.host].add(address)
    names = {t.host for t in traces}
    rows = {
        r["name"]: HostRow(**r)
        for r in Host.objects.filter(name__in=names).values(
            "id", "name", "is_public", "is_public_detected", "public_override", "address_seen"
        )
    }
    missing = sorted(names - rows.keys())
    if missing:
        new = []
        for name in missing:
            seen = addresses.get(name)
            detected = any(address_is_global(a) for a in seen) if seen else host_name_is_public(name)
            new.append(Host(name=name, is_public_detected=detected, is_public=detected, address_seen=bool(seen),
                            created_at=received_at))
        Host.objects.bulk_create(new, ignore_conflicts=True)
        outcome.hosts_created = len(new)
        for r in Host.objects.filter(name__in=missing).values(
            "id", "name", "is_public", "is_public_detected", "public_override", "address_seen"
        ):
            rows[r["name"]] = HostRow(**r)
    for name, seen in addresses.items():
        row = rows[name]
        base = row.is_public_detected if row.address_seen else False
        detected = base or any(address_is_global(a) for a in seen)
        if detected != row.is_public_detected or not row.address_seen:
            row.is_public_detected, row.address_seen = detected, True
            row.is_public = row.public_override if row.public_override is not None else detected
            Host.objects.filter(id=row.id).update(
                is_public_detected=detected, address_seen=True, is_public=row.is_public, updated_at=timezone.now()
            )
    if addresses:
        upsert(
            HostAddress,
            [{"host": rows[name].id, "address": a, "last_seen": received_at}
             for name, seen in addresses.items() for a in seen],
            conflict=("host", "address"), greatest=("last_seen",),
        )
    return rows


# ---------------------------------------------------------------- endpoints

def _endpoints_resolve(traces, hosts, received_at, outcome) -> list[tuple[Trace, EndpointRow]]:
    """Match each trace to an endpoint, creating endpoints for new patterns (never for 404/405)."""
    host_ids = {h.id for h in hosts.values()}
    by_id = {h.id: h for h in hosts.values()}
    methods = {t.method for t in traces}
    lengths = {len([s for s in t.path.split("/") if s]) for t in traces}
    lengths |= {pattern_shape(t.endpoint_path)[0] for t in traces if t.endpoint_path}
    matchers: dict[tuple[int, str], PatternMatcher] = defaultdict(PatternMatcher)
    for r in Endpoint.objects.filter(host_id__in=host_ids, method__in=methods, num_segments__in=lengths).values(
        "uuid", "host_id", "method", "path", "path_regex", "num_segments", "num_literal_segments", "user_set_path",
        "full_trace_capture_enabled", "is_graphql",
    ):
        host = by_id[r.pop("host_id")]
        matchers[(host.id, r["method"])].add(EndpointRow(host=host, **r))

    matched: list[tuple[Trace, EndpointRow]] = []
    created: list[EndpointRow] = []
    for trace in traces:
        host = hosts[trace.host]
        matcher = matchers[(host.id, trace.method)]
        own = trace.endpoint_path or path_parameterize(trace.path)
        if trace.endpoint_path:
            endpoint = matcher.match(own, own)
        else:
            endpoint = matcher.match(trace.path, own)
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
            created.append(endpoint)
        matched.append((trace, endpoint))

    if created:
        created.sort(key=lambda e: (e.host.id, e.method, e.path))
        Endpoint.objects.bulk_create(
            [
                Endpoint(uuid=e.uuid, host_id=e.host.id, method=e.method, path=e.path, path_regex=e.path_regex,
                         num_segments=e.num_segments, num_literal_segments=e.num_literal_segments,
                         first_detected=received_at, last_active=received_at, created_at=received_at)
                for e in created
            ],
            ignore_conflicts=True,
        )
        # A concurrent worker may have created some of them first: adopt its rows.
        stored = {
            (r["host_id"], r["method"], r["path"]): r
            for r in Endpoint.objects.filter(
                host_id__in={e.host.id for e in created}, path__in={e.path for e in created}
            ).values("uuid", "host_id", "method", "path", "full_trace_capture_enabled", "is_graphql")
        }
        for e in created:
            row = stored.get((e.host.id, e.method, e.path))
            if row is not None and row["uuid"] != e.uuid:
                e.uuid, e.created = row["uuid"], False
                e.full_trace_capture_enabled, e.is_graphql = row["full_trace_capture_enabled"], row["is_graphql"]
        outcome.endpoints_created = sum(1 for e in created if e.created)
    return matched


def _endpoint_risks(endpoint_ids: set, config: ClassConfig) -> dict:
    """Endpoints whose fields gained classes: (data_classes, risk) recomputed from all their fields."""
    if not endpoint_ids:
        return {}
    classes: dict = defaultdict(set)
    for endpoint_id, names in DataField.objects.filter(endpoint_id__in=endpoint_ids).values_list(
        "endpoint_id", "data_classes"
    ):
        classes[endpoint_id].update(names or ())
    return {e: (sorted(classes[e]), config.risk(classes[e])) for e in endpoint_ids}


def _endpoints_update(matched, results, risk_changes, received_at) -> None:
    """Set-based updates: activity, GraphQL, authentication detection, risk (DECISIONS §4)."""
    touched = sorted({ep.uuid for _, ep in matched})
    Endpoint.objects.filter(Q(last_active__lt=received_at) | Q(last_active__isnull=True), uuid__in=touched).update(
        last_active=received_at
    )
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
        Endpoint.objects.filter(uuid__in=sorted(unauthenticated), unauthenticated_success_seen=False).update(
            unauthenticated_success_seen=True, is_authenticated_detected=False
        )
    authenticated -= unauthenticated
    if authenticated:
        Endpoint.objects.filter(
            uuid__in=sorted(authenticated), unauthenticated_success_seen=False, is_authenticated_detected=False
        ).update(is_authenticated_detected=True)
    if risk_changes:
        rows = [
            Endpoint(uuid=e, data_classes=names, risk_score=risk, risk_rank=RISK_RANK[risk], updated_at=timezone.now())
            for e, (names, risk) in sorted(risk_changes.items())
        ]
        Endpoint.objects.bulk_update(rows, ["data_classes", "risk_score", "risk_rank", "updated_at"])


# ---------------------------------------------------------------- data fields

class _FieldState:
    """The batch's view of the data fields of its endpoints: loaded once, merged in memory, written in bulk."""

    def __init__(self):
        self.rows: dict[tuple, FieldRow] = {}
        self.counts: dict = defaultdict(int)
        self.class_events: list[tuple] = []
        # Only fields with false positives, by endpoint (few): looked up once per trace.
        self._fps: dict = defaultdict(list)
        self._fp_cache: dict = {}

    @classmethod
    def load(cls, endpoint_ids: set) -> _FieldState:
        state = cls()
        for r in DataField.objects.filter(endpoint_id__in=endpoint_ids).values_list(
            "uuid", "endpoint_id", "data_section", "status_code", "data_path", "data_classes", "false_positives",
            "data_type", "is_nullable", "content_type", "last_seen",
        ):
            uid, endpoint_id, section, status, path, classes, fps, dtype, nullable, content_type, last_seen = r
            state.rows[(endpoint_id, section, status, path)] = FieldRow(
                uid, list(classes or ()), set(fps or ()), dtype, nullable, content_type, last_seen
            )
            state.counts[endpoint_id] += 1
            if fps:
                state._fps[endpoint_id].append((section, status, path, set(fps)))
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
        for (section, path), obs in result.fields.items():
            key = (endpoint_id, section, result.status_of(section), path)
            row = self.rows.get(key)
            if row is None:
                if self.counts[endpoint_id] >= MAX_FIELDS_PER_ENDPOINT:
                    continue  # DECISIONS §5: at most 200 fields per endpoint
                self.counts[endpoint_id] += 1
                row = FieldRow(uuid.uuid4(), sorted(obs.classes), set(), obs.dtype, obs.nullable, obs.content_type,
                               None, new=True, added=set(obs.classes))
                self.rows[key] = row
                for name in sorted(obs.classes):
                    self.class_events.append((endpoint_id, section, path, name))
                continue
            add = obs.classes.difference(row.classes, row.false_positives)
            if add:
                row.classes = sorted({*row.classes, *add})
                row.added |= add
                row.changed = True
                for name in sorted(add):
                    self.class_events.append((endpoint_id, section, path, name))
            dtype = _merge_type(row.dtype, obs.dtype)
            if dtype != row.dtype:
                row.dtype, row.changed = dtype, True
            if obs.nullable and not row.nullable:
                row.nullable, row.changed = True, True
            if obs.content_type and obs.content_type != row.content_type:
                row.content_type, row.changed = obs.content_type, True
            row.seen = True

    def endpoints_with_new_classes(self) -> set:
        return {key[0] for key, row in self.rows.items() if row.added}

    def write(self, received_at: datetime) -> int:
        """Insert new fields, update changed ones (re-read under lock), refresh last_seen. Returns inserts."""
        now = timezone.now()
        new = sorted(((k, r) for k, r in self.rows.items() if r.new), key=lambda kr: tuple(map(str, kr[0])))
        if new:
            DataField.objects.bulk_create(
                [
                    DataField(uuid=r.uuid, endpoint_id=k[0], data_section=k[1], status_code=k[2], data_path=k[3],
                              data_classes=r.classes, data_type=r.dtype, is_nullable=r.nullable,
                              content_type=r.content_type, created_at=received_at, updated_at=now,
                              last_seen=received_at)
                    for k, r in new
                ],
                ignore_conflicts=True,
            )
        changed = {r.uuid: r for r in self.rows.values() if r.changed and not r.new}
        if changed:
            # Re-read under lock: an operator (update-classes) or another worker may have
            # changed these rows since the batch loaded them; merge onto the current state.
            updates = []
            for uid, classes, fps, dtype, nullable in (
                DataField.objects.select_for_update().filter(uuid__in=sorted(changed)).order_by("uuid")
                .values_list("uuid", "data_classes", "false_positives", "data_type", "is_nullable")
            ):
                ours = changed[uid]
                fps = set(fps or ())
                merged = sorted(set(classes or ()) | (ours.added - fps))
                ours.classes = merged
                updates.append(DataField(
                    uuid=uid, data_classes=merged, data_type=_merge_type(dtype, ours.dtype),
                    is_nullable=nullable or ours.nullable, content_type=ours.content_type,
                    last_seen=received_at, updated_at=now,
                ))
            DataField.objects.bulk_update(
                updates, ["data_classes", "data_type", "is_nullable", "content_type", "last_seen", "updated_at"]
            )
        # Fields only seen again: last_seen is refreshed at most once a minute per field.
        stale = sorted(
            r.uuid for r in self.rows.values()
            if r.seen and not r.new and not r.changed
            and (r.last_seen is None or r.last_seen < received_at - LAST_SEEN_RESOLUTION)
        )
        if stale:
            DataField.objects.filter(uuid__in=stale).update(last_seen=received_at)
        return len(new)


# ---------------------------------------------------------------- traces, usage, paths, callers

def _traces_store(results: list[tuple[TraceResult, EndpointRow]], received_at: datetime) -> int:
    """Store the newest 100 traces per endpoint of the batch (redacted), then prune to 100 per endpoint."""
    per_endpoint: dict = defaultdict(list)
    for result, endpoint in results:
        per_endpoint[endpoint].append(result)
    rows = []
    for endpoint, items in per_endpoint.items():
        for result in items[-TRACES_KEPT_PER_ENDPOINT:]:
            values = trace_redact(result, full_capture=endpoint.full_trace_capture_enabled)
            rows.append(ApiTrace(endpoint_id=endpoint.uuid,
                                 created_at=received_at + timedelta(microseconds=result.trace.index), **values))
    if not rows:
        return 0
    ApiTrace.objects.bulk_create(rows)
    endpoint_ids = sorted({e.uuid for e in per_endpoint})
    ranked = ApiTrace.objects.filter(endpoint_id__in=endpoint_ids).annotate(
        rank=Window(RowNumber(), partition_by=[F("endpoint_id")], order_by=[F("created_at").desc(), F("uuid").desc()])
    )
    ApiTrace.objects.filter(uuid__in=ranked.filter(rank__gt=TRACES_KEPT_PER_ENDPOINT).values("uuid")).delete()
    return len(rows)


def _observations_store(matched: list[tuple[Trace, EndpointRow]], received_at: datetime) -> None:
    """Usage counters (exact, per minute and day), observed raw paths and callers: ``ON CONFLICT`` upserts."""
    counts: dict = defaultdict(int)
    paths: dict = defaultdict(int)
    callers: set = set()
    for trace, endpoint in matched:
        counts[endpoint.uuid] += 1
        paths[(endpoint.uuid, trace.path)] += 1
        source = trace.meta.get("source")
        address = address_normalize(source) or (source.strip()[:64] if isinstance(source, str) and source.strip() else None)
        if address:
            callers.add((endpoint.uuid, address))
    minute = received_at.replace(second=0, microsecond=0)
    upsert(UsageMinute, [{"endpoint": e, "minute": minute, "count": n} for e, n in counts.items()],
           conflict=("endpoint", "minute"), increment=("count",))
    upsert(UsageDay, [{"endpoint": e, "day": minute.date(), "count": n} for e, n in counts.items()],
           conflict=("endpoint", "day"), increment=("count",))
    upsert(ObservedPath, [{"endpoint": e, "path": p, "count": n, "last_seen": received_at}
                          for (e, p), n in paths.items()],
           conflict=("endpoint", "path"), increment=("count",), greatest=("last_seen",))
    if callers:
        upsert(EndpointCaller, [{"endpoint": e, "address": a, "last_seen": received_at} for e, a in callers],
               conflict=("endpoint", "address"), greatest=("last_seen",))


# ---------------------------------------------------------------- alerts per trace

def _scheme(trace: Trace) -> str | None:
    if trace.scheme:
        return trace.scheme
    forwarded = trace.header("x-forwarded-proto")
    if forwarded:
        return forwarded.split(",", 1)[0].strip().lower() or None
    port = trace.meta.get("destinationPort")
    return {"443": "https", "80": "http"}.get(str(port)) if port is not None else None


def _trace_alerts(result: TraceResult, endpoint: EndpointRow, fields: _FieldState, alerts: AlertCollector) -> None:
    trace = result.trace
    if result.basic_auth:
        alerts.basic_auth(endpoint)
    if endpoint.host.is_public and _scheme(trace) == "http":
        alerts.no_ssl(endpoint)
    for position, name in sorted(result.path_classes):
        alerts.path_param(endpoint, position, name)
    for (section, path), obs in result.fields.items():
        if section == DataSection.REQUEST_QUERY and obs.classes:
            for name in sorted(obs.classes):
                if name in fields.classes_of(endpoint.uuid, section, -1, path):
                    alerts.query_param(endpoint, path, name)
    if 200 <= trace.status < 300 and not result.has_credentials:
        for (section, path) in result.fields:
            if section == DataSection.RESPONSE_BODY and fields.classes_of(endpoint.uuid, section, trace.status, path):
                alerts.unauthenticated(endpoint)
                break
