"""DATA_EXPOSURE and USER_ENUMERATION (issue #15), and RATE_LIMIT on plain writes: where they apply,
and through the real runner against an accounts API modelling the flaws as OWASP API3/API2
write-ups describe them (tests/testgen/twin_apps.py ``AccountApi``): every vulnerable twin FAILED,
every fixed twin PASSED."""
from __future__ import annotations

import json

import pytest

from testgen.services import test_generate
from tests.testgen.conftest import run_command
from tests.testgen.factories import endpoint_from_traffic
from tests.testgen.target_app import RunningTarget
from tests.testgen.twin_apps import AccountApi

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_templates")]
HOST = "accounts.test"


@pytest.fixture
def accounts(db):
    """The endpoints as ordinary traffic showed them: the reads as the vulnerable API answered them (the
    evidence DATA_EXPOSURE needs: a password-like key, stored redacted), the flows as the fixed one did."""
    endpoint_from_traffic(host=HOST, method="GET", path="/api/account", authenticated=True,
                          response={"id": 1, "name": "Alice", "email": "alice@acme.test", "passwordHash": "[REDACTED]"})
    endpoint_from_traffic(host=HOST, method="GET", path="/api/team", authenticated=True,
                          response={"team": "acme", "members": [{"id": 1, "name": "Alice",
                                                                 "auth": {"password_digest": "[REDACTED]"}}]})
    endpoint_from_traffic(host=HOST, method="POST", path="/api/password/forgot", body={"email": "carol@acme.test"},
                          response={"message": "If this email is registered, you will receive a reset link shortly."})
    endpoint_from_traffic(host=HOST, method="POST", path="/api/session",
                          body={"email": "carol@acme.test", "password": "[REDACTED]"}, response={"token": "[REDACTED]"})


@pytest.fixture
def twin(set_env):
    running = []

    def serve(vulnerable: bool) -> None:
        running.append(RunningTarget(AccountApi(vulnerable=vulnerable)))
        # The test user logs in with her email: testUserId is that login name (docs/testgen.md).
        set_env(running[-1].base_url, authToken="Bearer tok-alice", testUserId="alice@acme.test")

    yield serve
    for target in running:
        target.stop()


def _run(template: str, method: str, path: str, *, finding: bool) -> str:
    """Run the one test; assert it FAILED (``finding``) or PASSED; the command's output."""
    status, output = run_command("--host", HOST, "--endpoint", path, "--method", method, "--type", template)
    assert status == int(finding), output
    assert ("0 passed, 1 failed, 0 error(s)" if finding else "1 passed, 0 failed, 0 error(s)") in output
    return output


@pytest.mark.parametrize("path", ["/api/account", "/api/team"])
def test_a_password_hash_in_an_answer_is_found_and_named_not_shown(accounts, twin, path):
    twin(vulnerable=True)
    output = _run("DATA_EXPOSURE", "GET", path, finding=True)
    assert "FAIL [HIGH] Excessive data exposure (passwords in answers): GET " + path in output
    where = "body passwordHash holds a value" if path == "/api/account" else "body members[0].auth.password_digest"
    assert where in output
    assert "$2b$12$" not in output  # the finding names the key; the evidence masks the value
    # ... as credentials are masked in stored traffic (the whole ``auth`` object: a credential name).
    assert ('"passwordHash": "[REDACTED]"' if path == "/api/account" else '"auth": "[REDACTED]"') in output


@pytest.mark.parametrize("path", ["/api/account", "/api/team"])
def test_explicit_fields_mentioning_passwords_are_no_finding(accounts, twin, path):
    twin(vulnerable=False)
    _run("DATA_EXPOSURE", "GET", path, finding=False)  # hasPassword, passwordChangedAt: about a password, not one


@pytest.mark.parametrize(("path", "difference"), [
    ("/api/password/forgot", "status is 200"),        # 404 "No account" vs 200 "Check your inbox!"
    ("/api/session", "differs from the answer to request 0"),  # 401 and 401, other messages
])
def test_answers_telling_users_apart_are_found(accounts, twin, path, difference):
    twin(vulnerable=True)
    assert difference in _run("USER_ENUMERATION", "POST", path, finding=True)


@pytest.mark.parametrize("path", ["/api/password/forgot", "/api/session"])
def test_one_answer_for_every_user_is_no_finding(accounts, twin, path):
    twin(vulnerable=False)
    _run("USER_ENUMERATION", "POST", path, finding=False)


@pytest.mark.parametrize(("method", "path", "body", "applies"), [
    ("POST", "/api/session", {"email": "carol@acme.test", "password": "[REDACTED]"}, True),
    ("POST", "/auth/forgot-password", {"email": "carol@acme.test"}, True),
    ("PUT", "/v2/password/reset", {"username": "carol"}, True),
    ("POST", "/api/login", {"username": "carol"}, False),            # a login without a password field
    ("POST", "/users/register", {"username": "carol", "password": "[REDACTED]"}, False),  # "taken" is its job
    ("POST", "/api/comments", {"username": "carol", "password": "[REDACTED]"}, False),    # not a credential path
])
def test_user_enumeration_applies_to_logins_and_resets_only(db, method, path, body, applies):
    endpoint = endpoint_from_traffic(host=HOST, method=method, path=path, body=body)
    result = test_generate(endpoint=endpoint, template_name="USER_ENUMERATION")
    assert result["success"] is applies
    if applies:  # never a user seen in traffic: one that does not exist, then the test user
        sent = [json.dumps(r["body"]) for r in result["test"]["requests"]]
        assert "carol" not in "".join(sent) and "{{testUserId}}" in sent[1]


def test_a_plain_write_is_checked_for_failures_under_the_burst_not_for_throttling(db):
    comments = endpoint_from_traffic(host=HOST, method="POST", path="/api/comments", authenticated=True,
                                     body={"text": "hi"})
    login = endpoint_from_traffic(host=HOST, method="POST", path="/api/login", body={"username": "carol"})
    plain = test_generate(endpoint=comments, template_name="RATE_LIMIT")["test"]
    credential = test_generate(endpoint=login, template_name="RATE_LIMIT")["test"]
    # the request alone twice (accepted, repeatable), then the burst: only server failures count
    assert [a.get("verdict") for a in plain["assertions"][:2]] == ["accepted", "accepted"]
    assert [(a["condition"], a["value"]) for a in plain["assertions"][2:]] == [("notIn", [500, 502, 504])]
    assert plain["requests"][2]["onlyIfAccepted"] == 1
    # a credential flow: 429, slowed down, or answered otherwise than the single request
    [throttled] = credential["assertions"]
    assert (throttled["condition"], throttled["value"]) == ("equals", 429)
    assert throttled["otherwise"]["otherwise"]["value"] == "{{responses[0].status}}"
    # a pass says exactly what it proved
    assert plain["passedMessage"].startswith("Survived a burst of 8 requests, no throttling seen")
    assert "throttled" in credential["passedMessage"]


def test_data_exposure_needs_a_json_answer_seen_in_traffic(db):
    health = endpoint_from_traffic(host=HOST, method="GET", path="/health")
    assert test_generate(endpoint=health, template_name="DATA_EXPOSURE")["success"] is False
    # ... with a password-like key (or a field the inventory classes as a password): evidence, not a guess
    profile = endpoint_from_traffic(host=HOST, method="GET", path="/api/profile", authenticated=True,
                                    response={"name": "Alice", "hasPassword": True, "passwordChangedAt": "2025"})
    assert test_generate(endpoint=profile, template_name="DATA_EXPOSURE")["success"] is False


def test_data_exposure_covers_secrets_the_inventory_classes_as_passwords_under_any_key(db):
    """Environment dumps (POSTGRES_PASSWORD, JWT_SECRET): keys no password pattern names, classed ``password``."""
    from classification.models import DataField

    dump = endpoint_from_traffic(host=HOST, method="GET", path="/debug/env", authenticated=True,
                                 response={"POSTGRES_PASSWORD": "[REDACTED]", "JWT_SECRET": "[REDACTED]", "TZ": "UTC"})
    DataField.objects.filter(endpoint=dump, data_path__in=["POSTGRES_PASSWORD", "JWT_SECRET"]).update(
        data_classes=["password"])
    test = test_generate(endpoint=dump, template_name="DATA_EXPOSURE")["test"]
    assert test["templateName"] == "DATA_EXPOSURE"
    keys = test["assertions"][0]["keys"]
    assert "POSTGRES_PASSWORD" in keys and "JWT_SECRET" in keys and "TZ" not in keys
