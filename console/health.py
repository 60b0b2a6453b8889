"""Ingestion health: per agent source what arrived, what was refused, analysed and failed,
the backlog and its age, worker and beat liveness, queues nobody consumes; and a red line, with
what to do, for each thing that is stuck. Counters: ``inventory.ingest.health``."""
from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Min

from core.queues import queues_status
from inventory.counts import redis_client
from inventory.ingest import health as counters
from inventory.ingest.accept import ingest_backlog
from inventory.models import IngestBatch

HOUR_BUCKETS = 3600 // counters.BUCKET_SECONDS
DAY_BUCKETS = 86400 // counters.BUCKET_SECONDS
BACKLOG_STUCK_SECONDS = 300
# Per source: counted by the accept routes (accepted, refused) and by the worker from the batch
# rows' source (analysed, skipped, failed: traces of batches marked FAILED).
KINDS = ("accepted", "analysed", "skipped", "failed", "rejected_503", "rejected_4xx")
REFUSAL_HINTS = {
    401: "The agent's API key is wrong or revoked: give it a valid key (admin, API keys).",
    403: "The agent's key may not ingest (a read key): give it an ingest or admin key.",
    400: "The agent sends traces the API refuses: the 400 body names the trace and field (agent's log).",
    413: "The agent's batches are too large (10 MB a request, 1 MB a trace): send smaller batches.",
    415: "The agent sends another content type than JSON: check its version and configuration.",
    None: "See the response body in the agent's log.",
}


@dataclass
class Source:
    key: str
    agent: str
    last_at: dt.datetime | None = None
    last_status: int | None = None
    accepted_at: dt.datetime | None = None
    metlo_source: str = ""
    refused_status: int | None = None
    failed_batches: int = 0  # its FAILED batches kept (database)
    hour: dict = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    day: dict = field(default_factory=lambda: dict.fromkeys(KINDS, 0))


@dataclass
class Health:
    counting: bool
    sources: list[Source]
    analysis_hour: dict
    analysis_day: dict
    backlog: int
    backlog_age: float | None
    failed_batches: int
    workers: list[str] | None
    queues: list
    beat_age: float | None
    problems: list[tuple[str, str]]


def _read_buckets(client, now: float) -> tuple[dict, dict]:
    """Counter field → total over the last hour, and over the last day."""
    newest = counters.current_bucket(now)
    pipe = client.pipeline(transaction=False)
    for bucket in range(newest - DAY_BUCKETS + 1, newest + 1):
        pipe.hgetall(counters.bucket_key(bucket))
    hour: dict[str, int] = {}
    day: dict[str, int] = {}
    for index, values in enumerate(pipe.execute()):
        recent = index >= DAY_BUCKETS - HOUR_BUCKETS
        for name, amount in values.items():
            name = name.decode()
            day[name] = day.get(name, 0) + int(amount)
            if recent:
                hour[name] = hour.get(name, 0) + int(amount)
    return hour, day


def _when(timestamp: float | None) -> dt.datetime | None:
    return dt.datetime.fromtimestamp(timestamp, tz=dt.timezone.utc) if timestamp else None


def _sources(client, hour: dict, day: dict) -> list[Source]:
    last = {k.decode(): json.loads(v) for k, v in client.hgetall(counters.SOURCES_KEY).items()}
    accepted = {k.decode(): json.loads(v) for k, v in client.hgetall(counters.ACCEPTED_KEY).items()}
    refused = {k.decode(): int(v) for k, v in client.hgetall(counters.REFUSED_KEY).items()}
    sources = []
    for ident in sorted(last):
        key, _, agent = ident.partition("\x1f")
        ok = accepted.get(ident, {})
        source = Source(key, agent, _when(last[ident]["at"]), last[ident]["status"], _when(ok.get("at")),
                        ok.get("metloSource", ""), refused.get(ident))
        for kind in KINDS:
            source.hour[kind] = hour.get(f"{ident}\x1e{kind}", 0)
            source.day[kind] = day.get(f"{ident}\x1e{kind}", 0)
        sources.append(source)
    return sources


def _analysis(totals: dict) -> dict:
    return {name: totals.get(f"{counters.ANALYSIS}\x1e{name}", 0) for name in ("analysed", "skipped",
                                                                                  "failed_batches",
                                                                                  *counters.MARKER_KINDS)}


def health_read(*, ask_workers: bool = True) -> Health:
    """Everything the page shows. Asks the workers (about a second) unless ``ask_workers`` is off."""
    now = time.time()
    client = redis_client()
    hour = day = {}
    sources: list[Source] = []
    beat_age = None
    if client is not None:
        hour, day = _read_buckets(client, now)
        sources = _sources(client, hour, day)
        beat = client.get(counters.BEAT_KEY)
        beat_age = now - float(beat) if beat else None
    # FAILED batches per source (few rows: the worker marks a batch FAILED after five failed attempts).
    failed = dict(IngestBatch.objects.filter(status=IngestBatch.Status.FAILED).order_by()
                  .values_list("source").annotate(n=Count("id")))
    for source in sources:
        source.failed_batches = failed.get(f"{source.key}\x1f{source.agent}", 0)
    oldest = IngestBatch.objects.filter(status=IngestBatch.Status.PENDING).aggregate(at=Min("received_at"))["at"]
    try:
        queues = queues_status(ask_workers=ask_workers)
    except Exception:  # noqa: BLE001 - the broker is down: shown as a problem, not a 500
        queues = None
    workers = None
    if queues is not None and ask_workers:
        workers = sorted({node for queue in queues for node in queue.consumers or ()})
    health = Health(
        counting=client is not None, sources=sources, analysis_hour=_analysis(hour), analysis_day=_analysis(day),
        backlog=ingest_backlog(), backlog_age=now - oldest.timestamp() if oldest else None,
        failed_batches=sum(failed.values()),
        workers=workers, queues=queues or [], beat_age=beat_age, problems=[],
    )
    health.problems = problems(health, broker_down=queues is None)
    return health


def problems(h: Health, *, broker_down: bool = False) -> list[tuple[str, str]]:
    """(what is stuck, what to do), worst first."""
    found = []
    if broker_down:
        found.append(("The broker (Redis) does not answer: nothing is analysed.",
                      "Start Redis or fix REDIS_URL; accepted traces wait in the database meanwhile."))
    if h.workers is not None and not h.workers:
        found.append(("No Celery worker answered: accepted traces are not analysed.",
                      "Start `celery -A config worker` (README, Processes)."))
    for queue in h.queues:
        if queue.unconsumed:
            found.append((f"{queue.waiting} task(s) wait in queue '{queue.name}' and no worker consumes it.",
                          f"Start a worker without -Q, or one with -Q {queue.name}."))
    beat_limit = 3 * settings.QUEUES_CHECK_INTERVAL
    if h.counting and settings.QUEUES_CHECK_INTERVAL > 0 and (h.beat_age is None or h.beat_age > beat_limit):
        found.append(("Beat has not been seen" + ("" if h.beat_age is None else f" for {int(h.beat_age)} s")
                      + ": lost messages are not re-sent, old traces are not pruned.",
                      "Start `celery -A config beat` (one, beside the workers)."))
    if h.backlog_age is not None and h.backlog_age > BACKLOG_STUCK_SECONDS:
        found.append((f"{h.backlog} trace(s) wait for analysis, the oldest for {int(h.backlog_age)} s.",
                      "Check that workers run and are not failing (their log); add workers if they are busy."))
    if h.failed_batches:
        found.append((f"{h.failed_batches} batch(es) failed analysis for good.",
                      "See the worker log for the error; the batches are kept (Ingest batches) for inspection."))
    for source in h.sources:
        name = f"{source.key} / {source.agent}"
        if source.hour["failed"]:
            found.append((f"{name}: {source.hour['failed']} trace(s) failed analysis for good in the last hour.",
                          "See the worker log for the error (it names the batch); this source's FAILED batches "
                          "are kept (inventory_ingestbatch, its source column) for inspection."))
        if source.hour["rejected_503"]:
            found.append((f"{name}: {source.hour['rejected_503']} request(s) refused with 503 in the last hour "
                          "(backlog full).", "Analysis is behind: add workers or raise INGEST_MAX_BACKLOG."))
        if source.hour["rejected_4xx"]:
            found.append((f"{name}: {source.hour['rejected_4xx']} request(s) refused with 4xx in the last hour "
                          f"(last refusal {source.refused_status}).",
                          REFUSAL_HINTS.get(source.refused_status, REFUSAL_HINTS[None])))
    if not h.counting:
        found.append(("Ingestion is not counted: no Redis (REDIS_URL unset).",
                      "Set REDIS_URL to see per-source counts; backlog and failures below are still exact."))
    return found
