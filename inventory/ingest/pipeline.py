"""Batch analysis: from accepted agent traces to hosts, endpoints, fields, traces, usage and alerts.

``batch_analyze`` is what the Celery task runs, ``singles_analyze`` what the drain of single-trace
posts runs. Each first *claims* rows (:func:`batch_claim`, :func:`singles_claim`): in a short
transaction of its own, ``SELECT ... FOR UPDATE SKIP LOCKED`` on PENDING rows no live worker holds,
the attempt counted and the rows leased (``claimed_until``: now + the analysis' hard time limit +
a margin). Then it analyses them and marks them DONE in one transaction (:func:`claim_analyze`): a
row is analysed exactly once, however many times its message is delivered, and a crash leaves it
PENDING with its attempt counted. When a backlog builds up, a worker claims other pending rows of the
same kind along with its own (up to ``INGEST_COALESCE_TRACES``) and analyses them together.

A row whose lease ended while it was still PENDING lost its worker (the hard time limit killed it,
or the OOM killer, or SIGKILL). The next claim that meets it deals with it first
(:func:`_lost_claim`): a row of several traces is split into one row per trace; every such row is
then analysed alone, never coalesced again; and a row whose worker died while it was analysed
alone is QUARANTINED (kept, counted on the health page, listed in the console) instead of being
sent again forever. A claim given up on a soft time limit counts the same way (``claim_abandoned``).
A recorded failure (an exception) of a claim of several rows makes each of them analysed alone
next; one row alone is retried and FAILED after ``MAX_ATTEMPTS`` attempts.

Fairness: the drain claims light rows first (oldest first), and heavy ones (``IngestBatch.heavy``,
decided at acceptance: large traces, many GraphQL spreads) only when no light row waits, a few at a
time (``HEAVY_CLAIM_*``); under a deep heavy backlog (``HEAVY_BACKLOG_REDUCED``) heavy rows get a
reduced budget. Every trace's analysis draws on a budget (``core.budget``, :func:`trace_budget`):
a trace over it is analysed partially and counted as truncated.

An analysis costs a bounded number of queries whatever its size (about twenty,
see the ``store`` package); CPU-bound work (parsing, detection, the OpenAPI rules,
redaction) runs before any shared row is written. The alert rules
(``detections.rules``) read one ``BatchView`` of the batch and return
candidates; linking endpoints to the uploaded specs that document them is a
step of its own; all candidates are raised in one ``alerts_raise`` call.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import orjson
from django.conf import settings
from django.db import OperationalError, transaction
from django.db.models import F
from django.utils import timezone

from core.budget import TIME_LIMITS, Budget
from core.logsafe import error_where, withheld
from detections.openapi.generate.service import generated_specs_touch
from detections.openapi.link import endpoints_spec_link
from detections.rules import BatchView, openapi_rules, specs_of, traffic_rules
from detections.services import alerts_raise
from inventory.counts import inventory_changed
from inventory.models import IngestBatch
from webhooks.services.fan_out import alerts_fan_out

from .analysis import Detections, TraceResult, trace_analyze
from .classes import class_config_load
from .health import markers_recorded
from .decrypt import TraceUndecryptable, decrypt_failures_record
from .store import (
    EndpointRow,
    FieldState,
    endpoint_risks,
    endpoints_resolve,
    endpoints_update,
    hosts_resolve,
    observations_store,
    trace_rows,
    traces_store,
)
from .staging import MARKER_TEST
from .traces import METHODS, Trace, trace_from_agent

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5

# What one trace's analysis may spend (core.budget); the CPU time is INGEST_TRACE_CPU_MS.
TRACE_NODES = 20_000
TRACE_CHARS = 500_000
TRACE_CANDIDATES = 200
# Heavy rows a drain round claims when no light row waits: at most this many rows, this many bytes
# of traces (so a round, and the wait of a light trace that arrives during it, stays short) ...
HEAVY_CLAIM_ROWS = 16
HEAVY_CLAIM_BYTES = 2 * 1024 * 1024
# ... unless this many heavy rows wait: then each gets REDUCED_SHARE of the budget, and a round more rows.
HEAVY_BACKLOG_REDUCED = 2000
REDUCED_SHARE = 0.1
REDUCED_CLAIM_ROWS = 100
# Rows with an ended lease dealt with per claim (a few: each may be split or quarantined).
LOST_PER_CLAIM = 100
# The lease outlasts the hard time limit by this share of it (at least LEASE_MARGIN_MIN seconds).
LEASE_MARGIN_SHARE = 0.1
LEASE_MARGIN_MIN = 5


def trace_budget(*, reduced: bool = False) -> Budget:
    """A fresh budget for one trace's analysis (``reduced``: a share of it, for a deep heavy backlog)."""
    share = REDUCED_SHARE if reduced else 1.0
    return Budget(nodes=int(TRACE_NODES * share), chars=int(TRACE_CHARS * share),
                  candidates=int(TRACE_CANDIDATES * share),
                  cpu_seconds=settings.INGEST_TRACE_CPU_MS / 1000 * share)


@dataclass
class Outcome:
    """Counts of one analysis (logged; returned to commands and the benchmark)."""

    batches: int = 0
    traces: int = 0
    analysed: int = 0
    skipped: int = 0
    # Traces analysed partially: their budget ran out (counted among the analysed).
    truncated: int = 0
    hosts_created: int = 0
    endpoints_created: int = 0
    fields_created: int = 0
    traces_stored: int = 0
    alerts_raised: int = 0
    timings: dict = field(default_factory=dict)
    # (host id, method, segment count) of the endpoints created: learning looks at these groups.
    new_endpoint_groups: set = field(default_factory=set)
    # [analysed, skipped, truncated] of each group of traces given (each batch row), in order; and per
    # source of the rows ({source: {"analysed": n, "skipped": n, "truncated": n}}), for ingestion health.
    by_group: list = field(default_factory=list)
    by_source: dict = field(default_factory=dict)
    # Traces of a security-test run (a verified X-Apiscope-Test marker, DECISIONS §8): counted among the
    # skipped, kept out of the inventory; and traces whose marker did not verify (analysed as usual).
    test_traffic: int = 0
    forged_markers: int = 0


@dataclass
class Claim:
    """Rows claimed for one analysis (committed: attempts counted, leased until ``lease``)."""

    batches: list  # IngestBatch rows, without their traces
    lease: datetime
    reduced: bool = False  # heavy rows under a deep heavy backlog: a reduced budget each
    started: float = field(default_factory=time.monotonic)

    @property
    def ids(self) -> list[int]:
        return [b.id for b in self.batches]


# Columns a claim reads (never the traces: the analysis reads them once, under its own lock).
_CLAIM_COLUMNS = ("id", "kind", "num_traces", "status", "attempts", "received_at", "source", "heavy",
                  "claimed_until", "claim_traces", "lost_claims", "alone")


def lease_seconds() -> float:
    """How long a claim holds its rows: the analysis' hard time limit and a margin (see the module)."""
    limit = settings.INGEST_ANALYSIS_TIME_LIMIT
    return limit + max(LEASE_MARGIN_MIN, limit * LEASE_MARGIN_SHARE)


# ---------------------------------------------------------------- entry points

def batch_analyze(*, batch_id: int, coalesce: bool = True, claimed: list | None = None) -> Outcome | None:
    """Claim a PENDING batch (and, with ``coalesce``, other pending ones), then analyse them and mark
    them DONE in one transaction.

    Returns ``None`` (and does nothing) when the batch is gone, already done, held by another worker,
    or was just split or quarantined (its worker died on it before). ``claimed`` receives the
    :class:`Claim` before the analysis starts, so a failure can be counted against its rows. An
    exception rolls the analysis back; the rows stay PENDING, leased (see ``claim_failed``,
    ``claim_abandoned``).
    """
    claim = batch_claim(batch_id=batch_id, coalesce=coalesce)
    if claim is None:
        return None
    if claimed is not None:
        claimed.append(claim)
    return claim_analyze(claim)


def singles_analyze(*, claimed: list | None = None) -> Outcome | None:
    """Claim pending single-trace rows (:func:`singles_claim`), analyse them together and mark them
    DONE in one transaction; ``None`` when none is left to claim.

    What the drain task (``inventory.ingest.drain``) runs in a loop. ``claimed`` receives the
    :class:`Claim` before the analysis starts (see :func:`batch_analyze`).
    """
    claim = singles_claim()
    if claim is None:
        return None
    if claimed is not None:
        claimed.append(claim)
    return claim_analyze(claim)


def batch_claim(*, batch_id: int, coalesce: bool = True) -> Claim | None:
    """Claim one batch row (and, with ``coalesce``, other pending rows of its kind and weight)."""
    with transaction.atomic():
        batch = (
            IngestBatch.objects.select_for_update(skip_locked=True).only(*_CLAIM_COLUMNS)
            .filter(id=batch_id, status=IngestBatch.Status.PENDING).first()
        )
        if batch is None:
            return None
        if batch.claimed_until is not None:
            if batch.claimed_until > timezone.now():
                return None  # a live worker holds it
            if not _lost_claim(batch):
                return None  # split (its rows have messages of their own) or quarantined
        batches = [batch]
        if coalesce and not batch.alone:
            batches += _claim_more(batch)
        return _lease(batches)


def singles_claim() -> Claim | None:
    """Claim pending single-trace rows for the drain; what it takes, in this order:

    1. rows whose lease ended are dealt with (:func:`_lost_claim`: quarantined, or analysed alone);
    2. a row to analyse alone, by itself;
    3. light rows, oldest first, up to ``INGEST_COALESCE_TRACES``;
    4. when no light row waits, heavy rows, oldest first, a few (``HEAVY_CLAIM_*``).

    Rows another worker holds are skipped (``SKIP LOCKED``, or leased): that worker is analysing them.
    """
    now = timezone.now()
    with transaction.atomic():
        pending = (IngestBatch.objects.select_for_update(skip_locked=True).only(*_CLAIM_COLUMNS)
                   .filter(status=IngestBatch.Status.PENDING, kind=IngestBatch.Kind.RAW, num_traces=1))
        for row in pending.filter(claimed_until__lt=now).order_by("claimed_until")[:LOST_PER_CLAIM]:
            _lost_claim(row)
        free = pending.filter(claimed_until__isnull=True)
        alone = free.filter(alone=True).order_by("received_at").first()
        if alone is not None:
            return _lease([alone])
        light = list(free.filter(heavy=False).order_by("received_at")[: max(1, settings.INGEST_COALESCE_TRACES)])
        if light:
            return _lease(light)
        return _heavy_claim(free)


def _heavy_claim(free) -> Claim | None:
    """A few heavy rows (see ``HEAVY_CLAIM_*``); more, each with a reduced budget, under a deep heavy backlog."""
    reduced = IngestBatch.objects.filter(status=IngestBatch.Status.PENDING, heavy=True).order_by()[
        :HEAVY_BACKLOG_REDUCED].count() >= HEAVY_BACKLOG_REDUCED
    rows = list(free.filter(heavy=True).order_by("received_at")[: REDUCED_CLAIM_ROWS if reduced else HEAVY_CLAIM_ROWS])
    if not rows:
        return None
    if not reduced and len(rows) > 1:
        fitting = set(_within_bytes(rows, HEAVY_CLAIM_BYTES))
        rows = rows[:1] + [row for row in rows[1:] if row.id in fitting]
    return _lease(rows, reduced=reduced)


def _within_bytes(rows: list, limit: int) -> list[int]:
    """Ids of the first ``rows`` whose traces, as stored, fit in ``limit`` bytes together (PostgreSQL;
    elsewhere every row is taken: the row count alone bounds the round)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return [r.id for r in rows]
    sizes = dict(IngestBatch.objects.filter(id__in=[r.id for r in rows]).values_list("id", _stored_size()))
    kept, total = [], 0
    for row in rows:
        total += sizes.get(row.id) or 0
        if total > limit:
            break
        kept.append(row.id)
    return kept


def _stored_size():
    from django.db.models import Func, IntegerField

    # pg_column_size: the stored (possibly compressed) size of the jsonb, without reading it.
    return Func(F("traces"), function="pg_column_size", output_field=IntegerField())


def _claim_more(batch: IngestBatch) -> list[IngestBatch]:
    """Other pending rows of the same kind and weight, oldest first, up to ``INGEST_COALESCE_TRACES``
    traces in all; never rows held by a claim or to be analysed alone."""
    room = settings.INGEST_COALESCE_TRACES - batch.num_traces
    if room <= 0:
        return []
    # Choose without locking, then lock only the chosen rows (SKIP LOCKED: another worker
    # may take some meanwhile). Locking the whole candidate list instead would hold
    # rows this worker does not analyse, and a worker whose message names one of them
    # would skip it.
    candidates = (
        IngestBatch.objects.filter(status=IngestBatch.Status.PENDING, kind=batch.kind, num_traces__lte=room,
                                   heavy=batch.heavy, claimed_until__isnull=True, alone=False)
        .exclude(id=batch.id).order_by("received_at").values_list("id", "num_traces")[:50]
    )
    chosen = []
    for other_id, size in candidates:
        if size <= room:
            chosen.append(other_id)
            room -= size
    if not chosen:
        return []
    return list(
        IngestBatch.objects.select_for_update(skip_locked=True).only(*_CLAIM_COLUMNS)
        .filter(id__in=chosen, status=IngestBatch.Status.PENDING, claimed_until__isnull=True).order_by("received_at")
    )


def _lease(batches: list[IngestBatch], *, reduced: bool = False) -> Claim:
    """Count the attempt of each row and lease them (in the claim's transaction)."""
    lease = timezone.now() + timedelta(seconds=lease_seconds())
    traces = sum(b.num_traces for b in batches)
    IngestBatch.objects.filter(id__in=[b.id for b in batches]).update(
        attempts=F("attempts") + 1, claimed_until=lease, claim_traces=traces)
    return Claim(batches, lease, reduced=reduced)


def _lost_claim(batch: IngestBatch) -> bool:
    """A PENDING row whose lease ended: its worker died. Quarantine it (it was analysed alone), split it
    (several traces: one row each, every one analysed alone, sent after commit), or mark it to be
    analysed alone. True when the row itself may be claimed now (analysed alone)."""
    batch.lost_claims += 1
    logger.warning("ingest batch %s: the worker analysing it (%s trace(s) together) died or ran out of time",
                   batch.id, batch.claim_traces)
    if batch.claim_traces == 1 and batch.num_traces == 1:
        IngestBatch.objects.filter(id=batch.id).update(
            status=IngestBatch.Status.QUARANTINED, claimed_until=None, lost_claims=batch.lost_claims,
            processed_at=timezone.now(), error="quarantined: its analysis outlived the time limit twice")
        logger.error("ingest batch %s quarantined: its analysis killed its worker while analysed alone", batch.id)
        transaction.on_commit(lambda source=batch.source: _quarantine_counted(source, 1))
        return False
    if batch.num_traces > 1:
        _split(batch)
        return False
    batch.claimed_until, batch.alone = None, True
    IngestBatch.objects.filter(id=batch.id).update(claimed_until=None, alone=True, lost_claims=batch.lost_claims)
    return True


def _split(batch: IngestBatch) -> None:
    """Replace a batch row of several traces by one row per trace (each analysed alone, its own message)."""
    from .accept import batch_enqueue, weighed

    traces = IngestBatch.objects.filter(id=batch.id).values_list("traces", flat=True).first() or []
    children = IngestBatch.objects.bulk_create([
        IngestBatch(kind=batch.kind, traces=[trace], num_traces=1, received_at=batch.received_at,
                    source=batch.source, heavy=weighed(orjson.dumps(trace), 1), alone=True,
                    lost_claims=batch.lost_claims)
        for trace in traces
    ])
    IngestBatch.objects.filter(id=batch.id).update(
        status=IngestBatch.Status.DONE, traces=[], claimed_until=None, lost_claims=batch.lost_claims,
        processed_at=timezone.now(), error=f"split into {len(children)} rows: its worker died analysing it")
    logger.warning("ingest batch %s split into %d rows analysed alone", batch.id, len(children))
    for child in children:
        transaction.on_commit(lambda child_id=child.id: batch_enqueue(child_id))


def _quarantine_counted(source: str, traces: int) -> None:
    from .health import analysis_recorded

    analysis_recorded(quarantined=traces, by_source={source: {"quarantined": traces}})


def claim_analyze(claim: Claim) -> Outcome | None:
    """Analyse a claim's rows and mark them DONE, in one transaction (rows no longer leased to this
    claim, e.g. deleted meanwhile, are left out; ``None`` when none is left)."""
    with transaction.atomic():
        batches = list(
            IngestBatch.objects.select_for_update()
            .filter(id__in=claim.ids, status=IngestBatch.Status.PENDING, claimed_until=claim.lease)
            .order_by("received_at")
        )
        if not batches:
            return None
        outcome = _claimed_analyze(batches, reduced=claim.reduced)
    _log_outcome(batches[0].id, outcome)
    return outcome


def _claimed_analyze(batches: list[IngestBatch], *, reduced: bool = False) -> Outcome:
    """Analyse claimed rows of one kind together and mark them DONE (in the caller's transaction)."""
    outcome = traces_analyze_batches(
        [(b.traces, b.received_at) for b in batches], processed=batches[0].kind == IngestBatch.Kind.PROCESSED,
        reduced=reduced,
    )
    IngestBatch.objects.filter(id__in=[b.id for b in batches]).update(
        status=IngestBatch.Status.DONE, processed_at=timezone.now(), traces=[], error="", claimed_until=None
    )
    for batch, (analysed, skipped, truncated) in zip(batches, outcome.by_group):
        figures = outcome.by_source.setdefault(batch.source, {"analysed": 0, "skipped": 0, "truncated": 0})
        figures["analysed"] += analysed
        figures["skipped"] += skipped
        figures["truncated"] += truncated
    return outcome


def _log_outcome(batch_id: int, outcome: Outcome) -> None:
    logger.info(
        "batch %s analysed (%s batches): %s traces, %s skipped, %s truncated, %s new endpoints, %s new fields, "
        "%s alerts", batch_id, outcome.batches, outcome.traces, outcome.skipped, outcome.truncated,
        outcome.endpoints_created, outcome.fields_created, outcome.alerts_raised,
    )


def claim_failed(claim: Claim, error: BaseException) -> bool:
    """An analysis raised (rolled back): count it. One row alone: :func:`batch_record_failure` (FAILED after
    ``MAX_ATTEMPTS``). Several rows: each is released and, unless the error is the database's, analysed
    alone next (the failing one then fails alone); every one is sent again after commit. True when the
    (single) row became FAILED."""
    if len(claim.batches) == 1:
        return batch_record_failure(batch_id=claim.batches[0].id, error=error)
    # A database error is no row's fault: the rows are only released (analysed together again).
    alone = not isinstance(error, OperationalError)
    with transaction.atomic():
        IngestBatch.objects.filter(id__in=claim.ids, status=IngestBatch.Status.PENDING,
                                   claimed_until=claim.lease).update(claimed_until=None, alone=alone,
                                                                     error=error_where(error))
        transaction.on_commit(lambda: claim_resend(claim))
    return False


def claim_abandoned(claim: Claim, *, culprit: bool) -> None:
    """The task's soft time limit interrupted the claim's analysis (rolled back). With ``culprit`` (the
    analysis itself took the time) the claim counts as lost, as if its worker had died: its rows are dealt
    with by the next claim (:func:`_lost_claim`). Otherwise (earlier rounds of the task took the time) the
    rows are only released. Either way they are sent again after commit."""
    with transaction.atomic():
        rows = IngestBatch.objects.filter(id__in=claim.ids, status=IngestBatch.Status.PENDING,
                                          claimed_until=claim.lease)
        # A lease in the past: the next claim finds the rows "lost". Rows given up this often are lost
        # whatever took the time (never released again and again).
        if not culprit:
            rows.filter(attempts__lt=MAX_ATTEMPTS).update(claimed_until=None)
        rows.update(claimed_until=timezone.now() - timedelta(seconds=1))  # the rest (filtered on the lease)
        transaction.on_commit(lambda: claim_resend(claim))


def claim_resend(claim: Claim) -> None:
    """Messages for a claim's rows: one per batch row, one drain for the single-trace rows."""
    from .accept import batch_enqueue
    from .drain import drain_send

    singles = False
    for batch in claim.batches:
        if batch.kind == IngestBatch.Kind.RAW and batch.num_traces == 1:
            singles = True
        else:
            batch_enqueue(batch.id)
    if singles:
        try:
            drain_send()
        except Exception as exc:  # noqa: BLE001 - broker down: the sweep sends it
            logger.error("could not send the ingest drain; the sweep will", exc_info=withheld(exc))


def batch_record_failure(*, batch_id: int, error: BaseException) -> bool:
    """Count a failed attempt; after ``MAX_ATTEMPTS`` the batch becomes FAILED. True when it did.

    The attempt was counted when the row was claimed (its lease is released here); a row that failed
    without being claimed (no lease) has the attempt counted now."""
    with transaction.atomic():
        batch = IngestBatch.objects.select_for_update().filter(id=batch_id, status=IngestBatch.Status.PENDING).first()
        if batch is None:
            return False
        if batch.claimed_until is None:
            batch.attempts += 1
        batch.claimed_until = None
        # The exception's type and message only: messages of our code never carry payload values.
        # The message may quote trace data (a database error quotes its SQL literals): keep where
        # it failed, not what it said. The worker's log has the stack trace.
        batch.error = error_where(error)
        if batch.attempts >= MAX_ATTEMPTS:
            batch.status = IngestBatch.Status.FAILED
            batch.traces = []
        batch.save(update_fields=["attempts", "error", "status", "traces", "claimed_until"])
        return batch.status == IngestBatch.Status.FAILED


# ---------------------------------------------------------------- the analysis

def traces_analyze(raw_traces: list, *, processed: bool, received_at: datetime) -> Outcome:
    """Analyse one list of agent traces received at ``received_at`` (see :func:`traces_analyze_batches`)."""
    return traces_analyze_batches([(raw_traces, received_at)], processed=processed)


def traces_analyze_batches(groups: list[tuple[list, datetime]], *, processed: bool, reduced: bool = False) -> Outcome:
    """Analyse validated agent traces, given as (traces, time received) groups, and write what they teach.

    Runs in the caller's transaction. Order matters for concurrency: parsing,
    detection and redaction happen before the writes, and the rows every batch
    touches (usage counters, endpoints) are written last. Each trace is analysed within a budget of
    its own (:func:`trace_budget`; ``reduced``: a share of it); a time-limit exception of the task is
    never taken for a trace's error: it rolls the whole analysis back (``claim_abandoned``).
    """
    outcome = Outcome(batches=len(groups), traces=sum(len(g) for g, _ in groups),
                      by_group=[[0, 0, 0] for _ in groups])
    clock = _Clock(outcome.timings)
    config = class_config_load()
    detections = Detections(config)

    traces: list[Trace] = []
    group_of: dict[int, list] = {}  # id(trace) -> its group's [analysed, skipped, truncated]
    # Warnings repeated over the traces of one analysis are logged once each, with their count.
    unreadable: list[int] = []
    undecryptable: dict[str, list[int]] = {}
    for (raw_traces, received_at), counts in zip(groups, outcome.by_group):
        for index, raw in enumerate(raw_traces):
            try:
                trace = trace_from_agent(raw, index, processed=processed, received_at=received_at)
            except TraceUndecryptable as exc:
                undecryptable.setdefault(exc.reason, []).append(index)
                counts[1] += 1
                continue
            except (TypeError, ValueError, AttributeError):
                unreadable.append(index)
                counts[1] += 1
                continue
            if not trace.host or trace.method not in METHODS:
                counts[1] += 1
                continue
            if trace.marker is not None:  # the test-run marker, judged at acceptance (staging.py)
                if trace.marker == MARKER_TEST:
                    outcome.test_traffic += 1
                    counts[1] += 1
                    continue
                outcome.forged_markers += 1
            traces.append(trace)
            group_of[id(trace)] = counts
    outcome.skipped = sum(skipped for _, skipped, _ in outcome.by_group)
    if outcome.test_traffic or outcome.forged_markers:
        # Counted now (Redis, not the transaction): an analysis retried after a failure counts them again.
        markers_recorded(test=outcome.test_traffic, forged=outcome.forged_markers)
    if unreadable:
        logger.warning("%d trace(s) of a batch could not be read and were skipped (%s)", len(unreadable),
                       _indexes(unreadable))
    if undecryptable:
        decrypt_failures_record(undecryptable)
    clock.lap("read")
    if not traces:
        return outcome

    hosts, outcome.hosts_created = hosts_resolve(traces)
    matched, outcome.endpoints_created = endpoints_resolve(traces, hosts)
    outcome.new_endpoint_groups = {(ep.host.id, ep.method, ep.num_segments) for _, ep in matched if ep.created}
    outcome.skipped += len(traces) - len(matched)
    outcome.analysed = len(matched)
    resolved = {id(trace) for trace, _ in matched}
    for trace in traces:
        group_of[id(trace)][0 if id(trace) in resolved else 1] += 1
    clock.lap("hosts and endpoints")
    if not matched:
        return outcome

    fields = FieldState.load({ep.uuid for _, ep in matched})
    clock.lap("fields load")
    results: list[tuple[TraceResult, EndpointRow]] = []
    failed: list[int] = []
    for trace, endpoint in matched:
        if trace.partial:
            continue
        try:
            result = trace_analyze(
                trace,
                detections=detections,
                false_positives=fields.false_positives(endpoint.uuid, trace.status),
                pattern=endpoint.path,
                budget=trace_budget(reduced=reduced),
            )
        except TIME_LIMITS:
            raise  # the task's time is up: the whole analysis is rolled back and dealt with by the task
        except Exception as exc:  # noqa: BLE001 - one odd trace must not fail (and block) its whole batch
            # Withheld: the message may quote the trace's data (core.logsafe); type and stack are kept,
            # for the first failure of the analysis (the others are counted in one line below).
            if not failed:
                logger.error("trace %s of a batch could not be analysed; skipped", trace.index,
                             exc_info=withheld(exc))
            failed.append(trace.index)
            # Skipped, no longer analysed (analysed + skipped = traces), in its group's counts too.
            counts = group_of[id(trace)]
            outcome.analysed -= 1
            outcome.skipped += 1
            counts[0] -= 1
            counts[1] += 1
            continue
        if result.truncated:
            outcome.truncated += 1
            group_of[id(trace)][2] += 1
        fields.merge(endpoint.uuid, result)
        results.append((result, endpoint))
    if len(failed) > 1:
        logger.error("%d trace(s) of a batch could not be analysed and were skipped (%s)", len(failed),
                     _indexes(failed))
    if outcome.truncated:
        logger.info("%d trace(s) of a batch analysed partially: their budget ran out", outcome.truncated)
    clock.lap("analysis")
    # The rules' view of the batch; the OpenAPI rules read its parsed bodies before redaction.
    view = BatchView.of(matched, results)
    specs = specs_of(view)
    spec_candidates = openapi_rules(view, specs)
    clock.lap("spec diff")
    rows = trace_rows(results)
    clock.lap("redaction")

    # ---- writes
    outcome.fields_created = fields.write()
    risk_changes = endpoint_risks(fields.endpoints_with_new_classes(), config)
    clock.lap("fields write")
    outcome.traces_stored = traces_store(rows)
    clock.lap("traces write")
    # Spec linking: which uploaded spec documents each endpoint of the batch (openapiSpecName).
    endpoints_spec_link(view.endpoints(), specs)
    clock.lap("spec linking")
    # The traffic rules read the fields as written; every candidate is raised through one call.
    # Offered to the webhooks below, once the endpoints carry this analysis' risk (DECISIONS §6).
    raised = alerts_raise(traffic_rules(view, fields) + spec_candidates, fan_out=False)
    outcome.alerts_raised = len(raised)
    clock.lap("alerts")
    # ---- rows shared by every batch: last, just before commit
    fields.touch()
    observations_store(matched, hosts)
    listed_changed = endpoints_update(matched, results, risk_changes)
    # Payload counts (meta.totalSensitiveEndpoints) read the risk written just above.
    alerts_fan_out(alerts=raised)
    generated_specs_touch(matched, fields)  # the hosts' generated specs are rebuilt after commit (debounced)
    if listed_changed or outcome.hosts_created or outcome.endpoints_created or outcome.fields_created:
        inventory_changed()  # cached list totals (inventory.counts) are recomputed
    clock.lap("usage and endpoints write")
    return outcome


def _indexes(indexes: list[int], shown: int = 10) -> str:
    """``traces 0, 1, 2 …`` (the first ``shown`` indexes) for a log line counting them."""
    more = "…" if len(indexes) > shown else ""
    return "traces " + ", ".join(str(i) for i in indexes[:shown]) + more


class _Clock:
    """Wall time per stage, accumulated into ``Outcome.timings`` (the benchmark prints them)."""

    def __init__(self, timings: dict):
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + now - self.last
        self.last = now
