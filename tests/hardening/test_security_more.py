"""Security guarantees not covered elsewhere.

* API keys: the lookup sends only the key's SHA-256 to the database, and no log line carries the key.
* SSRF guard with ``WEBHOOK_ALLOW_PRIVATE_TARGETS`` off, for *names* (tests/webhooks covers literal
  addresses): a name resolving to a loopback, private, link-local/metadata or IPv4-mapped address is
  refused at creation (400) and — when DNS changes after creation — at delivery time, before any
  connection; a redirect to such an address is never followed.
"""
from __future__ import annotations

import logging
import socket

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from core.enums import AlertType
from core.models import ApiKey, hash_key
from detections.services import AlertCandidate, alerts_raise
from tests.factories import EndpointFactory, HostFactory
from tests.support.receiver import Answer, Receiver
from webhooks import http
from webhooks.models import Webhook, WebhookDelivery, WebhookRun
from webhooks.services.attempt import Attempt, deliveries_attempt

pytestmark = pytest.mark.django_db

PUBLIC = "93.184.215.14"
PRIVATE = ["127.0.0.1", "::1", "169.254.169.254", "10.0.0.8", "::ffff:169.254.169.254", "fd00:ec2::254"]


# --------------------------------------------------------------------------------- API keys

def test_the_key_lookup_sends_the_keys_hash_to_the_database_never_the_key(client, api_key):
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/verify")

    assert (response.status_code, response.json()) == (200, "OK")
    executed = [q["sql"] for q in queries.captured_queries]
    assert any(hash_key(api_key) in sql for sql in executed)
    assert not any(api_key in sql for sql in executed)


def test_an_unknown_key_is_looked_up_by_its_hash_too(anon_client, api_key):
    unknown = api_key[:-4] + "XXXX"
    with CaptureQueriesContext(connection) as queries:
        response = anon_client.get("/api/v1/verify", HTTP_AUTHORIZATION=unknown)

    assert (response.status_code, response.json()) == (401, "Client unauthorized")
    executed = [q["sql"] for q in queries.captured_queries]
    assert any(hash_key(unknown) in sql for sql in executed)
    assert not any(unknown in sql or unknown[:20] in sql for sql in executed)


def test_the_stored_row_holds_the_hash_and_the_display_prefix_only(api_key):
    row = ApiKey.objects.values().get()
    assert row["key_hash"] == hash_key(api_key)
    assert not any(api_key in str(value) for value in row.values())


def test_no_log_line_carries_the_key(client, anon_client, api_key, caplog):
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django.request")  # 4xx answers are logged too
    client.get("/api/v1/verify")
    client.post("/api/v1/webhook", {"url": "not a url"}, format="json")
    anon_client.get("/api/v1/verify", HTTP_AUTHORIZATION=api_key + "x")

    assert caplog.records  # the requests were logged (401/400 answers at least)
    assert not any(api_key in record.getMessage() for record in caplog.records)


# --------------------------------------------------------------------------------- SSRF: names

class FakeDns(dict):
    """Name -> address, as the test sets it; every lookup is recorded in ``lookups``."""

    def __init__(self):
        super().__init__()
        self.lookups: list[str] = []

    def getaddrinfo(self, host, port, family=0, type=0, proto=0, flags=0):  # noqa: A002
        self.lookups.append(host)
        if host not in self:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        address = self[host]
        if ":" in address:
            return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port, 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]


@pytest.fixture
def dns(monkeypatch) -> FakeDns:
    """A resolver the test controls: names it maps resolve to their address, others fail."""
    fake = FakeDns()
    monkeypatch.setattr(socket, "getaddrinfo", fake.getaddrinfo)
    return fake


@pytest.fixture
def guard_on(settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = False


def url_issue(response) -> dict:
    assert response.status_code == 400, response.content
    [issue] = response.json()["err"]["issues"]
    assert issue["path"] == ["url"]
    return issue


@pytest.mark.parametrize("address", PRIVATE)
def test_a_name_resolving_to_a_private_address_is_refused_at_creation(client, dns, guard_on, address):
    dns["hooks.partner.example"] = address

    issue = url_issue(client.post("/api/v1/webhook", {"url": "https://hooks.partner.example/in"}, format="json"))

    assert "hooks.partner.example resolves to a loopback, private, link-local or metadata address" in issue["message"]
    assert not Webhook.objects.exists()


def test_localhost_by_name_is_refused_at_creation_by_the_real_resolver(client, guard_on):
    issue = url_issue(client.post("/api/v1/webhook", {"url": "http://localhost:8000/hook"}, format="json"))
    assert "localhost resolves to a loopback" in issue["message"]


def test_a_name_with_one_private_address_among_public_ones_is_refused(client, guard_on, monkeypatch):
    def getaddrinfo(host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (PUBLIC, port)),
                (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", ("169.254.169.254", port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    url_issue(client.post("/api/v1/webhook", {"url": "https://hooks.partner.example/in"}, format="json"))
    assert not Webhook.objects.exists()


def test_a_name_that_does_not_resolve_is_refused_at_creation(client, dns, guard_on):
    issue = url_issue(client.post("/api/v1/webhook", {"url": "https://nowhere.partner.example/in"}, format="json"))
    assert "Could not resolve host nowhere.partner.example" in issue["message"]


def test_an_update_to_a_name_resolving_to_a_private_address_is_refused(client, dns, guard_on):
    dns["hooks.partner.example"] = PUBLIC
    dns["internal.partner.example"] = "10.1.2.3"
    hook = client.post("/api/v1/webhook", {"url": "https://hooks.partner.example/in"}, format="json").json()

    url_issue(client.put(f"/api/v1/webhook/{hook['uuid']}", {"url": "https://internal.partner.example/"},
                         format="json"))
    assert Webhook.objects.get().url == "https://hooks.partner.example/in"


@pytest.fixture
def endpoint():
    return EndpointFactory(host=HostFactory(name="shop.example.com"), path="/users/{param1}")


def raise_alert(endpoint) -> WebhookDelivery:
    [alert] = alerts_raise([AlertCandidate(endpoint.uuid, AlertType.PII_DATA, "Sensitive data in field 'email'.")])
    return WebhookDelivery.objects.get(alert=alert)


@pytest.mark.parametrize("address", PRIVATE)
def test_dns_changed_after_creation_is_refused_at_delivery_before_any_connection(
    client, dns, guard_on, connections, endpoint, address
):
    dns["hooks.partner.example"] = PUBLIC
    response = client.post("/api/v1/webhook", {"url": "http://hooks.partner.example:8080/in"}, format="json")
    assert response.status_code == 201
    delivery = raise_alert(endpoint)
    dns["hooks.partner.example"] = address  # DNS rebinding, or a record changed by its owner

    [outcome] = deliveries_attempt(delivery_ids=[delivery.uuid])

    assert outcome.result is Attempt.GIVEN_UP  # a refused target is not retried
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("FAILED", 1)
    [run] = WebhookRun.objects.filter(delivery=delivery)
    assert (run.ok, run.status_code) == (False, None)
    assert run.msg.startswith("Target refused: hooks.partner.example resolves to a loopback, private")
    assert connections == []
    assert dns.lookups.count("hooks.partner.example") == 2  # at creation, and again at the send


@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "internal", "http://[::1]/admin"])
def test_a_redirect_to_a_private_address_is_not_followed(
    client, dns, guard_on, connections, endpoint, monkeypatch, target
):
    # An internal service on 127.0.0.1 that must never be reached.
    internal = Receiver(Answer(body=b""))
    location = f"http://127.0.0.1:{internal.port}/admin" if target == "internal" else target
    # The receiver answers 302 to that target. It listens on 127.0.0.2, which this test (only)
    # lets the guard treat as public, standing for a public receiver gone bad.
    receiver = Receiver(Answer(302, body=b"", location=location), host="127.0.0.2")
    is_private = http.address_is_private
    monkeypatch.setattr(http, "address_is_private", lambda a: a != "127.0.0.2" and is_private(a))
    dns["hooks.partner.example"] = "127.0.0.2"
    try:
        response = client.post("/api/v1/webhook", {"url": f"http://hooks.partner.example:{receiver.port}/in"},
                               format="json")
        assert response.status_code == 201
        delivery = raise_alert(endpoint)

        [outcome] = deliveries_attempt(delivery_ids=[delivery.uuid])
    finally:
        internal.close()
        receiver.close()

    assert outcome.result is Attempt.GIVEN_UP  # not retried
    assert receiver.paths() == ["/in"]
    assert (internal.paths(), internal.connections) == ([], 0)
    assert connections == ["127.0.0.2"]  # nothing else was even tried
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("FAILED", 1)
    [run] = WebhookRun.objects.filter(delivery=delivery)
    assert (run.ok, run.status_code) == (False, 302)
