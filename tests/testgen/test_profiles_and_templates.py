"""What templates learn from traffic (profiles) and the details of what they generate."""
from __future__ import annotations

import pytest

from core.enums import DataSection
from testgen.profile import profile_load
from testgen.services import test_generate
from testgen.templates import GenerationContext, SecurityTemplate, register, template_get, templates_by_priority
from testgen.templates._base import registry
from tests.factories import DataFieldFactory
from tests.testgen.factories import ApiTraceFactory, endpoint_from_traffic

pytestmark = pytest.mark.django_db
HOST = "api.test"


def generate(endpoint, template):
    result = test_generate(endpoint=endpoint, template_name=template)
    assert result["success"], result
    return result["test"]


class TestProfiles:
    def test_redacted_body_values_are_replaced_by_plausible_ones(self):
        endpoint = endpoint_from_traffic(host=HOST, method="POST", path="/signup",
                                         body={"email": "[REDACTED]", "password": "[REDACTED]", "age": 30,
                                               "address": {"city": "Oslo"}, "tags": ["a"]})
        profile = profile_load(endpoint=endpoint)
        # a registration: a fresh user of the test's own (its email too), never an observed one
        assert profile.body == {"email": "{{uniqueName}}@example.com", "password": "Apiscope-Test-Passw0rd!", "age": 30,
                                "address": {"city": "Oslo"}, "tags": ["a"]}
        assert [(i.name, i.data_type) for i in profile.body_inputs] == [
            ("email", "string"), ("password", "string"), ("age", "integer"), ("address.city", "string"),
            ("tags[0]", "string")]

    def test_body_is_rebuilt_from_data_fields_without_a_trace(self):
        endpoint = endpoint_from_traffic(host=HOST, method="PUT", path="/orders/{param1}", paths=["/orders/9"])
        endpoint.traces.all().delete()
        for path, data_type in [("items[].sku", "string"), ("items[].qty", "integer"), ("note", "string"),
                                ("gift", "boolean")]:
            DataFieldFactory(endpoint=endpoint, data_section=DataSection.REQUEST_BODY, data_path=path,
                             data_type=data_type, content_type="application/json")
        profile = profile_load(endpoint=endpoint)
        assert profile.body_format == "json"
        assert profile.body == {"gift": True, "items": [{"qty": 1, "sku": "apiscope-test"}], "note": "apiscope-test"}

    def test_form_bodies_are_kept_as_forms(self):
        endpoint = endpoint_from_traffic(host=HOST, method="POST", path="/login")
        ApiTraceFactory(endpoint=endpoint, request_body="user=bob&pass=%5BREDACTED%5D",
                        request_headers=[{"name": "Content-Type", "value": "application/x-www-form-urlencoded"}])
        profile = profile_load(endpoint=endpoint)
        # A login: the observed user bob is never tried (issue #15 item 6), a user that does not exist is.
        assert (profile.body_format, profile.body) == ("form", {"user": "apiscope-no-such-user",
                                                               "pass": "Apiscope-Test-Passw0rd!"})
        request = generate(endpoint, "SQL_INJECTION")["requests"][0]
        assert request["headers"]["Content-Type"] == "application/x-www-form-urlencoded"

    def test_credentials_go_in_the_header_traffic_used(self):
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/reports", authenticated=True,
                                         credential_header="X-Api-Key")
        test = generate(endpoint, "AUTH_BYPASS")
        assert test["requests"][0]["headers"] == {"X-API-Key": "{{authToken}}"}  # the control
        assert test["requests"][1]["omitHeaders"] == ["X-API-Key"]
        assert test["requests"][3]["headers"] == {"X-API-Key": "apiscope-malformed-token"}
        assert all("Bearer" not in str(r.get("headers")) for r in test["requests"])

    def test_path_examples_come_from_observed_paths(self):
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/shops/{param1}/items/{param2}",
                                         paths=["/shops/s-1/items/10", "/shops/s-2/items/11"])
        profile = profile_load(endpoint=endpoint)
        assert profile.segments == ["shops", "s-1", "items", "10"]
        assert [(i.name, i.data_type) for i in profile.path_inputs] == [("param1", "string"), ("param2", "integer")]


class TestTemplates:
    def test_bola_on_a_query_identifier(self):
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/invoices", authenticated=True,
                                         query={"invoiceId": "881", "format": "pdf"},
                                         response={"id": 881, "ownerId": "7"})
        test = generate(endpoint, "BOLA")
        assert [r["queryParams"]["invoiceId"] for r in test["requests"]] == ["881", "881"]  # and without credentials
        assert all(r["queryParams"]["format"] == "pdf" for r in test["requests"])
        assert test["requests"][0]["skipIfEquals"] == ["{{testUserId}}", "7"]
        assert [a["request"] for a in test["assertions"]] == [0]

    def test_mass_assignment_reads_back_a_created_object_by_its_id(self):
        endpoint = endpoint_from_traffic(host=HOST, method="POST", path="/projects", authenticated=True,
                                         body={"name": "p", "role": "viewer"},
                                         response={"data": {"uuid": "u-1", "name": "p"}})
        endpoint_from_traffic(host=HOST, method="GET", path="/projects/{param1}", authenticated=True)
        test = generate(endpoint, "MASS_ASSIGNMENT")
        write = next(r for r in test["requests"] if "may not set: isAdmin=" in r["description"])
        index = test["requests"].index(write)
        by_id, by_location = test["requests"][index + 1:index + 3]
        # an existing input is kept; a new object's name is made the test's own (a unique one would fail)
        assert write["body"] == {"name": "p-{{uniqueName}}", "role": "viewer", "isAdmin": True}
        assert by_id["url"] == f"{{{{baseUrl}}}}/projects/{{{{responses[{index}].body.data.uuid}}}}"
        assert by_location["url"] == f"{{{{responses[{index}].headers.Location}}}}"
        on_answer = {a["field"] for a in test["assertions"] if a["request"] == index}
        on_read = {a["field"] for a in test["assertions"] if a["request"] == index + 1}
        assert on_answer >= {"data.isAdmin"} and on_read >= {"isAdmin"}
        decider = next(a for a in test["assertions"] if a.get("verdict") == "refused" and a["request"] == index)
        assert decider["inconclusive"] is True and decider["otherwise"]["request"] == [index + 1, index + 2]

    def test_mass_assignment_without_a_read_can_only_be_inconclusive_or_a_finding(self):
        endpoint = endpoint_from_traffic(host=HOST, method="POST", path="/feedback", body={"text": "t"})
        test = generate(endpoint, "MASS_ASSIGNMENT")
        # the control, then one write per property, each checked on its own answer only
        assert all("Read" not in r["description"] for r in test["requests"])
        deciders = [a for a in test["assertions"] if a.get("verdict") == "refused"]
        assert deciders and all(a["inconclusive"] is True and "otherwise" not in a for a in deciders)

    def test_sql_injection_is_capped_to_the_configured_number_of_inputs(self, settings):
        settings.TESTGEN_MAX_INPUTS = 2
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/search",
                                         query={"a": "1", "b": "x", "c": "y"})
        test = generate(endpoint, "SQL_INJECTION")
        touched = {name for r in test["requests"] for name, v in r["queryParams"].items() if v == r.get("payload")}
        assert touched == {"a", "b"}

    def test_xss_skips_numeric_path_parameters(self):
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/pages/{param1}", paths=["/pages/12"],
                                         query={"lang": "en"})
        test = generate(endpoint, "XSS")
        assert {r["url"] for r in test["requests"]} == {"{{baseUrl}}/pages/12"}
        assert len(test["requests"]) == 4  # the baseline, then the three payloads in the query
        assert all(r["onlyIfAccepted"] == 0 for r in test["requests"][1:])

    def test_same_endpoint_and_template_give_the_same_test_id(self):
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/search", query={"q": "x"})
        assert generate(endpoint, "XSS")["id"] == generate(endpoint, "XSS")["id"]
        assert generate(endpoint, "XSS")["id"] != generate(endpoint, "SQL_INJECTION")["id"]


class TestRegistry:
    def test_selection_order_is_decisions_order(self):
        # DECISIONS §8's six, then the extensions appended after them (issue #15).
        assert [t.name for t in templates_by_priority()] == [
            "BOLA", "AUTH_BYPASS", "MASS_ASSIGNMENT", "SQL_INJECTION", "XSS", "RATE_LIMIT", "DATA_EXPOSURE",
            "USER_ENUMERATION"]

    def test_a_new_version_is_one_class_and_becomes_the_default(self):
        @register
        class XssV2(SecurityTemplate):
            name = "XSS"
            version = 2
            priority = 50
            title = "Cross-site scripting v2"

            def applies(self, profile):
                return True

            def generate(self, profile, context: GenerationContext):
                return self.test_config(profile, description="v2", requests=[{"description": "r"}], assertions=[])

        try:
            assert template_get("XSS").version == 2
            assert template_get("XSS", 1).version == 1
            endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/search", query={"q": "x"})
            assert test_generate(endpoint=endpoint, template_name="XSS")["templateVersion"] == 2
            assert test_generate(endpoint=endpoint, template_name="XSS", version=1)["templateVersion"] == 1
        finally:
            del registry()["XSS"][2]

    def test_a_template_crashing_on_odd_traffic_falls_through_to_the_next(self, monkeypatch):
        endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/me", authenticated=True)

        def boom(self, profile, context):
            raise KeyError("odd")

        monkeypatch.setattr(type(template_get("AUTH_BYPASS")), "generate", boom)
        assert test_generate(endpoint=endpoint) == {"success": False, "msg": "No suitable test template found"}
