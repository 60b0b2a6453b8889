"""Webhook services, one module per seam (DECISIONS §7); callers import the module they need.

* :mod:`.management` — create, read, change and delete webhooks;
* :mod:`.payload` — the SPEC's alert payload, snapshotted when an alert fires;
* :mod:`.fan_out` — one PENDING delivery per matching webhook, in the alert's transaction, and the
  publishing of send tasks (after commit) on the webhook queue;
* :mod:`.attempt` — THE delivery attempt: claim, POST, record, and an outcome per delivery that
  says what happened (delivered, retry after a delay, given up, not due yet, nothing to do, gone).
  It never enqueues anything: the tasks (``webhooks.tasks``) decide about running again;
* :mod:`.sweep` — the safety net (lost messages, dead workers) and pruning of history.

Every number (timeouts, delays, limits, leases) lives in ``webhooks.policy``.
"""
