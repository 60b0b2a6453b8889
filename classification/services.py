"""Classification: risk of endpoints, operator edits of data fields, clearing classifications.

Shared by the REST routes, the admin and the ``clear_sensitive_data`` command.
Lock order when both are locked: endpoint rows first (in primary-key order),
then data field rows; every service here follows it so concurrent callers
(ingestion included) cannot deadlock against each other.
"""
from __future__ import annotations

import logging
import re
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from core.enums import RISK_RANK, AlertType, RiskScore, max_risk
from core.errors import ConflictError, DataFieldNotFound
from detections.models import Alert
from inventory.counts import inventory_changed
from inventory.models import Endpoint

from .models import DataClass, DataField

logger = logging.getLogger(__name__)

# Alert types that only exist because of a classification (DECISIONS §5).
SENSITIVE_ALERT_TYPES = (
    AlertType.PII_DATA,
    AlertType.QUERY_SENSITIVE,
    AlertType.PATH_SENSITIVE,
    AlertType.UNAUTHENTICATED_SENSITIVE,
)
_REFRESH_CHUNK = 500
_INDEX = re.compile(r"\[\d+\]")


def data_path_normalise(data_path: str) -> str:
    """Arrays are recorded as ``[]`` (``items[].name``); an explicit index is accepted as input."""
    return _INDEX.sub("[]", data_path.strip())


def class_severities() -> dict[str, str]:
    """Severity of every known class, enabled or not (a disabled class still weighs on fields carrying it)."""
    return dict(DataClass.objects.values_list("name", "severity"))


def field_risk(data_classes: Iterable[str], severities: dict[str, str]) -> str:
    """Risk of one field: the highest severity of its classes; NONE without (known) classes."""
    return max_risk(severities.get(name, RiskScore.NONE) for name in data_classes)


def endpoints_refresh_risk(*, endpoint_ids: Iterable) -> int:
    """Recompute ``risk_score``, ``risk_rank`` and ``data_classes`` of the given endpoints.

    riskScore = the highest severity among the classes on the endpoint's data
    fields (NONE without any); ``data_classes`` = the sorted union of those
    classes (DECISIONS §4). Locks the endpoint rows (primary-key order) while
    it reads their fields, so concurrent refreshes cannot write a stale result.
    Writes only the endpoints that changed, in bulk; returns how many changed.
    Unknown ids are ignored. Call it after every change of field classes.
    """
    ids = sorted({uuid.UUID(str(i)) for i in endpoint_ids})
    if not ids:
        return 0
    severities = class_severities()
    changed_count = 0
    now = timezone.now()
    with transaction.atomic():
        for start in range(0, len(ids), _REFRESH_CHUNK):
            chunk = ids[start:start + _REFRESH_CHUNK]
            endpoints = list(
                Endpoint.objects.select_for_update()
                .filter(uuid__in=chunk)
                .order_by("uuid")
                .only("uuid", "risk_score", "risk_rank", "data_classes")
            )
            classes: dict[uuid.UUID, set[str]] = defaultdict(set)
            for endpoint_id, names in DataField.objects.filter(endpoint_id__in=chunk).values_list(
                "endpoint_id", "data_classes"
            ):
                classes[endpoint_id].update(names or ())
            changed = []
            for endpoint in endpoints:
                names = sorted(classes.get(endpoint.uuid, ()))
                risk = field_risk(names, severities)
                if endpoint.risk_score != risk or endpoint.risk_rank != RISK_RANK[risk] or endpoint.data_classes != names:
                    endpoint.risk_score = risk
                    endpoint.risk_rank = RISK_RANK[risk]
                    endpoint.data_classes = names
                    endpoint.updated_at = now
                    changed.append(endpoint)
            if changed:
                Endpoint.objects.bulk_update(changed, ["risk_score", "risk_rank", "data_classes", "updated_at"])
            changed_count += len(changed)
        if changed_count:
            inventory_changed()  # riskScores / dataClasses filters and their cached totals
    return changed_count


def endpoints_refresh_risk_for_classes(*, class_names: Sequence[str]) -> int:
    """Refresh the endpoints carrying any of these classes (after a class's severity changed)."""
    from inventory.api.filters import json_any_q

    ids = Endpoint.objects.filter(json_any_q(Endpoint, "data_classes", class_names)).values_list("uuid", flat=True)
    return endpoints_refresh_risk(endpoint_ids=list(ids))


def data_classes_enabled():
    """The classes GET /data-class lists: enabled ones, built-ins first in SPEC order, then custom by name."""
    return DataClass.objects.filter(enabled=True).order_by("-builtin", "id")


def data_field_get(*, data_field_id: str, for_update: bool = False) -> DataField:
    """The data field with this id; ``DataFieldNotFound`` for an unknown or malformed id."""
    try:
        key = uuid.UUID(str(data_field_id))
    except ValueError:
        raise DataFieldNotFound() from None
    queryset = DataField.objects.select_related("endpoint")
    if for_update:
        # Endpoint first, then the field (module lock order).
        endpoint_id = DataField.objects.filter(uuid=key).values_list("endpoint_id", flat=True).first()
        if endpoint_id is None:
            raise DataFieldNotFound()
        list(Endpoint.objects.select_for_update().filter(uuid=endpoint_id).values_list("uuid", flat=True))
        queryset = queryset.select_for_update(of=("self",))
    field = queryset.filter(uuid=key).first()
    if field is None:
        raise DataFieldNotFound()
    return field


def data_field_update_classes(
    *, data_field_id: str, data_classes: Sequence[str], data_section: str, data_path: str
) -> DataField:
    """Set a field's classes (POST /data-field/{id}/update-classes, DECISIONS §5).

    ``data_section`` and ``data_path`` must name this field (an explicit array
    index in the path is accepted), else ``DataFieldNotFound``. Classes the
    operator removed go to ``false_positives`` (detection never re-adds them);
    classes the operator adds are taken out of it. The endpoint's risk is
    recomputed in the same transaction. Class names are validated by the caller.
    """
    with transaction.atomic():
        field = data_field_get(data_field_id=data_field_id, for_update=True)
        if field.data_section != data_section or data_path_normalise(field.data_path) != data_path_normalise(data_path):
            raise DataFieldNotFound()
        wanted = list(dict.fromkeys(data_classes))
        removed = [name for name in field.data_classes if name not in wanted]
        false_positives = [name for name in field.false_positives if name not in wanted]
        false_positives.extend(name for name in removed if name not in false_positives)
        field.data_classes = wanted
        field.false_positives = false_positives
        field.save(update_fields=["data_classes", "false_positives", "updated_at"])
        endpoints_refresh_risk(endpoint_ids=[field.endpoint_id])
    logger.info("data field %s classes set (%d classes)", field.uuid, len(wanted))
    return field


def data_field_delete(*, data_field_id: str) -> DataField:
    """Delete a data field (DELETE /data-field/{id}); returns it as it was. Refreshes the endpoint's risk."""
    with transaction.atomic():
        field = data_field_get(data_field_id=data_field_id, for_update=True)
        field_uuid, endpoint_id = field.uuid, field.endpoint_id
        field.delete()
        inventory_changed()  # new-detections totals
        field.uuid = field_uuid
        endpoints_refresh_risk(endpoint_ids=[endpoint_id])
    logger.info("data field %s deleted", field_uuid)
    return field


def data_field_update_entity(*, data_field_id: str, entity: str | None) -> DataField:
    """Assign the entity/owner of a field (blank or null clears it)."""
    with transaction.atomic():
        field = data_field_get(data_field_id=data_field_id, for_update=True)
        field.entity = entity or None
        field.save(update_fields=["entity", "updated_at"])
    return field


def data_field_update_path(*, data_field_id: str, data_path: str) -> DataField:
    """Rename a field's data path.

    Raises ``ConflictError`` (409 "Data field already exists with this data path.")
    when another field of the same endpoint and section already has that path.
    """
    path = data_path_normalise(data_path)
    with transaction.atomic():
        field = data_field_get(data_field_id=data_field_id, for_update=True)
        if path == field.data_path:
            return field
        taken = (
            DataField.objects.filter(endpoint_id=field.endpoint_id, data_section=field.data_section, data_path=path)
            .exclude(uuid=field.uuid)
            .exists()
        )
        if taken:
            raise ConflictError("Data field already exists with this data path.")
        field.data_path = path
        field.save(update_fields=["data_path", "updated_at"])
    return field


@dataclass(frozen=True)
class ClearResult:
    """What a clearing operation changed (printed by the command, logged by the routes)."""

    data_fields: int
    endpoints: int
    alerts: int


def _reset_endpoint_risk() -> int:
    inventory_changed()
    return (
        Endpoint.objects.exclude(risk_score=RiskScore.NONE, data_classes=[])
        .update(risk_score=RiskScore.NONE, risk_rank=RISK_RANK[RiskScore.NONE], data_classes=[],
                updated_at=timezone.now())
    )


def _delete_sensitive_alerts() -> int:
    return Alert.objects.filter(type__in=SENSITIVE_ALERT_TYPES).delete()[1].get(Alert._meta.label, 0)


def sensitive_data_clear() -> ClearResult:
    """POST /clear-sensitive-data and ``manage.py clear_sensitive_data`` (DECISIONS §5). Cannot be undone.

    Empties every field's classes, false positives and scanner results, sets every
    endpoint's riskScore to NONE, and deletes the alerts of the four
    sensitive-data types. One transaction: all of it or nothing.
    """
    with transaction.atomic():
        endpoints = _reset_endpoint_risk()
        fields = (
            DataField.objects.exclude(data_classes=[], false_positives=[], scanner_identified=[])
            .update(data_classes=[], false_positives=[], scanner_identified=[], updated_at=timezone.now())
        )
        alerts = _delete_sensitive_alerts()
    result = ClearResult(data_fields=fields, endpoints=endpoints, alerts=alerts)
    logger.info("sensitive data cleared: %d fields, %d endpoints, %d alerts", fields, endpoints, alerts)
    return result


def data_fields_clear_all() -> ClearResult:
    """POST /clear-all-datafields: delete every data field, with clear-sensitive-data's risk and alert effects."""
    with transaction.atomic():
        endpoints = _reset_endpoint_risk()
        fields = DataField.objects.all().delete()[1].get(DataField._meta.label, 0)
        alerts = _delete_sensitive_alerts()
    result = ClearResult(data_fields=fields, endpoints=endpoints, alerts=alerts)
    logger.info("all data fields deleted: %d fields, %d endpoints, %d alerts", fields, endpoints, alerts)
    return result


def data_class_delete(*, data_class: DataClass) -> int:
    """Delete a custom class: it is taken off every field carrying it, and their endpoints' risk refreshed.

    Built-in classes cannot be deleted (disable them instead); raises ``ValueError``.
    Returns the number of fields changed.
    """
    from inventory.api.filters import json_any_q

    if data_class.builtin:
        raise ValueError("Built-in data classes cannot be deleted; disable them instead.")
    name = data_class.name
    with transaction.atomic():
        endpoint_ids = list(
            Endpoint.objects.select_for_update()
            .filter(json_any_q(Endpoint, "data_classes", [name]))
            .order_by("uuid")
            .values_list("uuid", flat=True)
        )
        fields = list(
            DataField.objects.select_for_update()
            .filter(json_any_q(DataField, "data_classes", [name]) | json_any_q(DataField, "false_positives", [name]))
        )
        for field in fields:
            field.data_classes = [n for n in field.data_classes if n != name]
            field.false_positives = [n for n in field.false_positives if n != name]
        DataField.objects.bulk_update(fields, ["data_classes", "false_positives"])
        data_class.delete()
        endpoints_refresh_risk(endpoint_ids=endpoint_ids + [f.endpoint_id for f in fields])
    return len(fields)
