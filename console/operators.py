"""The read-only operators' group: every model's "view" permission and nothing else, so its members
see the whole console and change nothing (Django's admin honours view-only permissions; the
console's own actions check change permissions). Kept in sync after every ``migrate``.

Secrets are masked for everyone who cannot change them: API keys show only their prefix, identities
and the testing environment's token are stored encrypted and never shown (testgen), and the console
shows a read-only operator no secret in trace headers either (they are redacted at ingestion)."""
from __future__ import annotations

from django.contrib.auth.models import Group, Permission

OPERATORS_GROUP = "Operators (read-only)"


def operators_group_sync(app_config=None, **kwargs) -> Group | None:
    from django.apps import apps

    if app_config is not None and app_config is not list(apps.get_app_configs())[-1]:
        return None
    group, _ = Group.objects.get_or_create(name=OPERATORS_GROUP)
    group.permissions.set(Permission.objects.filter(codename__startswith="view_"))
    return group
