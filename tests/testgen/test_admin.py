"""The testing environment in the admin: same validation as the API, token write-only and encrypted."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from testgen.crypto import secret_decrypt
from testgen.models import TestingEnvironment

pytestmark = pytest.mark.django_db

ADD = "/admin/testgen/testingenvironment/add/"


@pytest.fixture
def admin_client() -> Client:
    user = User.objects.create_superuser("root", "root@example.com", "pw")
    browser = Client()
    browser.force_login(user)
    return browser


def form(**values) -> dict:
    data = {"base_url": "https://staging.shop.test", "auth_token": "", "test_user_id": "", "timeout_ms": "",
            "retries": "", "headers": "null", "extra": "{}"}
    data.update(values)
    return data


def test_add_page_is_shown(admin_client):
    response = admin_client.get(ADD)
    assert response.status_code == 200
    assert b"auth_token" in response.content


def test_adding_stores_the_token_encrypted(admin_client):
    response = admin_client.post(ADD, form(auth_token="Bearer s3cret", test_user_id="7", extra='{"otherObjectId": "8"}'))
    assert response.status_code == 302
    row = TestingEnvironment.objects.get()
    assert "s3cret" not in row.auth_token_encrypted
    assert secret_decrypt(row.auth_token_encrypted) == "Bearer s3cret"
    assert (row.test_user_id, row.extra) == ("7", {"otherObjectId": "8"})
    assert admin_client.get(ADD).status_code == 403  # one environment only


def test_changing_without_a_token_keeps_it_and_clearing_removes_it(admin_client):
    admin_client.post(ADD, form(auth_token="Bearer s3cret"))
    change = f"/admin/testgen/testingenvironment/{TestingEnvironment.objects.get().pk}/change/"
    page = admin_client.get(change)
    assert b"s3cret" not in page.content
    assert admin_client.post(change, form(base_url="http://api:3000")).status_code == 302
    row = TestingEnvironment.objects.get()
    assert (row.base_url, secret_decrypt(row.auth_token_encrypted)) == ("http://api:3000", "Bearer s3cret")
    admin_client.post(change, form(clear_auth_token="on"))
    assert TestingEnvironment.objects.get().auth_token_encrypted == ""


@pytest.mark.parametrize(("values", "message"), [
    ({"base_url": "ftp://files.test"}, b"Enter a valid URL."),
    ({"retries": "11"}, b"Ensure this value is less than or equal to 10."),
    ({"extra": '{"env": "x"}'}, b"reserved"),
    ({"headers": '{"X-A": 5}'}, b"Not a valid string."),
])
def test_invalid_values_are_refused(admin_client, values, message):
    response = admin_client.post(ADD, form(**values))
    assert response.status_code == 200
    assert message in response.content
    assert not TestingEnvironment.objects.exists()


def test_runs_are_listed_with_their_results(admin_client):
    from testgen.models import TestRun, TestRunResult

    run = TestRun.objects.create(status=TestRun.Status.DONE, host="shop.test", num_tests=1, num_failed=1)
    TestRunResult.objects.create(run=run, position=0, test_id="t", name="XSS: GET /api/search", template_name="XSS",
                                 outcome="FAILED", message="No payload comes back unescaped")
    assert b"shop.test" in admin_client.get("/admin/testgen/testrun/").content
    page = admin_client.get(f"/admin/testgen/testrun/{run.uuid}/change/")
    assert page.status_code == 200
    assert b"No payload comes back unescaped" in page.content


def test_operators_may_store_environment_variable_placeholders_for_the_command(admin_client):
    # The API refuses {{env.…}}; the admin (operators) may store it: only run_security_tests reads it,
    # for TESTING_ENV_ALLOWLIST names, and runs started through the API fail on it.
    response = admin_client.post(ADD, form(auth_token="Bearer {{env.API_TOKEN}}", headers='{"X-Env": "{{env.TENANT}}"}'))
    assert response.status_code == 302
    row = TestingEnvironment.objects.get()
    assert (secret_decrypt(row.auth_token_encrypted), row.headers) == ("Bearer {{env.API_TOKEN}}",
                                                                      {"X-Env": "{{env.TENANT}}"})


def test_saving_in_the_admin_keeps_identities_set_through_the_api(admin_client, client):
    identities = [{"name": "bob", "userId": "2", "login": {"url": "/login", "tokenPath": "token",
                                                           "body": {"password": "pw-bob-9"}}}]
    assert client.put("/api/v1/testing/global-env", {"baseUrl": "https://staging.shop.test",
                                                     "identities": identities}, format="json").status_code == 200
    change = f"/admin/testgen/testingenvironment/{TestingEnvironment.objects.get().pk}/change/"
    page = admin_client.get(change)
    assert b"pw-bob-9" not in page.content
    assert admin_client.post(change, form(base_url="http://api:3000")).status_code == 302
    shown = client.get("/api/v1/testing/global-env").json()
    assert shown["baseUrl"] == "http://api:3000"
    assert shown["identities"][0]["login"]["body"] == {"password": "pw-bob-9"}
