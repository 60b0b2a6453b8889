"""GET /gen-test-endpoint and /gen-test-endpoints: selection, explicit types, SPEC's error bodies."""
from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import Endpoint
from testgen.models import TestingEnvironment
from tests.testgen.conftest import SHOP
from tests.testgen.factories import endpoint_from_traffic

pytestmark = pytest.mark.django_db

SINGLE = "/api/v1/gen-test-endpoint"
MANY = "/api/v1/gen-test-endpoints"


def zod_issues(response) -> list[dict]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["type"] == "ZOD" and body["message"] == "Invalid parameters"
    return body["err"]["issues"]


class TestAuthentication:
    @pytest.mark.parametrize("url", [f"{SINGLE}?endpoint=/api/search", f"{MANY}?host={SHOP}"])
    def test_missing_key_is_client_unauthorized(self, anon_client, shop, url):
        response = anon_client.get(url)
        assert response.status_code == 401
        assert response.json() == "Client unauthorized"

    def test_unknown_key_is_client_unauthorized(self, anon_client, shop):
        anon_client.credentials(HTTP_AUTHORIZATION="ask_not-a-real-key")
        response = anon_client.get(f"{SINGLE}?endpoint=/api/search")
        assert response.status_code == 401
        assert response.json() == "Client unauthorized"


class TestSpecErrorBodies:
    @pytest.mark.parametrize("query", ["", "?endpoint=", "?endpoint=%20%20", "?host=shop.test"])
    def test_without_endpoint_is_no_endpoint_specified(self, client, shop, query):
        response = client.get(f"{SINGLE}{query}")
        assert response.status_code == 400
        assert response.json() == "No endpoint specified."

    @pytest.mark.parametrize("query", ["", "?host=", "?type=XSS"])
    def test_gen_test_endpoints_without_host_is_no_endpoint_specified(self, client, shop, query):
        response = client.get(f"{MANY}{query}")
        assert response.status_code == 400
        assert response.json() == "No endpoint specified."

    @pytest.mark.parametrize("query", [
        "endpoint=/api/nothing-here",
        f"endpoint={uuid.uuid4()}",
        "endpoint=/api/search&host=other.test",
        "endpoint=/api/search&method=DELETE",
        "endpoint=/api/users/1/extra",
    ])
    def test_unknown_endpoint_is_could_not_find_endpoint(self, client, shop, query):
        response = client.get(f"{SINGLE}?{query}")
        assert response.status_code == 404
        assert response.json() == {"success": False, "msg": "Could not find endpoint."}

    def test_unknown_type_lists_the_templates(self, client, shop):
        issues = zod_issues(client.get(f"{SINGLE}?endpoint=/api/search&type=CSRF"))
        assert issues[0]["code"] == "invalid_enum_value"
        assert issues[0]["path"] == ["type"]
        # DECISIONS §8's six, then the extensions of issue #15 (docs/testgen.md).
        assert issues[0]["options"] == ["BOLA", "AUTH_BYPASS", "MASS_ASSIGNMENT", "SQL_INJECTION", "XSS",
                                        "RATE_LIMIT", "DATA_EXPOSURE", "USER_ENUMERATION"]

    def test_unknown_version_is_a_validation_error(self, client, shop):
        issues = zod_issues(client.get(f"{SINGLE}?endpoint=/api/search&type=XSS&version=2"))
        assert issues[0]["path"] == ["version"]
        assert "no version 2" in issues[0]["message"]

    def test_version_without_type_is_a_validation_error(self, client, shop):
        issues = zod_issues(client.get(f"{MANY}?host={SHOP}&version=1"))
        assert issues[0]["path"] == ["version"]

    def test_non_numeric_version_is_invalid_type(self, client, shop):
        issues = zod_issues(client.get(f"{SINGLE}?endpoint=/api/search&type=XSS&version=one"))
        assert issues[0]["code"] == "invalid_type"
        assert issues[0]["expected"] == "number"

    @pytest.mark.parametrize("query", ["endpoint=/api/%00x", "endpoint=/api/search&host=a%00b",
                                       "endpoint=" + "x" * 2100])
    def test_unusable_text_is_a_validation_error_not_a_crash(self, client, shop, query):
        assert zod_issues(client.get(f"{SINGLE}?{query}"))

    def test_bad_method_is_invalid_enum_value(self, client, shop):
        issues = zod_issues(client.get(f"{SINGLE}?endpoint=/api/search&method=FETCH"))
        assert issues[0]["code"] == "invalid_enum_value"
        assert issues[0]["path"] == ["method"]


class TestSelection:
    """Without ``type`` the first applicable template in DECISIONS §8 order is used."""

    def _template(self, client, **query) -> dict:
        response = client.get(SINGLE, query)
        assert response.status_code == 200, response.content
        return response.json()

    def test_authenticated_endpoint_with_an_id_gets_bola(self, client, shop):
        body = self._template(client, endpoint="/api/users/{param1}", method="GET")
        assert (body["success"], body["templateName"], body["templateVersion"]) == (True, "BOLA", 1)
        assert "msg" not in body
        assert body["test"]["endpoint"] == "/api/users/{param1}"
        assert body["test"]["method"] == "GET"

    def test_authenticated_endpoint_without_an_id_gets_auth_bypass(self, client, db):
        endpoint_from_traffic(host=SHOP, method="GET", path="/api/me", authenticated=True)
        assert self._template(client, endpoint="/api/me")["templateName"] == "AUTH_BYPASS"

    def test_unauthenticated_json_write_gets_mass_assignment(self, client, shop):
        endpoint_from_traffic(host=SHOP, method="POST", path="/api/newsletter", body={"topic": "news"})
        assert self._template(client, endpoint="/api/newsletter")["templateName"] == "MASS_ASSIGNMENT"

    def test_a_login_gets_no_mass_assignment(self, client, shop):
        # a credential flow assigns nothing: its example names a user that does not exist
        assert self._template(client, endpoint="/api/login")["templateName"] == "SQL_INJECTION"

    def test_unauthenticated_endpoint_with_a_query_gets_sql_injection(self, client, shop):
        assert self._template(client, endpoint="/api/search")["templateName"] == "SQL_INJECTION"

    def test_post_without_inputs_gets_rate_limit(self, client, db):
        endpoint_from_traffic(host=SHOP, method="POST", path="/api/logout")
        assert self._template(client, endpoint="/api/logout")["templateName"] == "RATE_LIMIT"

    def test_credential_path_read_gets_rate_limit(self, client, db):
        endpoint_from_traffic(host=SHOP, method="GET", path="/api/otp")
        assert self._template(client, endpoint="/api/otp")["templateName"] == "RATE_LIMIT"

    def test_endpoint_without_any_applicable_template(self, client, db):
        endpoint_from_traffic(host=SHOP, method="GET", path="/api/health")
        response = client.get(SINGLE, {"endpoint": "/api/health"})
        assert response.status_code == 200
        assert response.json() == {"success": False, "msg": "No suitable test template found"}

    def test_operator_setting_overrides_detected_authentication(self, client, shop):
        Endpoint.objects.filter(uuid=shop["user_read"].uuid).update(is_authenticated_user_set=False)
        body = self._template(client, endpoint="/api/users/{param1}", method="GET")
        assert body["templateName"] == "SQL_INJECTION"


class TestExplicitType:
    @pytest.mark.parametrize(("template", "method", "path"), [
        ("AUTH_BYPASS", "GET", "/api/users/{param1}"),
        ("BOLA", "GET", "/api/users/{param1}"),
        ("MASS_ASSIGNMENT", "PATCH", "/api/users/{param1}"),
        ("SQL_INJECTION", "GET", "/api/search"),
        ("XSS", "POST", "/api/comments"),
        ("RATE_LIMIT", "POST", "/api/login"),
    ])
    def test_named_template_is_used(self, client, shop, template, method, path):
        body = client.get(SINGLE, {"endpoint": path, "method": method, "type": template, "version": 1}).json()
        assert body["success"] is True
        assert body["templateName"] == template
        assert body["test"]["templateName"] == template

    @pytest.mark.parametrize(("template", "path"), [
        ("BOLA", "/api/search"),             # not authenticated
        ("AUTH_BYPASS", "/api/search"),
        ("MASS_ASSIGNMENT", "/api/search"),  # a GET without body
        ("RATE_LIMIT", "/api/search"),       # neither a credential path nor a POST
    ])
    def test_not_applicable_type_is_no_suitable_template(self, client, shop, template, path):
        response = client.get(SINGLE, {"endpoint": path, "type": template})
        assert response.status_code == 200
        assert response.json() == {"success": False, "msg": "No suitable test template found"}

    def test_xss_needs_a_string_input(self, client, db):
        endpoint_from_traffic(host=SHOP, method="GET", path="/api/orders/{param1}", paths=["/api/orders/7"])
        body = client.get(SINGLE, {"endpoint": "/api/orders/{param1}", "type": "XSS"}).json()
        assert body == {"success": False, "msg": "No suitable test template found"}


class TestEndpointLookup:
    def test_by_uuid(self, client, shop):
        body = client.get(SINGLE, {"endpoint": str(shop["user_update"].uuid)}).json()
        assert body["test"]["method"] == "PATCH"
        assert body["test"]["endpointId"] == str(shop["user_update"].uuid)

    def test_method_narrows_a_path_shared_by_two_methods(self, client, shop):
        assert client.get(SINGLE, {"endpoint": "/api/users/{param1}", "method": "patch"}).json()["test"]["method"] == "PATCH"
        assert client.get(SINGLE, {"endpoint": "/api/users/{param1}"}).json()["test"]["method"] == "GET"

    def test_host_narrows_a_path_seen_on_two_hosts(self, client, shop):
        other = endpoint_from_traffic(host="aaa.test", method="GET", path="/api/search", query={"term": "x"})
        body = client.get(SINGLE, {"endpoint": "/api/search", "host": "aaa.test"}).json()
        assert body["test"]["endpointId"] == str(other.uuid)
        assert body["test"]["host"] == "aaa.test"

    def test_concrete_path_finds_its_pattern(self, client, shop):
        body = client.get(SINGLE, {"endpoint": "/api/users/42", "method": "GET"}).json()
        assert body["test"]["endpoint"] == "/api/users/{param1}"


class TestPerHost:
    def test_one_item_per_endpoint_carrying_endpoint_and_method(self, client, shop):
        endpoint_from_traffic(host=SHOP, method="GET", path="/api/health")
        response = client.get(MANY, {"host": SHOP})
        assert response.status_code == 200
        items = response.json()
        assert [(i["endpoint"], i["method"]) for i in items] == [
            ("/api/comments", "POST"),
            ("/api/comments/{param1}", "GET"),
            ("/api/health", "GET"),
            ("/api/login", "POST"),
            ("/api/search", "GET"),
            ("/api/users/{param1}", "GET"),
            ("/api/users/{param1}", "PATCH"),
        ]
        by_key = {(i["endpoint"], i["method"]): i for i in items}
        assert by_key[("/api/health", "GET")] == {
            "success": False, "endpoint": "/api/health", "method": "GET", "msg": "No suitable test template found",
        }
        ok = by_key[("/api/users/{param1}", "GET")]
        assert set(ok) == {"success", "templateName", "templateVersion", "test", "endpoint", "method"}
        assert (ok["success"], ok["templateName"]) == (True, "BOLA")
        assert ok["test"]["endpoint"] == "/api/users/{param1}"

    def test_type_applies_to_every_endpoint(self, client, shop):
        items = client.get(MANY, {"host": SHOP, "type": "XSS"}).json()
        passed = {(i["endpoint"], i["method"]) for i in items if i["success"]}
        assert passed == {("/api/comments", "POST"), ("/api/login", "POST"), ("/api/search", "GET"),
                          ("/api/users/{param1}", "PATCH")}
        assert all(i["templateName"] == "XSS" for i in items if i["success"])
        assert all(i["msg"] == "No suitable test template found" for i in items if not i["success"])

    def test_unknown_host_has_no_endpoints(self, client, shop):
        response = client.get(MANY, {"host": "nowhere.test"})
        assert response.status_code == 200
        assert response.json() == []

    def test_queries_do_not_grow_with_the_number_of_endpoints(self, client, db):
        def count_for(host: str, n: int) -> int:
            for i in range(n):
                endpoint_from_traffic(host=host, method="POST", path=f"/api/things{i}/{{param1}}", authenticated=True,
                                      paths=[f"/api/things{i}/1", f"/api/things{i}/2"], query={"q": "x"},
                                      body={"name": "x"})
            with CaptureQueriesContext(connection) as queries:
                assert client.get(MANY, {"host": host}).status_code == 200
            return len(queries)

        assert count_for("small.test", 2) == count_for("large.test", 12)

    def test_generation_writes_nothing(self, client, shop):
        before = (Endpoint.objects.count(), TestingEnvironment.objects.count())
        client.get(MANY, {"host": SHOP})
        assert (Endpoint.objects.count(), TestingEnvironment.objects.count()) == before
