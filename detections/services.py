"""Alerts: raising them (the single entry point every alert rule goes through), listing and status changes."""
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Case, IntegerField, QuerySet, Value, When

from core.enums import AlertStatus, AlertType, RiskScore
from core.errors import AlertNotFound, ConflictError

from .models import ACTIVE_STATUSES, Alert, alert_dedup_key

logger = logging.getLogger(__name__)

# Default risk of each alert type (DECISIONS §6).
ALERT_RISK = {
    AlertType.NEW_ENDPOINT: RiskScore.LOW,
    AlertType.PII_DATA: RiskScore.HIGH,
    AlertType.QUERY_SENSITIVE: RiskScore.HIGH,
    AlertType.PATH_SENSITIVE: RiskScore.HIGH,
    AlertType.BASIC_AUTH: RiskScore.MEDIUM,
    AlertType.UNSECURED_ENDPOINT: RiskScore.HIGH,
    AlertType.UNAUTHENTICATED_SENSITIVE: RiskScore.HIGH,
    AlertType.OPENAPI_SPEC_DIFF: RiskScore.MEDIUM,
}


@dataclass(frozen=True)
class AlertCandidate:
    """An alert a rule wants raised; ``alerts_raise`` decides whether it is new."""

    endpoint_id: object
    type: str
    description: str
    context: dict = field(default_factory=dict, compare=False, hash=False)
    risk_score: str | None = None


def alerts_raise(candidates: Iterable[AlertCandidate], *, fan_out: bool = True) -> list[Alert]:
    """Create the candidates that are not duplicates; offer each new alert to the webhooks.

    A candidate is a duplicate when an Open or Ignored alert with the same endpoint,
    type and description exists, or an earlier candidate of the same call is equal.
    Runs in the caller's transaction (or its own): alerts and their pending webhook
    deliveries commit together, and the deliveries are sent after that commit.
    Concurrent callers raising the same alert create it once: the partial unique
    constraint ``alert_active_unique`` makes the loser's insert a no-op.
    Queries: one to find duplicates, one insert, one to see which rows were inserted.
    ``fan_out=False``: the caller offers the returned alerts to the webhooks itself
    (``webhooks.services.fan_out.alerts_fan_out``, same transaction) once the state their payloads
    describe is written (DECISIONS §6: counts after the analysis that raised them).
    """
    unique = list(dict.fromkeys(candidates))
    if not unique:
        return []
    # No savepoint when nested (two round trips per call saved): nothing here is expected to fail
    # half-way, and the caller's transaction is the unit that commits or rolls back.
    with transaction.atomic(savepoint=False):
        existing = set(
            Alert.objects.filter(
                endpoint_id__in={c.endpoint_id for c in unique},
                type__in={c.type for c in unique},
                status__in=ACTIVE_STATUSES,
            ).values_list("endpoint_id", "type", "description")
        )
        new = [
            Alert(
                endpoint_id=c.endpoint_id,
                type=c.type,
                description=c.description,
                dedup_key=alert_dedup_key(c.type, c.description),
                context=c.context,
                risk_score=c.risk_score or ALERT_RISK[AlertType(c.type)],
            )
            for c in unique
            if (c.endpoint_id, c.type, c.description) not in existing
        ]
        if not new:
            return []
        Alert.objects.bulk_create(new, ignore_conflicts=True)
        inserted = set(Alert.objects.filter(uuid__in=[a.uuid for a in new]).values_list("uuid", flat=True))
        created = [a for a in new if a.uuid in inserted]
        if created and fan_out:
            from webhooks.services.fan_out import alerts_fan_out

            alerts_fan_out(alerts=created)
        if created:
            logger.info("raised %d alert(s)", len(created))
    return created


def alert_raise(*, endpoint_id, type: str, description: str, context: dict | None = None) -> Alert | None:
    """Raise one alert (see :func:`alerts_raise`); ``None`` when it is a duplicate."""
    created = alerts_raise([AlertCandidate(endpoint_id, type, description, context or {})])
    return created[0] if created else None


# --- reading -------------------------------------------------------------------------------

_RISK_ORDER = Case(
    *(When(risk_score=risk, then=Value(rank)) for risk, rank in
      ((RiskScore.HIGH, 0), (RiskScore.MEDIUM, 1), (RiskScore.LOW, 2), (RiskScore.NONE, 3))),
    default=Value(4),
    output_field=IntegerField(),
)
_OPEN_FIRST = Case(When(status=AlertStatus.OPEN, then=Value(0)), default=Value(1), output_field=IntegerField())


def alerts_query(
    *,
    types: list[str] | None = None,
    risk_scores: list[str] | None = None,
    statuses: list[str] | None = None,
    hosts: list[str] | None = None,
    endpoint_id=None,
) -> QuerySet[Alert]:
    """Alerts matching every given filter (each list: any of its values), in the list order:
    Open first, then risk HIGH→NONE, then newest, then uuid."""
    qs = Alert.objects.select_related("endpoint__host")
    if types:
        qs = qs.filter(type__in=types)
    if risk_scores:
        qs = qs.filter(risk_score__in=risk_scores)
    if statuses:
        qs = qs.filter(status__in=statuses)
    if hosts:
        qs = qs.filter(endpoint__host__name__in=hosts)
    if endpoint_id is not None:
        qs = qs.filter(endpoint_id=endpoint_id)
    return qs.order_by(_OPEN_FIRST, _RISK_ORDER, "-created_at", "uuid")


def _alert_key(alert_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(alert_id))
    except ValueError:
        raise AlertNotFound() from None


def alert_get(*, alert_id) -> Alert:
    """One alert with its endpoint and host; raises :class:`AlertNotFound` for unknown or malformed ids."""
    alert = Alert.objects.select_related("endpoint__host").filter(uuid=_alert_key(alert_id)).first()
    if alert is None:
        raise AlertNotFound()
    return alert


# --- status changes ------------------------------------------------------------------------

class UpdateType:
    RESOLVE = "resolve"
    UNRESOLVE = "unresolve"
    IGNORE = "ignore"
    UNIGNORE = "unignore"
    ALL = (RESOLVE, UNRESOLVE, IGNORE, UNIGNORE)


# (update type, current status) -> new status; anything missing is illegal.
_TRANSITIONS = {
    (UpdateType.RESOLVE, AlertStatus.OPEN): AlertStatus.RESOLVED,
    (UpdateType.IGNORE, AlertStatus.OPEN): AlertStatus.IGNORED,
    (UpdateType.UNIGNORE, AlertStatus.IGNORED): AlertStatus.OPEN,
    (UpdateType.UNRESOLVE, AlertStatus.RESOLVED): AlertStatus.OPEN,
}
_ILLEGAL = {
    (UpdateType.RESOLVE, AlertStatus.RESOLVED): "Alert is already resolved.",
    (UpdateType.RESOLVE, AlertStatus.IGNORED): "Alert is ignored; unignore it before resolving it.",
    (UpdateType.IGNORE, AlertStatus.IGNORED): "Alert is already ignored.",
    (UpdateType.IGNORE, AlertStatus.RESOLVED): "Alert is resolved; unresolve it before ignoring it.",
    (UpdateType.UNRESOLVE, AlertStatus.OPEN): "Alert is not resolved.",
    (UpdateType.UNRESOLVE, AlertStatus.IGNORED): "Alert is not resolved.",
    (UpdateType.UNIGNORE, AlertStatus.OPEN): "Alert is not ignored.",
    (UpdateType.UNIGNORE, AlertStatus.RESOLVED): "Alert is not ignored.",
}


def alert_update(*, alert_id, update_type: str, resolution_message: str | None = None) -> Alert:
    """Apply one status change (DECISIONS §6): Open → Resolved | Ignored, Ignored → Open, Resolved → Open.

    ``resolution_message`` is stored on resolve and ignore and cleared when the alert reopens.
    Raises :class:`AlertNotFound`, or :class:`ConflictError` (409) for an illegal transition or when
    reopening a resolved alert would duplicate an Open or Ignored one. Nothing changes on error.
    """
    with transaction.atomic():
        # Lock the row: two concurrent changes must not both pass the transition check.
        alert = (
            Alert.objects.select_for_update(of=("self",))
            .select_related("endpoint__host")
            .filter(uuid=_alert_key(alert_id))
            .first()
        )
        if alert is None:
            raise AlertNotFound()
        new_status = _TRANSITIONS.get((update_type, alert.status))
        if new_status is None:
            raise ConflictError(_ILLEGAL[(update_type, alert.status)])
        alert.status = new_status
        if new_status == AlertStatus.OPEN:
            alert.resolution_message = None
        elif resolution_message is not None:
            alert.resolution_message = resolution_message
        try:
            with transaction.atomic():
                alert.save(update_fields=["status", "resolution_message", "updated_at"])
        except IntegrityError:
            raise ConflictError("An open or ignored alert with the same endpoint, type and description exists.") from None
    return alert


def alerts_bulk_update(*, alert_ids: Iterable, update_type: str) -> tuple[int, int]:
    """Apply one status change to many alerts (the admin's bulk actions); returns (changed, skipped).
    Alerts for which the change is illegal are skipped, not failed."""
    changed = skipped = 0
    for alert_id in alert_ids:
        try:
            alert_update(alert_id=alert_id, update_type=update_type)
            changed += 1
        except (ConflictError, AlertNotFound):
            skipped += 1
    return changed, skipped
