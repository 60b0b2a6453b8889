"""Fixtures of the test generation suite: the shop inventory, target apps on 127.0.0.1, the runner."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from tests.testgen.factories import endpoint_from_traffic
from tests.testgen.target_app import RunningTarget, ShopApp
from tests.support.receiver import Receiver

SHOP = "shop.test"
USER_RESPONSE = {"id": 1, "name": "alice", "email": "alice@example.com", "role": "user", "isAdmin": False, "balance": 10}


@pytest.fixture
def shop(db):
    """The shop API's endpoints as traffic described them (see target_app for the live twin)."""
    return {
        "user_read": endpoint_from_traffic(host=SHOP, method="GET", path="/api/users/{param1}", authenticated=True,
                                           paths=["/api/users/1", "/api/users/2", "/api/users/3"],
                                           response=USER_RESPONSE),
        "user_update": endpoint_from_traffic(host=SHOP, method="PATCH", path="/api/users/{param1}",
                                             authenticated=True, paths=["/api/users/1"],
                                             body={"name": "alice", "email": "[REDACTED]"}, response=USER_RESPONSE),
        "search": endpoint_from_traffic(host=SHOP, method="GET", path="/api/search", query={"q": "ali"}),
        "comment_create": endpoint_from_traffic(host=SHOP, method="POST", path="/api/comments", authenticated=True,
                                                body={"text": "nice shop"},
                                                response={"id": 1, "ownerId": 1, "text": "nice shop"}),
        "comment_read": endpoint_from_traffic(host=SHOP, method="GET", path="/api/comments/{param1}",
                                              authenticated=True, paths=["/api/comments/1"],
                                              response={"id": 1, "ownerId": 1, "text": "nice shop"}),
        "login": endpoint_from_traffic(host=SHOP, method="POST", path="/api/login",
                                       body={"username": "alice", "password": "[REDACTED]"},
                                       response={"token": "[REDACTED]"}),
    }


@pytest.fixture
def serve():
    """Start ShopApp variants on 127.0.0.1; all stopped at teardown."""
    running: list[RunningTarget] = []

    def start(**options) -> RunningTarget:
        target = RunningTarget(ShopApp(**options))
        running.append(target)
        return target

    yield start
    for target in running:
        target.stop()


@pytest.fixture
def receiver():
    """A receiver on 127.0.0.1 recording every byte it gets (tests/support/receiver.py)."""
    target = Receiver()
    yield target
    target.close()


@pytest.fixture
def set_env(client):
    """Configure the global testing environment through the API (alice is the test user)."""

    def put(base_url: str, **extra) -> dict:
        body = {"baseUrl": base_url, "authToken": "Bearer tok-alice", "testUserId": "1", "timeout": 5000,
                "retries": 0, **extra}
        response = client.put("/api/v1/testing/global-env", body, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    return put


@pytest.fixture
def fast_templates(settings):
    """Short time-based payloads and bursts, so the suite stays quick."""
    settings.TESTGEN_SQLI_DELAY_SECONDS = 1
    settings.TESTGEN_RATE_LIMIT_BURST = 8


def run_command(*args: str) -> tuple[int, str]:
    """``manage.py run_security_tests`` in-process: (exit status, output)."""
    out = io.StringIO()
    try:
        call_command("run_security_tests", *args, stdout=out)
    except SystemExit as exc:
        return int(exc.code), out.getvalue()
    return 0, out.getvalue()
