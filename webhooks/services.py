"""Webhook delivery (completed by the webhooks issue)."""
from __future__ import annotations


def alerts_fan_out(*, alerts: list) -> list:
    """Create one pending delivery per matching webhook for each alert; send after commit.

    Not built yet: webhooks arrive with the alerts/webhooks issue.
    """
    return []
