"""Fixtures shared by the whole suite: real PostgreSQL (pytest-django), API keys, outbound connections.

The SQLite job (``make test-sqlite``, ``config.settings.test_sqlite``) runs part of the suite on
``make run``'s SQLite file and filesystem broker; tests marked ``not_on_sqlite("why")`` are skipped
there, with that reason.
"""
import socket

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from core.models import ApiKey


@pytest.fixture
def api_key(db) -> str:
    """A raw, active API key."""
    _, raw = ApiKey.issue(name="tests")
    return raw


@pytest.fixture
def client(api_key) -> APIClient:
    """An API client that sends the key the way agents do: the raw key, no scheme word."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=api_key)
    return api


@pytest.fixture
def connections(monkeypatch):
    """Addresses the process tries to open a TCP connection to (Python sockets)."""
    attempts: list = []
    real_connect = socket.socket.connect

    def connect(sock, address):
        attempts.append(address[0])
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    return attempts


@pytest.fixture
def anon_client() -> APIClient:
    return APIClient()


@pytest.fixture
def scoped_client(db):
    """``scoped_client(scope)``: an API client holding a fresh key of that scope (``core.models.Scope``)."""

    def make(scope: str) -> APIClient:
        _, raw = ApiKey.issue(name=f"{scope} key", scope=scope)
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=raw)
        return api

    return make


def seed_builtin_data_classes() -> None:
    """(Re)create the 14 built-in data classes exactly as their data migrations do."""
    import importlib

    from django.apps import apps

    for migration in ("0002_seed_builtin_classes", "0003_seed_password_class"):
        importlib.import_module(f"classification.migrations.{migration}").seed(apps, None)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database, with the migration-seeded data classes present.

    Transactional tests end with a flush that also empties migration-seeded
    tables; with ``--reuse-db`` the next session would start without them.
    """
    with django_db_blocker.unblock():
        seed_builtin_data_classes()


def _is_transactional(request) -> bool:
    marker = request.node.get_closest_marker("django_db")
    if marker and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])):
        return True
    return bool({"transactional_db", "live_server"} & set(request.fixturenames))


@pytest.fixture(autouse=True)
def _builtin_data_classes_after_flush(request):
    """Transactional tests start after another one's flush: put the seeded data classes back first."""
    if _is_transactional(request):
        request.getfixturevalue("transactional_db")
        seed_builtin_data_classes()


def pytest_collection_modifyitems(config, items):
    """On the SQLite job, skip the tests marked ``not_on_sqlite`` with the reason they give."""
    if not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        return
    for item in items:
        marker = item.get_closest_marker("not_on_sqlite")
        if marker is None:
            continue
        if not marker.args:
            raise pytest.UsageError(f"{item.nodeid}: not_on_sqlite needs a reason")
        item.add_marker(pytest.mark.skip(reason=f"not on SQLite: {marker.args[0]}"))
