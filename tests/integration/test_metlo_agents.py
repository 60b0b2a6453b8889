"""Existing Metlo agents, installed from PyPI unchanged, feed our inventory.

Each case builds (once, cached under ``var/agent-venvs``) a virtualenv with the
agent and a tiny Flask or Django app, runs the app under gunicorn with the
agent's middleware pointed at our live server, sends a few requests, and checks
through our own API that the endpoints, fields and classes appeared, analysed
by a real Celery worker on Redis.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from core.models import ApiKey, Scope
from tests.support.processes import start_worker, wait_for
from tests.inventory.ingest_support import seeded_transactional_db  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(__file__).parent / "metlo"
VENVS = Path(settings.VAR_DIR) / "agent-venvs"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def agent_venv(version: str) -> Path:
    """A virtualenv holding metlo==version and the tiny apps' stack, built once."""
    venv = VENVS / version
    if not (venv / ".ready").exists():
        VENVS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["rm", "-rf", str(venv)], check=True)
        subprocess.run(["bash", str(HARNESS / "make_env.sh"), str(venv), version], check=True, timeout=600)
        (venv / ".ready").touch()
    return venv


@pytest.fixture
def worker(seeded_transactional_db):  # noqa: F811
    """A real ``celery -A config worker`` on the test database and Redis."""
    process = start_worker("celery")
    yield process
    process.stop()


@pytest.fixture
def ingest_key(db) -> str:
    """The key agents are given (README): scope ``ingest``, so they prove they need nothing more."""
    _, raw = ApiKey.issue(name="metlo agent", scope=Scope.INGEST)
    return raw


def run_agent_app(*, kind: str, version: str, framework: str, server_url: str, key: str, port: int = 0,
                  headers: dict | None = None) -> dict:
    venv = agent_venv(version)
    result = subprocess.run(
        [sys.executable, str(HARNESS / "run_agent_app.py"), "--venv", str(venv), "--kind", kind,
         "--framework", framework, "--collector-url", server_url, "--api-key", key,
         "--port", str(port or _free_port()),
         *(arg for name, value in (headers or {}).items() for arg in ("--header", f"{name}:{value}"))],
        capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("kind", "version", "framework"),
    [("v1", "0.0.17", "django"), ("v1", "0.0.17", "flask"), ("v2", "0.1.5", "flask")],
)
def test_metlo_agent_traffic_appears_in_the_inventory(live_server, worker, client, ingest_key, kind, version,
                                                      framework):
    summary = run_agent_app(kind=kind, version=version, framework=framework, server_url=live_server.url,
                            key=ingest_key)
    assert [r["status"] for r in summary["requests"]] == [r["expected"] for r in summary["requests"]]

    def endpoints():
        response = client.get("/api/v1/endpoints", {"limit": 50})
        assert response.status_code == 200
        found = {(e["method"], e["path"]) for e in response.json()}
        return found if {("GET", "/users/{param1}"), ("POST", "/login"), ("GET", "/search")} <= found else None

    found = wait_for(endpoints, timeout=30, interval=0.2)
    assert found, client.get("/api/v1/endpoints", {"limit": 50}).json()
    # The 404 answer created nothing.
    assert not any("does-not-exist" in path for _, path in found)

    listed = {(e["method"], e["path"]): e for e in client.get("/api/v1/endpoints", {"limit": 50}).json()}
    user = listed[("GET", "/users/{param1}")]
    assert user["host"] in {"127.0.0.1", "localhost"}
    detail = client.get(f"/api/v1/endpoint/{user['uuid']}").json()
    fields = {(f["dataSection"], f["dataPath"]): f for f in detail["dataFields"]}
    # The response body's user.email is a classified field whichever agent reported it.
    assert "email" in fields[("RESPONSE_BODY", "user.email")]["dataClasses"]
    assert "email" in user["dataClasses"]
    assert user["riskScore"] == "MEDIUM"


# ---------------------------------------------------------------- encrypted full traces (metlo 0.1.5)
# DECISIONS §9: with an encryptionPublicKey in agent-config and full trace capture on (globally or for
# the endpoint), 0.1.x agents send the traces they capture encrypted; the worker decrypts them and
# classifies their bodies. A class whose pattern agents cannot run (lookaround: agent-config sends it
# without a regex) can only be found by the service itself, in a body it decrypted.

def _service_only_class():
    from classification.models import DataClass

    DataClass.objects.create(name="beta_tag", short_name="Beta", severity="LOW", value_regex=r"^(?=beta$)[a-z]+$")


def _user_endpoint_fields(client) -> dict:
    def ready():
        listed = {(e["method"], e["path"]): e for e in client.get("/api/v1/endpoints", {"limit": 50}).json()}
        return listed.get(("GET", "/users/{param1}")) if ("POST", "/login") in listed else None

    user = wait_for(ready, timeout=30, interval=0.2)
    assert user, client.get("/api/v1/endpoints", {"limit": 50}).json()
    detail = client.get(f"/api/v1/endpoint/{user['uuid']}").json()
    return {(f["dataSection"], f["dataPath"]): f["dataClasses"] for f in detail["dataFields"]}


def _wait_analysed(count: int) -> None:
    from inventory.models import ApiTrace

    assert wait_for(lambda: ApiTrace.objects.count() >= count, timeout=30, interval=0.2)


def test_metlo_0_1_5_with_full_capture_sends_encrypted_traces_the_service_decrypts_and_classifies(
        live_server, worker, client, ingest_key, settings):
    from core.models import AgentKey, TraceDecryptFailure
    from inventory.models import ApiTrace

    _service_only_class()
    settings.AGENT_GLOBAL_FULL_TRACE_CAPTURE = True
    summary = run_agent_app(kind="v2", version="0.1.5", framework="flask", server_url=live_server.url,
                            key=ingest_key)
    assert [r["status"] for r in summary["requests"]] == [r["expected"] for r in summary["requests"]]
    fields = _user_endpoint_fields(client)
    _wait_analysed(4)
    assert "email" in fields[("RESPONSE_BODY", "user.email")]
    assert "beta_tag" in fields[("RESPONSE_BODY", "user.tags[]")]  # found by the service in the decrypted body
    stored = ApiTrace.objects.filter(path="/users/42").get()
    assert '"tags"' in stored.response_body and stored.request_headers  # in clear, not ciphertext, not withheld
    assert not TraceDecryptFailure.objects.exists()
    assert AgentKey.objects.get().last_used_at is not None


def test_metlo_0_1_5_with_capture_off_keeps_working_on_metadata(live_server, worker, client, ingest_key):
    from core.models import AgentKey
    from inventory.models import ApiTrace

    _service_only_class()
    summary = run_agent_app(kind="v2", version="0.1.5", framework="flask", server_url=live_server.url,
                            key=ingest_key)
    assert [r["status"] for r in summary["requests"]] == [r["expected"] for r in summary["requests"]]
    fields = _user_endpoint_fields(client)
    _wait_analysed(4)
    assert "email" in fields[("RESPONSE_BODY", "user.email")]  # the agent's own findings
    assert "beta_tag" not in fields.get(("RESPONSE_BODY", "user.tags[]"), [])  # no body reached the service
    assert all(t.response_body == "" and t.request_headers == [] for t in ApiTrace.objects.all())
    assert AgentKey.objects.get().last_used_at is None  # the key was served, nothing was encrypted for it


def test_metlo_0_1_5_endpoint_toggle_reaches_the_agent(live_server, worker, client, ingest_key):
    from inventory.models import ApiTrace

    _service_only_class()
    port = _free_port()  # the same app address twice: agents match endpoints on the Host they see
    run_agent_app(kind="v2", version="0.1.5", framework="flask", server_url=live_server.url, key=ingest_key,
                  port=port)
    _user_endpoint_fields(client)
    _wait_analysed(4)
    user = next(e for e in client.get("/api/v1/endpoints", {"limit": 50}).json() if e["path"] == "/users/{param1}")
    response = client.put(f"/api/v1/endpoint/{user['uuid']}/enable-full-trace-capture", {"enabled": True},
                          format="json")
    assert response.status_code == 200
    before = ApiTrace.objects.count()
    run_agent_app(kind="v2", version="0.1.5", framework="flask", server_url=live_server.url, key=ingest_key,
                  port=port)
    _wait_analysed(before + 4)
    assert wait_for(lambda: "beta_tag" in _user_endpoint_fields(client).get(("RESPONSE_BODY", "user.tags[]"), []),
                    timeout=30, interval=0.5)
    assert ApiTrace.objects.filter(path="/users/42").exclude(response_body="").exists()
    assert all(t.response_body == "" for t in ApiTrace.objects.filter(path="/login"))  # toggle is per endpoint


# ---------------------------------------------------------------- security-test runs (DECISIONS §8, issue #25)
# A run's requests carry X-Apiscope-Test (core.testmarker); the agent of the monitored app forwards them
# with their headers like any request. The runner side (sending the marker) is issue #26's; here the
# sample requests carry the header value the runner would send.

def test_a_marked_run_against_a_monitored_app_leaves_its_inventory_unchanged(live_server, worker, client,
                                                                              ingest_key):
    from core.testmarker import marked_run_open
    from inventory.models import Endpoint, IngestBatch

    marker = marked_run_open("run-metlo-0017")
    summary = run_agent_app(kind="v1", version="0.0.17", framework="flask", server_url=live_server.url,
                            key=ingest_key, headers={"X-Apiscope-Test": marker})
    assert [r["status"] for r in summary["requests"]] == [r["expected"] for r in summary["requests"]]
    sent = len(summary["requests"])

    def analysed():
        done = IngestBatch.objects.filter(status=IngestBatch.Status.DONE).values_list("num_traces", flat=True)
        return sum(done) >= sent - 1  # the 404 is reported too; the agent may drop none
    assert wait_for(analysed, timeout=30, interval=0.2)
    assert not Endpoint.objects.exists(), list(Endpoint.objects.values_list("path", flat=True))

    # The same requests with a forged marker are ordinary traffic: analysed as usual.
    run_agent_app(kind="v1", version="0.0.17", framework="flask", server_url=live_server.url, key=ingest_key,
                  headers={"X-Apiscope-Test": marker[:-6] + "forged"})

    def endpoints():
        found = {(e["method"], e["path"]) for e in client.get("/api/v1/endpoints", {"limit": 50}).json()}
        return found if {("GET", "/users/{param1}"), ("POST", "/login")} <= found else None
    assert wait_for(endpoints, timeout=30, interval=0.2)
