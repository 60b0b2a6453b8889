"""The Metlo agent protocol routes (DECISIONS §9): what the agents send is accepted, bad input is not."""
import gzip
import json
import re

import pytest
from django.test import override_settings

from classification.models import DataClass
from inventory.models import Endpoint, Host, IngestBatch

from .ingest_support import pending_batches, raw_trace, sample, send

pytestmark = pytest.mark.django_db

V1_SINGLE = "/api/v1/log-request/single"
V1_BATCH = "/api/v1/log-request/batch"
V2_BATCH = "/api/v2/log-request/batch"


# ---------------------------------------------------------------- keys

@pytest.mark.parametrize("method,url", [
    ("get", "/api/v1/verify"), ("get", "/api/v1/agent-config"),
    ("post", V1_SINGLE), ("post", V1_BATCH), ("post", V2_BATCH),
])
def test_every_agent_route_refuses_a_missing_or_unknown_key(anon_client, method, url):
    for client_headers in ({}, {"HTTP_AUTHORIZATION": "not-a-key"}):
        response = getattr(anon_client, method)(url, **client_headers)
        assert response.status_code == 401
        assert response.json() == "Client unauthorized"
    assert IngestBatch.objects.count() == 0


def test_verify_answers_ok_for_a_valid_key(client):
    response = client.get("/api/v1/verify")
    assert response.status_code == 200
    assert response.json() == "OK"


# ---------------------------------------------------------------- agent-config

def test_agent_config_has_every_key_agents_need(client):
    body = client.get("/api/v1/agent-config").json()
    assert set(body) == {"sensitiveDataList", "endpoints", "specs", "globalFullTraceCapture", "encryptionPublicKey",
                         "authenticationConfig", "hostMap", "hostBlockList", "pathBlockList"}
    assert body["endpoints"] == [] and body["specs"] == [] and body["authenticationConfig"] == []
    # DECISIONS §9: the service's RSA public key (PEM), so 0.1.x agents send encrypted full traces.
    assert body["globalFullTraceCapture"] is False
    assert body["encryptionPublicKey"].startswith("-----BEGIN PUBLIC KEY-----\n")
    names = [item["className"] for item in body["sensitiveDataList"]]
    assert len(names) == 14 and "email" in names and "passport_number" in names
    email = next(i for i in body["sensitiveDataList"] if i["className"] == "email")
    assert email["severity"] == "MEDIUM" and email["regex"] and email["keyRegex"] is None


def test_agent_config_lists_enabled_classes_only_and_custom_patterns_agents_can_run(client):
    DataClass.objects.filter(name="ip_address").update(enabled=False)
    DataClass.objects.create(name="employee_badge", short_name="Badge", severity="LOW", value_regex=r"^EMP-\d{6}$")
    DataClass.objects.create(name="lookaround", short_name="LA", severity="LOW", value_regex=r"^(?=x)x+$",
                             key_regex="^secretish$")
    items = {i["className"]: i for i in client.get("/api/v1/agent-config").json()["sensitiveDataList"]}
    assert "ip_address" not in items
    assert items["employee_badge"] == {"className": "employee_badge", "severity": "LOW",
                                       "regex": r"^EMP-\d{6}$", "keyRegex": None}
    # Rust's regex crate has no lookaround: the agent gets the key regex only, anchored for the
    # full paths agents match it against (reqBody.user.secretish).
    assert items["lookaround"]["regex"] is None
    key_regex = items["lookaround"]["keyRegex"]
    assert key_regex == r"(?:^|\.)(?:secretish$)"
    assert re.search(key_regex, "reqBody.user.secretish") and re.search(key_regex, "secretish")
    assert not re.search(key_regex, "reqBody.notsecretish")


# ---------------------------------------------------------------- accepting what agents send

@pytest.mark.parametrize("name", [f"v1-single-{fw}-0{i}.json" for fw in ("flask", "django") for i in range(1, 6)])
def test_every_captured_v1_trace_is_accepted(client, django_capture_on_commit_callbacks, name):
    response = send(client, django_capture_on_commit_callbacks, V1_SINGLE, sample(name))
    assert response.status_code == 200
    assert response.json() == "OK"
    assert IngestBatch.objects.get().status == IngestBatch.Status.DONE


@pytest.mark.parametrize("name", [
    "v2-batch-flask-01.json", "v2-batch-flask-02.json", "v2-batch-flask-03.json", "v2-batch-django-01.json",
    "v2-batch-django-02.json", "v2-batch-django-03.json", "v2-batch-flask-burst-01.json",
    "v2-batch-extra-authcfg-attacks-01.json", "v2-batch-extra-authcfg-attacks-02.json",
    "v2-batch-extra-bodytypes-graphql-01.json", "v2-batch-extra-bodytypes-graphql-02.json",
    "v2-batch-extra-bodytypes-graphql-03.json", "v2-batch-extra-bodytypes-graphql-04.json",
    "v2-batch-extra-encrypted-01.json", "v2-batch-extra-encrypted-02.json", "v2-batch-extra-hostmap-01.json",
    "v2-batch-extra-hostmap-02.json", "v2-batch-extra-keyregex-01.json", "v2-batch-extra-keyregex-02.json",
    "v2-batch-extra-invalid-config-builtin-classes-01.json",
])
def test_every_captured_v2_batch_is_accepted(client, django_capture_on_commit_callbacks, name):
    payload = sample(name)
    response = send(client, django_capture_on_commit_callbacks, V2_BATCH, payload)
    assert response.status_code == 200
    assert response.json() == "OK"
    batch = IngestBatch.objects.get()
    assert batch.kind == IngestBatch.Kind.PROCESSED and batch.num_traces == len(payload)
    assert batch.status == IngestBatch.Status.DONE


def test_the_v1_batch_route_takes_an_array_of_raw_traces(client, django_capture_on_commit_callbacks):
    payload = [sample("v1-single-flask-01.json"), sample("v1-single-django-02.json")]
    response = send(client, django_capture_on_commit_callbacks, V1_BATCH, payload)
    assert response.status_code == 200
    assert set(Endpoint.objects.values_list("path", flat=True)) == {"/users/{param1}", "/login"}


def test_agent_leniency_scheme_and_port_in_host_numeric_ports_null_values(client, django_capture_on_commit_callbacks):
    trace = raw_trace(host="http://Api.Example.com:5056", destination_port=8080)
    trace["request"]["headers"].append({"name": "X-Count", "value": 3})
    trace["request"]["headers"].append({"name": "X-Empty", "value": None})
    trace["meta"]["sourcePort"] = None
    trace["response"]["status"] = "200"
    response = send(client, django_capture_on_commit_callbacks, V1_SINGLE, trace)
    assert response.status_code == 200
    assert Host.objects.get().name == "api.example.com"


def test_a_gzip_body_is_accepted(client, django_capture_on_commit_callbacks):
    body = gzip.compress(json.dumps([raw_trace()]).encode())
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.generic("POST", V1_BATCH, body, content_type="application/json",
                                  HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 200
    assert len(callbacks) == 1 and IngestBatch.objects.get().num_traces == 1


def test_an_empty_batch_is_ok_and_stores_nothing(client):
    response = client.post(V1_BATCH, [], format="json")
    assert response.status_code == 200 and response.json() == "OK"
    assert IngestBatch.objects.count() == 0


def test_accepting_enqueues_only_the_batch_id(client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        client.post(V1_BATCH, [raw_trace(), raw_trace(path="/api/v1/users/43")], format="json")
    batch = IngestBatch.objects.get()
    assert [c.args for c in callbacks] == [(batch.id,)]
    assert batch.status == IngestBatch.Status.PENDING and batch.num_traces == 2
    assert Endpoint.objects.count() == 0  # analysis is the worker's job


# ---------------------------------------------------------------- invalid input

def _issues(response):
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "ZOD" and body["message"] == "Invalid parameters"
    assert body["err"]["name"] == "ZodError"
    return body["err"]["issues"]


def test_an_invalid_trace_is_named_by_its_index_in_the_batch(client):
    bad = raw_trace()
    del bad["request"]["url"]["path"]
    worse = raw_trace()
    worse["response"]["status"] = "teapot"
    response = client.post(V1_BATCH, [raw_trace(), bad, raw_trace(), worse], format="json")
    issues = _issues(response)
    assert {"code": "invalid_type", "expected": "string", "received": "undefined",
            "path": [1, "request", "url", "path"], "message": "Required"} in issues
    assert any(i["path"] == [3, "response", "status"] and i["code"] == "invalid_type" for i in issues)
    assert IngestBatch.objects.count() == 0  # nothing of a bad batch is kept


def test_v2_issues_name_the_index_too(client):
    payload = sample("v2-batch-flask-01.json")
    payload[1]["analysisType"] = "sometimes"
    payload[0]["processedTraceData"]["dataTypes"] = ["not", "a", "map"]
    issues = _issues(client.post(V2_BATCH, payload, format="json"))
    assert {i["code"]: i["path"] for i in issues} == {
        "invalid_enum_value": [1, "analysisType"],
        "invalid_type": [0, "processedTraceData", "dataTypes"],
    }


def test_a_single_trace_route_reports_paths_without_an_index(client):
    trace = raw_trace()
    trace["request"] = "GET /"
    issues = _issues(client.post(V1_SINGLE, trace, format="json"))
    assert issues == [{"code": "invalid_type", "expected": "object", "received": "string", "path": ["request"],
                       "message": "Expected object, received string"}]


def test_malformed_json_is_a_validation_error_with_an_empty_path(client):
    response = client.generic("POST", V1_BATCH, b"[{not json", content_type="application/json")
    issues = _issues(response)
    assert issues[0]["path"] == [] and issues[0]["code"] == "custom"


def test_a_batch_route_wants_an_array(client):
    issues = _issues(client.post(V2_BATCH, {"request": {}}, format="json"))
    assert issues[0]["path"] == [] and issues[0]["expected"] == "array"


def test_more_than_1000_traces_is_too_big(client):
    issues = _issues(client.post(V1_BATCH, [raw_trace()] * 1001, format="json"))
    assert issues == [{"code": "too_big", "maximum": 1000, "type": "array", "inclusive": True, "exact": False,
                       "path": [], "message": "Array must contain at most 1000 element(s)"}]
    assert client.post(V1_BATCH, [raw_trace()] * 1000, format="json").status_code == 200


def test_a_trace_over_1_mb_is_413(client):
    big = raw_trace(response_body="x" * (1024 * 1024 + 1))
    response = client.post(V1_BATCH, [raw_trace(), big], format="json")
    assert response.status_code == 413
    assert response.json() == "Trace 1 is larger than 1 MB."
    assert IngestBatch.objects.count() == 0


def test_a_request_over_10_mb_is_413(client):
    traces = [raw_trace(response_body="y" * 700_000) for _ in range(16)]
    response = client.post(V1_BATCH, traces, format="json")
    assert response.status_code == 413
    assert IngestBatch.objects.count() == 0


# ---------------------------------------------------------------- backpressure

@override_settings(INGEST_MAX_BACKLOG=50, INGEST_DRAIN_RATE=10)
def test_a_backlog_over_the_limit_answers_503_with_retry_after(client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        assert client.post(V1_BATCH, [raw_trace()] * 49, format="json").status_code == 200
        assert client.post(V1_BATCH, [raw_trace()] * 10, format="json").status_code == 200  # 49 < 50: accepted
        response = client.post(V1_BATCH, [raw_trace()] * 3, format="json")
    assert response.status_code == 503
    assert int(response["Retry-After"]) >= 1
    assert isinstance(response.json(), str)
    assert pending_batches() == 2 and IngestBatch.objects.count() == 2  # refused, not dropped silently
    # Once the backlog is analysed the agent's retry is accepted.
    IngestBatch.objects.update(status=IngestBatch.Status.DONE)
    assert client.post(V1_BATCH, [raw_trace()] * 3, format="json").status_code == 200


@override_settings(INGEST_MAX_BACKLOG=3, INGEST_DRAIN_RATE=10)
def test_single_posts_over_the_backlog_limit_answer_503_with_retry_after_and_store_nothing(
        client, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks():
        for _ in range(3):
            assert client.post(V1_SINGLE, raw_trace(), format="json").status_code == 200
        response = client.post(V1_SINGLE, raw_trace(), format="json")
    assert (response.status_code, response.json()) == (503, "Too many traces waiting for analysis, retry later.")
    assert int(response["Retry-After"]) >= 1
    assert pending_batches() == 3 and IngestBatch.objects.count() == 3


def test_nul_characters_are_dropped_and_the_trace_analysed(client, django_capture_on_commit_callbacks):
    from classification.models import DataField
    from inventory.models import ApiTrace

    body = json.dumps([raw_trace(path="/n\u0000ul", response_body={"na\u0000me": "a\u0000b"})]).encode()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.generic("POST", V1_BATCH, body, content_type="application/json")
    assert response.status_code == 200
    from inventory.tasks import analyze_batch_task

    analyze_batch_task(*callbacks[0].args)
    trace = ApiTrace.objects.get()
    assert trace.path == "/nul"
    assert DataField.objects.filter(endpoint=trace.endpoint, data_path="name").exists()


def test_the_openapi_schema_documents_the_agent_routes(anon_client):
    schema = anon_client.get("/api/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path in ("/api/v1/log-request/single", "/api/v1/log-request/batch", "/api/v2/log-request/batch"):
        operation = schema["paths"][path]["post"]
        assert "application/json" in operation["requestBody"]["content"]
        assert {"200", "400", "401", "413", "503"} <= set(operation["responses"])
    config = schema["paths"]["/api/v1/agent-config"]["get"]["responses"]["200"]["content"]["application/json"]
    assert config["schema"]["$ref"].endswith("AgentConfig")
