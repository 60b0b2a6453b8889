"""The alert rules fed the way the ingestion pipeline feeds them.

Agent traces are read (``trace_from_agent``), resolved to their endpoints (``hosts_resolve``,
``endpoints_resolve``: stored patterns first) and analysed (``trace_analyze``) by the pipeline's
own functions, then wrapped in the ``BatchView`` the pipeline builds: the rules see exactly the
trace, endpoint row and parsed bodies they see in a real analysis, before redaction.
"""
from __future__ import annotations

from django.utils import timezone

from detections.rules import BatchView, openapi_rules, specs_of
from inventory.ingest.analysis import Detections, trace_analyze
from inventory.ingest.classes import class_config_load
from inventory.ingest.store import endpoints_resolve, hosts_resolve
from inventory.ingest.traces import trace_from_agent
from tests.inventory.ingest_support import raw_trace


def batch_view(raws: list[dict]) -> BatchView:
    """The pipeline's view of a batch of raw agent traces (endpoints created for new patterns)."""
    received_at = timezone.now()
    traces = [trace_from_agent(raw, index, processed=False, received_at=received_at) for index, raw in enumerate(raws)]
    hosts, _ = hosts_resolve(traces)
    matched, _ = endpoints_resolve(traces, hosts)
    detections = Detections(class_config_load())
    results = [(trace_analyze(trace, detections=detections, false_positives={}, pattern=endpoint.path), endpoint)
               for trace, endpoint in matched]
    return BatchView.of(matched, results)


def response(endpoint, path: str, *, status: int = 200, body: object = "",
             content_type: str | None = "application/json") -> dict:
    """A raw agent trace calling ``endpoint`` (an ``Endpoint``) at the concrete ``path``."""
    raw = raw_trace(host=endpoint.host.name, method=endpoint.method, path=path, status=status, response_body=body,
                    response_headers={"Content-Type": content_type} if content_type else None)
    if content_type is None:
        raw["response"]["headers"] = []
    return raw


def spec_diff(endpoint, path: str, **kwargs) -> list:
    """The Open API Spec Diff rule on one trace of ``endpoint``, as the pipeline runs it."""
    view = batch_view([response(endpoint, path, **kwargs)])
    [seen] = view.seen
    assert seen.endpoint.uuid == endpoint.uuid, "the trace must be matched to the endpoint under test"
    return openapi_rules(view, specs_of(view))
