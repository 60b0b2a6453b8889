"""The seven traffic alert rules of DECISIONS §6 (all but "Open API Spec Diff").

| type | raised when |
|---|---|
| New Endpoint Detected | an endpoint is created from traffic |
| PII Data Detected | a class is newly added to a body or header field |
| Sensitive Data in Query Params | a class is detected in a query parameter (false positives excluded) |
| Sensitive Data in Path Params | a class is detected in a path segment at a parameter position |
| Basic Authentication Detected | a request carries ``Authorization: Basic ...`` |
| Endpoint not secured by SSL | an EXTERNAL host's endpoint was called over plain ``http`` |
| Unauthenticated Endpoint returning Sensitive Data | a request without credentials got a 2xx whose body has a classified field |

Descriptions are the table's sentences exactly; contexts carry names and positions, never values.
The rules read the batch's field state after it is written (``fields``: ``class_events``, the
classes newly added, and ``classes_of``, a field's classes as stored), so a class an operator
removed meanwhile raises nothing.
"""
from __future__ import annotations

from core.enums import SECTION_LABEL, AlertType, DataSection

from ..services import AlertCandidate
from .view import BatchView, Seen

BODY_SECTIONS_FOR_PII = frozenset({DataSection.REQUEST_BODY, DataSection.REQUEST_HEADER,
                                   DataSection.RESPONSE_BODY, DataSection.RESPONSE_HEADER})


def traffic_rules(view: BatchView, fields) -> list[AlertCandidate]:
    """Alert candidates of the seven traffic rules over one batch, each distinct alert once."""
    alerts = _Candidates()
    for endpoint in {seen.endpoint for seen in view.seen if seen.endpoint.created}:
        alerts.new_endpoint(endpoint)
    for endpoint_id, section, status, path, name in fields.class_events:
        if section in BODY_SECTIONS_FOR_PII and name in fields.classes_of(endpoint_id, section, status, path):
            alerts.pii(endpoint_id, section, path, name)
    for seen in view.analysed():
        _trace_rules(seen, fields, alerts)
    return alerts.candidates()


def _scheme(trace) -> str | None:
    """http or https: from the agent's ``url.host``, else ``X-Forwarded-Proto``, else port 80/443."""
    if trace.scheme:
        return trace.scheme
    forwarded = trace.header("x-forwarded-proto")
    if forwarded:
        return forwarded.split(",", 1)[0].strip().lower() or None
    port = trace.meta.get("destinationPort")
    return {"443": "https", "80": "http"}.get(str(port)) if port is not None else None


def _trace_rules(seen: Seen, fields, alerts: _Candidates) -> None:
    trace, endpoint, result = seen.trace, seen.endpoint, seen.analysis
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


class _Candidates:
    """Alert candidates of one batch, de-duplicated in memory; one method per rule."""

    def __init__(self):
        self._candidates: dict[tuple, AlertCandidate] = {}

    def _add(self, endpoint_id, type_: str, description: str, context: dict) -> None:
        key = (endpoint_id, type_, description)
        if key not in self._candidates:
            self._candidates[key] = AlertCandidate(endpoint_id, type_, description, context)

    def candidates(self) -> list[AlertCandidate]:
        return list(self._candidates.values())

    def new_endpoint(self, endpoint) -> None:
        self._add(endpoint.uuid, AlertType.NEW_ENDPOINT,
                  f"A new endpoint has been detected for {endpoint.host.name}: {endpoint.path}.",
                  {"host": endpoint.host.name, "path": endpoint.path, "method": endpoint.method})

    def pii(self, endpoint_id, section: str, data_path: str, class_name: str) -> None:
        self._add(endpoint_id, AlertType.PII_DATA,
                  f"Sensitive data of type {class_name} has been detected in field '{data_path}' of "
                  f"{SECTION_LABEL[section]}.",
                  {"dataSection": section, "dataPath": data_path, "dataClass": class_name})

    def query_param(self, endpoint, name: str, class_name: str) -> None:
        self._add(endpoint.uuid, AlertType.QUERY_SENSITIVE,
                  f"Query Parameter '{name}' contains sensitive data of type {class_name}.",
                  {"parameter": name, "dataClass": class_name})

    def path_param(self, endpoint, position: int, class_name: str) -> None:
        self._add(endpoint.uuid, AlertType.PATH_SENSITIVE,
                  f"Path Parameter at position {position} contains sensitive data of type {class_name}.",
                  {"position": position, "dataClass": class_name, "path": endpoint.path})

    def basic_auth(self, endpoint) -> None:
        self._add(endpoint.uuid, AlertType.BASIC_AUTH,
                  "Basic Authentication detected in Authorization header.", {})

    def no_ssl(self, endpoint) -> None:
        self._add(endpoint.uuid, AlertType.UNSECURED_ENDPOINT,
                  f"Endpoint {endpoint.method} {endpoint.path} on {endpoint.host.name} is served without SSL.",
                  {"host": endpoint.host.name})

    def unauthenticated(self, endpoint) -> None:
        self._add(endpoint.uuid, AlertType.UNAUTHENTICATED_SENSITIVE,
                  f"Unauthenticated endpoint {endpoint.method} {endpoint.path} in {endpoint.host.name} "
                  "is returning sensitive data.",
                  {"host": endpoint.host.name})
