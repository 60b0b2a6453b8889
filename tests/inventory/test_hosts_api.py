"""GET/DELETE /api/v1/hosts and GET /api/v1/hosts-graph."""
import pytest

from classification.models import DataField
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, Host, HostAddress
from tests.factories import AlertFactory, DataFieldFactory, HostFactory
from tests.inventory.factories import (
    ApiTraceFactory,
    EndpointCallerFactory,
    HostAddressFactory,
    PatternEndpointFactory,
)

pytestmark = pytest.mark.django_db

URL = "/api/v1/hosts"


def host_with(name, n, public=True, **kwargs):
    host = HostFactory(name=name, is_public_detected=public, **kwargs)
    for i in range(n):
        PatternEndpointFactory(host=host, path=f"/r{i}")
    return host


def names(response):
    assert response.status_code == 200, response.content
    return [h["host"] for h in response.json()]


class TestList:
    def test_host_objects_and_defaults_sorted_by_endpoint_count_desc_ties_by_name(self, client):
        for i in range(12):
            host_with(f"h{i:02d}.example.com", 1)
        host_with("big.example.com", 3)
        host_with("mid.internal", 2, public=False)
        HostFactory(name="empty.example.com")  # no endpoints: not listed
        response = client.get(URL)
        body = response.json()
        assert response["X-Total-Count"] == "14"
        assert len(body) == 10
        assert body[0] == {"host": "big.example.com", "numEndpoints": 3, "isPublic": True}
        assert body[1] == {"host": "mid.internal", "numEndpoints": 2, "isPublic": False}
        assert [h["host"] for h in body[2:]] == [f"h{i:02d}.example.com" for i in range(8)]

    def test_ascending_order_and_offset(self, client):
        host_with("a.example.com", 2)
        host_with("b.example.com", 1)
        host_with("c.example.com", 3)
        assert names(client.get(URL, {"sortOrder": "ASC"})) == ["b.example.com", "a.example.com", "c.example.com"]
        assert names(client.get(URL, {"sortOrder": "ASC", "offset": 1, "limit": 1})) == ["a.example.com"]

    def test_sort_by_name(self, client):
        for name in ("b.example.com", "a.example.com", "c.example.com"):
            host_with(name, 1)
        assert names(client.get(URL, {"sortBy": "NAME", "sortOrder": "ASC"})) == [
            "a.example.com", "b.example.com", "c.example.com"]
        assert names(client.get(URL, {"sortBy": "NAME"})) == ["c.example.com", "b.example.com", "a.example.com"]

    def test_search_is_a_substring_of_the_name(self, client):
        host_with("payments.example.com", 1)
        host_with("PAY.internal", 1)
        host_with("orders.example.com", 1)
        assert sorted(names(client.get(URL, {"searchQuery": "pay"}))) == ["PAY.internal", "payments.example.com"]
        assert names(client.get(URL, {"searchQuery": "pay%"})) == []

    def test_host_type_uses_the_effective_public_flag(self, client):
        host_with("api.example.com", 1, public=True)
        host_with("db.internal", 1, public=False)
        host_with("forced.example.com", 1, public=True, public_override=False)
        assert names(client.get(URL, {"hostType": "EXTERNAL"})) == ["api.example.com"]
        assert sorted(names(client.get(URL, {"hostType": "INTERNAL"}))) == ["db.internal", "forced.example.com"]

    def test_search_host_type_sort_and_paging_combine(self, client):
        host_with("pay-a.example.com", 1)
        host_with("pay-b.example.com", 3)
        host_with("pay-c.example.com", 2)
        host_with("pay.internal", 5, public=False)
        host_with("orders.example.com", 4)
        response = client.get(URL, {"searchQuery": "PAY", "hostType": "EXTERNAL", "sortBy": "NUM_ENDPOINTS",
                                    "sortOrder": "DESC", "offset": 1, "limit": 1})
        assert names(response) == ["pay-c.example.com"] and response["X-Total-Count"] == "3"

    @pytest.mark.parametrize("params, path", [
        ({"sortBy": "SIZE"}, ["sortBy"]), ({"sortOrder": "UP"}, ["sortOrder"]), ({"hostType": "X"}, ["hostType"]),
        ({"limit": 501}, ["limit"]), ({"offset": -2}, ["offset"]),
    ])
    def test_bad_query_is_a_zod_400(self, client, params, path):
        response = client.get(URL, params)
        assert response.status_code == 400 and response.json()["err"]["issues"][0]["path"] == path

    def test_a_page_is_a_constant_number_of_queries(self, client, django_assert_num_queries):
        for i in range(30):
            host_with(f"h{i}.example.com", 2)
        with django_assert_num_queries(3):
            assert len(client.get(URL, {"limit": 5}).json()) == 5
        with django_assert_num_queries(3):
            assert len(client.get(URL, {"limit": 30, "searchQuery": "example"}).json()) == 30

    def test_needs_the_api_key(self, anon_client):
        assert anon_client.get(URL).status_code == 401
        assert anon_client.delete(URL, {"hosts": ["x"]}, format="json").status_code == 401


class TestDelete:
    def test_deletes_the_hosts_with_everything_under_them(self, client):
        doomed = host_with("doomed.example.com", 2)
        e = doomed.endpoints.first()
        DataFieldFactory(endpoint=e)
        AlertFactory(endpoint=e)
        ApiTraceFactory(endpoint=e)
        HostAddressFactory(host=doomed)
        kept = host_with("kept.example.com", 1)
        DataFieldFactory(endpoint=kept.endpoints.first())
        response = client.delete(URL, {"hosts": ["doomed.example.com", "unknown.example.com"]}, format="json")
        assert response.status_code == 200 and response.json() == "Success"
        assert list(Host.objects.values_list("name", flat=True)) == ["kept.example.com"]
        assert Endpoint.objects.count() == 1 and DataField.objects.count() == 1
        assert Alert.objects.count() == 0 and ApiTrace.objects.count() == 0 and HostAddress.objects.count() == 0
        assert names(client.get(URL)) == ["kept.example.com"]

    @pytest.mark.parametrize("body", [{}, {"hosts": []}, {"hosts": "a.example.com"}, {"hosts": [3]}])
    def test_bad_body_is_a_zod_400_and_deletes_nothing(self, client, body):
        host_with("a.example.com", 1)
        response = client.delete(URL, body, format="json")
        assert response.status_code == 400 and response.json()["type"] == "ZOD"
        assert Host.objects.count() == 1 and Endpoint.objects.count() == 1


class TestGraph:
    def test_edges_come_from_callers_served_addresses(self, client):
        frontend = host_with("web.example.com", 1)
        api = host_with("api.internal", 3, public=False)
        db = host_with("db.internal", 1, public=False)
        HostAddressFactory(host=frontend, address="10.0.0.10")
        HostAddressFactory(host=api, address="10.0.0.20")
        HostAddressFactory(host=db, address="10.0.0.30")
        api_endpoints = list(api.endpoints.all())
        # web (10.0.0.10) calls two api endpoints; api (10.0.0.20) calls db; an unknown address calls api
        EndpointCallerFactory(endpoint=api_endpoints[0], address="10.0.0.10")
        EndpointCallerFactory(endpoint=api_endpoints[1], address="10.0.0.10")
        EndpointCallerFactory(endpoint=db.endpoints.first(), address="10.0.0.20")
        EndpointCallerFactory(endpoint=api_endpoints[2], address="192.0.2.1")
        # a host calling itself is not an edge
        EndpointCallerFactory(endpoint=api_endpoints[2], address="10.0.0.20")

        response = client.get("/api/v1/hosts-graph")
        assert response.status_code == 200
        assert response.json() == {
            "hosts": {
                "api.internal": {"numEndpoints": 3, "isPublic": False},
                "db.internal": {"numEndpoints": 1, "isPublic": False},
                "web.example.com": {"numEndpoints": 1, "isPublic": True},
            },
            "edges": [
                {"srcHost": "api.internal", "dstHost": "db.internal", "numEndpoints": 1},
                {"srcHost": "web.example.com", "dstHost": "api.internal", "numEndpoints": 2},
            ],
        }

    def test_hosts_without_endpoints_are_left_out_with_their_edges(self, client):
        gone = HostFactory(name="gone.example.com")
        HostAddressFactory(host=gone, address="10.9.9.9")
        api = host_with("api.example.com", 1)
        EndpointCallerFactory(endpoint=api.endpoints.first(), address="10.9.9.9")
        assert client.get("/api/v1/hosts-graph").json() == {
            "hosts": {"api.example.com": {"numEndpoints": 1, "isPublic": True}}, "edges": []}

    def test_empty_inventory_is_an_empty_graph(self, client):
        assert client.get("/api/v1/hosts-graph").json() == {"hosts": {}, "edges": []}

    def test_graph_is_two_queries_whatever_its_size(self, client, django_assert_num_queries):
        for i in range(10):
            h = host_with(f"h{i}.example.com", 2)
            HostAddressFactory(host=h, address=f"10.3.0.{i}")
            EndpointCallerFactory(endpoint=h.endpoints.first(), address=f"10.3.0.{(i + 1) % 10}")
        with django_assert_num_queries(3):  # key + hosts + edges
            body = client.get("/api/v1/hosts-graph").json()
        assert len(body["hosts"]) == 10 and len(body["edges"]) == 10
