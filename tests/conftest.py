"""Fixtures shared by the whole suite: real PostgreSQL (pytest-django) and API keys."""
import pytest
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
def anon_client() -> APIClient:
    return APIClient()


def seed_builtin_data_classes() -> None:
    """(Re)create the 13 built-in data classes exactly as their data migration does."""
    import importlib

    from django.apps import apps

    seed = importlib.import_module("classification.migrations.0002_seed_builtin_classes").seed
    seed(apps, None)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database, with the migration-seeded data classes present.

    Transactional tests end with a flush that also empties migration-seeded
    tables; with ``--reuse-db`` the next session would start without them.
    """
    with django_db_blocker.unblock():
        seed_builtin_data_classes()
