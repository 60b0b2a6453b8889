"""Encrypted full traces of Metlo's 0.1.x agents (DECISIONS §9): agent-config serves the service's
public key and capture settings; the worker decrypts before analysis, and a trace it cannot decrypt
is counted and skipped while the rest of its batch is analysed."""
import base64
import copy
import json
import logging

import pytest
from django.core.management import call_command

from core.models import AgentKey, TraceDecryptFailure
from inventory.ingest import decrypt
from inventory.ingest.decrypt import keyring_reset
from inventory.models import ApiTrace, Endpoint
from inventory.tasks import analyze_batch_task
from tests.support.agent_crypto import encrypt_trace

from .ingest_support import sample

pytestmark = pytest.mark.django_db

V2 = "/api/v2/log-request/batch"
SSN, TOKEN = "123-45-6789", "Bearer tok-very-secret-0042"


@pytest.fixture(autouse=True)
def fresh_keyring():
    keyring_reset()  # keys live in each test's database transaction
    yield
    keyring_reset()


def public_key(client) -> str:
    return client.get("/api/v1/agent-config").json()["encryptionPublicKey"]


def clear_trace(path="/accounts/7", body=None) -> dict:
    """A v2 trace with full capture (bodies and headers present), findings left to the service."""
    trace = copy.deepcopy(sample("v2-batch-flask-01.json")[0])
    trace["request"]["url"]["path"] = path
    trace["request"]["url"]["parameters"] = [{"name": "expand", "value": "owner"}]
    trace["request"]["headers"] = [{"name": "Authorization", "value": TOKEN}, {"name": "Accept", "value": "*/*"}]
    trace["response"]["headers"] = [{"name": "Content-Type", "value": "application/json"}]
    trace["response"]["body"] = json.dumps(body or {"owner": {"contact": "bob@example.org", "ssn": SSN}})
    trace["processedTraceData"] = {"block": False, "dataTypes": {}, "requestContentType": "",
                                   "responseContentType": "application/json"}
    return trace


def post_and_analyse(client, captured, traces: list):
    """POST like the agent, then run the worker's task and the counters it writes after commit."""
    with captured() as enqueued:
        response = client.post(V2, traces, format="json")
    assert response.status_code == 200, response.content
    with captured() as after_commit:
        for callback in enqueued:
            analyze_batch_task(*callback.args)
    run_decrypt_counters(after_commit)


def run_decrypt_counters(callbacks) -> None:
    """Run what decrypt.py defers to the analysis' commit (the test's transaction never commits; the
    pipeline's own on-commit work must not run inside it: its staging tables were rolled back)."""
    for callback in callbacks:
        if getattr(callback, "func", None) in (decrypt._count_failure, decrypt._mark_used):
            callback()


def classes_of(path: str) -> dict:
    endpoint = Endpoint.objects.get(path=path)
    return {(f.data_section, f.data_path): f.data_classes for f in endpoint.data_fields.all()}


class TestAgentConfig:
    def test_the_public_key_is_made_once_and_served_as_pem(self, client):
        first, second = public_key(client), public_key(client)
        assert first == second and first.startswith("-----BEGIN PUBLIC KEY-----")
        key = AgentKey.objects.get()
        assert key.active and key.public_pem == first and key.bits == 2048

    def test_global_capture_comes_from_the_setting(self, client, settings):
        assert client.get("/api/v1/agent-config").json()["globalFullTraceCapture"] is False
        settings.AGENT_GLOBAL_FULL_TRACE_CAPTURE = True
        assert client.get("/api/v1/agent-config").json()["globalFullTraceCapture"] is True

    def test_the_endpoint_toggle_reaches_agents_with_the_host_as_they_see_it(self, client,
                                                                             django_capture_on_commit_callbacks):
        post_and_analyse(client, django_capture_on_commit_callbacks, sample("v2-batch-flask-01.json"))
        endpoint = Endpoint.objects.get(path="/users/{param1}")
        response = client.put(f"/api/v1/endpoint/{endpoint.uuid}/enable-full-trace-capture", {"enabled": True},
                              format="json")
        assert response.status_code == 200
        entries = [e for e in client.get("/api/v1/agent-config").json()["endpoints"] if e["path"] == endpoint.path]
        # The agent compares host with the Host header it saw (127.0.0.1:8301): both spellings are listed.
        assert {e["host"] for e in entries} == {"127.0.0.1", "127.0.0.1:8301"}
        assert all(e["fullTraceCaptureEnabled"] is True and e["method"] == "GET" and e["numberParams"] == 1
                   and e["isGraphQl"] is False and "openapiSpecName" in e for e in entries)
        # Only endpoints with capture on are listed (agents take the others as off): the ingest key
        # that reads agent-config does not get the inventory.
        assert {e["path"] for e in client.get("/api/v1/agent-config").json()["endpoints"]} == {endpoint.path}
        client.put(f"/api/v1/endpoint/{endpoint.uuid}/enable-full-trace-capture", {"enabled": False}, format="json")
        assert client.get("/api/v1/agent-config").json()["endpoints"] == []


    def test_agent_config_costs_a_constant_number_of_queries(self, client, django_capture_on_commit_callbacks,
                                                             django_assert_num_queries):
        post_and_analyse(client, django_capture_on_commit_callbacks, sample("v2-batch-flask-01.json"))
        Endpoint.objects.update(full_trace_capture_enabled=True)
        public_key(client)  # the key pair exists
        # key lookup, auth, data classes, endpoints, their traces' ports
        with django_assert_num_queries(5):
            body = client.get("/api/v1/agent-config").json()
        assert len(body["endpoints"]) == 2 * Endpoint.objects.count()

    def test_endpoints_listed_are_bounded_by_the_setting(self, client, django_capture_on_commit_callbacks, settings):
        post_and_analyse(client, django_capture_on_commit_callbacks, sample("v2-batch-flask-01.json"))
        Endpoint.objects.update(full_trace_capture_enabled=True)
        assert len({e["path"] for e in client.get("/api/v1/agent-config").json()["endpoints"]}) == 2
        settings.AGENT_CONFIG_MAX_ENDPOINTS = 1
        assert len({(e["method"], e["path"]) for e in client.get("/api/v1/agent-config").json()["endpoints"]}) == 1


class TestDecryption:
    def test_an_encrypted_trace_is_decrypted_and_its_bodies_classified(self, client,
                                                                       django_capture_on_commit_callbacks):
        post_and_analyse(client, django_capture_on_commit_callbacks, [encrypt_trace(clear_trace(), public_key(client))])
        fields = classes_of("/accounts/{param1}")
        assert "email" in fields[("RESPONSE_BODY", "owner.contact")]
        assert "ssn" in fields[("RESPONSE_BODY", "owner.ssn")]
        stored = ApiTrace.objects.get()
        assert '"contact"' in stored.response_body  # the body in clear (its sensitive values redacted), not ciphertext
        assert {h["name"] for h in stored.request_headers} >= {"Authorization", "Accept"}
        assert stored.request_parameters == [{"name": "expand", "value": "owner"}]
        text = json.dumps([stored.request_headers, stored.response_body])
        assert "tok-very-secret-0042" not in text and SSN not in text  # redacted like any clear trace
        assert AgentKey.objects.get().last_used_at is not None

    def test_undecryptable_traces_are_counted_and_skipped_and_the_rest_of_the_batch_is_analysed(
            self, client, django_capture_on_commit_callbacks, caplog):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        ours = public_key(client)
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        wrong_key = encrypt_trace(clear_trace("/wrong/1"), other)
        tampered = encrypt_trace(clear_trace("/tampered/1"), ours)
        sealed = bytearray(base64.b64decode(tampered["response"]["body"]))
        sealed[-1] ^= 1  # flip a bit of the GCM tag
        tampered["response"]["body"] = base64.b64encode(bytes(sealed)).decode()
        missing_iv = encrypt_trace(clear_trace("/noiv/1"), ours)
        del missing_iv["encryption"]["generatedIvs"]["reqBody"]
        good = encrypt_trace(clear_trace("/accounts/8"), ours)
        caplog.set_level(logging.WARNING, logger="inventory.ingest.decrypt")

        post_and_analyse(client, django_capture_on_commit_callbacks, [wrong_key, tampered, good, missing_iv])

        assert set(Endpoint.objects.values_list("path", flat=True)) == {"/accounts/{param1}"}  # never half-stored
        assert ApiTrace.objects.count() == 1
        assert "email" in classes_of("/accounts/{param1}")[("RESPONSE_BODY", "owner.contact")]
        assert dict(TraceDecryptFailure.objects.values_list("reason", "count")) == {"key": 1, "value": 1,
                                                                                     "format": 1}
        logged = "\n".join(r.getMessage() for r in caplog.records)
        # One line for the batch, with each reason's count and trace indexes (never one line per trace).
        undecryptable = [r.getMessage() for r in caplog.records if "could not be decrypted" in r.getMessage()]
        assert undecryptable == ["3 encrypted trace(s) of a batch could not be decrypted and were skipped "
                                 "(format: 1 (trace 3); key: 1 (trace 0); value: 1 (trace 1))"]
        assert tampered["encryption"]["key"] not in logged and tampered["response"]["body"] not in logged

    def test_a_batch_of_a_thousand_undecryptable_traces_logs_one_line_and_counts_once(
            self, client, django_capture_on_commit_callbacks, caplog):
        """Issue #24: one undecryptable batch used to write 1,000 warning lines (and 1,000 counter
        updates after commit); it writes one line, and each reason's counter is added to once."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        public_key(client)
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        sealed = encrypt_trace(clear_trace("/wrong/1"), other)
        caplog.set_level(logging.DEBUG)
        post_and_analyse(client, django_capture_on_commit_callbacks, [sealed] * 1000)
        lines = [r.getMessage() for r in caplog.records if "decrypt" in r.getMessage()]
        assert lines == ["1000 encrypted trace(s) of a batch could not be decrypted and were skipped "
                         "(key: 1000 (trace 0, 1, 2, 3, 4, 5, 6, 7, 8, 9…))"]
        assert dict(TraceDecryptFailure.objects.values_list("reason", "count")) == {"key": 1000}

    def test_a_malformed_encryption_block_is_a_validation_error_and_stores_nothing(self, client):
        trace = clear_trace()
        trace["encryption"] = {"generatedIvs": []}
        response = client.post(V2, [trace], format="json")
        assert response.status_code == 400
        issues = response.json()["err"]["issues"]
        assert {(tuple(i["path"]), i["message"]) for i in issues} == {
            ((0, "encryption", "key"), "Required"), ((0, "encryption", "generatedIvs"), "Expected object, received array"),
        }
        assert Endpoint.objects.count() == 0


class TestKeys:
    def test_the_private_key_is_stored_encrypted_and_unreadable_without_the_key_material(self, client, settings,
                                                                                          caplog):
        from core.agentkeys import private_keys

        settings.AGENT_KEY_ENCRYPTION_KEY = settings.FIELD_ENCRYPTION_KEY = ""  # SECRET_KEY is the material
        pem = public_key(client)
        row = AgentKey.objects.get()
        assert row.private_encrypted.startswith("gAAAAA")  # a Fernet token, not a key in clear
        [key] = private_keys()
        from cryptography.hazmat.primitives import serialization

        der = key.key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        for encoding in (base64.b64encode, base64.urlsafe_b64encode):  # no stretch of the key in clear
            assert encoding(der)[100:160].decode() not in row.private_encrypted
        assert "PRIVATE KEY" not in row.private_encrypted

        assert key.key.public_key().public_bytes(serialization.Encoding.PEM,
                                                 serialization.PublicFormat.SubjectPublicKeyInfo).decode() == pem
        settings.AGENT_KEY_ENCRYPTION_KEY = "another-material-entirely"
        assert private_keys() == []
        assert "cannot be read with the configured key material" in caplog.text
        # The old material listed after the new one still decrypts: that is how the at-rest key is rotated.
        settings.AGENT_KEY_ENCRYPTION_KEY = f"another-material-entirely,{settings.SECRET_KEY}"
        assert len(private_keys()) == 1

    def test_rotation_serves_a_new_key_and_keeps_the_previous_one_usable(self, client,
                                                                          django_capture_on_commit_callbacks,
                                                                          capsys):
        old = public_key(client)
        stale_agent_trace = encrypt_trace(clear_trace("/accounts/1"), old)
        post_and_analyse(client, django_capture_on_commit_callbacks, [encrypt_trace(clear_trace("/warm/1"), old)])
        assert [k.fingerprint for k in decrypt._keyring.keys] == [AgentKey.objects.get().fingerprint]
        call_command("rotateagentkey")
        out = capsys.readouterr().out
        assert "generating a 2048-bit RSA key pair" in out and "re-encrypting previous key 1/1" in out
        assert "previous keys kept for decryption: 1 (1 re-encrypted at rest)" in out
        assert "PRIVATE" not in out
        new = public_key(client)
        assert new != old
        assert AgentKey.objects.get(active=True).public_pem == new
        assert AgentKey.objects.get(active=False).retired_at is not None
        # The worker's keyring still holds only the old key (read before the rotation): the trace for the
        # new key makes it re-read the keys, at once.
        post_and_analyse(client, django_capture_on_commit_callbacks,
                         [stale_agent_trace, encrypt_trace(clear_trace("/accounts/2"), new)])
        assert ApiTrace.objects.filter(path__startswith="/accounts/").count() == 2
        assert not TraceDecryptFailure.objects.exists()
        assert AgentKey.objects.filter(last_used_at__isnull=False).count() == 2
        call_command("listagentkeys")
        listing = capsys.readouterr().out
        assert "active" in listing and "previous" in listing and "traces that could not be decrypted: 0" in listing
