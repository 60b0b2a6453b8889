"""Evidence of findings (issue #15 item 8): every FAILED or ERROR result carries the request/response
pair that decided it, in the CLI table, the JUnit report and the runs API — and no secret of the
environment, its identities or the command's environment variables shows in any of them, even
when the target echoes everything it was sent."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from testgen.models import TestingEnvironment
from tests.testgen.conftest import run_command
from tests.testgen.target_app import RunningTarget

pytestmark = pytest.mark.django_db

AUTH_TOKEN = "env-auth-token-7f3a9c"
EXTRA_SECRET = "extra-api-key-51d0e2"
HEADER_SECRET = "header-secret-88c1b4"
BOB_PASSWORD = "bob-login-pw-29e7f5"
BOB_TOKEN = "bob-fetched-token-6a4d13"
VARIABLE_SECRET = "variable-secret-0b9e77"
SECRETS = (AUTH_TOKEN, EXTRA_SECRET, HEADER_SECRET, BOB_PASSWORD, BOB_TOKEN, VARIABLE_SECRET)


class EchoApp:
    """Answers every request with what it was sent (method, path, query, headers, body), as request
    inspectors and debug endpoints do; ``POST /login`` with bob's password issues bob's token."""

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length).decode() if length else ""
        if environ["REQUEST_METHOD"] == "POST" and environ["PATH_INFO"] == "/login":
            ok = json.loads(body or "{}").get("password") == BOB_PASSWORD
            status, answer = (200, {"token": BOB_TOKEN}) if ok else (401, {"error": "no"})
        else:
            headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")}
            status, answer = 200, {"method": environ["REQUEST_METHOD"], "path": environ["PATH_INFO"],
                                   "query": environ.get("QUERY_STRING", ""), "headers": headers, "body": body,
                                   "note": f"echo of {body}"}
        payload = json.dumps(answer).encode()
        start_response(f"{status} X", [("Content-Type", "application/json"), ("Set-Cookie", f"sid={AUTH_TOKEN}"),
                                       ("Content-Length", str(len(payload)))])
        return [payload]


TESTS = [
    # A finding: the echo quotes the credential, the extra key, the header and bob's password back.
    {"id": "primary", "name": "echo as the primary", "endpoint": "/echo", "method": "POST",
     "requests": [{"description": "echo everything", "url": "{{baseUrl}}/echo?key={{apiKey}}&plain=visible",
                   "headers": {"Authorization": "{{authToken}}", "X-Debug": "{{vaultToken}}"},
                   "body": {"apiKey": "{{apiKey}}", "comment": "pw is " + BOB_PASSWORD, "title": "visible-title"}}],
     "assertions": [{"type": "body", "field": "headers", "condition": "equals", "value": "anything else"}]},
    # A finding as bob: his fetched token in the URL's path and his header.
    {"id": "bob", "name": "echo as bob", "endpoint": "/echo", "method": "GET",
     "requests": [{"description": "bob's token everywhere", "identity": "bob",
                   "url": "{{baseUrl}}/echo/{{identities.bob.token}}"}],
     "assertions": [{"type": "body", "field": "path", "condition": "equals", "value": "/elsewhere"}]},
    # An ERROR (precondition): evidence too.
    {"id": "error", "name": "a failed precondition", "endpoint": "/echo", "method": "GET",
     "requests": [{"description": "echo", "url": "{{baseUrl}}/echo", "headers": {"Authorization": "{{authToken}}"}}],
     "assertions": [{"type": "status", "field": "", "condition": "equals", "value": 201, "precondition": True},
                    {"type": "status", "field": "", "condition": "exists", "value": None}]},
    # A pass: no evidence.
    {"id": "pass", "name": "passes", "endpoint": "/echo", "method": "GET",
     "requests": [{"description": "echo", "url": "{{baseUrl}}/echo", "expectedStatus": 200}]},
]


@pytest.fixture
def echo():
    target = RunningTarget(EchoApp())
    yield target
    target.stop()


@pytest.fixture
def recorded(client, echo, tmp_path, settings, monkeypatch):
    """One command run of TESTS against the echo: (exit status, output, JUnit XML text, runs API detail)."""
    settings.TESTING_ENV_ALLOWLIST = ["VAULT_TOKEN"]
    monkeypatch.setenv("VAULT_TOKEN", VARIABLE_SECRET)
    env = {"baseUrl": echo.base_url, "authToken": f"Bearer {AUTH_TOKEN}", "timeout": 5000, "retries": 0,
           "apiKey": EXTRA_SECRET, "headers": {"X-Api-Key": HEADER_SECRET},
           "identities": [{"name": "bob", "login": {"url": "/login", "body": {"username": "qa-bob",
                                                                                "password": BOB_PASSWORD},
                                                    "tokenPath": "token"}}]}
    assert client.put("/api/v1/testing/global-env", env, format="json").status_code == 200
    # {{env.NAME}} only through the admin, for command runs (docs/testgen.md).
    row = TestingEnvironment.objects.get()
    TestingEnvironment.objects.filter(pk=row.pk).update(extra={**row.extra, "vaultToken": "{{env.VAULT_TOKEN}}"})
    tests_file, report = tmp_path / "tests.json", tmp_path / "report.xml"
    tests_file.write_text(json.dumps(TESTS))
    status, output = run_command("--file", str(tests_file), "--junit", str(report))
    newest = client.get("/api/v1/testing/runs?limit=1").json()[0]
    detail = client.get(f"/api/v1/testing/runs/{newest['uuid']}").json()  # an admin key: evidence in clear
    return status, output, report.read_text(), detail


def test_no_secret_of_the_environment_or_identities_shows_anywhere(recorded):
    status, output, junit, detail = recorded
    assert status == 1
    assert "2 failed, 1 error(s)" in output.replace("1 passed, ", "")
    api = json.dumps(detail)
    for secret in SECRETS:
        assert secret not in output, secret
        assert secret not in junit, secret
        assert secret not in api, secret


def test_failed_and_errored_results_carry_the_deciding_exchange_in_the_runs_api(recorded):
    results = {r["testId"]: r for r in recorded[3]["results"]}
    assert results["pass"]["evidence"] is None
    assert results["primary"]["severity"] is None  # a hand-written test names no template
    primary = results["primary"]["evidence"]
    request, response = primary["request"], primary["response"]
    assert (request["index"], request["method"], request["description"]) == (0, "POST", "echo everything")
    assert request["url"].endswith("/echo?key=[REDACTED]&plain=visible")
    assert request["headers"]["Authorization"] == "Bearer [REDACTED]"  # the scheme stays
    assert request["headers"]["X-Api-Key"] == "[REDACTED]"
    assert json.loads(request["body"]) == {"apiKey": "[REDACTED]", "comment": "pw is [REDACTED]",
                                           "title": "visible-title"}
    assert (response["status"], response["headers"]["Set-Cookie"]) == (200, "[REDACTED]")
    echoed = json.loads(response["body"])
    assert echoed["headers"]["Authorization"] == "[REDACTED]" and echoed["query"] == "key=[REDACTED]&plain=visible"
    assert response["bodySize"] > len("visible-title") and response["bodyTruncated"] is False
    assert "/echo/[REDACTED]" in results["bob"]["evidence"]["request"]["url"]
    assert results["bob"]["evidence"]["request"]["headers"]["Authorization"] == "Bearer [REDACTED]"
    error = results["error"]
    assert (error["outcome"], error["evidence"]["response"]["status"]) == ("ERROR", 200)


def test_the_cli_table_and_junit_show_the_pair(recorded):
    _, output, junit, _ = recorded
    assert "> POST http://127.0.0.1:" in output and "/echo?key=[REDACTED]&plain=visible" in output
    assert "> Authorization: Bearer [REDACTED]" in output
    assert "< 200 (" in output
    cases = list(ET.fromstring(junit.encode()).iter("testcase"))
    failure = next(c for c in cases if c.find("failure") is not None and "/echo?" in c.find("failure").text)
    assert "Evidence (secrets redacted):" in failure.find("failure").text
    assert "> Authorization: Bearer [REDACTED]" in failure.find("system-out").text
    assert any(c.find("error") is not None and "< 200 (" in c.find("error").text for c in cases)


def test_a_long_answer_is_cut_after_redaction(echo, client, tmp_path):
    client.put("/api/v1/testing/global-env", {"baseUrl": echo.base_url, "authToken": f"Bearer {AUTH_TOKEN}",
                                              "timeout": 5000, "retries": 0}, format="json")
    test = {"id": "long", "name": "long", "endpoint": "/echo", "method": "POST",
            "requests": [{"description": "a long body", "url": "{{baseUrl}}/echo",
                          "body": {"text": "x" * 5000, "token": AUTH_TOKEN}}],
            "assertions": [{"type": "status", "field": "", "condition": "equals", "value": 418}]}
    (tmp_path / "t.json").write_text(json.dumps(test))
    run_command("--file", str(tmp_path / "t.json"))
    newest = client.get("/api/v1/testing/runs?limit=1").json()[0]
    evidence = client.get(f"/api/v1/testing/runs/{newest['uuid']}").json()["results"][0]["evidence"]
    assert evidence["request"]["bodyTruncated"] and len(evidence["request"]["body"]) == 1000
    assert evidence["response"]["bodyTruncated"] and len(evidence["response"]["body"]) == 2000
    assert evidence["response"]["bodySize"] > 10000
    assert AUTH_TOKEN not in json.dumps(evidence)

