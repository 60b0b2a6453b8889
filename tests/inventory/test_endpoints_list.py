"""GET /api/v1/endpoints: SPEC's ten query parameters, DECISIONS §4's order, paging and X-Total-Count."""
import datetime as dt
import re

import pytest
from django.utils import timezone

from core.enums import RISK_RANK
from inventory.models import Endpoint
from tests.factories import DataFieldFactory, HostFactory
from tests.inventory.factories import PatternEndpointFactory

pytestmark = pytest.mark.django_db

URL = "/api/v1/endpoints"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def endpoint(risk="NONE", **kwargs):
    return PatternEndpointFactory(risk_score=risk, risk_rank=RISK_RANK[risk], **kwargs)


def uuids(response):
    assert response.status_code == 200, response.content
    return [item["uuid"] for item in response.json()]


def zod(response):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["type"] == "ZOD" and body["message"] == "Invalid parameters"
    return body["err"]["issues"]


class TestShapeAndDefaults:
    def test_list_item_has_every_spec_field_in_wire_format(self, client):
        host = HostFactory(name="shop.example.com")
        e = endpoint("HIGH", host=host, path="/orders/{param1}", method="POST", data_classes=["email", "ssn"],
                     resource_permissions=["orders:read"], owner="team-a", openapi_spec_name="shop.yaml",
                     is_authenticated_detected=True, is_graphql=False)
        [item] = client.get(URL).json()
        assert set(item) == {
            "uuid", "path", "host", "method", "riskScore", "dataClasses", "resourcePermissions", "firstDetected",
            "lastActive", "isAuthenticatedDetected", "isAuthenticatedUserSet", "fullTraceCaptureEnabled",
            "isGraphQl", "openapiSpecName", "owner", "createdAt", "updatedAt",
        }
        assert item["uuid"] == str(e.uuid)
        assert item["host"] == "shop.example.com"
        assert (item["path"], item["method"], item["riskScore"]) == ("/orders/{param1}", "POST", "HIGH")
        assert item["dataClasses"] == ["email", "ssn"]
        assert item["resourcePermissions"] == ["orders:read"]
        assert (item["owner"], item["openapiSpecName"]) == ("team-a", "shop.yaml")
        assert item["isAuthenticatedDetected"] is True and item["isAuthenticatedUserSet"] is None
        assert item["fullTraceCaptureEnabled"] is False and item["isGraphQl"] is False
        for key in ("firstDetected", "lastActive", "createdAt", "updatedAt"):
            assert TIMESTAMP.match(item[key]), (key, item[key])

    def test_default_limit_is_10_and_offset_0_with_total_header(self, client):
        for _ in range(12):
            endpoint()
        response = client.get(URL)
        assert len(uuids(response)) == 10
        assert response["X-Total-Count"] == "12"
        everything = uuids(client.get(URL, {"limit": 12}))
        assert uuids(client.get(URL, {"offset": 0})) == everything[:10]
        assert uuids(client.get(URL, {"offset": 10})) == everything[10:]

    def test_limit_zero_answers_an_empty_page_and_the_total(self, client):
        endpoint()
        response = client.get(URL, {"limit": 0})
        assert response.json() == [] and response["X-Total-Count"] == "1"

    def test_offset_past_the_end_is_an_empty_page(self, client):
        endpoint()
        response = client.get(URL, {"offset": 5})
        assert response.json() == [] and response["X-Total-Count"] == "1"

    def test_no_endpoints_is_an_empty_list(self, client):
        response = client.get(URL)
        assert response.json() == [] and response["X-Total-Count"] == "0"

    def test_needs_the_api_key(self, anon_client):
        response = anon_client.get(URL)
        assert response.status_code == 401 and response.json() == "Client unauthorized"


class TestOrder:
    def test_risk_high_first_then_newest_activity_nulls_last_then_uuid(self, client):
        now = timezone.now()
        low_recent = endpoint("LOW", last_active=now)
        high_old = endpoint("HIGH", last_active=now - dt.timedelta(days=3))
        high_new = endpoint("HIGH", last_active=now)
        high_never = endpoint("HIGH", last_active=None)
        medium = endpoint("MEDIUM", last_active=now - dt.timedelta(days=30))
        none = endpoint("NONE", last_active=now)
        tie_a, tie_b = sorted([endpoint("LOW", last_active=now - dt.timedelta(hours=1)) for _ in range(2)],
                              key=lambda e: str(e.uuid))
        expected = [high_new, high_old, high_never, medium, low_recent, tie_a, tie_b, none]
        assert uuids(client.get(URL, {"limit": 50})) == [str(e.uuid) for e in expected]


class TestFilters:
    def test_hosts_in_all_three_encodings(self, client):
        a, b, c = (endpoint(host=HostFactory(name=n)) for n in ("a.example.com", "b.example.com", "c.example.com"))
        assert set(uuids(client.get(URL, {"hosts": ["a.example.com", "b.example.com"]}))) == {str(a.uuid), str(b.uuid)}
        assert set(uuids(client.get(f"{URL}?hosts[]=a.example.com&hosts[]=c.example.com"))) == {str(a.uuid), str(c.uuid)}
        assert uuids(client.get(URL, {"hosts": "b.example.com"})) == [str(b.uuid)]
        assert uuids(client.get(URL, {"hosts": "nope.example.com"})) == []

    def test_risk_scores(self, client):
        high, medium, _low = endpoint("HIGH"), endpoint("MEDIUM"), endpoint("LOW")
        assert set(uuids(client.get(URL, {"riskScores": ["HIGH", "MEDIUM"]}))) == {str(high.uuid), str(medium.uuid)}

    def test_methods(self, client):
        get, post, _put = endpoint(method="GET"), endpoint(method="POST"), endpoint(method="PUT")
        assert set(uuids(client.get(URL, {"methods": ["GET", "POST"]}))) == {str(get.uuid), str(post.uuid)}

    def test_data_classes_match_any_listed_class(self, client):
        email = endpoint(data_classes=["email"])
        both = endpoint(data_classes=["ssn", "phone_number"])
        endpoint(data_classes=["ip_address"])
        endpoint(data_classes=[])
        assert set(uuids(client.get(URL, {"dataClasses": ["email", "ssn"]}))) == {str(email.uuid), str(both.uuid)}
        assert uuids(client.get(URL, {"dataClasses": "phone_number"})) == [str(both.uuid)]

    def test_resource_permissions_overlap(self, client):
        reader = endpoint(resource_permissions=["read:orders"])
        admin = endpoint(resource_permissions=["admin", "write:orders"])
        endpoint(resource_permissions=[])
        assert set(uuids(client.get(URL, {"resourcePermissions": ["write:orders", "read:orders"]}))) == {
            str(reader.uuid), str(admin.uuid)}

    def test_search_is_a_case_insensitive_substring_of_path_host_owner_and_spec_name(self, client):
        by_path = endpoint(path="/api/Payments/{param1}")
        by_host = endpoint(host=HostFactory(name="payments.internal"))
        by_owner = endpoint(owner="PAYMENTS team")
        by_spec = endpoint(openapi_spec_name="payments-v2.yaml")
        endpoint(path="/api/orders")
        found = set(uuids(client.get(URL, {"searchQuery": "paYments", "limit": 50})))
        assert found == {str(by_path.uuid), str(by_host.uuid), str(by_owner.uuid), str(by_spec.uuid)}

    def test_search_is_not_a_regex_nor_a_like_pattern(self, client):
        dotted = endpoint(path="/v1.0/items")
        endpoint(path="/v100/items")
        endpoint(path="/v1_0/other")
        assert uuids(client.get(URL, {"searchQuery": "v1.0"})) == [str(dotted.uuid)]
        assert uuids(client.get(URL, {"searchQuery": "%"})) == []
        under = endpoint(path="/snake_case/x")
        assert uuids(client.get(URL, {"searchQuery": "e_c"})) == [str(under.uuid)]
        assert uuids(client.get(URL, {"searchQuery": "(["})) == []

    def test_is_authenticated_tests_the_effective_value(self, client):
        detected = endpoint(is_authenticated_detected=True)
        overridden_off = endpoint(is_authenticated_detected=True, is_authenticated_user_set=False)
        overridden_on = endpoint(is_authenticated_detected=False, is_authenticated_user_set=True)
        plain = endpoint(is_authenticated_detected=False)
        assert set(uuids(client.get(URL, {"isAuthenticated": "true"}))) == {str(detected.uuid), str(overridden_on.uuid)}
        assert set(uuids(client.get(URL, {"isAuthenticated": "false"}))) == {str(overridden_off.uuid), str(plain.uuid)}
        assert len(uuids(client.get(URL))) == 4

    def test_host_type(self, client):
        public = endpoint(host=HostFactory(name="api.example.com", is_public_detected=True))
        private = endpoint(host=HostFactory(name="db.internal", is_public_detected=False))
        forced_private = endpoint(host=HostFactory(name="www.example.org", is_public_detected=True,
                                                   public_override=False))
        assert set(uuids(client.get(URL, {"hostType": "EXTERNAL"}))) == {str(public.uuid)}
        assert set(uuids(client.get(URL, {"hostType": "INTERNAL"}))) == {str(private.uuid), str(forced_private.uuid)}
        assert len(uuids(client.get(URL, {"hostType": "ANY"}))) == 3

    def test_filters_combine_with_and(self, client):
        host = HostFactory(name="api.example.com", is_public_detected=True)
        match = endpoint("HIGH", host=host, method="POST", path="/users/{param1}", data_classes=["ssn"],
                         resource_permissions=["admin"], is_authenticated_detected=False)
        endpoint("HIGH", host=host, method="GET", path="/users/{param1}", data_classes=["ssn"],
                 resource_permissions=["admin"])
        endpoint("LOW", host=host, method="POST", path="/users/x/{param1}", data_classes=["ssn"],
                 resource_permissions=["admin"])
        endpoint("HIGH", host=host, method="POST", path="/users/y/{param1}", data_classes=["email"],
                 resource_permissions=["admin"])
        endpoint("HIGH", host=host, method="POST", path="/accounts/{param1}", data_classes=["ssn"],
                 resource_permissions=["admin"])
        endpoint("HIGH", host=host, method="POST", path="/users/z/{param1}", data_classes=["ssn"],
                 resource_permissions=["admin"], is_authenticated_user_set=True)
        endpoint("HIGH", host=HostFactory(name="api.internal", is_public_detected=False), method="POST",
                 path="/users/{param1}", data_classes=["ssn"], resource_permissions=["admin"])
        response = client.get(URL, {
            "hosts": ["api.example.com", "api.internal"], "riskScores": "HIGH", "methods": ["POST"],
            "dataClasses": ["ssn"], "resourcePermissions": ["admin"], "searchQuery": "users",
            "isAuthenticated": "false", "hostType": "EXTERNAL",
        })
        assert uuids(response) == [str(match.uuid)]
        assert response["X-Total-Count"] == "1"

    def test_data_classes_filter_follows_the_fields_after_a_refresh(self, client):
        from classification.services import endpoints_refresh_risk

        e = endpoint()
        DataFieldFactory(endpoint=e, data_classes=["credit_card"])
        endpoints_refresh_risk(endpoint_ids=[e.uuid])
        assert uuids(client.get(URL, {"dataClasses": "credit_card"})) == [str(e.uuid)]
        assert client.get(URL, {"dataClasses": "credit_card"}).json()[0]["riskScore"] == "HIGH"


class TestValidation:
    @pytest.mark.parametrize("params, path, code", [
        ({"limit": 501}, ["limit"], "too_big"),
        ({"limit": -1}, ["limit"], "too_small"),
        ({"offset": -1}, ["offset"], "too_small"),
        ({"limit": "ten"}, ["limit"], "invalid_type"),
        ({"hostType": "SIDEWAYS"}, ["hostType"], "invalid_enum_value"),
        ({"isAuthenticated": "yes"}, ["isAuthenticated"], "invalid_enum_value"),
        ({"riskScores": ["HIGH", "CRITICAL"]}, ["riskScores", 1], "invalid_enum_value"),
        ({"methods": "FETCH"}, ["methods", 0], "invalid_enum_value"),
    ])
    def test_bad_query_is_a_zod_400(self, client, params, path, code):
        [issue] = zod(client.get(URL, params))
        assert issue["path"] == path and issue["code"] == code

    def test_bad_enum_lists_the_options(self, client):
        [issue] = zod(client.get(URL, {"riskScores": "CRITICAL"}))
        assert issue["options"] == ["NONE", "LOW", "MEDIUM", "HIGH"] and issue["received"] == "CRITICAL"

    def test_limit_500_is_the_maximum_accepted(self, client):
        assert client.get(URL, {"limit": 500}).status_code == 200


class TestQueryCount:
    def test_a_page_is_a_constant_number_of_queries(self, client, django_assert_num_queries):
        host = HostFactory()
        for _ in range(3):
            endpoint(host=host)
        # key lookup + count + page, whatever the page size and filters
        with django_assert_num_queries(3):
            assert len(client.get(URL, {"limit": 3}).json()) == 3
        for _ in range(40):
            endpoint(host=HostFactory())
        # key lookup + hosts matching the search + count; nothing matches: no page query
        with django_assert_num_queries(3):
            assert len(client.get(URL, {"limit": 43, "searchQuery": "items", "isAuthenticated": "false",
                                        "resourcePermissions": "r", "hostType": "EXTERNAL"}).json()) == 0
        Endpoint.objects.update(resource_permissions=["r"], data_classes=["email"])
        # a small filtered result: + the page, sorted by PostgreSQL
        with django_assert_num_queries(4):
            assert len(client.get(URL, {"limit": 43, "searchQuery": "items", "isAuthenticated": "false",
                                        "dataClasses": "email", "hostType": "EXTERNAL"}).json()) == 43
        with django_assert_num_queries(3):
            assert len(client.get(URL, {"limit": 43}).json()) == 43
        assert Endpoint.objects.count() == 43


class TestHostileInput:
    @pytest.mark.parametrize("params", [
        {"searchQuery": "a\x00b"}, {"hosts": "x\x00"}, {"offset": 10**30}, {"limit": 10**30},
        {"dataClasses": "'; DROP TABLE inventory_endpoint; --"}, {"searchQuery": "x" * 256},
        {"offset": "1e3"}, {"riskScores[]": ""},
    ])
    def test_never_a_500(self, client, params):
        endpoint()
        response = client.get(URL, params)
        assert response.status_code in (200, 400), response.content
        assert Endpoint.objects.count() == 1

    @pytest.mark.parametrize("body", [[], "x", None, 5, {"uuids": [None]}, {"uuids": [{"a": 1}]}])
    def test_odd_json_bodies_are_validation_errors(self, client, body):
        endpoint()
        response = client.delete(URL, body, format="json")
        assert response.status_code == 400 and response.json()["type"] == "ZOD"
        assert Endpoint.objects.count() == 1
