"""Safe defaults (issue #12, point 4), proven on real processes started by the entry points.

Setting SECRET_KEY makes DEBUG default to off, also under the default (local) settings; with
DEBUG off the development key is refused at start-up; plain HTTP on 127.0.0.1 keeps working.
"""
import secrets
import subprocess
import sys

import pytest
import requests

from config.settings.base import DEV_SECRET_KEY
from tests.support.processes import ROOT, wait_for
from tests.support.web import start_web, web_env

REFUSAL = "SECRET_KEY is the development key"


def _bare_env(tmp_path, **overrides: str) -> dict[str, str]:
    """Nothing configured but what the test says: embedded SQLite and broker under ``tmp_path``."""
    env = web_env(VAR_DIR=str(tmp_path), **overrides)
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    return env


def _settings_of(env: dict[str, str]) -> subprocess.CompletedProcess:
    """Load the settings through ``manage.py`` (the operators' entry point) and print DEBUG."""
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", "from django.conf import settings; print('DEBUG', settings.DEBUG)"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.fixture(scope="module")
def deployed_web(tmp_path_factory):
    """gunicorn as the Procfile starts it, with SECRET_KEY set and neither DEBUG nor a settings module."""
    web = start_web(_bare_env(tmp_path_factory.mktemp("var"), SECRET_KEY=secrets.token_urlsafe(50)))
    yield web
    web.stop()


def test_with_secret_key_set_plain_http_health_answers_ok_without_redirect_or_hsts(deployed_web):
    response = requests.get(f"{deployed_web.base_url}/api/v1", allow_redirects=False, timeout=5)
    assert response.status_code == 200
    assert response.json() == "OK"
    assert "Strict-Transport-Security" not in response.headers
    assert "Location" not in response.headers


@pytest.mark.parametrize("path", ["/no-such-page", "/api/v3/no-such-route"])
def test_with_secret_key_set_an_unknown_url_is_the_json_404_not_the_debug_page(deployed_web, path):
    response = requests.get(f"{deployed_web.base_url}{path}", allow_redirects=False, timeout=5)
    assert response.status_code == 404
    assert response.headers["Content-Type"] == "application/json"
    assert response.json() == "Not found."
    assert "URLconf" not in response.text


def test_with_the_development_key_and_debug_unset_the_web_refuses_to_start(tmp_path):
    web = start_web(_bare_env(tmp_path, SECRET_KEY=DEV_SECRET_KEY), wait=False)
    try:
        wait_for(lambda: web.process.poll() is not None, timeout=60, interval=0.2)
        assert web.process.returncode != 0
        log = web.log()
        assert REFUSAL in log
        assert "DEBUG=true" in log  # the message says how to get going
    finally:
        web.stop()


def test_with_nothing_set_debug_is_on_as_before(tmp_path):
    web = start_web(_bare_env(tmp_path))
    try:
        response = requests.get(f"{web.base_url}/no-such-page", timeout=5)
        assert response.status_code == 404
        assert "URLconf" in response.text  # Django's debug 404 page: DEBUG is on
        assert requests.get(f"{web.base_url}/api/v1", timeout=5).json() == "OK"
    finally:
        web.stop()


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, "DEBUG True"),
        ({"SECRET_KEY": "k" * 50}, "DEBUG False"),
        ({"SECRET_KEY": "k" * 50, "DEBUG": "true"}, "DEBUG True"),
        ({"SECRET_KEY": DEV_SECRET_KEY, "DEBUG": "true"}, "DEBUG True"),
    ],
)
def test_local_settings_debug_follows_secret_key_unless_debug_is_given(tmp_path, overrides, expected):
    result = _settings_of(_bare_env(tmp_path, **overrides))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(expected)


@pytest.mark.parametrize(
    "overrides",
    [
        {"DEBUG": "false"},  # no SECRET_KEY: the development key with DEBUG off
        {"SECRET_KEY": DEV_SECRET_KEY},
        {"DJANGO_SETTINGS_MODULE": "config.settings.test", "SECRET_KEY": DEV_SECRET_KEY},
    ],
    ids=["local-debug-false", "local-dev-key", "test-settings-dev-key"],
)
def test_every_settings_module_refuses_the_development_key_with_debug_off(tmp_path, overrides):
    result = _settings_of(_bare_env(tmp_path, **overrides))
    assert result.returncode != 0
    assert REFUSAL in result.stderr


def test_an_empty_secret_key_is_refused(tmp_path):
    result = _settings_of(_bare_env(tmp_path, SECRET_KEY=""))
    assert result.returncode != 0
    assert "SECRET_KEY is set but empty" in result.stderr
