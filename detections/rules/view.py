"""What the alert rules read of a batch: the pipeline's own reading of it, before redaction.

The ingestion pipeline builds one :class:`BatchView` per analysis from what it already has: each
matched trace as read from the agent, its endpoint row, and the trace's analysis (fields found with
their classes, parsed bodies, credentials). Rules only read it; nothing here parses a body again.

Timing contract (``inventory.ingest.pipeline`` keeps it): rules reading parsed bodies (the OpenAPI
rules) run before redaction, which replaces sensitive values in those parsed bodies in place; rules
reading the batch's field state (the traffic rules) run after the fields are written, when an
operator's concurrent change of a field's classes has been merged in.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from inventory.ingest.analysis import TraceResult
    from inventory.ingest.store import EndpointRow
    from inventory.ingest.traces import Trace


@dataclass(frozen=True, slots=True)
class Seen:
    """One matched trace of a batch.

    ``trace``: as read from the agent (path, status, headers, scheme, meta, body text), nothing
    redacted but the credential channel redacted at accept. ``endpoint``: the pipeline's endpoint
    row (``uuid``, ``method``, ``path`` the pattern, ``host`` with ``name`` and ``is_public``,
    ``created``). ``analysis``: the trace's analysis (fields found and their classes, sensitive path
    segments, credentials, parsed request and response bodies), or None when the trace was not
    analysed (a usage-only v2 trace, or one whose analysis failed).
    """

    trace: Trace
    endpoint: EndpointRow
    analysis: TraceResult | None

    @property
    def response_body(self) -> tuple[str, object]:
        """The pipeline's parse of the response body (``("json", value)``, ``("text", text)``, ...);
        ``("unread", text)`` when the trace was not analysed."""
        if self.analysis is None:
            return "unread", self.trace.resp_body
        return self.analysis.resp_body


@dataclass(frozen=True, slots=True)
class BatchView:
    """Every matched trace of one analysis, in batch order."""

    seen: tuple[Seen, ...]

    @classmethod
    def of(cls, matched, results) -> BatchView:
        """From the pipeline's ``matched`` ``(trace, endpoint)`` pairs and its analysis ``results``
        (``(TraceResult, endpoint)`` pairs of the traces it analysed)."""
        analysis_of = {id(result.trace): result for result, _ in results}
        return cls(tuple(Seen(trace, endpoint, analysis_of.get(id(trace))) for trace, endpoint in matched))

    def analysed(self) -> Iterator[Seen]:
        """The traces that were analysed, in batch order."""
        return (seen for seen in self.seen if seen.analysis is not None)

    def endpoints(self) -> list:
        """The distinct endpoint rows, in order of first appearance."""
        return list({id(seen.endpoint): seen.endpoint for seen in self.seen}.values())

    def host_names(self) -> set[str]:
        return {seen.endpoint.host.name for seen in self.seen}
