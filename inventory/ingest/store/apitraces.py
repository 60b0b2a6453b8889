"""Stored traces: the batch's newest 100 per endpoint, redacted, and the pruning past 100."""
from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import timedelta

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import F, Window
from django.db.models.functions import RowNumber

from core.budget import Budget, budget_scope
from core.enums import DataSection
from inventory.api.render import trace_json
from inventory.models import ApiTrace

from ..analysis import TraceResult
from ..credentials import REDACTED
from ..redact import trace_redact
from ..sql import bulk_insert, pg_cursor
from .rows import TRACES_KEPT_PER_ENDPOINT, EndpointRow


def trace_rows(results: list[tuple[TraceResult, EndpointRow]]) -> list[dict]:
    """The redacted ApiTrace rows to store, each with its rendered JSON: the newest 100 of the batch per endpoint."""
    per_endpoint: dict = defaultdict(list)
    for result, endpoint in results:
        per_endpoint[endpoint].append(result)
    rows = []
    for endpoint, items in per_endpoint.items():
        for result in items[-TRACES_KEPT_PER_ENDPOINT:]:
            with budget_scope(redaction_budget()):
                values = trace_redact(result, full_capture=endpoint.full_trace_capture_enabled)
            if result.cut_sections and not endpoint.full_trace_capture_enabled:
                cut_sections_redacted(values, result.cut_sections)
            # Microseconds keep the batch's order (and are unique within a batch).
            values.update(uuid=uuid.uuid4(), endpoint=endpoint.uuid,
                          created_at=result.trace.received_at + timedelta(microseconds=result.trace.index))
            values["rendered"] = trace_json(values)
            rows.append(values)
    return rows


# What redacting one trace may walk (redact.py draws a node per JSON value and form pair): a body that
# would cost more is stored "[REDACTED]" whole. CPU time is bounded by the nodes (a few µs each).
REDACTION_NODES = 20_000
REDACTION_CPU_SECONDS = 0.05


def redaction_budget() -> Budget:
    return Budget(nodes=REDACTION_NODES, chars=0, candidates=0, cpu_seconds=REDACTION_CPU_SECONDS)


_BODIES = {DataSection.REQUEST_BODY: "request_body", DataSection.RESPONSE_BODY: "response_body"}
_PAIRS = {DataSection.REQUEST_QUERY: "request_parameters", DataSection.REQUEST_HEADER: "request_headers",
          DataSection.RESPONSE_HEADER: "response_headers"}


def cut_sections_redacted(values: dict, sections) -> None:
    """Sections of a trace its budget did not let the analysis finish may hold values that were never
    classified: unless the endpoint has full trace capture on, they are stored redacted whole (bodies
    ``[REDACTED]``, every non-empty header and parameter value ``[REDACTED]``), as a free-text body with
    sensitive data is."""
    for section in sections:
        if section in _BODIES:
            if values[_BODIES[section]]:
                values[_BODIES[section]] = REDACTED
                values["redacted"] = True
        elif section in _PAIRS:
            for pair in values[_PAIRS[section]]:
                if pair["value"] and not str(pair["value"]).endswith(REDACTED):  # "Bearer [REDACTED]" stays
                    pair["value"] = REDACTED
                    values["redacted"] = True


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
