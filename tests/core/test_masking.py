"""Secrets masked for read keys, in clear for admin keys (DECISIONS §2): the global testing
environment, credentials inside webhook URLs, test-run evidence; and the masking rules themselves."""
from __future__ import annotations

import pytest

from core.masking import MASK, secrets_masked, url_masked
from core.models import Scope
from testgen.models import TestRun, TestRunResult
from webhooks.models import Webhook

pytestmark = pytest.mark.django_db

ENV = "/api/v1/testing/global-env"
RUNS = "/api/v1/testing/runs"
TOKEN = "Bearer tok-s3cret-alice"


@pytest.fixture
def admin(scoped_client):
    return scoped_client(Scope.ADMIN)


@pytest.fixture
def reader(scoped_client):
    return scoped_client(Scope.READ)


# ------------------------------------------------------------------ the global testing environment

@pytest.fixture
def environment(admin) -> dict:
    body = {"baseUrl": "https://qa:pw-base@staging.shop.test", "authToken": TOKEN, "testUserId": "1",
            "timeout": 5000, "retries": 1,
            "headers": {"X-API-Key": "hk-123456", "Cookie": "sid=c00kie", "X-Tenant": "acme"},
            "adminPassword": "pw-admin-9", "otherObjectId": "8"}
    response = admin.put(ENV, body, format="json")
    assert response.status_code == 200, response.content
    return body


def test_a_read_key_sees_the_environment_with_its_secrets_masked(reader, environment):
    response = reader.get(ENV)
    assert response.status_code == 200
    assert response.json() == {
        "baseUrl": f"https://{MASK}@staging.shop.test", "authToken": MASK, "testUserId": "1", "timeout": 5000,
        "retries": 1, "headers": {"X-API-Key": MASK, "Cookie": MASK, "X-Tenant": "acme"},
        "adminPassword": MASK, "otherObjectId": "8",
    }
    for secret in ("tok-s3cret-alice", "pw-base", "hk-123456", "c00kie", "pw-admin-9"):
        assert secret.encode() not in response.content


def test_an_admin_key_sees_the_environment_in_clear(admin, environment):
    assert admin.get(ENV).json() == environment


def test_an_unset_environment_is_the_empty_array_for_both(admin, reader):
    assert reader.get(ENV).json() == [] == admin.get(ENV).json()


# ------------------------------------------------------------------ webhook URLs

HOOK_URL = "https://alerts:hunter2@hooks.example.com/in?token=t0k-987&channel=ops"


def test_a_read_key_sees_webhook_urls_without_credentials(admin, reader):
    created = admin.post("/api/v1/webhook", {"url": HOOK_URL}, format="json").json()
    assert created["url"] == HOOK_URL
    masked = f"https://{MASK}@hooks.example.com/in?token={MASK}&channel=ops"
    one = reader.get(f"/api/v1/webhook/{created['uuid']}")
    listed = reader.get("/api/v1/webhooks")
    assert one.json()["url"] == masked
    assert [hook["url"] for hook in listed.json()] == [masked]
    for response in (one, listed):
        assert b"hunter2" not in response.content and b"t0k-987" not in response.content
    assert {k: v for k, v in one.json().items() if k != "url"} == {k: v for k, v in created.items() if k != "url"}


def test_an_admin_key_sees_webhook_urls_in_clear(admin):
    hook = Webhook.objects.create(url=HOOK_URL)
    assert admin.get(f"/api/v1/webhook/{hook.uuid}").json()["url"] == HOOK_URL
    assert admin.get("/api/v1/webhooks").json()[0]["url"] == HOOK_URL


# ------------------------------------------------------------------ test-run evidence

@pytest.fixture
def run() -> TestRun:
    run = TestRun.objects.create(status=TestRun.Status.DONE, base_url="https://qa:pw-base@staging.shop.test",
                                 num_tests=2, num_failed=1, num_passed=1)
    TestRunResult.objects.create(
        run=run, position=0, test_id="t0", name="BOLA on GET /api/users/{param1}", template_name="BOLA",
        host="shop.test", method="GET", endpoint="/api/users/{param1}", outcome="FAILED",
        message='request 1 (read as bob): body is {"email": "alice@example.com", "ssn": "078-05-1120"}',
        checks=[{"description": "another user's object is refused", "outcome": "failed", "precondition": False,
                 "message": f"request 1 (Authorization: {TOKEN}; X-API-Key: hk-123456): status is 200"},
                {"description": "the owner can read it", "outcome": "passed", "precondition": True, "message": ""}],
    )
    TestRunResult.objects.create(run=run, position=1, test_id="t1", name="XSS", outcome="PASSED", message="")
    return run


def test_a_read_key_sees_outcomes_but_not_the_evidence(reader, run):
    detail = reader.get(f"{RUNS}/{run.uuid}")
    body = detail.json()
    assert body["baseUrl"] == f"https://{MASK}@staging.shop.test"
    failed, passed = body["results"]
    assert (failed["outcome"], failed["name"], failed["message"]) == ("FAILED", "BOLA on GET /api/users/{param1}",
                                                                      MASK)
    assert failed["checks"] == [
        {"description": "another user's object is refused", "outcome": "failed", "precondition": False,
         "message": MASK},
        {"description": "the owner can read it", "outcome": "passed", "precondition": True, "message": ""},
    ]
    assert (passed["outcome"], passed["message"]) == ("PASSED", "")
    for secret in ("alice@example.com", "078-05-1120", "tok-s3cret", "hk-123456", "pw-base"):
        assert secret.encode() not in detail.content
    assert reader.get(RUNS).json()[0]["baseUrl"] == f"https://{MASK}@staging.shop.test"


def test_an_admin_key_sees_the_evidence_in_clear(admin, run):
    body = admin.get(f"{RUNS}/{run.uuid}").json()
    assert body["baseUrl"] == "https://qa:pw-base@staging.shop.test"
    assert "078-05-1120" in body["results"][0]["message"]
    assert TOKEN in body["results"][0]["checks"][0]["message"]
    assert admin.get(RUNS).json()[0]["baseUrl"] == "https://qa:pw-base@staging.shop.test"


# ------------------------------------------------------------------ the rules

@pytest.mark.parametrize(("url", "masked"), [
    ("https://hooks.example.com/in", "https://hooks.example.com/in"),
    ("https://user@h.example/x", f"https://{MASK}@h.example/x"),
    ("https://u:p@h.example:8443/x?a=1", f"https://{MASK}@h.example:8443/x?a=1"),
    ("https://h.example/x?api_key=k1&key=k2&sig=s&Signature=S&access_token=a&page=2",
     f"https://h.example/x?api_key={MASK}&key={MASK}&sig={MASK}&Signature={MASK}&access_token={MASK}&page=2"),
    ("https://h.example/cb#access_token=a1&state=s", f"https://h.example/cb#access_token={MASK}&state=s"),
    ("https://hooks.slack.example/services/T0AAAA/B0BBBB/Xk9vQ2hT7pLm4nRs8dWe1zYc",
     f"https://hooks.slack.example/services/T0AAAA/B0BBBB/{MASK}"),
    ("https://discord.example/api/webhooks/112233445566778899/AbCdEf-GhIjKlMn_OpQrStUvWx",
     f"https://discord.example/api/webhooks/{MASK}/{MASK}"),
    ("https://h.example/hooks/alerts-receiver-endpoint", "https://h.example/hooks/alerts-receiver-endpoint"),
    ("https://h.example/x?token=", "https://h.example/x?token="),
    ("http://[::1/x", MASK),
])
def test_url_masking(url, masked):
    assert url_masked(url) == masked


def test_identities_and_login_recipes_are_masked_generically():
    environment = {
        "baseUrl": "https://staging.shop.test",
        "identities": [{
            "name": "bob", "userId": "2", "authToken": "Bearer tok-bob", "objectIds": {"order": "17"},
            "login": {"method": "POST", "url": "https://bob:pw@auth.shop.test/login?client_secret=cs",
                      "headers": {"Authorization": "Basic Ym9iOnB3", "Accept": "application/json"},
                      "body": {"username": "bob", "password": "pw-bob"}, "tokenPath": "data.token",
                      "header": "Authorization", "scheme": "Bearer"},
        }],
        "login": {"method": "POST", "url": "https://auth.shop.test/login", "body": "user=alice&pass=pw-alice",
                  "tokenPath": "token"},
        "notes": "ask ops, token=t-123",
        "emptyToken": "",
    }
    masked = secrets_masked(environment)
    bob = masked["identities"][0]
    assert (bob["name"], bob["userId"], bob["objectIds"], bob["authToken"]) == ("bob", "2", {"order": "17"}, MASK)
    assert bob["login"] == {
        "method": "POST", "url": f"https://{MASK}@auth.shop.test/login?client_secret={MASK}",
        "headers": {"Authorization": MASK, "Accept": "application/json"}, "body": MASK, "tokenPath": "data.token",
        "header": "Authorization", "scheme": "Bearer",
    }
    assert masked["login"]["body"] == MASK and masked["login"]["tokenPath"] == "token"
    assert masked["notes"] == f"ask ops, token={MASK}"
    assert masked["emptyToken"] == ""
    assert environment["identities"][0]["authToken"] == "Bearer tok-bob"  # the input is left alone


def test_header_lists_are_masked_by_name():
    headers = [{"name": "Authorization", "value": "Bearer x"}, {"name": "Accept", "value": "*/*"},
               {"name": "X-Auth-Token", "value": ""}]
    assert secrets_masked({"headers": headers}) == {"headers": [
        {"name": "Authorization", "value": MASK}, {"name": "Accept", "value": "*/*"},
        {"name": "X-Auth-Token", "value": ""}]}


# ------------------------------------------------------------------ red-team finding 6

def test_a_read_key_sees_no_credential_of_the_environments_extras_and_headers(admin, reader):
    body = {"baseUrl": "https://staging.shop.test", "dbUrl": "postgres://u:dbpw1secret@db/x",
            "queue": "amqp://guest:mqpw2secret@mq:5672/v", "xKey": "xk-3secret", "keyword": "shoes",
            "headers": {"X-Key": "hk-4secret", "X-Pass": "hp-5secret", "X-Client-Id": "client-42",
                        "X-Keyword": "boots"}}
    assert admin.put(ENV, body, format="json").status_code == 200
    response = reader.get(ENV)
    assert response.json() == {
        "baseUrl": "https://staging.shop.test", "dbUrl": f"postgres://{MASK}@db/x",
        "queue": f"amqp://{MASK}@mq:5672/v", "xKey": MASK, "keyword": "shoes",
        "headers": {"X-Key": MASK, "X-Pass": MASK, "X-Client-Id": "client-42", "X-Keyword": "boots"}}
    for secret in ("dbpw1secret", "mqpw2secret", "xk-3secret", "hk-4secret", "hp-5secret"):
        assert secret.encode() not in response.content
    assert admin.get(ENV).json() == body


def test_a_read_key_sees_no_credential_of_a_webhook_url(admin, reader):
    url = ("https://hooks.example.com/hooks/s3cr3tPassw0rd1"
           "?hmac=h1secret&pw=p2secret&code=c3secret&a=1;access_token=t4secret&page=2")
    created = admin.post("/api/v1/webhook", {"url": url}, format="json").json()
    masked = reader.get(f"/api/v1/webhook/{created['uuid']}").json()["url"]
    assert masked == (f"https://hooks.example.com/hooks/{MASK}?hmac={MASK}&pw={MASK}&code={MASK}"
                      f"&a=1;access_token={MASK}&page=2")


@pytest.mark.parametrize(("url", "masked"), [
    ("https://h.example/hooks/s3cr3tPassw0rd1", f"https://h.example/hooks/{MASK}"),
    ("https://h.example/hooks/a1b2c3d4e5", f"https://h.example/hooks/{MASK}"),
    # ordinary words, numeric ids, versioned names stay
    ("https://h.example/v2/orders/1234567890/report2024q1/iPhone15Pro/administrators",
     "https://h.example/v2/orders/1234567890/report2024q1/iPhone15Pro/administrators"),
    ("https://h.example/x?keyword=k&monkey=m&author=a;page=2",
     "https://h.example/x?keyword=k&monkey=m&author=a;page=2"),
    ("https://h.example/x?key%5B%5D=k1", f"https://h.example/x?key%5B%5D={MASK}"),
])
def test_url_masking_of_the_review_gaps(url, masked):
    assert url_masked(url) == masked


def test_userinfo_passwords_of_any_scheme_are_masked_in_text():
    assert secrets_masked({"note": "use redis://:r3dispw@cache:6379/0 then"}) == {
        "note": f"use redis://:{MASK}@cache:6379/0 then"}
    assert secrets_masked({"note": "mailto:ops@example.com"}) == {"note": "mailto:ops@example.com"}
