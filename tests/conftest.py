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
