"""The console's tests: seeded demo data (``manage.py seed_demo``), a superuser's and a read-only
operator's browser sessions (Django test client), an API client to compare figures with."""
from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from console.operators import OPERATORS_GROUP, operators_group_sync

DEMO_TRACES = 300


def seed_demo(traces: int = DEMO_TRACES) -> None:
    call_command("seed_demo", "--traces", str(traces), "--no-progress", stdout=StringIO())


@pytest.fixture(autouse=True)
def exact_figures(settings):
    """Every test sees figures computed now (the dashboard's cache is tested on its own)."""
    settings.INVENTORY_COUNT_CACHE_SECONDS = 0


@pytest.fixture
def demo(db) -> None:
    seed_demo()


@pytest.fixture
def admin_browser(db) -> Client:
    browser = Client()
    browser.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return browser


@pytest.fixture
def operator_browser(db) -> Client:
    """A staff member of the read-only operators' group only (view permissions)."""
    group = operators_group_sync()
    assert group.name == OPERATORS_GROUP
    user = User.objects.create_user("viewer", "viewer@example.com", "pw", is_staff=True)
    user.groups.add(group)
    browser = Client()
    browser.force_login(user)
    return browser


def total(api, path: str, **params) -> int:
    """``X-Total-Count`` of a list route of the API."""
    response = api.get(path, params)
    assert response.status_code == 200, response.content
    return int(response["X-Total-Count"])
