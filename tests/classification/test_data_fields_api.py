"""GET /data-class and the data-field routes; every classification change recomputes riskScore."""
import pytest

from classification.models import DataClass, DataField
from classification.services import endpoints_refresh_risk
from core.enums import RISK_RANK
from inventory.models import Endpoint
from tests.factories import DataFieldFactory, EndpointFactory
from tests.inventory.factories import CustomDataClassFactory

pytestmark = pytest.mark.django_db

UNKNOWN = "7b0e1f8c-6d1a-4c55-9a53-3c1f2f4f9d11"


def field_url(field, suffix=""):
    key = field if isinstance(field, str) else field.uuid
    return f"/api/v1/data-field/{key}{suffix}"


def classified(classes, **kwargs):
    """A field on its own endpoint, with the endpoint's risk in sync."""
    field = DataFieldFactory(data_classes=classes, **kwargs)
    endpoints_refresh_risk(endpoint_ids=[field.endpoint_id])
    return field


def risk_of(field):
    endpoint = Endpoint.objects.get(uuid=field.endpoint_id)
    assert endpoint.risk_rank == RISK_RANK[endpoint.risk_score]
    return endpoint.risk_score, endpoint.data_classes


class TestDataClasses:
    def test_lists_the_enabled_classes_builtins_first_in_spec_order(self, client):
        CustomDataClassFactory(name="employee_id", short_name="Employee ID", severity="MEDIUM")
        DataClass.objects.filter(name="mac_address").update(enabled=False)
        response = client.get("/api/v1/data-class")
        assert response.status_code == 200
        body = response.json()
        assert body[:3] == [
            {"className": "email", "severity": "MEDIUM", "shortName": "Email"},
            {"className": "ssn", "severity": "HIGH", "shortName": "Social Security Number"},
            {"className": "credit_card", "severity": "HIGH", "shortName": "Credit Card Number"},
        ]
        names = [c["className"] for c in body]
        assert "mac_address" not in names and names[-1] == "employee_id"
        assert {"passport_number", "user_id", "api_key", "authentication_token"} <= set(names)
        assert len(body) == 14

    def test_spec_default_severities(self, client):
        severities = {c["className"]: c["severity"] for c in client.get("/api/v1/data-class").json()}
        assert severities == {
            "email": "MEDIUM", "ssn": "HIGH", "credit_card": "HIGH", "phone_number": "MEDIUM", "ip_address": "LOW",
            "driver_license": "HIGH", "dob": "MEDIUM", "address": "MEDIUM", "api_key": "HIGH",
            "authentication_token": "HIGH", "passport_number": "HIGH", "mac_address": "LOW", "user_id": "LOW",
            "password": "HIGH",
        }

    def test_needs_the_api_key(self, anon_client):
        assert anon_client.get("/api/v1/data-class").status_code == 401


class TestUpdateClasses:
    def test_sets_the_classes_answers_the_field_and_recomputes_risk(self, client):
        field = classified(["email"], data_section="RESPONSE_BODY", data_path="user.contact")
        assert risk_of(field) == ("MEDIUM", ["email"])
        response = client.post(field_url(field, "/update-classes"), {
            "dataClasses": ["ssn", "email"], "dataSection": "RESPONSE_BODY", "dataPath": "user.contact"},
            format="json")
        assert response.status_code == 200
        body = response.json()
        assert body["uuid"] == str(field.uuid) and body["dataClasses"] == ["ssn", "email"]
        assert risk_of(field) == ("HIGH", ["email", "ssn"])

    def test_removed_classes_become_false_positives_and_re_added_ones_leave_them(self, client):
        field = classified(["email", "phone_number"], data_path="contact", false_positives=["ssn"])
        body = {"dataClasses": ["ssn"], "dataSection": field.data_section, "dataPath": "contact"}
        assert client.post(field_url(field, "/update-classes"), body, format="json").status_code == 200
        field.refresh_from_db()
        assert field.data_classes == ["ssn"]
        assert field.false_positives == ["email", "phone_number"]
        assert risk_of(field) == ("HIGH", ["ssn"])

    def test_removing_every_class_sets_risk_none(self, client):
        field = classified(["ssn"], data_path="x")
        body = {"dataClasses": [], "dataSection": field.data_section, "dataPath": "x"}
        assert client.post(field_url(field, "/update-classes"), body, format="json").json()["dataClasses"] == []
        assert risk_of(field) == ("NONE", [])

    def test_an_explicit_array_index_names_the_field(self, client):
        field = classified([], data_path="items[].email")
        body = {"dataClasses": ["email"], "dataSection": field.data_section, "dataPath": "items[3].email"}
        assert client.post(field_url(field, "/update-classes"), body, format="json").status_code == 200

    def test_risk_uses_the_highest_class_of_all_the_endpoints_fields(self, client):
        endpoint = EndpointFactory()
        low = DataFieldFactory(endpoint=endpoint, data_classes=["ip_address"], data_path="ip")
        DataFieldFactory(endpoint=endpoint, data_classes=["email"], data_path="email")
        endpoints_refresh_risk(endpoint_ids=[endpoint.uuid])
        assert risk_of(low) == ("MEDIUM", ["email", "ip_address"])
        body = {"dataClasses": ["credit_card"], "dataSection": low.data_section, "dataPath": "ip"}
        client.post(field_url(low, "/update-classes"), body, format="json")
        assert risk_of(low) == ("HIGH", ["credit_card", "email"])

    @pytest.mark.parametrize("mismatch", [{"dataSection": "REQUEST_BODY"}, {"dataPath": "other"}])
    def test_section_or_path_that_do_not_name_the_field_is_404(self, client, mismatch):
        field = classified(["email"], data_section="RESPONSE_BODY", data_path="contact")
        body = {"dataClasses": ["ssn"], "dataSection": "RESPONSE_BODY", "dataPath": "contact", **mismatch}
        response = client.post(field_url(field, "/update-classes"), body, format="json")
        assert response.status_code == 404 and response.json() == "Data field does not exist."
        field.refresh_from_db()
        assert field.data_classes == ["email"]

    @pytest.mark.parametrize("body, path, code", [
        ({"dataSection": "RESPONSE_BODY", "dataPath": "x"}, ["dataClasses"], "invalid_type"),
        ({"dataClasses": ["nope"], "dataSection": "RESPONSE_BODY", "dataPath": "x"}, ["dataClasses", 0],
         "invalid_enum_value"),
        ({"dataClasses": ["email"], "dataSection": "BODY", "dataPath": "x"}, ["dataSection"], "invalid_enum_value"),
        ({"dataClasses": ["email"], "dataSection": "RESPONSE_BODY"}, ["dataPath"], "invalid_type"),
        ({"dataClasses": ["email"], "dataSection": "RESPONSE_BODY", "dataPath": ""}, ["dataPath"], "too_small"),
        ({"dataClasses": "email", "dataSection": "RESPONSE_BODY", "dataPath": "x"}, ["dataClasses"], "invalid_type"),
    ])
    def test_bad_body_is_a_zod_400_and_changes_nothing(self, client, body, path, code):
        field = classified(["email"], data_section="RESPONSE_BODY", data_path="x")
        response = client.post(field_url(field, "/update-classes"), body, format="json")
        assert response.status_code == 400
        [issue] = response.json()["err"]["issues"]
        assert issue["path"] == path and issue["code"] == code
        field.refresh_from_db()
        assert field.data_classes == ["email"]

    def test_disabled_classes_are_not_accepted(self, client):
        DataClass.objects.filter(name="mac_address").update(enabled=False)
        field = classified([], data_path="x")
        body = {"dataClasses": ["mac_address"], "dataSection": field.data_section, "dataPath": "x"}
        assert client.post(field_url(field, "/update-classes"), body, format="json").status_code == 400

    def test_custom_classes_are_accepted_with_their_severity(self, client):
        CustomDataClassFactory(name="employee_id", severity="HIGH")
        field = classified([], data_path="x")
        body = {"dataClasses": ["employee_id"], "dataSection": field.data_section, "dataPath": "x"}
        assert client.post(field_url(field, "/update-classes"), body, format="json").status_code == 200
        assert risk_of(field) == ("HIGH", ["employee_id"])


class TestDeleteAndUpdates:
    def test_delete_removes_the_field_answers_it_and_recomputes_risk(self, client):
        field = classified(["ssn"], data_path="ssn")
        other = DataFieldFactory(endpoint_id=field.endpoint_id, data_classes=["email"], data_path="email")
        endpoints_refresh_risk(endpoint_ids=[field.endpoint_id])
        response = client.delete(field_url(field))
        assert response.status_code == 200
        assert response.json()["uuid"] == str(field.uuid) and response.json()["dataClasses"] == ["ssn"]
        assert not DataField.objects.filter(uuid=field.uuid).exists()
        assert risk_of(other) == ("MEDIUM", ["email"])
        assert client.delete(field_url(field)).status_code == 404

    def test_update_entity(self, client):
        field = classified([], data_path="x")
        response = client.put(field_url(field, "/update-entity"), {"entity": "customer"}, format="json")
        assert response.status_code == 200 and response.json()["entity"] == "customer"
        field.refresh_from_db()
        assert field.entity == "customer"
        assert client.put(field_url(field, "/update-entity"), {"entity": ""}, format="json").json()["entity"] is None
        field.refresh_from_db()
        assert field.entity is None

    @pytest.mark.parametrize("body", [{}, {"entity": 5}, {"entity": "x" * 256}])
    def test_update_entity_validates(self, client, body):
        field = classified([], data_path="x", entity="kept")
        assert client.put(field_url(field, "/update-entity"), body, format="json").status_code == 400
        field.refresh_from_db()
        assert field.entity == "kept"

    def test_update_data_path(self, client):
        field = classified(["email"], data_path="contact")
        response = client.put(field_url(field, "/update-data-path"), {"dataPath": "user.items[2].email"}, format="json")
        assert response.status_code == 200 and response.json()["dataPath"] == "user.items[].email"
        field.refresh_from_db()
        assert field.data_path == "user.items[].email"

    def test_update_data_path_to_an_existing_path_is_409(self, client):
        field = classified([], data_path="a", data_section="RESPONSE_BODY")
        DataFieldFactory(endpoint_id=field.endpoint_id, data_path="b", data_section="RESPONSE_BODY")
        # the same path in another section is no conflict
        DataFieldFactory(endpoint_id=field.endpoint_id, data_path="c", data_section="REQUEST_BODY")
        response = client.put(field_url(field, "/update-data-path"), {"dataPath": "b"}, format="json")
        assert response.status_code == 409 and response.json() == "Data field already exists with this data path."
        field.refresh_from_db()
        assert field.data_path == "a"
        assert client.put(field_url(field, "/update-data-path"), {"dataPath": "c"}, format="json").status_code == 200

    @pytest.mark.parametrize("body", [{}, {"dataPath": ""}, {"dataPath": ["a"]}, {"dataPath": "x" * 1025}])
    def test_update_data_path_validates(self, client, body):
        field = classified([], data_path="a")
        response = client.put(field_url(field, "/update-data-path"), body, format="json")
        assert response.status_code == 400 and response.json()["type"] == "ZOD"


ROUTES = [
    ("post", "/update-classes", {"dataClasses": [], "dataSection": "RESPONSE_BODY", "dataPath": "x"}),
    ("delete", "", {}),
    ("put", "/update-entity", {"entity": "x"}),
    ("put", "/update-data-path", {"dataPath": "y"}),
]


@pytest.mark.parametrize("method, suffix, body", ROUTES)
@pytest.mark.parametrize("key", [UNKNOWN, "not-a-uuid"])
def test_unknown_or_malformed_data_field_id_is_404(client, method, suffix, body, key):
    response = getattr(client, method)(field_url(key, suffix), body, format="json")
    assert response.status_code == 404 and response.json() == "Data field does not exist."


@pytest.mark.parametrize("method, suffix, body", ROUTES)
def test_data_field_routes_need_the_api_key(anon_client, method, suffix, body):
    field = classified(["email"], data_path="x")
    response = getattr(anon_client, method)(field_url(field, suffix), body, format="json")
    assert response.status_code == 401 and response.json() == "Client unauthorized"
    assert DataField.objects.get(uuid=field.uuid).data_classes == ["email"]


def test_data_class_list_is_a_constant_number_of_queries(client, django_assert_num_queries):
    for n in range(10):
        CustomDataClassFactory(name=f"custom_{n}")
    with django_assert_num_queries(2):  # key, classes
        assert len(client.get("/api/v1/data-class").json()) == 24
