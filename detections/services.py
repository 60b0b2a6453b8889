"""Raising alerts: the single entry point every alert rule goes through."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction

from core.enums import AlertStatus, AlertType, RiskScore

from .models import Alert

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


def alerts_raise(candidates: Iterable[AlertCandidate]) -> list[Alert]:
    """Create the candidates that are not duplicates; offer each new alert to the webhooks.

    A candidate is a duplicate when an Open or Ignored alert with the same endpoint,
    type and description exists, or an earlier candidate of the same call is equal.
    Runs in the caller's transaction (or its own): alerts and their pending webhook
    deliveries commit together. One query to find duplicates, one bulk insert.
    """
    unique = list(dict.fromkeys(candidates))
    if not unique:
        return []
    with transaction.atomic():
        existing = set(
            Alert.objects.filter(
                endpoint_id__in={c.endpoint_id for c in unique},
                type__in={c.type for c in unique},
                status__in=[AlertStatus.OPEN, AlertStatus.IGNORED],
            ).values_list("endpoint_id", "type", "description")
        )
        new = [
            Alert(
                endpoint_id=c.endpoint_id,
                type=c.type,
                description=c.description,
                context=c.context,
                risk_score=c.risk_score or ALERT_RISK[AlertType(c.type)],
            )
            for c in unique
            if (c.endpoint_id, c.type, c.description) not in existing
        ]
        created = Alert.objects.bulk_create(new)
        if created:
            from webhooks.services import alerts_fan_out

            alerts_fan_out(alerts=created)
    return created


def alert_raise(*, endpoint_id, type: str, description: str, context: dict | None = None) -> Alert | None:
    """Raise one alert (see :func:`alerts_raise`); ``None`` when it is a duplicate."""
    created = alerts_raise([AlertCandidate(endpoint_id, type, description, context or {})])
    return created[0] if created else None
