"""The seven traffic alert rules of DECISIONS §6 (all but "Open API Spec Diff").

The pipeline calls one method per finding while it analyses a batch; the
collector keeps each distinct alert once and hands them all to
``detections.services.alerts_raise`` in one call, which skips any alert already
Open or Ignored for the same endpoint, type and description. Descriptions are
the table's sentences exactly; contexts carry names and positions, never values.

| type | raised when |
|---|---|
| New Endpoint Detected | an endpoint is created from traffic |
| PII Data Detected | a class is newly added to a body or header field |
| Sensitive Data in Query Params | a class is detected in a query parameter (false positives excluded) |
| Sensitive Data in Path Params | a class is detected in a path segment at a parameter position |
| Basic Authentication Detected | a request carries ``Authorization: Basic ...`` |
| Endpoint not secured by SSL | an EXTERNAL host's endpoint was called over plain ``http`` |
| Unauthenticated Endpoint returning Sensitive Data | a request without credentials got a 2xx whose body has a classified field |
"""
from __future__ import annotations

from core.enums import SECTION_LABEL, AlertType
from detections.services import AlertCandidate


class AlertCollector:
    """Alert candidates of one batch, de-duplicated in memory."""

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
