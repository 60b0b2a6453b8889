"""Webhook management: list, read, create, change and delete webhooks (SPEC "Webhooks" routes).

Contract: ids that are unknown or not UUIDs raise :class:`core.errors.WebhookNotFound`; input is
validated by the serializers before it gets here (including the SSRF check of ``url``); deleting a
webhook deletes its pending deliveries and its history.
"""
from __future__ import annotations

import logging
import uuid

from django.db import transaction
from django.db.models import Prefetch

from core.errors import WebhookNotFound

from ..models import Webhook, WebhookRun

logger = logging.getLogger(__name__)


def _runs_prefetch() -> Prefetch:
    return Prefetch("runs", queryset=WebhookRun.objects.order_by("-created_at", "-id"))


def webhooks_list() -> list[Webhook]:
    """Every webhook, newest first, with its runs (two queries)."""
    return list(Webhook.objects.order_by("-created_at", "uuid").prefetch_related(_runs_prefetch()))


def _webhook_key(webhook_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(webhook_id))
    except ValueError:
        raise WebhookNotFound() from None


def webhook_get(*, webhook_id) -> Webhook:
    """One webhook with its runs; raises :class:`WebhookNotFound` for unknown or malformed ids."""
    hook = Webhook.objects.prefetch_related(_runs_prefetch()).filter(uuid=_webhook_key(webhook_id)).first()
    if hook is None:
        raise WebhookNotFound()
    return hook


def webhook_create(*, url: str, alert_types: list[str], hosts: list[str], max_retries: int) -> Webhook:
    """Create a webhook from validated input (the serializer has run the SSRF check on ``url``)."""
    hook = Webhook(url=url, alert_types=list(dict.fromkeys(alert_types)), hosts=list(dict.fromkeys(hosts)),
                   max_retries=max_retries)
    hook.full_clean()
    hook.save()
    logger.info("webhook %s created", hook.uuid)
    return webhook_get(webhook_id=hook.uuid)


def webhook_update(*, webhook_id, **changes) -> Webhook:
    """Change any of ``url``, ``alert_types``, ``hosts``, ``max_retries`` (validated input).
    Deliveries already pending go to the new URL with the new retry limit."""
    with transaction.atomic():
        hook = Webhook.objects.select_for_update().filter(uuid=_webhook_key(webhook_id)).first()
        if hook is None:
            raise WebhookNotFound()
        for name in ("url", "max_retries"):
            if name in changes:
                setattr(hook, name, changes[name])
        for name in ("alert_types", "hosts"):
            if name in changes:
                setattr(hook, name, list(dict.fromkeys(changes[name])))
        hook.full_clean()
        hook.save()
    return webhook_get(webhook_id=hook.uuid)


def webhook_delete(*, webhook_id) -> None:
    """Delete a webhook with its pending deliveries and history; raises :class:`WebhookNotFound`."""
    deleted, _ = Webhook.objects.filter(uuid=_webhook_key(webhook_id)).delete()
    if not deleted:
        raise WebhookNotFound()
    logger.info("webhook %s deleted", webhook_id)
