"""Key scopes where operators set them: createapikey --scope, listapikeys, the admin, the migration."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.test import APIClient

from core.models import ApiKey, Scope

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/core/apikey/"


def created_key(capsys, *args: str) -> tuple[str, str]:
    """Run createapikey; (raw key, what it told the operator on stderr)."""
    call_command("createapikey", *args)
    captured = capsys.readouterr()
    return captured.out.strip().splitlines()[-1], captured.err


def client_with(raw: str) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=raw)
    return api


# ------------------------------------------------------------------ createapikey / listapikeys

def test_createapikey_issues_admin_keys_unless_told_otherwise(capsys):
    raw, said = created_key(capsys, "ops script")
    assert ApiKey.objects.get().scope == Scope.ADMIN
    assert "admin" in said
    assert client_with(raw).delete("/api/v1/endpoints", {"uuids": []}, format="json").status_code != 403


def test_createapikey_scope_ingest_makes_an_agent_key(capsys):
    raw, said = created_key(capsys, "prod agent", "--scope", "ingest")
    assert ApiKey.objects.get().scope == Scope.INGEST
    assert "ingest" in said and raw not in said
    agent = client_with(raw)
    assert agent.get("/api/v1/verify").json() == "OK"
    assert (agent.get("/api/v1/endpoints").status_code, agent.get("/api/v1/endpoints").json()) == (403, "Forbidden.")


def test_createapikey_scope_read(capsys):
    raw, _ = created_key(capsys, "dashboard", "--scope", "read")
    reader = client_with(raw)
    assert reader.get("/api/v1/endpoints").status_code == 200
    assert reader.post("/api/v1/log-request/batch", [], format="json").status_code == 403


@pytest.mark.parametrize("scope", ["root", "READ", ""])
def test_createapikey_refuses_an_unknown_scope_and_creates_nothing(scope):
    with pytest.raises(CommandError):
        call_command("createapikey", "x", "--scope", scope)
    with pytest.raises(CommandError):
        call_command("createapikey", "x", scope=scope)
    assert not ApiKey.objects.exists()


def test_listapikeys_shows_each_keys_scope(capsys):
    for name, scope in (("agent", Scope.INGEST), ("dashboard", Scope.READ), ("ops", Scope.ADMIN)):
        ApiKey.issue(name=name, scope=scope)
    call_command("listapikeys")
    lines = capsys.readouterr().out.splitlines()
    assert "SCOPE" in lines[0]
    shown = {line.split()[1]: line.split()[2] for line in lines[1:]}
    assert shown == {"agent": "ingest", "dashboard": "read", "ops": "admin"}


def test_issue_refuses_an_unknown_scope_and_the_database_too():
    with pytest.raises(ValueError):
        ApiKey.issue(name="x", scope="owner")
    key, _ = ApiKey.issue(name="x", scope=Scope.READ)
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiKey.objects.filter(pk=key.pk).update(scope="owner")


# ------------------------------------------------------------------ the admin

@pytest.fixture
def admin_browser() -> Client:
    browser = Client()
    browser.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return browser


def test_the_admin_lists_and_filters_keys_by_scope(admin_browser):
    ApiKey.issue(name="the-agent", scope=Scope.INGEST)
    ApiKey.issue(name="the-dashboard", scope=Scope.READ)
    page = admin_browser.get(CHANGELIST).content.decode()
    assert "the-agent" in page and "ingest (agents)" in page and "scope__exact=read" in page
    filtered = admin_browser.get(CHANGELIST, {"scope__exact": "read"}).content.decode()
    assert "the-dashboard" in filtered and "the-agent" not in filtered


def test_the_admin_issues_a_key_with_a_scope(admin_browser):
    response = admin_browser.post(f"{CHANGELIST}add/", {"name": "edge agent", "scope": "ingest"}, follow=True)
    assert response.status_code == 200
    key = ApiKey.objects.get()
    assert (key.name, key.scope) == ("edge agent", Scope.INGEST)
    raw = next(str(m) for m in response.context["messages"]).rsplit(" ", 1)[-1]
    assert client_with(raw).get("/api/v1/verify").json() == "OK"
    assert client_with(raw).get("/api/v1/hosts").status_code == 403


def test_the_admin_changes_a_keys_scope_effective_at_once(admin_browser):
    key, raw = ApiKey.issue(name="dashboard", scope=Scope.READ)
    assert client_with(raw).delete("/api/v1/hosts", {"hosts": ["x"]}, format="json").status_code == 403
    response = admin_browser.post(f"{CHANGELIST}{key.pk}/change/", {"name": "dashboard", "scope": "admin"})
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.scope == Scope.ADMIN
    assert client_with(raw).delete("/api/v1/hosts", {"hosts": ["x"]}, format="json").json() == "Success"


def test_the_admin_refuses_an_unknown_scope(admin_browser):
    key, _ = ApiKey.issue(name="dashboard", scope=Scope.READ)
    response = admin_browser.post(f"{CHANGELIST}{key.pk}/change/", {"name": "dashboard", "scope": "root"})
    assert response.status_code == 200 and b"Select a valid choice" in response.content
    key.refresh_from_db()
    assert key.scope == Scope.READ


# ------------------------------------------------------------------ the migration

@pytest.mark.django_db(transaction=True)
def test_the_migration_makes_existing_keys_admin_keys():
    executor = MigrationExecutor(connection)
    before, after = [("core", "0001_initial")], [("core", "0002_apikey_scope")]
    try:
        executor.migrate(before)
        old_model = executor.loader.project_state(before).apps.get_model("core", "ApiKey")
        old_model.objects.create(name="issued before scopes", prefix="ask_old", key_hash="0" * 64)
        executor.loader.build_graph()
        executor.migrate(after)
        assert ApiKey.objects.get(name="issued before scopes").scope == Scope.ADMIN
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
