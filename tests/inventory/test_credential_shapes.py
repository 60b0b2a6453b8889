"""Credential names and shapes of issue #25 are "[REDACTED]" everywhere a stored trace shows up.

Each shape goes through the ingest route and the analysis task, then is looked for in the stored
traces, in a ``read`` key's endpoint detail, in the operators' console (the trace pages) and in the
security tests generated for the endpoints: the planted value appears in none of them, and the
place it was sits ``[REDACTED]``. Also: a password in the URL of a password-change route under
neutral parameter names is recognised by route context and value shape (class ``password``, the
query-parameter alert) and redacted.
"""
from __future__ import annotations

import json

import pytest

from classification.models import DataField
from core.enums import DataSection
from core.models import Scope
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint

from .ingest_support import ingest, raw_trace  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

HOST = "accounts.example.com"
# One planted value per shape (distinct, so a leak names its shape).
SECRETS = {
    "query sid": "sid0a9f8e7d6c5b4a3",
    "query ticket": "ST-1856339-aA5Yuvrxzpv8Tau1cYQ7",
    "query SAMLResponse": "PHNhbWxwOlJlc3BvbnNlIHhtbG5zOnNhbWxwPSJ1cm46b2FzaXM",
    "query authkey": "ak_7Hq2LmZ9pX4vB1nR8sT6",
    "query session": "sess-5f4dcc3b5aa765d61d8327deb882cf99",
    "header Authentication": "c2VjcmV0LWF1dGhlbnRpY2F0aW9uLXZhbHVl",
    "body totpSeed": "JBSWY3DPEHPK3PXPJBSWY3DP",
    "body mnemonic": "legal winner thank year wave sausage worth useful legal winner thank yellow",
    "body seedPhrase": "abandon ability able about above absent absorb abstract absurd abuse access accident",
    "body recoveryCodes": "rc-8842-1193",
    "body backupCode": "bk-55101-77",
    "JSON string password=": "Hunter2-in-a-log-line",
    "JSON string postgres URL": "pg-Pa55word-in-dsn",
    "Location code": "oauth-code-4f1c2a9b",
    "Location token": "loc-token-9d8c7b6a5f4e",
    "route password old": "0ldPassw0rd!",
    "route password new": "N3wPassw0rd#2026",
    "query X-Apiscope forged marker": "run-1.forgedmarkerforgedmarkerforgedmark",
}


def traces() -> list[dict]:
    s = SECRETS
    return [
        raw_trace(host=HOST, path="/sso/callback", query=[
            ("sid", s["query sid"]), ("ticket", s["query ticket"]), ("SAMLResponse", s["query SAMLResponse"]),
            ("authkey", s["query authkey"]), ("session", s["query session"]), ("lang", "en")],
            headers={"Authentication": f"Bearer {s['header Authentication']}",
                     "X-Apiscope-Test": s["query X-Apiscope forged marker"]},
            status=302, response_headers={
                "Location": f"https://app.example.com/done?code={s['Location code']}&token={s['Location token']}"
                            "&next=/home"},
            response_body=""),
        raw_trace(host=HOST, path="/api/mfa/setup", method="POST",
                  headers={"Content-Type": "application/json"},
                  body=json.dumps({"label": "phone", "totpSeed": s["body totpSeed"]}),
                  response_body={"totpSeed": s["body totpSeed"], "mnemonic": s["body mnemonic"],
                                 "seedPhrase": s["body seedPhrase"], "recoveryCodes": [s["body recoveryCodes"]],
                                 "backupCode": s["body backupCode"], "status": "enabled"}),
        raw_trace(host=HOST, path="/api/diagnostics", response_body={
            "lastError": f"login failed for ada password={s['JSON string password=']} (bad)",
            "dsn": f"postgres://app:{s['JSON string postgres URL']}@db.internal:5432/accounts",
            "version": "2.4.1"}),
        raw_trace(host=HOST, path="/api/account/password", method="POST", query=[
            ("old", s["route password old"]), ("new", s["route password new"]), ("lang", "en")],
            response_body={"changed": True}),
    ]


def _all_text(client) -> dict[str, str]:
    """Where a stored trace shows up, as text: the rows, a read key's details, the console, generated tests."""
    from django.test import Client
    from django.contrib.auth.models import User

    stored = json.dumps(list(ApiTrace.objects.values(
        "path", "request_parameters", "request_headers", "request_body", "response_headers", "response_body")))
    details = [client.get(f"/api/v1/endpoint/{e.uuid}").content.decode() for e in Endpoint.objects.all()]
    browser = Client()
    browser.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    pages = [browser.get(f"/admin/inventory/apitrace/{t.uuid}/change/").content.decode()
             for t in ApiTrace.objects.all()]
    pages += [browser.get(f"/admin/inventory/endpoint/{e.uuid}/change/").content.decode()
              for e in Endpoint.objects.all()]
    return {"stored traces": stored, "read key": "\n".join(details), "console": "\n".join(pages)}


def test_each_credential_shape_is_redacted_in_storage_read_answers_console_and_generated_tests(
        ingest, scoped_client, client):
    ingest(*traces())
    reader = scoped_client(Scope.READ)
    places = _all_text(reader)
    generated = client.get("/api/v1/gen-test-endpoints", {"host": HOST})
    assert generated.status_code == 200
    places["generated tests"] = generated.content.decode()
    for place, text in places.items():
        for shape, secret in SECRETS.items():
            assert secret not in text, (place, shape)
    # Tests were generated for the endpoints that carried the shapes (the check above is not vacuous).
    generated_for = {item["endpoint"] for item in generated.json() if item.get("success")}
    assert {"/sso/callback", "/api/mfa/setup", "/api/account/password"} <= generated_for

    callback = ApiTrace.objects.get(path="/sso/callback")
    params = {p["name"]: p["value"] for p in callback.request_parameters}
    assert params == {"sid": "[REDACTED]", "ticket": "[REDACTED]", "SAMLResponse": "[REDACTED]",
                      "authkey": "[REDACTED]", "session": "[REDACTED]", "lang": "en"}
    headers = {h["name"]: h["value"] for h in callback.request_headers}
    assert headers["Authentication"] == "Bearer [REDACTED]" and headers["X-Apiscope-Test"] == "[REDACTED]"
    location = {h["name"]: h["value"] for h in callback.response_headers}["Location"]
    assert location == "https://app.example.com/done?code=[REDACTED]&token=[REDACTED]&next=/home"

    mfa = json.loads(ApiTrace.objects.get(path="/api/mfa/setup").response_body)
    assert mfa == {"totpSeed": "[REDACTED]", "mnemonic": "[REDACTED]", "seedPhrase": "[REDACTED]",
                   "recoveryCodes": "[REDACTED]", "backupCode": "[REDACTED]", "status": "enabled"}
    diagnostics = json.loads(ApiTrace.objects.get(path="/api/diagnostics").response_body)
    assert diagnostics["lastError"] == "login failed for ada password=[REDACTED] (bad)"
    assert diagnostics["dsn"] == "[REDACTED]"  # classified (a host in it): sensitive values go whole
    assert diagnostics["version"] == "2.4.1"


def test_credentials_inside_strings_are_redacted_under_full_trace_capture_too(ingest):
    """Full trace capture keeps classified values, never credentials: only the secret part goes."""
    ingest(traces()[2])
    Endpoint.objects.filter(path="/api/diagnostics").update(full_trace_capture_enabled=True)
    ApiTrace.objects.all().delete()
    ingest(traces()[2])
    diagnostics = json.loads(ApiTrace.objects.get(path="/api/diagnostics").response_body)
    assert diagnostics["lastError"] == "login failed for ada password=[REDACTED] (bad)"
    assert diagnostics["dsn"] == "postgres://app:[REDACTED]@db.internal:5432/accounts"


def test_a_password_in_the_url_of_a_password_change_route_is_found_by_context_and_shape(ingest):
    ingest(*traces())
    change = Endpoint.objects.get(path="/api/account/password")
    classes = {f.data_path: f.data_classes for f in DataField.objects.filter(
        endpoint=change, data_section=DataSection.REQUEST_QUERY)}
    assert classes == {"old": ["password"], "new": ["password"], "lang": []}
    descriptions = set(Alert.objects.filter(endpoint=change).values_list("description", flat=True))
    assert "Query Parameter 'old' contains sensitive data of type password." in descriptions
    assert "Query Parameter 'new' contains sensitive data of type password." in descriptions
    stored = {p["name"]: p["value"] for p in ApiTrace.objects.get(endpoint=change).request_parameters}
    assert stored == {"old": "[REDACTED]", "new": "[REDACTED]", "lang": "en"}
    # The same neutral names elsewhere are not passwords.
    ingest(raw_trace(host=HOST, path="/api/orders", query=[("old", "Tr0ub4dor3x"), ("new", "true")],
                     response_body={"orders": []}))
    orders = Endpoint.objects.get(path="/api/orders")
    assert all(not f.data_classes for f in DataField.objects.filter(endpoint=orders))
