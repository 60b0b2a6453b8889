"""The webhook payload of alerts (SPEC "Alert (webhook payload)"), snapshotted into each delivery
when the alert fires: a delivery sends exactly what the alert was at that moment."""
from __future__ import annotations

from django.db.models import Count, Q

from classification.models import DataField
from core.enums import SECTION_SHORT, RiskScore
from core.fields import timestamp
from inventory.models import Endpoint


def alerts_payloads(*, alerts: list, endpoints: dict | None = None) -> dict:
    """SPEC's "Alert (webhook payload)" for each alert, keyed by alert uuid.

    ``alert.riskScore`` is lower case; ``apiEndpoint.dataFields`` lists every data field of the
    endpoint (``dataSection`` in the short vocabulary: reqQuery, reqHeaders, reqBody, resHeaders,
    resBody); ``meta.totalEndpoints`` counts the host's endpoints and ``meta.totalSensitiveEndpoints``
    those whose riskScore is not NONE. Three queries whatever the number of alerts (two when the
    caller passes the alerts' ``endpoints`` by uuid, hosts loaded).
    """
    endpoint_ids = {a.endpoint_id for a in alerts}
    if endpoints is None:
        endpoints = endpoints_with_hosts(endpoint_ids)
    fields: dict = {eid: [] for eid in endpoint_ids}
    for field in (
        DataField.objects.filter(endpoint_id__in=endpoint_ids)
        .order_by("data_section", "data_path", "status_code")
        .values("endpoint_id", "data_path", "data_classes", "data_section")
    ):
        fields[field["endpoint_id"]].append({
            "dataPath": field["data_path"],
            "dataClasses": list(field["data_classes"] or []),
            "dataSection": SECTION_SHORT.get(field["data_section"], field["data_section"]),
        })
    host_ids = {e.host_id for e in endpoints.values()}
    counts = {
        row["host_id"]: row
        for row in Endpoint.objects.filter(host_id__in=host_ids).values("host_id").annotate(
            total=Count("uuid"), sensitive=Count("uuid", filter=~Q(risk_score=RiskScore.NONE))
        )
    }
    payloads = {}
    for alert in alerts:
        endpoint = endpoints[alert.endpoint_id]
        host_counts = counts.get(endpoint.host_id, {"total": 0, "sensitive": 0})
        payloads[alert.uuid] = {
            "alert": {
                "uuid": str(alert.uuid),
                "type": str(alert.type),
                "riskScore": str(alert.risk_score).lower(),
                "status": str(alert.status),
                "createdAt": timestamp(alert.created_at),
                "description": alert.description,
                "apiEndpoint": {
                    "uuid": str(endpoint.uuid),
                    "path": endpoint.path,
                    "method": endpoint.method,
                    "host": endpoint.host.name,
                    "dataFields": fields[endpoint.uuid],
                },
            },
            "meta": {
                "host": endpoint.host.name,
                "totalEndpoints": host_counts["total"],
                "totalSensitiveEndpoints": host_counts["sensitive"],
            },
        }
    return payloads


def endpoints_with_hosts(endpoint_ids) -> dict:
    """The endpoints of ``endpoint_ids`` by uuid, their hosts loaded (one query)."""
    return {e.uuid: e for e in Endpoint.objects.filter(uuid__in=endpoint_ids).select_related("host")}
