"""Cached list totals (inventory.counts) and the three ways GET /endpoints finds a page.

Counts of a test-sized inventory are fast, so the cache never keeps them unless a test
lowers INVENTORY_COUNT_CACHE_MIN_MS to 0, as these tests do.
"""
import datetime as dt

import pytest
from django.test import override_settings
from django.utils import timezone

from core.enums import RISK_RANK
from inventory.api import services
from inventory.counts import inventory_changed
from inventory.models import Endpoint, Host
from tests.factories import EndpointFactory, HostFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/endpoints"


def total(client, params=None) -> int:
    response = client.get(URL, params or {})
    assert response.status_code == 200, response.content
    return int(response["X-Total-Count"])


@pytest.fixture
def cache_every_count():
    with override_settings(INVENTORY_COUNT_CACHE_MIN_MS=0, INVENTORY_COUNT_CACHE_SECONDS=30):
        inventory_changed()
        yield
    inventory_changed()


class TestCachedTotals:
    def test_a_saved_endpoint_invalidates_the_cached_total(self, client, cache_every_count):
        EndpointFactory()
        assert total(client) == 1
        EndpointFactory()  # a model save bumps the inventory version
        assert total(client) == 2

    def test_a_write_that_does_not_say_so_is_seen_once_the_inventory_changes(self, client, cache_every_count):
        host = HostFactory()
        EndpointFactory(host=host)
        assert total(client) == 1
        # bulk_create sends no signal: the cached total stays until a writer calls inventory_changed()
        Endpoint.objects.bulk_create([EndpointFactory.build(host=host)])
        assert total(client) == 1
        inventory_changed()
        assert total(client) == 2

    def test_deleting_through_the_api_is_seen_at_once(self, client, cache_every_count):
        doomed = EndpointFactory()
        EndpointFactory()
        assert total(client) == 2
        response = client.delete(URL, {"uuids": [str(doomed.uuid)]}, format="json")
        assert response.status_code == 200 and response.json() == "Success"
        assert total(client) == 1
        assert Endpoint.objects.count() == 1

    def test_each_filter_has_its_own_total(self, client, cache_every_count):
        EndpointFactory(method="GET")
        EndpointFactory(method="POST")
        assert total(client, {"methods": "POST"}) == 1
        assert total(client, {"methods": "GET"}) == 1
        assert total(client) == 2

    def test_hosts_counts_follow_the_inventory(self, client, cache_every_count):
        host = HostFactory(name="a.example.com")
        EndpointFactory(host=host)
        assert client.get("/api/v1/hosts").json() == [{"host": "a.example.com", "numEndpoints": 1, "isPublic": True}]
        EndpointFactory(host=host)
        assert client.get("/api/v1/hosts").json()[0]["numEndpoints"] == 2
        response = client.delete("/api/v1/hosts", {"hosts": ["a.example.com"]}, format="json")
        assert response.status_code == 200
        assert client.get("/api/v1/hosts").json() == []
        assert not Host.objects.filter(name="a.example.com").exists()

    def test_no_cache_when_turned_off(self, client):
        with override_settings(INVENTORY_COUNT_CACHE_MIN_MS=0, INVENTORY_COUNT_CACHE_SECONDS=0):
            host = HostFactory()
            EndpointFactory(host=host)
            assert total(client) == 1
            Endpoint.objects.bulk_create([EndpointFactory.build(host=host)])
            assert total(client) == 2


def mixed_inventory(n: int = 67) -> list[str]:
    """Endpoints over every risk, with ties and null lastActive; their uuids in the list order."""
    now = timezone.now()
    hosts = [HostFactory(), HostFactory(is_public_detected=False)]
    for i in range(n):
        risk = ["NONE", "LOW", "MEDIUM", "HIGH"][i % 4]
        last = None if i % 5 == 0 else now - dt.timedelta(seconds=(i % 3) * 10)  # ties on purpose
        EndpointFactory(host=hosts[i % 2], risk_score=risk, risk_rank=RISK_RANK[risk], last_active=last,
                        method=["GET", "POST", "PUT"][i % 3])
    return [str(u) for u in Endpoint.objects.order_by(*services.ENDPOINT_ORDER).values_list("uuid", flat=True)]


class TestPagingPaths:
    """Whichever way a page is found, it is the same slice of DECISIONS §4's order."""

    @pytest.mark.parametrize("small, deep", [(0, 10**9), (10**9, 10**9), (0, 5)])
    def test_every_page_is_the_slice_of_the_order(self, client, monkeypatch, small, deep):
        expected = mixed_inventory()
        monkeypatch.setattr(services, "SMALL_RESULT", small)
        monkeypatch.setattr(services, "DEEP_OFFSET", deep)
        for offset in (0, 3, 7, 16, 20, 30, 35, 50, 60, 66, 67, 80):
            response = client.get(URL, {"offset": offset, "limit": 7})
            assert response.status_code == 200
            assert [e["uuid"] for e in response.json()] == expected[offset:offset + 7], offset
            assert response["X-Total-Count"] == str(len(expected))

    @pytest.mark.parametrize("small, deep", [(0, 10**9), (10**9, 10**9), (0, 3)])
    def test_filtered_pages_too(self, client, monkeypatch, small, deep):
        mixed_inventory()
        expected = [str(u) for u in Endpoint.objects.filter(method="POST", host__is_public=True)
                    .order_by(*services.ENDPOINT_ORDER).values_list("uuid", flat=True)]
        assert len(expected) > 10
        monkeypatch.setattr(services, "SMALL_RESULT", small)
        monkeypatch.setattr(services, "DEEP_OFFSET", deep)
        for offset in (0, 4, 9, len(expected) - 2):
            response = client.get(URL, {"offset": offset, "limit": 5, "methods": "POST", "hostType": "EXTERNAL"})
            assert [e["uuid"] for e in response.json()] == expected[offset:offset + 5], offset
            assert response["X-Total-Count"] == str(len(expected))
