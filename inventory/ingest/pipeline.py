"""Batch analysis: from accepted agent traces to hosts, endpoints, fields, traces, usage and alerts.

``batch_analyze`` is what the Celery task runs. It claims the ``IngestBatch`` row
(``SELECT ... FOR UPDATE SKIP LOCKED`` where status is PENDING), analyses its
traces and marks it DONE in the same transaction: a batch is analysed exactly
once, however many times its message is delivered, and a crash leaves it
PENDING for the sweep to re-send. When a backlog builds up, the worker claims
other pending batches along with its own (up to ``INGEST_COALESCE_TRACES``) and analyses them
together: the per-batch queries are shared, so throughput rises with the load.

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
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

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


@dataclass
class Outcome:
    """Counts of one analysis (logged; returned to commands and the benchmark)."""

    batches: int = 0
    traces: int = 0
    analysed: int = 0
    skipped: int = 0
    hosts_created: int = 0
    endpoints_created: int = 0
    fields_created: int = 0
    traces_stored: int = 0
    alerts_raised: int = 0
    timings: dict = field(default_factory=dict)
    # (host id, method, segment count) of the endpoints created: learning looks at these groups.
    new_endpoint_groups: set = field(default_factory=set)
    # [analysed, skipped] of each group of traces given (each batch row), in order; and per source
    # of the rows ({source: {"analysed": n, "skipped": n}}), for ingestion health.
    by_group: list = field(default_factory=list)
    by_source: dict = field(default_factory=dict)
    # Traces of a security-test run (a verified X-Apiscope-Test marker, DECISIONS §8): counted among the
    # skipped, kept out of the inventory; and traces whose marker did not verify (analysed as usual).
    test_traffic: int = 0
    forged_markers: int = 0


# ---------------------------------------------------------------- entry points

def batch_analyze(*, batch_id: int, coalesce: bool = True) -> Outcome | None:
    """Claim a PENDING batch (and, with ``coalesce``, other pending ones), analyse, mark DONE: one transaction.

    Returns ``None`` (and does nothing) when the batch is gone, already done, or
    being analysed by another worker. Exceptions roll everything back; the
    batches stay PENDING (see ``batch_record_failure``).
    """
    with transaction.atomic():
        batch = (
            IngestBatch.objects.select_for_update(skip_locked=True)
            .filter(id=batch_id, status=IngestBatch.Status.PENDING)
            .first()
        )
        if batch is None:
            return None
        batches = [batch]
        if coalesce:
            batches += _claim_more(batch)
        outcome = _claimed_analyze(batches)
    _log_outcome(batch_id, outcome)
    return outcome


def singles_analyze(*, claimed: list[int] | None = None) -> Outcome | None:
    """Claim the oldest pending single-trace rows (up to ``INGEST_COALESCE_TRACES``), analyse them
    together and mark them DONE, in one transaction; ``None`` when none is left to claim.

    What the drain task (``inventory.ingest.drain``) runs in a loop. Rows another worker holds are
    skipped (``SKIP LOCKED``): that worker is analysing them. ``claimed`` receives the oldest claimed
    row's id before the analysis starts, so a failure can be counted against it (``batch_record_failure``).
    """
    with transaction.atomic():
        # Served by the partial index on PENDING rows (received_at order); rows of one trace
        # only: a batch row of many traces has its own message.
        batches = list(
            IngestBatch.objects.select_for_update(skip_locked=True)
            .filter(status=IngestBatch.Status.PENDING, kind=IngestBatch.Kind.RAW, num_traces=1)
            .order_by("received_at")[: max(1, settings.INGEST_COALESCE_TRACES)]
        )
        if not batches:
            return None
        if claimed is not None:
            claimed.append(batches[0].id)
        outcome = _claimed_analyze(batches)
    _log_outcome(batches[0].id, outcome)
    return outcome


def _claimed_analyze(batches: list[IngestBatch]) -> Outcome:
    """Analyse claimed rows of one kind together and mark them DONE (in the caller's transaction)."""
    outcome = traces_analyze_batches(
        [(b.traces, b.received_at) for b in batches], processed=batches[0].kind == IngestBatch.Kind.PROCESSED
    )
    IngestBatch.objects.filter(id__in=[b.id for b in batches]).update(
        status=IngestBatch.Status.DONE, processed_at=timezone.now(), traces=[], error=""
    )
    for batch, (analysed, skipped) in zip(batches, outcome.by_group):
        figures = outcome.by_source.setdefault(batch.source, {"analysed": 0, "skipped": 0})
        figures["analysed"] += analysed
        figures["skipped"] += skipped
    return outcome


def _log_outcome(batch_id: int, outcome: Outcome) -> None:
    logger.info(
        "batch %s analysed (%s batches): %s traces, %s skipped, %s new endpoints, %s new fields, %s alerts",
        batch_id, outcome.batches, outcome.traces, outcome.skipped, outcome.endpoints_created,
        outcome.fields_created, outcome.alerts_raised,
    )


def _claim_more(batch: IngestBatch) -> list[IngestBatch]:
    """Other pending batches of the same kind, oldest first, up to ``INGEST_COALESCE_TRACES`` traces in all."""
    room = settings.INGEST_COALESCE_TRACES - batch.num_traces
    if room <= 0:
        return []
    # Choose without locking, then lock only the chosen rows (SKIP LOCKED: another worker
    # may take some meanwhile). Locking the whole candidate list instead would hold
    # rows this worker does not analyse, and a worker whose message names one of them
    # would skip it.
    candidates = (
        IngestBatch.objects.filter(status=IngestBatch.Status.PENDING, kind=batch.kind, num_traces__lte=room)
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
        IngestBatch.objects.select_for_update(skip_locked=True)
        .filter(id__in=chosen, status=IngestBatch.Status.PENDING).order_by("received_at")
    )


def batch_record_failure(*, batch_id: int, error: BaseException) -> bool:
    """Count a failed attempt; after ``MAX_ATTEMPTS`` the batch becomes FAILED. True when it did."""
    with transaction.atomic():
        batch = IngestBatch.objects.select_for_update().filter(id=batch_id, status=IngestBatch.Status.PENDING).first()
        if batch is None:
            return False
        batch.attempts += 1
        # The exception's type and message only: messages of our code never carry payload values.
        # The message may quote trace data (a database error quotes its SQL literals): keep where
        # it failed, not what it said. The worker's log has the stack trace.
        batch.error = error_where(error)
        if batch.attempts >= MAX_ATTEMPTS:
            batch.status = IngestBatch.Status.FAILED
            batch.traces = []
        batch.save(update_fields=["attempts", "error", "status", "traces"])
        return batch.status == IngestBatch.Status.FAILED


# ---------------------------------------------------------------- the analysis

def traces_analyze(raw_traces: list, *, processed: bool, received_at: datetime) -> Outcome:
    """Analyse one list of agent traces received at ``received_at`` (see :func:`traces_analyze_batches`)."""
    return traces_analyze_batches([(raw_traces, received_at)], processed=processed)


def traces_analyze_batches(groups: list[tuple[list, datetime]], *, processed: bool) -> Outcome:
    """Analyse validated agent traces, given as (traces, time received) groups, and write what they teach.

    Runs in the caller's transaction. Order matters for concurrency: parsing,
    detection and redaction happen before the writes, and the rows every batch
    touches (usage counters, endpoints) are written last.
    """
    outcome = Outcome(batches=len(groups), traces=sum(len(g) for g, _ in groups),
                      by_group=[[0, 0] for _ in groups])
    clock = _Clock(outcome.timings)
    config = class_config_load()
    detections = Detections(config)

    traces: list[Trace] = []
    group_of: dict[int, list] = {}  # id(trace) -> its group's [analysed, skipped]
    for (raw_traces, received_at), counts in zip(groups, outcome.by_group):
        for index, raw in enumerate(raw_traces):
            try:
                trace = trace_from_agent(raw, index, processed=processed, received_at=received_at)
            except (TypeError, ValueError, AttributeError):
                logger.warning("trace %s of a batch could not be read; skipped", index)
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
    outcome.skipped = sum(skipped for _, skipped in outcome.by_group)
    if outcome.test_traffic or outcome.forged_markers:
        # Counted now (Redis, not the transaction): an analysis retried after a failure counts them again.
        markers_recorded(test=outcome.test_traffic, forged=outcome.forged_markers)
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
    for trace, endpoint in matched:
        if trace.partial:
            continue
        try:
            result = trace_analyze(
                trace,
                detections=detections,
                false_positives=fields.false_positives(endpoint.uuid, trace.status),
                pattern=endpoint.path,
            )
        except Exception as exc:  # noqa: BLE001 - one odd trace must not fail (and block) its whole batch
            # Withheld: the message may quote the trace's data (core.logsafe); type and stack are kept.
            logger.error("trace %s of a batch could not be analysed; skipped", trace.index, exc_info=withheld(exc))
            # Skipped, no longer analysed (analysed + skipped = traces), in its group's counts too.
            counts = group_of[id(trace)]
            outcome.analysed -= 1
            outcome.skipped += 1
            counts[0] -= 1
            counts[1] += 1
            continue
        fields.merge(endpoint.uuid, result)
        results.append((result, endpoint))
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


class _Clock:
    """Wall time per stage, accumulated into ``Outcome.timings`` (the benchmark prints them)."""

    def __init__(self, timings: dict):
        self.timings = timings
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + now - self.last
        self.last = now
