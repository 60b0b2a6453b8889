"""Ingestion health: per agent source what arrived, what was refused, analysed and failed,
the backlog and its age, worker and beat liveness, queues nobody consumes; and a red line, with
what to do, for each thing that is stuck. Counters: ``inventory.ingest.health``.

Bounded whatever the traffic: the page lists the sources that sent the most (``TOP_BY_VOLUME``) and
those with the most refusals and failures (``TOP_BY_FAILURES``); every other source is folded into
one line with their summed counts; the ``RED_LINE_SOURCES`` most troubled sources get red lines of
their own, the others one red line together. A thousand User-Agents make a few lines, not a
thousand. Sources not seen for a day are forgotten when the page is read."""
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

TOP_BY_VOLUME = 15
TOP_BY_FAILURES = 10
RED_LINE_SOURCES = 5  # sources with a red line of their own (the others' trouble: one line)
HOUR_BUCKETS = 3600 // counters.BUCKET_SECONDS
DAY_BUCKETS = 86400 // counters.BUCKET_SECONDS
BACKLOG_STUCK_SECONDS = 300
# Per source: counted by the accept routes (accepted, refused) and by the worker from the batch
# rows' source (analysed, skipped, failed: traces of batches marked FAILED).
KINDS = ("accepted", "analysed", "skipped", "failed", "rejected_503", "rejected_4xx", "truncated", "quarantined")
# What counts as trouble when choosing the sources to show by failures.
TROUBLE = ("failed", "rejected_503", "rejected_4xx", "quarantined")
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


    @property
    def volume(self) -> int:
        return self.day["accepted"] + self.day["rejected_503"] + self.day["rejected_4xx"]

    @property
    def trouble(self) -> int:
        return sum(self.day[kind] for kind in TROUBLE) + self.failed_batches


@dataclass
class Folded:
    """The sources not listed one by one: how many, and their counts summed."""

    count: int = 0
    failed_batches: int = 0
    hour: dict = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    day: dict = field(default_factory=lambda: dict.fromkeys(KINDS, 0))

    def add(self, source: Source) -> None:
        self.count += 1
        self.failed_batches += source.failed_batches
        for kind in KINDS:
            self.hour[kind] += source.hour[kind]
            self.day[kind] += source.day[kind]


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
    others: Folded = field(default_factory=Folded)
    quarantined_batches: int = 0


def sources_shown(sources: list[Source]) -> tuple[list[Source], Folded]:
    """The sources listed one by one (the ``TOP_BY_VOLUME`` biggest and the ``TOP_BY_FAILURES`` most
    troubled, biggest first) and the rest folded into one :class:`Folded`."""
    by_volume = sorted(sources, key=lambda s: (-s.volume, s.key, s.agent))
    shown = by_volume[:TOP_BY_VOLUME]
    troubled = sorted((s for s in sources if s.trouble), key=lambda s: (-s.trouble, s.key, s.agent))
    for source in troubled[:TOP_BY_FAILURES]:
        if source not in shown:
            shown.append(source)
    listed = {id(s) for s in shown}
    folded = Folded()
    for source in sources:
        if id(source) not in listed:
            folded.add(source)
    return sorted(shown, key=lambda s: (-s.volume, s.key, s.agent)), folded


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


def _sources(client, hour: dict, day: dict, now: float) -> list[Source]:
    last = {k.decode(): json.loads(v) for k, v in client.hgetall(counters.SOURCES_KEY).items()}
    accepted = {k.decode(): json.loads(v) for k, v in client.hgetall(counters.ACCEPTED_KEY).items()}
    refused = {k.decode(): int(v) for k, v in client.hgetall(counters.REFUSED_KEY).items()}
    stale = [ident for ident, seen in last.items() if now - seen.get("at", 0) > counters.KEEP_SECONDS]
    if stale:  # not seen for a day: their counters have expired too
        pipe = client.pipeline(transaction=False)
        for name in (counters.SOURCES_KEY, counters.ACCEPTED_KEY, counters.REFUSED_KEY):
            pipe.hdel(name, *stale)
        pipe.execute()
        for ident in stale:
            del last[ident]
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
    return {name: totals.get(f"{counters.ANALYSIS}\x1e{name}", 0)
            for name in ("analysed", "skipped", "failed_batches", "truncated", "quarantined", *counters.MARKER_KINDS)}


def health_read(*, ask_workers: bool = True) -> Health:
    """Everything the page shows. Asks the workers (about a second) unless ``ask_workers`` is off."""
    now = time.time()
    client = redis_client()
    hour = day = {}
    sources: list[Source] = []
    beat_age = None
    if client is not None:
        hour, day = _read_buckets(client, now)
        sources = _sources(client, hour, day, now)
        beat = client.get(counters.BEAT_KEY)
        beat_age = now - float(beat) if beat else None
    # FAILED batches per source (few rows: the worker marks a batch FAILED after five failed attempts).
    failed = dict(IngestBatch.objects.filter(status=IngestBatch.Status.FAILED).order_by()
                  .values_list("source").annotate(n=Count("id")))
    quarantined = IngestBatch.objects.filter(status=IngestBatch.Status.QUARANTINED).count()
    for source in sources:
        source.failed_batches = failed.get(f"{source.key}\x1f{source.agent}", 0)
    sources, others = sources_shown(sources)
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
        workers=workers, queues=queues or [], beat_age=beat_age, problems=[], others=others,
        quarantined_batches=quarantined,
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
    if h.quarantined_batches:
        found.append((f"{h.quarantined_batches} trace(s) quarantined: their analysis outlived the time limit.",
                      "They are kept, not analysed (console: Ingest batches, status QUARANTINED); analyse them "
                      "again from there once INGEST_ANALYSIS_TIME_LIMIT or the budgets allow it, or delete them."))
    # A red line each for the RED_LINE_SOURCES most troubled sources; the others' trouble in one line.
    hour_trouble = ("failed", "rejected_503", "rejected_4xx")
    troubled = sorted((s for s in h.sources if any(s.hour[k] for k in hour_trouble)),
                      key=lambda s: (-sum(s.hour[k] for k in hour_trouble), s.key, s.agent))
    for source in troubled[:RED_LINE_SOURCES]:
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
    rest = Folded()
    for source in troubled[RED_LINE_SOURCES:]:
        rest.add(source)
    count = rest.count + h.others.count
    totals = {k: rest.hour[k] + h.others.hour[k] for k in hour_trouble}
    if count and any(totals.values()):
        found.append((f"{count} other source(s): {totals['failed']} trace(s) failed, {totals['rejected_503']} "
                      f"request(s) refused with 503 and {totals['rejected_4xx']} with 4xx in the last hour.",
                      "The sources table shows them (the listed ones, then the other sources added up); fix the "
                      "sources named above first."))
    if not h.counting:
        found.append(("Ingestion is not counted: no Redis (REDIS_URL unset).",
                      "Set REDIS_URL to see per-source counts; backlog and failures below are still exact."))
    return found
