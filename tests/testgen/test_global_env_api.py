"""GET/PUT/DELETE /testing/global-env: `[]` when unset, validated replacement, token encrypted at rest."""
from __future__ import annotations

import pytest
from django.db import connection

from testgen.crypto import secret_decrypt
from testgen.models import TestingEnvironment
from testgen.services import AuthTokenUnreadable, run_environment_load

pytestmark = pytest.mark.django_db

URL = "/api/v1/testing/global-env"
TOKEN = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXVzZXI.sig-Zq9"
FULL = {
    "baseUrl": "https://staging.shop.test/",
    "authToken": TOKEN,
    "testUserId": "42",
    "timeout": 2500,
    "retries": 3,
    "headers": {"X-Tenant": "qa", "Accept": "application/json"},
    "otherObjectId": "77",
}


def zod_issues(response) -> list[dict]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["type"] == "ZOD" and body["err"]["name"] == "ZodError"
    return body["err"]["issues"]


def test_unset_environment_is_an_empty_array(client):
    response = client.get(URL)
    assert response.status_code == 200
    assert response.json() == []


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_missing_key_is_client_unauthorized(anon_client, method):
    response = getattr(anon_client, method)(URL, FULL, format="json")
    assert response.status_code == 401
    assert response.json() == "Client unauthorized"
    assert not TestingEnvironment.objects.exists()


def test_round_trip(client):
    put = client.put(URL, FULL, format="json")
    assert put.status_code == 200
    expected = {**FULL, "baseUrl": "https://staging.shop.test"}  # trailing slash dropped
    assert put.json() == expected
    assert client.get(URL).json() == expected

    row = TestingEnvironment.objects.get()
    assert (row.base_url, row.test_user_id, row.timeout_ms, row.retries) == ("https://staging.shop.test", "42", 2500, 3)
    assert row.headers == FULL["headers"]
    assert row.extra == {"otherObjectId": "77"}
    assert secret_decrypt(row.auth_token_encrypted) == TOKEN


def test_token_is_not_stored_in_clear(client):
    client.put(URL, FULL, format="json")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {TestingEnvironment._meta.db_table}")
        stored = repr(cursor.fetchall())
    assert "eyJhbGciOiJIUzI1NiJ9" not in stored
    assert "sig-Zq9" not in stored
    assert TestingEnvironment.objects.get().auth_token_encrypted.startswith("gAAAAA")  # a Fernet token


def test_put_replaces_the_whole_environment(client):
    client.put(URL, FULL, format="json")
    response = client.put(URL, {"baseUrl": "http://api:3000"}, format="json")
    assert response.json() == {"baseUrl": "http://api:3000"}
    row = TestingEnvironment.objects.get()
    assert (row.auth_token_encrypted, row.test_user_id, row.headers, row.extra) == ("", None, None, {})
    assert TestingEnvironment.objects.count() == 1


def test_empty_token_means_no_token(client):
    response = client.put(URL, {"baseUrl": "http://127.0.0.1:8080", "authToken": ""}, format="json")
    assert response.json() == {"baseUrl": "http://127.0.0.1:8080"}
    assert TestingEnvironment.objects.get().auth_token_encrypted == ""


def test_delete_unsets_it(client):
    client.put(URL, FULL, format="json")
    response = client.delete(URL)
    assert (response.status_code, response.json()) == (200, "Success")
    assert client.get(URL).json() == []
    assert not TestingEnvironment.objects.exists()


class TestValidation:
    def test_base_url_is_required(self, client):
        issues = zod_issues(client.put(URL, {"authToken": "x"}, format="json"))
        assert issues == [{"code": "invalid_type", "expected": "string", "received": "undefined",
                           "path": ["baseUrl"], "message": "Required"}]

    @pytest.mark.parametrize("url", ["ftp://files.test", "not a url", "https://", "http://h:99999", "https://x.test?a=1",
                                     # malformed IPv6 literals: urlsplit raises on these (a 500 before)
                                     "http://[::1", "http://[x]", "http://a]/", "http://[127.0.0.1]/",
                                     "http://{{responses[0].body.h}}"])
    def test_base_url_must_be_http_or_https(self, client, url):
        issues = zod_issues(client.put(URL, {"baseUrl": url}, format="json"))
        assert issues[0]["code"] == "invalid_string"
        assert issues[0]["validation"] == "url"
        assert issues[0]["path"] == ["baseUrl"]

    @pytest.mark.parametrize(("url", "code"), [("http://a\x00b.test", "custom"),
                                                ("http://api.test/" + "p" * 2100, "too_big")])
    def test_base_url_nul_and_length_are_checked(self, client, url, code):
        issues = zod_issues(client.put(URL, {"baseUrl": url}, format="json"))
        assert (issues[0]["path"], issues[0]["code"]) == (["baseUrl"], code)
        assert not TestingEnvironment.objects.exists()

    @pytest.mark.parametrize(("body", "path", "code"), [
        ({"timeout": 0}, ["timeout"], "too_small"),
        ({"timeout": 600_001}, ["timeout"], "too_big"),
        ({"timeout": "soon"}, ["timeout"], "invalid_type"),
        ({"retries": 11}, ["retries"], "too_big"),
        ({"retries": -1}, ["retries"], "too_small"),
        ({"testUserId": ["42"]}, ["testUserId"], "invalid_type"),
        ({"headers": ["X-A"]}, ["headers"], "invalid_type"),
        ({"headers": {"X-A": {"b": 1}}}, ["headers", "X-A"], "invalid_type"),
        ({"otherObjectId": 77.5}, ["otherObjectId"], "invalid_type"),
        ({"testUserId": 42}, ["testUserId"], "invalid_type"),
        ({"authToken": True}, ["authToken"], "invalid_type"),
        ({"otherObjectId": {"id": 7}}, ["otherObjectId"], "invalid_type"),
    ])
    def test_bad_values_are_zod_issues(self, client, body, path, code):
        issues = zod_issues(client.put(URL, {"baseUrl": "http://api.test", **body}, format="json"))
        assert [(i["path"], i["code"]) for i in issues][:1] == [(path, code)]

    @pytest.mark.parametrize("name", ["env", "responses", "has-dash", "1st", "x" * 65])
    def test_extra_keys_must_be_placeholder_names(self, client, name):
        issues = zod_issues(client.put(URL, {"baseUrl": "http://api.test", name: "v"}, format="json"))
        assert issues[0]["path"] == [name]

    def test_header_values_cannot_carry_line_breaks(self, client):
        issues = zod_issues(client.put(URL, {"baseUrl": "http://api.test", "headers": {"X-A": "a\r\nX-B: b"}},
                                       format="json"))
        assert issues[0]["path"] == ["headers"]

    def test_body_must_be_an_object(self, client):
        assert zod_issues(client.put(URL, ["baseUrl"], format="json"))

    def test_malformed_json_is_a_validation_error(self, client):
        issues = zod_issues(client.put(URL, "{not json", content_type="application/json"))
        assert issues[0]["path"] == []

    def test_bad_input_changes_nothing(self, client):
        client.put(URL, FULL, format="json")
        before = client.get(URL).json()
        zod_issues(client.put(URL, {"baseUrl": "http://api.test", "retries": 99}, format="json"))
        assert client.get(URL).json() == before

    @pytest.mark.parametrize(("body", "path"), [
        ({"authToken": "Bearer {{env.SECRET_KEY}}"}, ["authToken"]),
        ({"authToken": "{{ env.API_TOKEN }}"}, ["authToken"]),
        ({"headers": {"X-Tenant": "qa", "X-Leak": "{{env.DATABASE_URL}}"}}, ["headers", "X-Leak"]),
        ({"otherObjectId": "id-{{env.FIELD_ENCRYPTION_KEY}}"}, ["otherObjectId"]),
        ({"testUserId": "{{env.SECRET_KEY}}"}, ["testUserId"]),
        ({"baseUrl": "http://{{env.SECRET_KEY}}.attacker.test"}, ["baseUrl"]),
    ])
    def test_environment_variable_placeholders_are_refused_and_change_nothing(self, client, body, path):
        client.put(URL, FULL, format="json")
        before = (client.get(URL).json(), TestingEnvironment.objects.values().get())
        issues = zod_issues(client.put(URL, {**FULL, **body}, format="json"))
        assert issues == [{"code": "custom", "path": path, "message": (
            "{{env.…}} cannot be set through the API: environment variables are read only by "
            "manage.py run_security_tests, for the names in TESTING_ENV_ALLOWLIST (set such a value in the admin).")}]
        assert (client.get(URL).json(), TestingEnvironment.objects.values().get()) == before

    def test_an_escaped_brace_is_no_environment_variable(self, client):
        body = {"baseUrl": "http://api.test", "otherObjectId": "{{'{'}}{{'{'}}env.X}}"}
        assert client.put(URL, body, format="json").status_code == 200


class TestEncryptionKeys:
    def test_rotation_keeps_old_tokens_readable(self, client, settings):
        settings.FIELD_ENCRYPTION_KEY = "first-key"
        client.put(URL, FULL, format="json")
        settings.FIELD_ENCRYPTION_KEY = "second-key,first-key"
        assert client.get(URL).json()["authToken"] == TOKEN

    def test_unreadable_token_is_left_out_and_stops_a_run(self, client, settings):
        settings.FIELD_ENCRYPTION_KEY = "first-key"
        client.put(URL, FULL, format="json")
        settings.FIELD_ENCRYPTION_KEY = "another-key"
        response = client.get(URL)
        assert response.status_code == 200
        assert "authToken" not in response.json()
        assert response.json()["baseUrl"] == "https://staging.shop.test"
        with pytest.raises(AuthTokenUnreadable):
            run_environment_load()

    def test_without_a_configured_key_it_derives_one_from_the_secret_key(self, client, settings):
        settings.FIELD_ENCRYPTION_KEY = ""
        client.put(URL, FULL, format="json")
        assert run_environment_load().values["authToken"] == TOKEN
        settings.SECRET_KEY = "a-different-secret-key-" + "x" * 40
        with pytest.raises(AuthTokenUnreadable):
            run_environment_load()


def test_run_environment_applies_defaults(client):
    client.put(URL, {"baseUrl": "http://api.test"}, format="json")
    environment = run_environment_load()
    assert (environment.base_url, environment.timeout_ms, environment.retries, environment.headers) == (
        "http://api.test", 10_000, 2, {})
    assert environment.values == {"baseUrl": "http://api.test"}
