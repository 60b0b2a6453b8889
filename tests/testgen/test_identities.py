"""Identities and login recipes (DECISIONS §8, issue #15 item 1): validated through the API,
encrypted at rest, masked for read keys; the runner logs in before a run and once more when an
identity's own request is answered 401 (tokens of the target expire mid-run)."""
from __future__ import annotations

import json
import logging

import pytest
from django.db import connection

from core.scopes import Scope
from testgen.crypto import secret_decrypt
from testgen.models import TestingEnvironment, TestRun
from tests.testgen.conftest import run_command
from tests.testgen.login_target import USERS, LoginApp
from tests.testgen.target_app import RunningTarget
from tests.testgen.test_global_env_api import zod_issues

pytestmark = pytest.mark.django_db

URL = "/api/v1/testing/global-env"


def alice_login(**extra) -> dict:
    return {"method": "POST", "url": "/auth/login", "body": {"username": "alice", "password": USERS["alice"]},
            "tokenPath": "data.token", **extra}


def environment(base_url: str, **extra) -> dict:
    return {
        "baseUrl": base_url, "timeout": 5000, "retries": 0, "testUserId": "1", "login": alice_login(),
        "identities": [{"name": "bob", "userId": "2", "objectIds": {"note": "2"},
                        "login": {"url": "/auth/login", "tokenPath": "data.token",
                                  "body": {"username": "bob", "password": USERS["bob"]}}}],
        **extra,
    }


@pytest.fixture
def login_target():
    target = RunningTarget(LoginApp(uses=2))
    yield target
    target.stop()


def put(client, body: dict):
    return client.put(URL, body, format="json")


class TestStorage:
    def test_identities_and_logins_round_trip_for_admin_keys(self, client):
        body = environment("https://api.shop.test")
        body["identities"].append({"name": "carol", "authToken": "Bearer carol-static-Tok9", "userId": "3"})
        answer = put(client, body)
        assert answer.status_code == 200, answer.content
        shown = client.get(URL).json()
        assert shown["login"] == {**alice_login(), "method": "POST"}
        assert [i["name"] for i in shown["identities"]] == ["bob", "carol"]
        assert shown["identities"][1]["authToken"] == "Bearer carol-static-Tok9"
        assert shown["identities"][0]["objectIds"] == {"note": "2"}

    def test_encrypted_at_rest_no_token_or_password_in_the_row(self, client):
        body = environment("https://api.shop.test")
        body["identities"].append({"name": "carol", "authToken": "Bearer carol-static-Tok9"})
        assert put(client, body).status_code == 200
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM testgen_testingenvironment")
            raw = json.dumps(cursor.fetchall(), default=str)
        for secret in (USERS["alice"], USERS["bob"], "carol-static-Tok9", "data.token", "bob"):
            assert secret not in raw
        row = TestingEnvironment.objects.get()
        assert json.loads(secret_decrypt(row.identities_encrypted))["identities"][1]["name"] == "carol"

    def test_read_keys_see_secrets_masked(self, client, scoped_client):
        body = environment("https://api.shop.test")
        body["identities"].append({"name": "carol", "authToken": "Bearer carol-static-Tok9", "userId": "3"})
        assert put(client, body).status_code == 200
        answer = scoped_client("read").get(URL)
        assert answer.status_code == 200
        shown = answer.json()
        text = json.dumps(shown)
        for secret in (USERS["alice"], USERS["bob"], "carol-static-Tok9"):
            assert secret not in text
        assert shown["login"]["body"] == "[REDACTED]"
        assert shown["login"]["tokenPath"] == "data.token"  # where the token sits is not a secret
        assert shown["identities"][0]["login"]["body"] == "[REDACTED]"
        assert shown["identities"][1]["authToken"] == "[REDACTED]"
        assert shown["identities"][1]["userId"] == "3"

    def test_cookies_form_logins_and_the_run_scope_round_trip(self, client, scoped_client):
        body = {**environment("https://api.shop.test"), "cookie": {"name": "sid", "value": "s3ss10nV4lue"},
                "login": {"url": "/oauth/token", "form": True, "tokenPath": "access_token", "cookie": {"name": "sid"},
                          "body": {"grant_type": "password", "username": "alice", "password": USERS["alice"]}},
                "exclude": [{"path": "/admin/**"}, {"path": "/users/{id}", "methods": ["delete"]}],
                "allowDestructive": [{"path": "/api/reset-*", "methods": ["POST"]}]}
        answer = put(client, body)
        assert answer.status_code == 200, answer.content
        shown = client.get(URL).json()
        assert shown["exclude"] == [{"path": "/admin/**"}, {"path": "/users/{id}", "methods": ["DELETE"]}]
        assert shown["allowDestructive"] == [{"path": "/api/reset-*", "methods": ["POST"]}]
        assert shown["cookie"] == {"name": "sid", "value": "s3ss10nV4lue"} and shown["login"]["form"] is True
        masked = json.dumps(scoped_client(Scope.READ).get(URL).json())
        assert "s3ss10nV4lue" not in masked and USERS["alice"] not in masked
        assert TestingEnvironment.objects.get().exclude[0] == {"path": "/admin/**"}

    @pytest.mark.parametrize(("change", "path"), [
        ({"login": {"url": "/auth/login"}}, ["login", "tokenPath"]),
        ({"login": {"url": "ftp://x/login", "tokenPath": "t"}}, ["login", "url"]),
        ({"login": {"url": "/l", "tokenPath": "t", "scheme": "Bearer x"}}, ["login", "scheme"]),
        ({"login": {"url": "/l", "tokenPath": "t", "method": "DELETE"}}, ["login", "method"]),
        ({"login": {"url": "/l", "tokenPath": "t", "body": 5}}, ["login", "body"]),
        ({"login": {"url": "/l", "tokenPath": "t", "header": "Bad Header"}}, ["login", "header"]),
        ({"identities": {"name": "bob"}}, ["identities"]),
        ({"identities": [{"name": "primary"}]}, ["identities", 0, "name"]),
        ({"identities": [{"name": "bob"}, {"name": "BOB"}]}, ["identities"]),
        ({"identities": [{"name": "bob", "authToken": 5}]}, ["identities", 0, "authToken"]),
        ({"identities": [{"name": "bob", "objectIds": {"note": 2}}]}, ["identities", 0, "objectIds", "note"]),
        ({"login": {"url": "/l", "tokenPath": "t", "body": {"password": "{{env.SECRET_KEY}}"}}}, ["login"]),
        # turn 3: cookies, form logins, the run scope
        ({"login": {"url": "/l", "cookie": {"name": "bad name"}}}, ["login", "cookie", "name"]),
        ({"login": {"url": "/l", "form": True, "tokenPath": "t", "body": "a=1"}}, ["login", "body"]),
        ({"login": {"url": "/l", "tokenPath": "t", "form": "yes"}}, ["login", "form"]),
        ({"cookie": {"value": "abc"}}, ["cookie", "name"]),
        ({"cookie": {"name": "sid", "value": "a b;c"}}, ["cookie", "value"]),
        ({"identities": [{"name": "bob", "cookie": {"name": "sid", "value": 5}}]}, ["identities", 0, "cookie", "value"]),
        ({"exclude": {"path": "/x"}}, ["exclude"]),
        ({"exclude": [{"path": "no-slash"}]}, ["exclude", 0, "path"]),
        ({"exclude": [{"path": "/a/**/b"}]}, ["exclude", 0, "path"]),
        ({"exclude": [{"path": "/a", "methods": ["FETCH"]}]}, ["exclude", 0, "methods", 0]),
        ({"exclude": [{"methods": ["GET"]}]}, ["exclude", 0, "path"]),
        ({"allowDestructive": [{"path": "/reset", "methods": []}]}, ["allowDestructive", 0, "methods"]),
        ({"allowDestructive": [{"path": "/r"}] * 201}, ["allowDestructive"]),
    ])
    def test_bad_input_is_a_zod_error_and_changes_nothing(self, client, change, path):
        before = put(client, environment("https://api.shop.test")).json()
        issues = zod_issues(put(client, {**environment("https://other.test"), **change}))
        assert path in [issue["path"] for issue in issues], issues
        assert client.get(URL).json() == before


class TestRuns:
    TESTS = [
        {"id": "me", "name": "me as the primary, three times", "endpoint": "/me", "method": "GET",
         "requests": [{"description": f"me {i}", "headers": {"Authorization": "{{authToken}}"},
                       "expectedStatus": 200} for i in range(3)]},
        {"id": "notes", "name": "notes as two users", "endpoint": "/notes/{id}", "method": "GET",
         "requests": [{"description": "bob reads his note", "identity": "bob",
                       "url": "{{baseUrl}}/notes/{{identities.bob.objectIds.note}}", "expectedStatus": 200},
                      {"description": "alice reads bob's note", "headers": {"Authorization": "{{authToken}}"},
                       "url": "{{baseUrl}}/notes/{{identities.bob.objectIds.note}}", "expectedStatus": 403}]},
        {"id": "tampered", "name": "a tampered token is refused", "endpoint": "/me", "method": "GET",
         "requests": [{"description": "tampered", "headers": {"Authorization": "{{authToken}}x"},
                       "expectedStatus": 401}]},
        {"id": "again", "name": "me again", "endpoint": "/me", "method": "GET",
         "requests": [{"description": "me", "headers": {"Authorization": "{{authToken}}"}, "expectedStatus": 200},
                      {"description": "me as bob", "headers": {"Authorization": "{{identities.bob.authToken}}"},
                       "expectedStatus": 200, "expectedResponse": {"user": "bob"}}]},
    ]

    def run_file(self, tmp_path, tests=None) -> tuple[int, str]:
        tests_file = tmp_path / "tests.json"
        tests_file.write_text(json.dumps(tests or self.TESTS))
        return run_command("--file", str(tests_file))

    def test_logs_in_before_the_run_and_again_on_a_401_to_its_own_request(self, client, login_target, tmp_path,
                                                                          caplog):
        assert put(client, environment(login_target.base_url)).status_code == 200
        caplog.set_level(logging.DEBUG)
        status, output = self.run_file(tmp_path)
        assert status == 0, output
        assert "4 passed, 0 failed, 0 error(s)" in output
        app = login_target.app
        # Before the run: alice and bob; alice's token ran out on her 3rd request and at "me again".
        # The tampered token's 401 was not alice's own request: no login for it.
        assert app.logins == {"alice": 3, "bob": 1}
        assert all(h.startswith("Bearer tk") for h in app.auth_headers)  # scheme + token, never bare
        for secret in (USERS["alice"], USERS["bob"], "tk1-", "tk2-", "tk3-", "tk4-"):
            assert secret not in caplog.text
            assert secret not in output
        assert "Identity bob logged in" in caplog.text

    def test_a_failed_login_fails_the_run_before_any_test(self, client, login_target, tmp_path):
        body = environment(login_target.base_url)
        body["identities"][0]["login"]["body"]["password"] = "wrong"
        assert put(client, body).status_code == 200
        with pytest.raises(Exception, match="login of identity bob was answered 401"):
            self.run_file(tmp_path)
        run = TestRun.objects.get()
        assert (run.status, run.error) == (TestRun.Status.FAILED, "login of identity bob was answered 401")
        assert login_target.app.auth_headers == []  # no test request went out

    def test_a_login_url_is_vetted_like_a_test_target(self, client, login_target, tmp_path, settings):
        body = environment(login_target.base_url, login=alice_login(url="http://169.254.169.254/latest/login"))
        assert put(client, body).status_code == 200
        with pytest.raises(Exception, match="169.254.169.254"):
            self.run_file(tmp_path)
        assert login_target.app.logins == {"alice": 0, "bob": 0}
        assert TestRun.objects.get().status == TestRun.Status.FAILED

    def test_without_a_login_recipe_a_401_is_not_retried(self, client, login_target, tmp_path):
        body = {"baseUrl": login_target.base_url, "timeout": 5000, "retries": 0, "authToken": "Bearer tk-unknown"}
        assert put(client, body).status_code == 200
        status, output = self.run_file(tmp_path, [self.TESTS[0]])
        assert status == 1
        assert len(login_target.app.auth_headers) == 3  # one per request, no retry

    def test_login_as_sends_an_identitys_login_with_another_password_and_keeps_its_token(self, client, login_target,
                                                                                         tmp_path):
        # BOLA proves a password change by the owner logging in with the password the attacker set.
        assert put(client, environment(login_target.base_url)).status_code == 200
        test = {"id": "t", "name": "login as bob", "endpoint": "/me", "method": "GET",
                "requests": [{"description": "new password", "loginAs": "bob", "loginPassword": "not-bobs"},
                             {"description": "his own", "loginAs": "bob"},
                             {"description": "nobody", "loginAs": "mallory"},
                             {"description": "me as bob", "headers": {"Authorization": "{{identities.bob.authToken}}"},
                              "expectedResponse": {"user": "bob"}}],
                "assertions": [{"type": "status", "field": "", "condition": "equals", "value": 401, "request": 0},
                               {"type": "status", "field": "", "condition": "equals", "value": 200, "request": 1}]}
        status, output = self.run_file(tmp_path, [test])
        assert status == 0, output
        assert login_target.app.logins == {"alice": 1, "bob": 2}  # before the run, and request 1
        assert "not-bobs" not in output
