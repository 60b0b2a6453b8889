"""The "Open API Spec Diff" rule: traffic compared with the OpenAPI specs uploaded for its host.

Three kinds of difference, one alert sentence per difference (DECISIONS §6):

* an endpoint no spec of the host documents;
* a response status its operation does not document (neither the code, its ``2XX`` range nor ``default``);
* a JSON response body that does not validate against its documented schema (at most
  ``MAX_BODY_FINDINGS`` per trace; bodies over ``MAX_COMPARED_BODY`` characters, and bodies whose
  analysis the trace's budget cut, are not compared: validation costs what the body's size costs).

Descriptions name the endpoint's path pattern, never concrete values, so one difference raises one
alert however many traces show it. The rule reads the pipeline's parse of each response body
(before redaction; "[REDACTED]" values an agent sent are never reported). A body the pipeline did
not read as JSON (a bare scalar sent without a JSON content type, a document nested past the
pipeline's depth limit, invalid JSON, an unanalysed usage-only trace) is read here only when the
spec documents a JSON schema for that response. Matching and the schema diff are
``detections.openapi``; linking endpoints to specs is the pipeline's own step
(``detections.openapi.link``).
"""
from __future__ import annotations

import json
import logging

from core.budget import TIME_LIMITS
from core.enums import AlertType, DataSection
from core.logsafe import withheld
from inventory.patterns.normalize import host_normalize

from ..openapi.compiled import CompiledSpec, specs_for_hosts
from ..openapi.responses import json_schema_pointer, response_for, schema_findings
from ..services import AlertCandidate
from .view import BatchView, Seen

logger = logging.getLogger(__name__)

MAX_BODY_FINDINGS = 3  # schema differences reported per trace
MAX_COMPARED_BODY = 256 * 1024  # response bodies (characters) compared with their schema


def specs_of(view: BatchView) -> dict[str, list[CompiledSpec]]:
    """The compiled specs of the batch's hosts, by normalised host name (hosts without one absent).
    One query, plus one per spec changed since this process compiled it."""
    return specs_for_hosts(view.host_names())


def openapi_rules(view: BatchView, specs_by_host: dict[str, list[CompiledSpec]]) -> list[AlertCandidate]:
    """Open API Spec Diff candidates for every matched trace of a batch whose host has specs.

    Runs before redaction (it reads parsed response bodies). No query; never raises for odd
    input: a spec construct or body it cannot evaluate yields no alert (logged by endpoint id).
    """
    candidates: list[AlertCandidate] = []
    if not specs_by_host:
        return candidates
    for seen in view.seen:
        specs = specs_by_host.get(host_normalize(seen.endpoint.host.name))
        if not specs:
            continue
        try:
            candidates.extend(_differences(seen, specs))
        except TIME_LIMITS:
            raise  # the task's time is up: not a spec construct's fault
        except Exception as exc:  # a spec construct we cannot evaluate must not break trace analysis
            logger.warning("spec diff skipped for endpoint %s", seen.endpoint.uuid, exc_info=withheld(exc))
    return candidates


def _candidate(seen: Seen, description: str, context: dict) -> AlertCandidate:
    return AlertCandidate(seen.endpoint.uuid, AlertType.OPENAPI_SPEC_DIFF, description, context)


def _differences(seen: Seen, specs: list[CompiledSpec]) -> list[AlertCandidate]:
    trace, endpoint = seen.trace, seen.endpoint
    host, method = endpoint.host.name, endpoint.method.upper()
    where = f"{method} {endpoint.path} on {host}"
    found = spec = None
    for spec in specs:
        found = spec.operation(host=host, path=trace.path, method=method)
        if found:
            break
    if found is None:
        names = ", ".join(f"'{s.name}'" for s in specs)
        noun = "OpenAPI spec" if len(specs) == 1 else "OpenAPI specs"
        return [_candidate(seen, f"Endpoint {where} is not documented in {noun} {names}.",
                           {"kind": "undocumented_endpoint", "specs": [s.name for s in specs]})]
    route, operation, pointer = found
    response = response_for(operation, trace.status)
    if response is None:
        return [_candidate(seen, f"Response status {trace.status} of {where} is not documented in OpenAPI spec "
                                 f"'{spec.name}'.",
                           {"kind": "undocumented_status", "spec": spec.name, "template": route.template,
                            "statusCode": trace.status})]
    kind, parsed = seen.response_body
    if kind == "empty" or (kind == "unread" and not parsed.strip()):
        return []
    if len(trace.resp_body) > MAX_COMPARED_BODY or (
            seen.analysis is not None and DataSection.RESPONSE_BODY in seen.analysis.cut_sections):
        return []  # validating it would cost what its size costs; a body the budget cut is not compared
    schema_pointer = json_schema_pointer(spec, response, pointer, trace.header("content-type", response=True))
    if schema_pointer is None:
        return []
    context = {"kind": "schema_mismatch", "spec": spec.name, "template": route.template, "statusCode": trace.status}
    try:
        document = parsed if kind == "json" else json.loads(trace.resp_body)
    except (ValueError, RecursionError):
        return [_candidate(seen, f"Response body of {where} (status {trace.status}) is not valid JSON, "
                                 f"unlike its schema in OpenAPI spec '{spec.name}'.", context)]
    candidates = []
    for label, problem in schema_findings(spec, schema_pointer, document)[:MAX_BODY_FINDINGS]:
        subject = f"field '{label}'" if label else "the body"
        candidates.append(_candidate(
            seen, f"Response body of {where} (status {trace.status}) does not match OpenAPI spec '{spec.name}': "
                  f"{subject} {problem}.",
            {**context, "field": label},
        ))
    return candidates
