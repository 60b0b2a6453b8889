"""JWT, XSS and SQL injection templates through the real runner against twin APIs modelling real
flaws (tests/testgen/twin_apps.py): every vulnerable twin FAILED, every fixed twin PASSED."""
from __future__ import annotations

import secrets

import pytest

from tests.testgen.conftest import run_command
from tests.testgen.factories import endpoint_from_traffic
from tests.testgen.target_app import RunningTarget
from tests.testgen.twin_apps import JwtApi, SearchPage, UserDirectory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_templates")]
HOST = "twins.test"


@pytest.fixture
def start():
    running: list[RunningTarget] = []

    def serve(app) -> RunningTarget:
        running.append(RunningTarget(app))
        return running[-1]

    yield serve
    for target in running:
        target.stop()


def _run(template: str, path: str) -> tuple[int, str]:
    return run_command("--host", HOST, "--endpoint", path, "--method", "GET", "--type", template)


def _passed(status: int, output: str) -> None:
    assert status == 0, output
    assert "1 passed, 0 failed, 0 error(s)" in output


def _failed(status: int, output: str) -> None:
    assert status == 1, output
    assert "0 passed, 1 failed, 0 error(s)" in output


# --- JWT ------------------------------------------------------------------------------------

@pytest.fixture
def jwt_endpoint(db):
    return endpoint_from_traffic(host=HOST, method="GET", path="/api/me", authenticated=True,
                                 response={"user": "alice", "plan": "pro"})


def _jwt_run(start, set_env, app: JwtApi) -> tuple[int, str]:
    set_env(start(app).base_url, authToken=f"Bearer {app.issue('alice')}")
    return _run("AUTH_BYPASS", "/api/me")


def test_a_weak_hmac_secret_is_found_and_a_forged_token_proves_it(jwt_endpoint, start, set_env):
    status, output = _jwt_run(start, set_env, JwtApi(secret="secret"))
    _failed(status, output)
    assert "forged with the weak secret 'secret'" in output


def test_a_strong_secret_passes_every_jwt_attack(jwt_endpoint, start, set_env):
    _passed(*_jwt_run(start, set_env, JwtApi(secret=secrets.token_hex(32))))


def test_accepting_alg_none_is_found(jwt_endpoint, start, set_env):
    status, output = _jwt_run(start, set_env, JwtApi(secret=secrets.token_hex(32), accept_none=True))
    _failed(status, output)
    assert "alg 'none'" in output


def test_rejecting_alg_none_passes(jwt_endpoint, start, set_env):
    _passed(*_jwt_run(start, set_env, JwtApi(secret=secrets.token_hex(32), accept_none=False)))


# --- XSS ------------------------------------------------------------------------------------

@pytest.fixture
def search_endpoint(db):
    return endpoint_from_traffic(host=HOST, method="GET", path="/search", query={"q": "shoes"})


@pytest.mark.parametrize("mode", ["html", "json-as-html"])
def test_a_reflection_a_browser_renders_is_found(search_endpoint, start, set_env, mode):
    set_env(start(SearchPage(mode=mode)).base_url)
    _failed(*_run("XSS", "/search"))


@pytest.mark.parametrize("mode", ["json", "escaped"])
def test_json_echoes_and_escaped_html_are_no_finding(search_endpoint, start, set_env, mode):
    set_env(start(SearchPage(mode=mode)).base_url)
    _passed(*_run("XSS", "/search"))


# --- SQL injection --------------------------------------------------------------------------

@pytest.fixture
def directory(db):
    return {
        "path": endpoint_from_traffic(host=HOST, method="GET", path="/api/v1/users/{param1}",
                                      paths=["/api/v1/users/alice"], response={"username": "alice"}),
        "query": endpoint_from_traffic(host=HOST, method="GET", path="/api/v1/lookup", query={"username": "alice"},
                                       response={"username": "alice"}),
    }


@pytest.mark.parametrize("path", ["/api/v1/users/{param1}", "/api/v1/lookup"])
def test_string_concatenated_sql_on_a_username_is_found(directory, start, set_env, path):
    # The user paths take names: testUserId is the test user's name (docs/testgen.md), read in its own user.
    set_env(start(UserDirectory(vulnerable=True)).base_url, testUserId="alice")
    status, output = _run("SQL_INJECTION", path)
    _failed(status, output)
    if path == "/api/v1/lookup":
        assert "contains sqlite3.OperationalError" in output
    else:  # a generic 500 page: only the boolean pair proves it
        assert "true and false conditions (string) get" in output


@pytest.mark.parametrize("path", ["/api/v1/users/{param1}", "/api/v1/lookup"])
def test_parameterised_sql_with_an_escaping_error_page_passes(directory, start, set_env, path):
    set_env(start(UserDirectory(vulnerable=False)).base_url, testUserId="alice")
    _passed(*_run("SQL_INJECTION", path))


def test_a_delay_its_no_sleep_control_shows_too_is_no_finding(directory, start, set_env):
    # A filter holding every sleep-looking input ~1 s: the sleep payloads are late, but so is the
    # control sleeping 0 s, so the delay is not the database's.
    set_env(start(UserDirectory(vulnerable=False, tarpit_s=0.9)).base_url)
    _passed(*_run("SQL_INJECTION", "/api/v1/lookup"))
