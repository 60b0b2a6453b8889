"""Issue #14 point 2 (DECISIONS §5): credentials in their own channel add no data class; elsewhere they do.

riskScore must tell endpoints that expose data apart from endpoints that merely require login: an
authenticated endpoint answering no data is NONE, a login answering a token is HIGH. Also the
``password`` class (a password returned in a response or sent in the URL is data, one sent in a
login body is the credential channel) and the data migration that cleans what older versions stored.
"""
from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps

from classification.models import DataField
from core.enums import AlertStatus, AlertType, DataSection, RiskScore
from detections.models import Alert
from inventory.models import Endpoint, IngestBatch
from tests.factories import AlertFactory, DataFieldFactory, EndpointFactory
from tests.support.processes import start_worker, wait_for

from .ingest_support import ingest, processed_trace, raw_trace, seeded_transactional_db  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db

BATCH = "/api/v1/log-request/batch"
V2_BATCH = "/api/v2/log-request/batch"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9"
       ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
SESSION = "8f14e45fceea167a5a36dedd4bea2543"
API_KEY = "3f9a7c2e8b1d4f6a9c0e2b4d6f8a1c3e"

clean = importlib.import_module("inventory.migrations.0006_credential_channel_adds_no_class").credential_channel_clean


def authenticated_reads() -> list[dict]:
    """Requests carrying each kind of own-channel credential, answered with no personal data."""
    return [
        raw_trace(path="/orders", headers={"Authorization": f"Bearer {JWT}"}, response_body={"count": 3, "ok": True}),
        raw_trace(path="/settings", headers={"Cookie": f"sessionid={SESSION}; theme=dark"},
                  response_body={"theme": "dark"}, response_headers={"Set-Cookie": f"sessionid={SESSION}; Path=/; HttpOnly"}),
        raw_trace(path="/reports", headers={"X-API-Key": API_KEY}, response_body={"reports": [{"name": "weekly"}]}),
        raw_trace(path="/health", headers={"Authorization": "Basic YWxpY2U6czNjcmV0LXBhc3N3b3Jk"}, response_body="ok"),
    ]


def login_answering_a_token() -> dict:
    return raw_trace(
        path="/auth/login", method="POST", headers={"Content-Type": "application/json"},
        body='{"username": "ada", "password": "hunter2-correct"}',
        response_body={"access_token": JWT, "token_type": "Bearer", "expires_in": 3600},
        response_headers={"Set-Cookie": f"sessionid={SESSION}; Path=/; HttpOnly"})


def fields_of(path: str) -> dict[tuple[str, str], list[str]]:
    return {(f.data_section, f.data_path): f.data_classes
            for f in DataField.objects.filter(endpoint__path=path)}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_through_a_real_worker_login_is_high_and_authenticated_data_free_endpoints_are_none(
        client, seeded_transactional_db):
    response = client.post(BATCH, [*authenticated_reads(), login_answering_a_token()], format="json")
    assert response.status_code == 200
    worker = start_worker("celery")
    try:
        assert wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).exists(), timeout=60), (
            worker.log())
    finally:
        worker.stop()
    listed = {item["path"]: item for item in client.get("/api/v1/endpoints?limit=50").json()}
    for path in ("/orders", "/settings", "/reports", "/health"):
        assert listed[path]["riskScore"] == RiskScore.NONE, path
        assert listed[path]["dataClasses"] == [], path
        assert listed[path]["isAuthenticatedDetected"] is True, path
    assert listed["/auth/login"]["riskScore"] == RiskScore.HIGH
    assert listed["/auth/login"]["dataClasses"] == ["authentication_token"]
    login = fields_of("/auth/login")
    assert login[(DataSection.RESPONSE_BODY, "access_token")] == ["authentication_token"]
    assert login[(DataSection.REQUEST_BODY, "password")] == []  # the credential channel of a login
    assert login[(DataSection.RESPONSE_HEADER, "set-cookie")] == []  # Set-Cookie aside (§5)
    assert fields_of("/orders")[(DataSection.REQUEST_HEADER, "authorization")] == []
    assert fields_of("/settings")[(DataSection.REQUEST_HEADER, "cookie")] == []
    assert fields_of("/reports")[(DataSection.REQUEST_HEADER, "x-api-key")] == []


def test_a_credential_outside_its_channel_is_data(ingest):
    ingest(raw_trace(path="/debug", response_headers={"X-Debug-Token": JWT}, response_body={"ok": True}),
           raw_trace(path="/import", method="POST", headers={"Content-Type": "application/json"},
                     body='{"source": "s3", "aws_key": "AKIAIOSFODNN7EXAMPLE"}', response_body={"ok": True}),
           raw_trace(path="/download", query=[("access_token", JWT)], response_body={"ok": True}))
    assert Endpoint.objects.get(path="/debug").data_classes == ["authentication_token"]
    assert Endpoint.objects.get(path="/import").data_classes == ["api_key"]
    assert Endpoint.objects.get(path="/download").data_classes == ["authentication_token"]
    assert {e.risk_score for e in Endpoint.objects.filter(path__in=["/debug", "/import", "/download"])} == {"HIGH"}


def test_a_v2_agents_finding_on_its_own_authorization_header_adds_no_class(client, django_capture_on_commit_callbacks):
    trace = processed_trace()
    trace["request"]["url"]["path"] = "/v2/orders"
    trace["request"]["headers"] = [{"name": "Authorization", "value": f"Bearer {JWT}"}]
    trace["processedTraceData"]["sensitiveDataDetected"] = {"reqHeaders.authorization": ["authentication_token"]}
    trace["processedTraceData"]["dataTypes"] = {"reqHeaders.authorization": ["string"], "resBody.ok": ["boolean"]}
    from .ingest_support import send

    assert send(client, django_capture_on_commit_callbacks, V2_BATCH, [trace]).status_code == 200
    endpoint = Endpoint.objects.get(path="/v2/orders")
    assert endpoint.data_classes == [] and endpoint.risk_score == RiskScore.NONE
    assert endpoint.is_authenticated_detected is True


class TestPasswordClass:
    def test_a_password_returned_in_a_response_body_is_high(self, ingest):
        ingest(raw_trace(path="/admin/users/me", response_body={"name": "Ada", "password": "hunter2-correct"}))
        endpoint = Endpoint.objects.get(path="/admin/users/me")
        assert endpoint.data_classes == ["password"] and endpoint.risk_score == RiskScore.HIGH
        assert Alert.objects.filter(endpoint=endpoint, type=AlertType.PII_DATA,
                                    context__dataClass="password").exists()

    def test_a_password_hash_in_a_response_and_a_password_in_the_url_are_data(self, ingest):
        ingest(raw_trace(path="/export", response_body=[{"user": "ada",
               "password_hash": "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW"}]),
               raw_trace(path="/legacy/login", query=[("user", "ada"), ("password", "hunter2-correct")],
                         response_body={"ok": True}))
        assert Endpoint.objects.get(path="/export").data_classes == ["password"]
        assert Endpoint.objects.get(path="/legacy/login").data_classes == ["password"]

    def test_a_password_sent_to_log_in_or_register_and_masked_passwords_are_not(self, ingest):
        ingest(raw_trace(path="/register", method="POST", headers={"Content-Type": "application/json"},
                         body='{"email_verified": false, "password": "hunter2-correct", "password_confirmation": "x1"}',
                         response_body={"id": 5, "password": "********", "passwordChangedAt": "2024-01-31T12:00:00Z"}))
        endpoint = Endpoint.objects.get(path="/register")
        assert endpoint.data_classes == [] and endpoint.risk_score == RiskScore.NONE


class TestMigration:
    """``inventory/migrations/0006``: what older versions stored for own-channel credentials is cleaned."""

    def test_own_channel_classes_go_others_stay_and_risk_is_recomputed(self):
        auth_only = EndpointFactory(path="/orders", risk_score=RiskScore.HIGH, data_classes=["authentication_token"])
        header = DataFieldFactory(endpoint=auth_only, data_section=DataSection.REQUEST_HEADER,
                                  data_path="authorization", data_classes=["authentication_token"])
        cookie = DataFieldFactory(endpoint=auth_only, data_section=DataSection.REQUEST_HEADER, data_path="cookie",
                                  data_classes=["authentication_token", "email"])
        set_cookie = DataFieldFactory(endpoint=auth_only, data_section=DataSection.RESPONSE_HEADER,
                                      data_path="set-cookie", data_classes=["authentication_token"])
        alert = AlertFactory(endpoint=auth_only, type=AlertType.PII_DATA, risk_score=RiskScore.HIGH,
                             context={"dataSection": "REQUEST_HEADER", "dataPath": "authorization",
                                      "dataClass": "authentication_token"})
        login = EndpointFactory(path="/login", risk_score=RiskScore.HIGH,
                                data_classes=["api_key", "authentication_token"])
        body_token = DataFieldFactory(endpoint=login, data_path="access_token", data_classes=["authentication_token"])
        csrf = DataFieldFactory(endpoint=login, data_section=DataSection.REQUEST_HEADER, data_path="x-csrf-token",
                                data_classes=["authentication_token"])
        query_key = DataFieldFactory(endpoint=login, data_section=DataSection.REQUEST_QUERY, data_path="api_key",
                                     data_classes=["api_key"])
        body_alert = AlertFactory(endpoint=login, type=AlertType.PII_DATA, risk_score=RiskScore.HIGH,
                                  context={"dataSection": "RESPONSE_BODY", "dataPath": "access_token",
                                           "dataClass": "authentication_token"})

        changed = clean(django_apps, None)

        assert changed["fields"] == 3 and changed["alerts"] == 1
        for field, classes in [(header, []), (cookie, ["email"]), (set_cookie, []), (body_token, ["authentication_token"]),
                               (csrf, ["authentication_token"]), (query_key, ["api_key"])]:
            field.refresh_from_db()
            assert field.data_classes == classes, field.data_path
        auth_only.refresh_from_db()
        login.refresh_from_db()
        assert (auth_only.risk_score, auth_only.data_classes, auth_only.risk_rank) == (RiskScore.MEDIUM, ["email"], 2)
        assert (login.risk_score, login.data_classes) == (RiskScore.HIGH, ["api_key", "authentication_token"])
        alert.refresh_from_db()
        body_alert.refresh_from_db()
        assert alert.status == AlertStatus.RESOLVED and "own credentials" in alert.resolution_message
        assert body_alert.status == AlertStatus.OPEN

    def test_a_second_run_changes_nothing(self):
        endpoint = EndpointFactory(risk_score=RiskScore.HIGH, data_classes=["authentication_token"])
        DataFieldFactory(endpoint=endpoint, data_section=DataSection.REQUEST_HEADER, data_path="Authorization",
                         data_classes=["authentication_token"])
        first = clean(django_apps, None)
        assert first["fields"] == 1 and first["endpoints"] >= 1
        endpoint.refresh_from_db()
        assert endpoint.risk_score == RiskScore.NONE and endpoint.data_classes == []
        assert clean(django_apps, None) == {"fields": 0, "endpoints_with_fields": 0, "alerts": 0, "endpoints": 0}
