"""Webhook management routes: POST /webhook, GET /webhooks, GET/PUT/DELETE /webhook/{id}."""
from __future__ import annotations

import uuid

import pytest

from webhooks.models import Webhook, WebhookRun

pytestmark = pytest.mark.django_db

RECEIVER = "http://127.0.0.1:9/hook"  # never contacted by these tests


def issues(response) -> list[dict]:
    assert response.status_code == 400, response.content
    body = response.json()
    assert (body["type"], body["message"], body["err"]["name"]) == ("ZOD", "Invalid parameters", "ZodError")
    return body["err"]["issues"]


class TestCreate:
    def test_create_answers_201_with_defaults(self, client):
        response = client.post("/api/v1/webhook", {"url": RECEIVER}, format="json")

        assert response.status_code == 201
        body = response.json()
        assert set(body) == {"uuid", "url", "alertTypes", "hosts", "maxRetries", "createdAt", "updatedAt", "runs"}
        assert (body["url"], body["alertTypes"], body["hosts"], body["maxRetries"], body["runs"]) == (RECEIVER, [], [], 3, [])
        assert body["createdAt"].endswith("Z") and len(body["createdAt"]) == 24
        hook = Webhook.objects.get(uuid=body["uuid"])
        assert (hook.url, hook.alert_types, hook.hosts, hook.max_retries) == (RECEIVER, [], [], 3)

    def test_create_keeps_filters_and_drops_repeats(self, client):
        response = client.post("/api/v1/webhook", {
            "url": "https://hooks.example.com/x?token=abc", "alertTypes": ["PII Data Detected", "PII Data Detected"],
            "hosts": ["a.example.com"], "maxRetries": 0,
        }, format="json")

        assert response.status_code == 201
        body = response.json()
        assert (body["alertTypes"], body["hosts"], body["maxRetries"]) == (["PII Data Detected"], ["a.example.com"], 0)

    def test_single_label_host_is_a_valid_url(self, client):
        response = client.post("/api/v1/webhook", {"url": "http://receiver:8080/alerts"}, format="json")
        assert response.status_code == 201

    def test_url_is_required(self, client):
        assert issues(client.post("/api/v1/webhook", {}, format="json")) == [{
            "code": "invalid_type", "expected": "string", "received": "undefined", "path": ["url"], "message": "Required",
        }]
        assert Webhook.objects.count() == 0

    @pytest.mark.parametrize("url", ["ftp://example.com/x", "not a url", "http://", "/relative/path", "http://exa mple.com/"])
    def test_url_must_be_absolute_http_or_https(self, client, url):
        [issue] = issues(client.post("/api/v1/webhook", {"url": url}, format="json"))
        assert (issue["code"], issue["validation"], issue["path"]) == ("invalid_string", "url", ["url"])
        assert Webhook.objects.count() == 0

    def test_url_longer_than_2048_characters_is_too_big(self, client):
        [issue] = issues(client.post("/api/v1/webhook", {"url": "https://example.com/" + "a" * 2030}, format="json"))
        assert (issue["code"], issue["maximum"], issue["path"]) == ("too_big", 2048, ["url"])

    def test_unknown_alert_type_lists_the_eight_types(self, client):
        [issue] = issues(client.post("/api/v1/webhook", {"url": RECEIVER, "alertTypes": ["Bad Type"]}, format="json"))
        assert issue["code"] == "invalid_enum_value"
        assert issue["path"] == ["alertTypes", 0]
        assert len(issue["options"]) == 8 and "Open API Spec Diff" in issue["options"]

    @pytest.mark.parametrize("value,code", [(11, "too_big"), (-1, "too_small"), ("three", "invalid_type")])
    def test_max_retries_is_0_to_10(self, client, value, code):
        [issue] = issues(client.post("/api/v1/webhook", {"url": RECEIVER, "maxRetries": value}, format="json"))
        assert (issue["code"], issue["path"]) == (code, ["maxRetries"])
        assert Webhook.objects.count() == 0

    def test_hosts_must_be_a_list_of_strings(self, client):
        [issue] = issues(client.post("/api/v1/webhook", {"url": RECEIVER, "hosts": "a.example.com"}, format="json"))
        assert (issue["code"], issue["expected"], issue["path"]) == ("invalid_type", "array", ["hosts"])

    def test_malformed_json_is_a_validation_error(self, client):
        response = client.post("/api/v1/webhook", b'{"url": ', content_type="application/json")
        assert issues(response)[0]["path"] == []


class TestPrivateTargets:
    @pytest.mark.parametrize("url", [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.1.2.3/hook",
        "http://192.168.0.10/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://100.64.0.1/hook",
        "http://0.0.0.0/hook",
    ])
    def test_private_target_is_refused_without_the_switch(self, client, settings, url):
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

        [issue] = issues(client.post("/api/v1/webhook", {"url": url}, format="json"))

        assert (issue["code"], issue["path"]) == ("custom", ["url"])
        assert "WEBHOOK_ALLOW_PRIVATE_TARGETS" in issue["message"]
        assert Webhook.objects.count() == 0

    def test_private_target_is_accepted_with_the_switch(self, client, settings):
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
        assert client.post("/api/v1/webhook", {"url": "http://127.0.0.1:8080/hook"}, format="json").status_code == 201

    def test_public_address_is_accepted_without_the_switch(self, client, settings):
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False
        assert client.post("/api/v1/webhook", {"url": "https://93.184.215.14/hook"}, format="json").status_code == 201

    @pytest.mark.parametrize("url", [
        "http://127.0.0.1:5432/hook",        # the test database
        "http://localhost:6379/hook",        # the test broker
        "http://[::ffff:127.0.0.1]:6379/",   # the broker through an IPv4-mapped address
    ])
    def test_the_services_own_database_and_broker_are_refused_even_with_the_switch(self, client, settings, url):
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True

        [issue] = issues(client.post("/api/v1/webhook", {"url": url}, format="json"))

        assert issue["path"] == ["url"]
        assert "this service's own" in issue["message"]
        assert Webhook.objects.count() == 0

    def test_update_to_a_private_target_is_refused_and_changes_nothing(self, client, settings):
        hook = Webhook.objects.create(url="https://93.184.215.14/hook")
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False

        [issue] = issues(client.put(f"/api/v1/webhook/{hook.uuid}", {"url": "http://10.0.0.5/"}, format="json"))

        assert issue["path"] == ["url"]
        hook.refresh_from_db()
        assert hook.url == "https://93.184.215.14/hook"


class TestReadUpdateDelete:
    def test_list_is_newest_first_with_total_count(self, client, django_assert_num_queries):
        first = client.post("/api/v1/webhook", {"url": RECEIVER + "1"}, format="json").json()
        second = client.post("/api/v1/webhook", {"url": RECEIVER + "2"}, format="json").json()
        for n in range(3):
            WebhookRun.objects.create(webhook_id=first["uuid"], ok=False, status_code=500, msg=f"m{n}", payload={"n": n})

        with django_assert_num_queries(3):  # key lookup, webhooks, runs
            response = client.get("/api/v1/webhooks")

        assert response.status_code == 200
        assert response["X-Total-Count"] == "2"
        body = response.json()
        assert [h["uuid"] for h in body] == [second["uuid"], first["uuid"]]
        assert [r["msg"] for r in body[1]["runs"]] == ["m2", "m1", "m0"]
        assert set(body[1]["runs"][0]) == {"ok", "statusCode", "msg", "payload", "createdAt"}
        assert body[1]["runs"][0]["payload"] == {"n": 2}

    def test_read_one(self, client):
        created = client.post("/api/v1/webhook", {"url": RECEIVER}, format="json").json()
        response = client.get(f"/api/v1/webhook/{created['uuid']}")
        assert response.status_code == 200
        assert response.json() == created

    def test_update_accepts_any_subset(self, client):
        created = client.post("/api/v1/webhook", {"url": RECEIVER, "hosts": ["a"], "maxRetries": 5}, format="json").json()

        response = client.put(f"/api/v1/webhook/{created['uuid']}", {"alertTypes": ["Basic Authentication Detected"]},
                              format="json")

        assert response.status_code == 200
        body = response.json()
        assert (body["url"], body["hosts"], body["maxRetries"]) == (RECEIVER, ["a"], 5)
        assert body["alertTypes"] == ["Basic Authentication Detected"]
        hook = Webhook.objects.get(uuid=created["uuid"])
        assert (hook.alert_types, hook.hosts, hook.max_retries) == (["Basic Authentication Detected"], ["a"], 5)

    def test_update_with_bad_input_changes_nothing(self, client):
        created = client.post("/api/v1/webhook", {"url": RECEIVER}, format="json").json()

        issues(client.put(f"/api/v1/webhook/{created['uuid']}", {"hosts": ["b"], "maxRetries": 99}, format="json"))

        hook = Webhook.objects.get(uuid=created["uuid"])
        assert (hook.hosts, hook.max_retries) == ([], 3)

    def test_delete_answers_success_and_removes_runs(self, client):
        created = client.post("/api/v1/webhook", {"url": RECEIVER}, format="json").json()
        WebhookRun.objects.create(webhook_id=created["uuid"], ok=True, status_code=200, msg="", payload={})

        response = client.delete(f"/api/v1/webhook/{created['uuid']}")

        assert (response.status_code, response.json()) == (200, "Success")
        assert not Webhook.objects.exists() and not WebhookRun.objects.exists()

    @pytest.mark.parametrize("method", ["get", "put", "delete"])
    @pytest.mark.parametrize("webhook_id", [str(uuid.uuid4()), "not-a-uuid"])
    def test_unknown_webhook_is_404(self, client, method, webhook_id):
        response = getattr(client, method)(f"/api/v1/webhook/{webhook_id}", {"maxRetries": 1}, format="json")
        assert (response.status_code, response.json()) == (404, "Webhook does not exist.")


@pytest.mark.parametrize("method,path", [
    ("post", "/api/v1/webhook"), ("get", "/api/v1/webhooks"), ("get", f"/api/v1/webhook/{uuid.uuid4()}"),
    ("put", f"/api/v1/webhook/{uuid.uuid4()}"), ("delete", f"/api/v1/webhook/{uuid.uuid4()}"),
])
def test_webhook_routes_require_the_api_key(anon_client, method, path):
    response = getattr(anon_client, method)(path, {"url": RECEIVER}, format="json")
    assert (response.status_code, response.json()) == (401, "Client unauthorized")
    assert Webhook.objects.count() == 0


def test_hosts_items_must_be_strings(client):
    [issue] = issues(client.post("/api/v1/webhook", {"url": RECEIVER, "hosts": [5]}, format="json"))
    assert (issue["code"], issue["expected"], issue["received"], issue["path"]) == ("invalid_type", "string", "number", ["hosts", 0])
