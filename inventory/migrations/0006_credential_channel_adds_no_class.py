"""Own-channel credentials add no data class (DECISIONS §5, issue #14 point 2): clean stored data.

Before this change a request's own credentials made the endpoint HIGH: a bearer token in the
``Authorization`` header, a session cookie or an ``X-API-Key`` header gave the header's data field
``authentication_token`` or ``api_key``. Analysis no longer does; this migration takes those
classes off what was stored, then recomputes every endpoint's ``riskScore`` and ``dataClasses``.

What can be identified as such from stored data, and is therefore changed (conservative):

* fields of section ``REQUEST_HEADER`` whose name is a credential-channel header
  (``credentials.AUTH_HEADERS``: ``authorization``, ``cookie``, ``x-api-key``…), and fields of
  section ``RESPONSE_HEADER`` named ``set-cookie``: only the two classes a credential reading
  gives, ``authentication_token`` and ``api_key``, are removed. Nothing records whether a class
  was detected or added by an operator, so an operator's ``authentication_token`` on such a header
  goes too; any *other* class on those fields (an e-mail inside a cookie) is kept, as are the
  fields themselves and their false positives;
* open "PII Data Detected" alerts whose context names exactly such a field and class are
  resolved (not deleted), with a resolution message saying why;
* every endpoint's ``riskScore``, ``risk_rank`` and ``dataClasses`` are recomputed from its
  fields (highest severity among their classes, DECISIONS §4); only rows that differ are written.

Left alone: query-parameter credentials (a key in the URL is data, §5), credentials in bodies
and in other headers (a token in a response body is data), path segments, alerts of other types.
"""
from django.db import migrations
from django.utils import timezone

from inventory.ingest.credentials import AUTH_HEADERS, credential_key

BATCH = 2000
CREDENTIAL_CLASSES = ("authentication_token", "api_key")
SERVER_CREDENTIAL_HEADERS = ("set-cookie", "set-cookie2")
RISK_RANK = {"NONE": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}
RESOLUTION = "Resolved by migration: a request's own credentials (Authorization, cookies, API-key headers) are authentication, not data (DECISIONS §5)."


def _own_channel(section: str, path: str) -> bool:
    if section == "REQUEST_HEADER":
        return credential_key(path) in AUTH_HEADERS
    return section == "RESPONSE_HEADER" and path.strip().lower() in SERVER_CREDENTIAL_HEADERS


def own_channel_classes_remove(apps) -> tuple[set, int]:
    """Take the credential classes off own-channel header fields; returns (their endpoint ids, fields changed)."""
    DataField = apps.get_model("classification", "DataField")
    endpoints, changed, total = set(), [], 0
    headers = DataField.objects.filter(data_section__in=("REQUEST_HEADER", "RESPONSE_HEADER"))
    for field in headers.only("uuid", "endpoint_id", "data_section", "data_path", "data_classes", "updated_at").iterator(chunk_size=BATCH):
        names = field.data_classes or []
        if not any(name in CREDENTIAL_CLASSES for name in names) or not _own_channel(field.data_section, field.data_path):
            continue
        field.data_classes = [name for name in names if name not in CREDENTIAL_CLASSES]
        field.updated_at = timezone.now()
        changed.append(field)
        endpoints.add(field.endpoint_id)
        if len(changed) >= BATCH:
            DataField.objects.bulk_update(changed, ["data_classes", "updated_at"])
            total, changed = total + len(changed), []
    DataField.objects.bulk_update(changed, ["data_classes", "updated_at"])
    return endpoints, total + len(changed)


def own_channel_alerts_resolve(apps) -> int:
    """Resolve open PII alerts raised for a credential class on an own-channel header field."""
    Alert = apps.get_model("detections", "Alert")
    resolved = []
    candidates = Alert.objects.filter(type="PII Data Detected", status="Open", context__dataClass__in=CREDENTIAL_CLASSES)
    for alert in candidates.only("uuid", "context").iterator(chunk_size=BATCH):
        context = alert.context if isinstance(alert.context, dict) else {}
        section, path = context.get("dataSection"), context.get("dataPath")
        if isinstance(section, str) and isinstance(path, str) and _own_channel(section, path):
            resolved.append(alert.uuid)
    for start in range(0, len(resolved), BATCH):
        Alert.objects.filter(uuid__in=resolved[start:start + BATCH]).update(
            status="Resolved", resolution_message=RESOLUTION, updated_at=timezone.now())
    return len(resolved)


def endpoint_risks_recompute(apps) -> int:
    """riskScore, risk_rank and dataClasses of every endpoint from its fields; returns rows written."""
    Endpoint = apps.get_model("inventory", "Endpoint")
    DataField = apps.get_model("classification", "DataField")
    severities = dict(apps.get_model("classification", "DataClass").objects.values_list("name", "severity"))
    total = 0
    ids = list(Endpoint.objects.order_by("uuid").values_list("uuid", flat=True))
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        classes: dict = {}
        for endpoint_id, names in DataField.objects.filter(endpoint_id__in=chunk).values_list("endpoint_id", "data_classes"):
            classes.setdefault(endpoint_id, set()).update(names or ())
        changed = []
        for endpoint in Endpoint.objects.filter(uuid__in=chunk).only("uuid", "risk_score", "risk_rank", "data_classes", "updated_at"):
            names = sorted(classes.get(endpoint.uuid, ()))
            risk = max((severities.get(name, "NONE") for name in names), key=RISK_RANK.get, default="NONE")
            if (endpoint.risk_score, endpoint.risk_rank, endpoint.data_classes) != (risk, RISK_RANK[risk], names):
                endpoint.risk_score, endpoint.risk_rank, endpoint.data_classes = risk, RISK_RANK[risk], names
                endpoint.updated_at = timezone.now()
                changed.append(endpoint)
        Endpoint.objects.bulk_update(changed, ["risk_score", "risk_rank", "data_classes", "updated_at"])
        total += len(changed)
    return total


def credential_channel_clean(apps, schema_editor) -> dict:
    """The whole migration (see the module docstring); returns what it changed, for tests."""
    endpoints, fields = own_channel_classes_remove(apps)
    alerts = own_channel_alerts_resolve(apps)
    return {"fields": fields, "endpoints_with_fields": len(endpoints), "alerts": alerts,
            "endpoints": endpoint_risks_recompute(apps)}


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0005_endpoint_learned_segments_alias"),
        ("classification", "0003_seed_password_class"),
        ("detections", "0002_webhooks_alert_dedup_key_openapi_spec"),
    ]

    operations = [
        migrations.RunPython(credential_channel_clean, migrations.RunPython.noop, elidable=True),
    ]
