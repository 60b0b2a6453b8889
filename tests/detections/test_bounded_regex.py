"""Users' regexes (uploaded OpenAPI specs, custom data classes) run on bounded engines.

A catastrophic pattern RE2 compiles (``^(a+)+$``) runs on RE2; lookaround patterns RE2 refuses run
on ``regex`` with a timeout, and a search that times out is no match / no difference, counted and
logged by pattern id. The bound is asserted through the engine chosen, the counters and the log
records, never wall-clock time; traces posted to the ingestion route are analysed normally.
"""
from __future__ import annotations

import json
import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from classification.models import DataClass, DataField
from core import userregex
from core.userregex import counters, user_regex
from detections.models import Alert, OpenApiSpec
from detections.specs import spec_create
from inventory.models import ApiTrace, Endpoint, IngestBatch
from tests.detections.rules_support import spec_diff
from tests.factories import EndpointFactory, HostFactory
from tests.inventory.ingest_support import raw_trace, seeded_transactional_db, send  # noqa: F401 (fixture)
from tests.support.processes import start_worker, wait_for

pytestmark = pytest.mark.django_db

CATASTROPHIC = r"^(a+)+$"  # exponential on Python's re; RE2 compiles it
LOOKAROUND = r"^(?=(a+)+$)a*b"  # RE2 refuses it: the timed engine
TIMES_OUT = r"^(?=(a|a)+$)"  # refused by RE2, exponential on the timed engine: its searches time out
SECRET = "a" * 60 + "!SECRET-VALUE-7f3a"
BATCH = "/api/v1/log-request/batch"


@pytest.fixture(autouse=True)
def fresh_patterns():
    """Each test compiles its patterns afresh (no suspension carried over from another test)."""
    userregex.user_regex.cache_clear()
    yield
    userregex.user_regex.cache_clear()


def spec_document(**extra_properties) -> dict:
    schema = {"type": "object", "properties": {
        "code": {"type": "string", "pattern": CATASTROPHIC},
        "label": {"type": "string", "pattern": LOOKAROUND},
        "slug": {"type": "string", "pattern": TIMES_OUT, "default": "a" * 40 + "!"},
        **extra_properties,
    }}
    return {
        "openapi": "3.0.3", "info": {"title": "codes", "version": "1"},
        "servers": [{"url": "https://shop.example.com"}],
        "paths": {"/codes": {"get": {"responses": {"200": {
            "description": "ok", "content": {"application/json": {"schema": schema}}}}}}},
    }


def upload(client, document: dict, name: str = "codes.json"):
    raw = json.dumps(document).encode()
    return client.post("/api/v1/spec/new", {"file": SimpleUploadedFile(name, raw)}, format="multipart")


def test_an_uploaded_spec_whose_pattern_neither_engine_compiles_is_a_400_naming_it(client):
    response = upload(client, spec_document(broken={"type": "string", "pattern": "[z-a]"}))
    assert response.status_code == 400
    [issue] = response.json()["err"]["issues"]
    assert issue["path"] == ["file"] and "'[z-a]'" in issue["message"]
    assert "properties/broken/pattern" in issue["message"]
    assert not OpenApiSpec.objects.exists()


def test_an_uploaded_spec_whose_pattern_would_unroll_to_gigabytes_is_a_400_naming_it(client):
    bomb = "(?:(?:(?:a{1000}){1000}){1000})"  # RE2 refuses it; the timed engine would unroll it in memory
    response = upload(client, spec_document(bomb={"type": "string", "pattern": bomb}))
    assert response.status_code == 400
    [issue] = response.json()["err"]["issues"]
    assert "properties/bomb/pattern" in issue["message"] and "unroll" in issue["message"]
    assert not OpenApiSpec.objects.exists()


def test_a_regex_valued_field_in_traffic_cannot_make_the_analysis_unroll_it(client, django_capture_on_commit_callbacks,
                                                                             monkeypatch):
    # A spec documenting `format: regex` makes the diff ask whether each traffic value is a regex:
    # the value is the attacker's, so it must never reach the engine that unrolls repetitions.
    from core import userregex as engines

    document = spec_document(rule={"type": "string", "format": "regex"})
    spec_create(name="codes", raw=json.dumps(document).encode())

    compiled: list[str] = []

    def refuse(pattern, *args, **kwargs):
        compiled.append(pattern)  # recorded: the analysis may catch what is raised here
        raise AssertionError("regex.compile was called on a traffic value")

    monkeypatch.setattr(engines.regex, "compile", refuse)
    body = {"code": "abc", "rule": "(?:(?:(?:a{1000}){1000}){1000})(?=b)"}
    response = send(client, django_capture_on_commit_callbacks, BATCH,
                    [raw_trace(host="shop.example.com", path="/codes", response_body=body)])
    assert response.status_code == 200
    assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
    assert ApiTrace.objects.filter(endpoint__path="/codes").count() == 1
    assert compiled == []


def test_a_spec_with_catastrophic_patterns_is_uploaded_and_its_default_check_is_bounded(client, caplog):
    before = counters()
    with caplog.at_level(logging.WARNING, logger="core.userregex"):
        assert upload(client, spec_document()).status_code == 201, "the upload must not hang or fail"
    assert counters()["timeouts"] > before["timeouts"]  # slug's default checked against TIMES_OUT: gave up
    assert any("OpenAPI spec upload" in r.getMessage() for r in caplog.records)


def test_traffic_against_catastrophic_spec_patterns_is_analysed_normally(client, django_capture_on_commit_callbacks,
                                                                          caplog):
    spec = spec_create(name="codes", raw=json.dumps(spec_document()).encode())
    assert (user_regex(CATASTROPHIC).engine, user_regex(LOOKAROUND).engine, user_regex(TIMES_OUT).engine) == (
        "re2", "regex", "regex")
    before = counters()
    caplog.clear()  # the upload's own check of slug's default timed out too
    body = {"code": "a" * 50 + "!", "label": "a" * 50 + "!", "slug": SECRET}
    with caplog.at_level(logging.WARNING):
        response = send(client, django_capture_on_commit_callbacks, BATCH,
                        [raw_trace(host="shop.example.com", path="/codes", response_body=body)])
    assert response.status_code == 200
    assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
    assert ApiTrace.objects.filter(endpoint__path="/codes").count() == 1
    diffs = sorted(Alert.objects.filter(type="Open API Spec Diff").values_list("description", flat=True))
    assert diffs == [  # code: RE2 decided; label: the timed engine decided; slug: undecided, no difference
        "Response body of GET /codes on shop.example.com (status 200) does not match OpenAPI spec 'codes': "
        "field 'code' does not match the documented pattern.",
        "Response body of GET /codes on shop.example.com (status 200) does not match OpenAPI spec 'codes': "
        "field 'label' does not match the documented pattern.",
    ]
    assert counters()["timeouts"] == before["timeouts"] + 1
    [record] = [r for r in caplog.records if "timed out" in r.getMessage()]
    assert user_regex(TIMES_OUT).ident in record.getMessage() and f"OpenAPI spec {spec.id}" in record.getMessage()
    assert not any("SECRET-VALUE" in r.getMessage() for r in caplog.records)


def test_pattern_properties_on_bounded_engines_and_unevaluated_properties_skipped_where_they_meet(db):
    document = {
        "openapi": "3.1.0", "info": {"title": "tags", "version": "1"},
        "servers": [{"url": "https://shop.example.com"}],
        "paths": {"/tags": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {
            "schema": {"type": "object", "properties": {
                "strict": {"type": "object", "patternProperties": {TIMES_OUT: {"type": "integer"},
                                                                   CATASTROPHIC: {"type": "integer"}},
                           "additionalProperties": False},
                "loose": {"type": "object", "patternProperties": {"^x-": True}, "unevaluatedProperties": False},
            }}}}}}}}},
    }
    spec_create(name="tags", raw=json.dumps(document).encode())
    endpoint = EndpointFactory(host=HostFactory(name="shop.example.com"), method="GET", path="/tags")
    before = counters()
    body = {"strict": {"aaaa": "not-an-int", SECRET: 1, "zz": 2}, "loose": {"other": 1}}
    found = [c.description for c in spec_diff(endpoint, "/tags", body=body)]
    # 'aaaa' matched ^(a+)+$ on RE2 (its value is checked); SECRET's key left TIMES_OUT undecided: neither
    # checked nor additional; 'zz' is additional. The third timeout (describing the difference) suspends
    # TIMES_OUT, so the description no longer names 'zz'.
    assert found == [
        "Response body of GET /tags on shop.example.com (status 200) does not match OpenAPI spec 'tags': "
        "field 'strict' has an undocumented property.",
        "Response body of GET /tags on shop.example.com (status 200) does not match OpenAPI spec 'tags': "
        "field 'strict.aaaa' is not of type integer.",
    ]
    after = counters()
    assert after["timeouts"] > before["timeouts"] and after["skipped"] > before["skipped"]


class TestCustomDataClasses:
    def test_a_regex_neither_engine_compiles_is_refused_in_the_console(self, admin_client):
        response = admin_client.post("/admin/classification/dataclass/add/", {
            "name": "broken", "short_name": "Broken", "severity": "LOW", "value_regex": "a{2,1}", "key_regex": ""})
        assert response.status_code == 200 and "a{2,1}" in response.content.decode()
        assert not DataClass.objects.filter(name="broken").exists()

    def test_catastrophic_class_regexes_run_bounded_and_traffic_is_analysed(self, admin_client, client,
                                                                            django_capture_on_commit_callbacks,
                                                                            caplog):
        for name, value_regex, key_regex in (("a_run", CATASTROPHIC, ""), ("b_suffix", LOOKAROUND, ""),
                                             ("slow_slug", TIMES_OUT, TIMES_OUT)):
            response = admin_client.post("/admin/classification/dataclass/add/", {
                "name": name, "short_name": name, "severity": "HIGH", "enabled": "on",
                "value_regex": value_regex, "key_regex": key_regex})
            assert response.status_code == 302, response.content
        before = counters()
        body = {"run": "aaaa", "suffix": "aaab", "slug": SECRET, SECRET: "x"}
        with caplog.at_level(logging.WARNING):
            response = send(client, django_capture_on_commit_callbacks, BATCH,
                            [raw_trace(path="/tickets", response_body=body)])
        assert response.status_code == 200
        assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
        classes = dict(DataField.objects.filter(endpoint__path="/tickets", data_section="RESPONSE_BODY")
                       .values_list("data_path", "data_classes"))
        # a_run: RE2 matched "aaaa"; b_suffix: the timed engine decided (the pattern cannot match);
        # slow_slug: decided on "aaaa" (a match), gave up on SECRET (as value and as key): no class there.
        assert classes == {"run": ["a_run", "slow_slug"], "suffix": [], "slug": [], SECRET: []}
        assert Endpoint.objects.get(path="/tickets").risk_score == "HIGH"
        after = counters()
        assert after["timeouts"] > before["timeouts"]
        assert (user_regex(CATASTROPHIC).engine, user_regex(TIMES_OUT).engine) == ("re2", "regex")
        logged = [r.getMessage() for r in caplog.records if "timed out" in r.getMessage()]
        assert logged and all("data class slow_slug" in m and user_regex(TIMES_OUT).ident in m for m in logged)
        assert not any("SECRET-VALUE" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_analyses_traffic_whose_spec_and_class_patterns_time_out(client, seeded_transactional_db):
    spec_create(name="codes", raw=json.dumps(spec_document()).encode())
    DataClass.objects.create(name="slow_slug", short_name="slow", severity="HIGH", value_regex=TIMES_OUT)
    worker = start_worker("celery")
    try:
        response = client.post(BATCH, [raw_trace(host="shop.example.com", path="/codes",
                                                 response_body={"code": "aaaa", "slug": SECRET})], format="json")
        assert response.status_code == 200
        assert wait_for(lambda: IngestBatch.objects.filter(status=IngestBatch.Status.DONE).exists(), timeout=60), (
            worker.log())
        assert Endpoint.objects.filter(path="/codes").exists()
        log = worker.log()
        assert f"{user_regex(TIMES_OUT).ident} (data class slow_slug) timed out" in log
        assert user_regex(TIMES_OUT).ident in log and "SECRET-VALUE" not in log
    finally:
        worker.stop()
