"""API keys: required everywhere but health/schema/docs, hashed at rest, revocable."""
import hashlib

import pytest
from django.core.management import call_command

from core.models import ApiKey

pytestmark = pytest.mark.django_db

PROTECTED = "/api/v1/verify"


def test_health_answers_ok_without_a_key(anon_client):
    response = anon_client.get("/api/v1")
    assert response.status_code == 200
    assert response.json() == "OK"


def test_protected_route_without_key_is_401_client_unauthorized(anon_client):
    response = anon_client.get(PROTECTED)
    assert response.status_code == 401
    assert response.content == b'"Client unauthorized"'
    assert response["Content-Type"] == "application/json"


def test_unknown_key_is_401_with_the_same_body(anon_client):
    anon_client.credentials(HTTP_AUTHORIZATION="ask_not-a-real-key")
    response = anon_client.get(PROTECTED)
    assert response.status_code == 401
    assert response.json() == "Client unauthorized"


def test_valid_key_is_accepted(client):
    response = client.get(PROTECTED)
    assert response.status_code == 200
    assert response.json() == "OK"


def test_bearer_scheme_word_is_not_the_key(anon_client, api_key):
    anon_client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_key}")
    assert anon_client.get(PROTECTED).status_code == 401


def test_revoked_key_is_refused(client, api_key):
    ApiKey.objects.get(key_hash=hashlib.sha256(api_key.encode()).hexdigest()).revoke()
    response = client.get(PROTECTED)
    assert response.status_code == 401
    assert response.json() == "Client unauthorized"


def test_only_a_hash_and_a_prefix_are_stored(api_key):
    row = ApiKey.objects.get()
    assert row.key_hash == hashlib.sha256(api_key.encode()).hexdigest()
    assert api_key.startswith(row.prefix)
    assert len(row.prefix) < len(api_key) // 3
    stored = [str(v) for v in ApiKey.objects.values_list().get()]
    assert api_key not in stored


def test_createapikey_prints_the_key_last_and_it_works(anon_client, capsys):
    call_command("createapikey", "ci agent")
    raw = capsys.readouterr().out.strip().splitlines()[-1]
    anon_client.credentials(HTTP_AUTHORIZATION=raw)
    assert anon_client.get(PROTECTED).status_code == 200


def test_createapikey_if_none_does_not_create_a_second_key(api_key, capsys):
    call_command("createapikey", "again", "--if-none")
    assert capsys.readouterr().out == ""
    assert ApiKey.objects.count() == 1


def test_listapikeys_never_prints_the_key(api_key, capsys):
    call_command("listapikeys")
    out = capsys.readouterr().out
    assert "tests" in out and api_key[:12] in out
    assert api_key not in out


def test_revokeapikey_by_id(client, capsys):
    key = ApiKey.objects.get()
    call_command("revokeapikey", str(key.id))
    assert "Revoked" in capsys.readouterr().out
    assert client.get(PROTECTED).status_code == 401
