"""Security properties of the whole service: every API route needs a key; production is locked down."""
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from .routes import PUBLIC, schema_concrete
from .routes import api_routes as walked_routes

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
EXEMPT = PUBLIC
METHODS = ("get", "post", "put", "patch", "delete")


def api_routes() -> list[str]:
    return [route.path for route in walked_routes()]


def test_the_url_walk_finds_the_api():
    routes = api_routes()
    assert "/api/v1/verify" in routes
    assert "/api/v1" in routes


@pytest.mark.parametrize("method", METHODS)
def test_every_api_route_refuses_requests_without_a_key(anon_client, method):
    for path in api_routes():
        if path in EXEMPT:
            continue
        response = getattr(anon_client, method)(path)
        assert response.status_code == 401, f"{method.upper()} {path} answered {response.status_code}"
        assert response.json() == "Client unauthorized"


def test_every_documented_operation_requires_the_api_key(anon_client):
    schema = anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            if path in EXEMPT:
                continue
            assert {"ApiKeyAuth": []} in operation.get("security", []), f"{method} {path}"
            assert {} not in operation.get("security", []), f"{method} {path} allows anonymous access"
            concrete = schema_concrete(path)
            assert getattr(anon_client, method)(concrete).status_code == 401, f"{method} {path}"


def test_admin_pages_carry_security_headers(anon_client):
    response = anon_client.get("/admin/login/")
    assert response.status_code == 200
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "same-origin" in response["Referrer-Policy"]


def _production_check(**env_overrides) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG"}}
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/postgres",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
        **env_overrides,
    })
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def test_production_refuses_the_development_secret_key():
    result = _production_check()
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_refuses_debug():
    result = _production_check(SECRET_KEY=secrets.token_urlsafe(60), DEBUG="true")
    assert result.returncode != 0
    assert "DEBUG" in result.stderr


def test_production_settings_pass_check_deploy():
    result = _production_check(SECRET_KEY=secrets.token_urlsafe(60))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
