"""The operators' console (Django admin) for endpoints, hosts, data fields, data classes and traces."""
import pytest

from classification.models import DataClass, DataField
from classification.services import endpoints_refresh_risk
from core.enums import RISK_RANK
from inventory.models import ApiTrace, Endpoint, Host
from tests.factories import AlertFactory, DataFieldFactory, HostFactory
from tests.inventory.factories import ApiTraceFactory, CustomDataClassFactory, PatternEndpointFactory

pytestmark = pytest.mark.django_db

ENDPOINTS = "/admin/inventory/endpoint/"


def endpoint(risk="NONE", **kwargs):
    return PatternEndpointFactory(risk_score=risk, risk_rank=RISK_RANK[risk], **kwargs)


def listed(response):
    assert response.status_code == 200
    return response.context["cl"].result_list


class TestEndpointAdmin:
    def test_changelist_filters_and_search(self, admin_client):
        api = HostFactory(name="api.example.com")
        high_post = endpoint("HIGH", host=api, method="POST", path="/payments", data_classes=["credit_card"],
                             is_authenticated_detected=True)
        low_get = endpoint("LOW", method="GET", path="/users/{param1}", data_classes=["ip_address"],
                           is_authenticated_detected=True, is_authenticated_user_set=False)
        assert set(listed(admin_client.get(ENDPOINTS))) == {high_post, low_get}
        assert list(listed(admin_client.get(ENDPOINTS, {"host__id__exact": api.id}))) == [high_post]
        assert list(listed(admin_client.get(ENDPOINTS, {"method__exact": "GET"}))) == [low_get]
        assert list(listed(admin_client.get(ENDPOINTS, {"risk_score__exact": "HIGH"}))) == [high_post]
        assert list(listed(admin_client.get(ENDPOINTS, {"authenticated": "no"}))) == [low_get]
        assert list(listed(admin_client.get(ENDPOINTS, {"authenticated": "yes"}))) == [high_post]
        assert list(listed(admin_client.get(ENDPOINTS, {"data_class": "credit_card"}))) == [high_post]
        assert list(listed(admin_client.get(ENDPOINTS, {"q": "payments"}))) == [high_post]

    def test_mark_authenticated_and_unauthenticated_actions(self, admin_client):
        a, b = endpoint(), endpoint()
        admin_client.post(ENDPOINTS, {"action": "mark_authenticated", "_selected_action": [str(a.uuid), str(b.uuid)]})
        assert set(Endpoint.objects.values_list("is_authenticated_user_set", flat=True)) == {True}
        admin_client.post(ENDPOINTS, {"action": "mark_unauthenticated", "_selected_action": [str(a.uuid)]})
        a.refresh_from_db()
        assert a.is_authenticated_user_set is False
        admin_client.post(ENDPOINTS, {"action": "clear_authenticated_override", "_selected_action": [str(a.uuid)]})
        a.refresh_from_db()
        assert a.is_authenticated_user_set is None

    def test_delete_action_removes_endpoints_with_their_data(self, admin_client):
        doomed, kept = endpoint(), endpoint()
        DataFieldFactory(endpoint=doomed)
        AlertFactory(endpoint=doomed)
        ApiTraceFactory(endpoint=doomed)
        confirm = admin_client.post(ENDPOINTS, {"action": "delete_selected", "_selected_action": [str(doomed.uuid)]})
        assert confirm.status_code == 200 and b"traces: 1" in confirm.content.lower().replace(b"</li>", b"")
        response = admin_client.post(ENDPOINTS, {"action": "delete_selected", "_selected_action": [str(doomed.uuid)],
                                                 "post": "yes"})
        assert response.status_code == 302
        assert list(Endpoint.objects.all()) == [kept]
        assert DataField.objects.count() == 0 and ApiTrace.objects.count() == 0

    def test_change_page_shows_inline_fields_and_editing_classes_recomputes_risk(self, admin_client):
        e = endpoint(path="/users/{param1}")
        field = DataFieldFactory(endpoint=e, data_path="email", data_classes=[])
        url = f"{ENDPOINTS}{e.uuid}/change/"
        page = admin_client.get(url)
        assert page.status_code == 200 and b"email" in page.content
        prefix = "data_fields"
        response = admin_client.post(url, {
            "is_authenticated_user_set": "unknown", "owner": "team", "openapi_spec_name": "",
            "resource_permissions": "[]",
            f"{prefix}-TOTAL_FORMS": "1", f"{prefix}-INITIAL_FORMS": "1", f"{prefix}-MIN_NUM_FORMS": "0",
            f"{prefix}-MAX_NUM_FORMS": "1000",
            f"{prefix}-0-uuid": str(field.uuid), f"{prefix}-0-endpoint": str(e.uuid),
            f"{prefix}-0-data_classes": '["ssn"]', f"{prefix}-0-false_positives": "[]", f"{prefix}-0-entity": "",
        })
        assert response.status_code == 302, response.content.decode()[:2000]
        e.refresh_from_db()
        assert (e.owner, e.risk_score, e.risk_rank, e.data_classes) == ("team", "HIGH", 3, ["ssn"])

    def test_endpoints_cannot_be_added_by_hand(self, admin_client):
        assert admin_client.get(f"{ENDPOINTS}add/").status_code == 403


class TestHostAdmin:
    def test_public_override_from_the_list_changes_the_effective_flag(self, admin_client):
        host = HostFactory(name="api.example.com", is_public_detected=True)
        endpoint(host=host)
        response = admin_client.post("/admin/inventory/host/", {
            "form-TOTAL_FORMS": "1", "form-INITIAL_FORMS": "1", "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000",
            "form-0-id": str(host.id), "form-0-public_override": "false", "_save": "Save",
        })
        assert response.status_code == 302
        host.refresh_from_db()
        assert host.public_override is False and host.is_public is False

    def test_deleting_a_host_deletes_its_endpoints(self, admin_client):
        host = HostFactory(name="api.example.com")
        ApiTraceFactory(endpoint=endpoint(host=host))
        response = admin_client.post(f"/admin/inventory/host/{host.id}/delete/", {"post": "yes"})
        assert response.status_code == 302
        assert Host.objects.count() == 0 and Endpoint.objects.count() == 0 and ApiTrace.objects.count() == 0

    def test_changelist_shows_endpoint_counts(self, admin_client):
        host = HostFactory(name="api.example.com")
        endpoint(host=host)
        endpoint(host=host)
        [row] = listed(admin_client.get("/admin/inventory/host/"))
        assert row.num_endpoints == 2


class TestClassificationAdmin:
    def test_custom_class_is_created_and_validated(self, admin_client):
        response = admin_client.post("/admin/classification/dataclass/add/", {
            "name": "employee_id", "short_name": "Employee ID", "severity": "MEDIUM", "enabled": "on",
            "value_regex": r"^EMP-\d{6}$", "key_regex": "",
        })
        assert response.status_code == 302
        assert DataClass.objects.get(name="employee_id").builtin is False
        bad = admin_client.post("/admin/classification/dataclass/add/", {
            "name": "broken", "short_name": "Broken", "severity": "LOW", "value_regex": "([", "key_regex": ""})
        assert bad.status_code == 200 and not DataClass.objects.filter(name="broken").exists()

    def test_builtins_can_be_disabled_but_not_deleted(self, admin_client):
        ssn = DataClass.objects.get(name="ssn")
        assert admin_client.get(f"/admin/classification/dataclass/{ssn.id}/delete/").status_code == 403
        admin_client.post("/admin/classification/dataclass/", {"action": "disable_selected",
                                                               "_selected_action": [str(ssn.id)]})
        ssn.refresh_from_db()
        assert ssn.enabled is False

    def test_severity_change_recomputes_the_risk_of_endpoints_carrying_the_class(self, admin_client):
        custom = CustomDataClassFactory(name="employee_id", severity="LOW")
        e = endpoint()
        DataFieldFactory(endpoint=e, data_classes=["employee_id"])
        endpoints_refresh_risk(endpoint_ids=[e.uuid])
        e.refresh_from_db()
        assert e.risk_score == "LOW"
        response = admin_client.post(f"/admin/classification/dataclass/{custom.id}/change/", {
            "name": "employee_id", "short_name": "Employee", "severity": "HIGH", "enabled": "on",
            "value_regex": custom.value_regex, "key_regex": ""})
        assert response.status_code == 302
        e.refresh_from_db()
        assert e.risk_score == "HIGH"

    def test_deleting_a_custom_class_takes_it_off_fields(self, admin_client):
        custom = CustomDataClassFactory(name="employee_id", severity="HIGH")
        e = endpoint()
        field = DataFieldFactory(endpoint=e, data_classes=["employee_id", "email"])
        endpoints_refresh_risk(endpoint_ids=[e.uuid])
        response = admin_client.post(f"/admin/classification/dataclass/{custom.id}/delete/", {"post": "yes"})
        assert response.status_code == 302
        field.refresh_from_db()
        e.refresh_from_db()
        assert field.data_classes == ["email"] and (e.risk_score, e.data_classes) == ("MEDIUM", ["email"])

    def test_data_field_edit_validates_classes_and_recomputes_risk(self, admin_client):
        e = endpoint()
        field = DataFieldFactory(endpoint=e, data_classes=[])
        url = f"/admin/classification/datafield/{field.uuid}/change/"
        form = {"endpoint": str(e.uuid), "data_section": field.data_section, "data_path": field.data_path,
                "status_code": field.status_code, "data_classes": '["nope"]', "false_positives": "[]",
                "scanner_identified": "[]", "data_type": "string", "content_type": "", "entity": ""}
        assert admin_client.post(url, form).status_code == 200  # unknown class: form error
        response = admin_client.post(url, {**form, "data_classes": '["credit_card"]'})
        assert response.status_code == 302
        e.refresh_from_db()
        assert e.risk_score == "HIGH"


class TestTraceAdmin:
    def test_traces_are_read_only(self, admin_client):
        trace = ApiTraceFactory()
        assert admin_client.get("/admin/inventory/apitrace/").status_code == 200
        page = admin_client.get(f"/admin/inventory/apitrace/{trace.uuid}/change/")
        assert page.status_code == 200 and b'name="_save"' not in page.content
        assert admin_client.get("/admin/inventory/apitrace/add/").status_code == 403
        assert admin_client.get(f"/admin/inventory/apitrace/{trace.uuid}/delete/").status_code == 403
        listing = admin_client.get("/admin/inventory/apitrace/", {"endpoint__uuid__exact": str(trace.endpoint_id)})
        assert list(listed(listing)) == [trace]


def test_api_keys_are_in_the_console(admin_client):
    assert admin_client.get("/admin/core/apikey/").status_code == 200
    assert Host.objects.count() == 0
