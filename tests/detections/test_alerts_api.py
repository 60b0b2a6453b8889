"""Alert routes: GET /alerts, GET /alert/{id}, PUT /alert/{id}; de-duplication and status transitions."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from core.enums import AlertStatus, AlertType, RiskScore
from detections.models import Alert
from detections.services import AlertCandidate, alerts_raise
from tests.factories import AlertFactory, EndpointFactory, HostFactory

pytestmark = pytest.mark.django_db


def issues(response) -> list[dict]:
    assert response.status_code == 400, response.content
    assert response.json()["type"] == "ZOD"
    return response.json()["err"]["issues"]


def alert(**fields) -> Alert:
    fields.setdefault("description", f"d-{uuid.uuid4()}")
    return AlertFactory(**fields)


class TestList:
    def test_open_first_then_risk_then_newest(self, client):
        now = timezone.now()
        resolved_high = alert(type=AlertType.PII_DATA, risk_score=RiskScore.HIGH, status=AlertStatus.RESOLVED,
                              created_at=now)
        open_low_new = alert(risk_score=RiskScore.LOW, created_at=now)
        open_low_old = alert(risk_score=RiskScore.LOW, created_at=now - timedelta(hours=1))
        open_high = alert(type=AlertType.PII_DATA, risk_score=RiskScore.HIGH, created_at=now - timedelta(days=1))
        ignored_medium = alert(type=AlertType.BASIC_AUTH, risk_score=RiskScore.MEDIUM, status=AlertStatus.IGNORED)

        response = client.get("/api/v1/alerts?limit=50")

        assert response.status_code == 200
        assert response["X-Total-Count"] == "5"
        assert [a["uuid"] for a in response.json()] == [
            str(a.uuid) for a in (open_high, open_low_new, open_low_old, resolved_high, ignored_medium)
        ]

    def test_item_shape_with_lower_case_risk(self, client):
        created = alert(type=AlertType.PII_DATA, risk_score=RiskScore.HIGH, context={"dataPath": "email"})

        [item] = client.get("/api/v1/alerts").json()

        assert item == {
            "uuid": str(created.uuid),
            "type": "PII Data Detected",
            "riskScore": "high",
            "status": "Open",
            "description": created.description,
            "createdAt": item["createdAt"],
            "updatedAt": item["updatedAt"],
            "resolutionMessage": None,
            "context": {"dataPath": "email"},
            "apiEndpointUuid": str(created.endpoint_id),
            "apiEndpoint": {"uuid": str(created.endpoint_id), "path": created.endpoint.path,
                            "method": "GET", "host": created.endpoint.host.name},
        }
        assert item["createdAt"].endswith("Z") and len(item["createdAt"]) == 24

    def test_filters_combine(self, client):
        host_a = HostFactory(name="a.example.com")
        endpoint_a = EndpointFactory(host=host_a)
        wanted = alert(endpoint=endpoint_a, type=AlertType.BASIC_AUTH, risk_score=RiskScore.MEDIUM)
        alert(endpoint=endpoint_a, type=AlertType.BASIC_AUTH, risk_score=RiskScore.MEDIUM, status=AlertStatus.RESOLVED)
        alert(endpoint=endpoint_a, type=AlertType.NEW_ENDPOINT, risk_score=RiskScore.LOW)
        alert(type=AlertType.BASIC_AUTH, risk_score=RiskScore.MEDIUM)  # another host

        response = client.get("/api/v1/alerts", {
            "types[]": ["Basic Authentication Detected"], "riskScores": "medium", "status": "Open",
            "hosts": "a.example.com",
        })

        assert [a["uuid"] for a in response.json()] == [str(wanted.uuid)]
        assert response["X-Total-Count"] == "1"

    def test_endpoint_filter_and_upper_case_risk(self, client):
        target = alert(risk_score=RiskScore.HIGH, type=AlertType.PII_DATA)
        alert(risk_score=RiskScore.HIGH, type=AlertType.PII_DATA)

        response = client.get(f"/api/v1/alerts?endpoint={target.endpoint_id}&riskScores=HIGH")

        assert [a["uuid"] for a in response.json()] == [str(target.uuid)]

    def test_paging(self, client):
        for _ in range(5):
            alert()
        everything = [a["uuid"] for a in client.get("/api/v1/alerts?limit=5").json()]

        response = client.get("/api/v1/alerts?offset=2&limit=2")

        assert [a["uuid"] for a in response.json()] == everything[2:4]
        assert response["X-Total-Count"] == "5"

    def test_query_count_does_not_grow_with_alerts(self, client, django_assert_num_queries):
        for _ in range(20):
            alert()
        with django_assert_num_queries(3):  # key, count, page
            assert len(client.get("/api/v1/alerts?limit=20").json()) == 20

    @pytest.mark.parametrize("query,path,code", [
        ("types=Nope", ["types", 0], "invalid_enum_value"),
        ("riskScores=severe", ["riskScores", 0], "invalid_enum_value"),
        ("status=Closed", ["status", 0], "invalid_enum_value"),
        ("endpoint=xyz", ["endpoint"], "invalid_string"),
        ("limit=501", ["limit"], "too_big"),
        ("offset=-1", ["offset"], "too_small"),
    ])
    def test_bad_query_is_a_validation_error(self, client, query, path, code):
        [issue] = issues(client.get(f"/api/v1/alerts?{query}"))
        assert (issue["path"], issue["code"]) == (path, code)


class TestReadAndUpdate:
    def test_read_one(self, client):
        created = alert()
        response = client.get(f"/api/v1/alert/{created.uuid}")
        assert response.status_code == 200
        assert response.json()["uuid"] == str(created.uuid)

    @pytest.mark.parametrize("alert_id", [str(uuid.uuid4()), "not-a-uuid"])
    @pytest.mark.parametrize("method", ["get", "put"])
    def test_unknown_alert_is_404(self, client, alert_id, method):
        response = getattr(client, method)(f"/api/v1/alert/{alert_id}", {"updateType": "resolve"}, format="json")
        assert (response.status_code, response.json()) == (404, "Alert does not exist.")

    def test_resolve_with_a_message(self, client):
        created = alert()

        response = client.put(f"/api/v1/alert/{created.uuid}",
                              {"updateType": "resolve", "resolutionMessage": "Fixed in v2."}, format="json")

        assert response.status_code == 200
        assert (response.json()["status"], response.json()["resolutionMessage"]) == ("Resolved", "Fixed in v2.")
        created.refresh_from_db()
        assert (created.status, created.resolution_message) == ("Resolved", "Fixed in v2.")

    @pytest.mark.parametrize("start,update,end", [
        ("Open", "resolve", "Resolved"),
        ("Open", "ignore", "Ignored"),
        ("Ignored", "unignore", "Open"),
        ("Resolved", "unresolve", "Open"),
    ])
    def test_legal_transitions(self, client, start, update, end):
        created = alert(status=start)
        response = client.put(f"/api/v1/alert/{created.uuid}", {"updateType": update}, format="json")
        assert (response.status_code, response.json()["status"]) == (200, end)
        created.refresh_from_db()
        assert created.status == end

    @pytest.mark.parametrize("start,update,message", [
        ("Resolved", "resolve", "Alert is already resolved."),
        ("Ignored", "ignore", "Alert is already ignored."),
        ("Ignored", "resolve", "Alert is ignored; unignore it before resolving it."),
        ("Resolved", "ignore", "Alert is resolved; unresolve it before ignoring it."),
        ("Open", "unresolve", "Alert is not resolved."),
        ("Open", "unignore", "Alert is not ignored."),
        ("Resolved", "unignore", "Alert is not ignored."),
        ("Ignored", "unresolve", "Alert is not resolved."),
    ])
    def test_illegal_transitions_are_409_and_change_nothing(self, client, start, update, message):
        created = alert(status=start, resolution_message="kept")
        response = client.put(f"/api/v1/alert/{created.uuid}", {"updateType": update}, format="json")
        assert (response.status_code, response.json()) == (409, message)
        created.refresh_from_db()
        assert (created.status, created.resolution_message) == (start, "kept")

    def test_reopening_clears_the_resolution_message(self, client):
        created = alert(status=AlertStatus.RESOLVED, resolution_message="done")
        client.put(f"/api/v1/alert/{created.uuid}", {"updateType": "unresolve"}, format="json")
        created.refresh_from_db()
        assert (created.status, created.resolution_message) == ("Open", None)

    def test_reopening_is_refused_when_an_equal_alert_is_open(self, client):
        endpoint = EndpointFactory()
        old = AlertFactory(endpoint=endpoint, description="same", status=AlertStatus.RESOLVED)
        AlertFactory(endpoint=endpoint, description="same")

        response = client.put(f"/api/v1/alert/{old.uuid}", {"updateType": "unresolve"}, format="json")

        assert response.status_code == 409
        old.refresh_from_db()
        assert old.status == "Resolved"

    @pytest.mark.parametrize("body,path,code", [
        ({}, ["updateType"], "invalid_type"),
        ({"updateType": "close"}, ["updateType"], "invalid_enum_value"),
        ({"updateType": "resolve", "resolutionMessage": 5}, ["resolutionMessage"], "invalid_type"),
    ])
    def test_bad_body_is_a_validation_error(self, client, body, path, code):
        created = alert()
        [issue] = issues(client.put(f"/api/v1/alert/{created.uuid}", body, format="json"))
        assert (issue["path"], issue["code"]) == (path, code)
        created.refresh_from_db()
        assert created.status == "Open"


@pytest.mark.parametrize("method,path", [
    ("get", "/api/v1/alerts"), ("get", f"/api/v1/alert/{uuid.uuid4()}"), ("put", f"/api/v1/alert/{uuid.uuid4()}"),
])
def test_alert_routes_require_the_api_key(anon_client, method, path):
    response = getattr(anon_client, method)(path, {"updateType": "resolve"}, format="json")
    assert (response.status_code, response.json()) == (401, "Client unauthorized")


class TestDeduplication:
    def candidate(self, endpoint, description="Basic Authentication detected in Authorization header."):
        return AlertCandidate(endpoint.uuid, AlertType.BASIC_AUTH, description)

    def test_not_raised_twice_while_open(self):
        endpoint = EndpointFactory()
        assert len(alerts_raise([self.candidate(endpoint), self.candidate(endpoint)])) == 1
        assert alerts_raise([self.candidate(endpoint)]) == []
        assert Alert.objects.count() == 1

    def test_not_raised_while_ignored(self):
        endpoint = EndpointFactory()
        [first] = alerts_raise([self.candidate(endpoint)])
        Alert.objects.filter(pk=first.pk).update(status=AlertStatus.IGNORED)
        assert alerts_raise([self.candidate(endpoint)]) == []

    def test_raised_again_once_resolved(self):
        endpoint = EndpointFactory()
        [first] = alerts_raise([self.candidate(endpoint)])
        Alert.objects.filter(pk=first.pk).update(status=AlertStatus.RESOLVED)
        [second] = alerts_raise([self.candidate(endpoint)])
        assert second.pk != first.pk and second.status == "Open"

    def test_other_endpoint_or_description_is_a_new_alert(self):
        endpoint, other = EndpointFactory(), EndpointFactory()
        alerts_raise([self.candidate(endpoint)])
        assert len(alerts_raise([self.candidate(other), self.candidate(endpoint, "Other text.")])) == 2

    def test_the_database_refuses_a_second_active_alert(self):
        from django.db import IntegrityError, transaction

        endpoint = EndpointFactory()
        AlertFactory(endpoint=endpoint, description="x")
        with pytest.raises(IntegrityError), transaction.atomic():
            AlertFactory(endpoint=endpoint, description="x")

    def test_alert_defaults_to_its_types_risk(self):
        endpoint = EndpointFactory()
        risks = {a.type: a.risk_score for a in alerts_raise(
            [AlertCandidate(endpoint.uuid, t, "d") for t in AlertType.values]
        )}
        assert risks == {
            "New Endpoint Detected": "LOW", "PII Data Detected": "HIGH", "Open API Spec Diff": "MEDIUM",
            "Sensitive Data in Query Params": "HIGH", "Sensitive Data in Path Params": "HIGH",
            "Basic Authentication Detected": "MEDIUM", "Endpoint not secured by SSL": "HIGH",
            "Unauthenticated Endpoint returning Sensitive Data": "HIGH",
        }


class TestAdmin:
    @pytest.fixture
    def admin_client(self, django_user_model):
        from django.test import Client

        user = django_user_model.objects.create_superuser("admin", "admin@example.com", "pw")
        web = Client()
        web.force_login(user)
        return web

    def test_bulk_resolve_changes_open_alerts_and_skips_others(self, admin_client):
        open_one, open_two = alert(), alert()
        ignored = alert(status=AlertStatus.IGNORED)

        response = admin_client.post("/admin/detections/alert/", {
            "action": "resolve_selected", "_selected_action": [str(a.uuid) for a in (open_one, open_two, ignored)],
        }, follow=True)

        assert response.status_code == 200
        assert set(Alert.objects.values_list("status", flat=True)) == {"Resolved", "Ignored"}
        assert Alert.objects.get(pk=ignored.pk).status == "Ignored"

    def test_bulk_ignore(self, admin_client):
        one = alert()
        admin_client.post("/admin/detections/alert/", {"action": "ignore_selected", "_selected_action": [str(one.uuid)]})
        assert Alert.objects.get(pk=one.pk).status == "Ignored"

    def test_admin_pages_render(self, admin_client):
        created = alert()
        assert admin_client.get("/admin/detections/alert/").status_code == 200
        assert admin_client.get(f"/admin/detections/alert/{created.uuid}/change/").status_code == 200
        assert admin_client.get("/admin/webhooks/webhook/").status_code == 200
        assert admin_client.get("/admin/webhooks/webhookdelivery/").status_code == 200
        assert admin_client.get("/admin/detections/openapispec/").status_code == 200
