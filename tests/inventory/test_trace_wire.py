"""One trace model (inventory/ingest/wire.py): the docs schema, the accept-time check and the worker agree.

* the OpenAPI serializers of ``schema.py`` document exactly the keys, types, required and nullable
  flags and limits of ``wire.RAW_TRACE`` / ``wire.PROCESSED_TRACE``;
* the accept-time check answers with zod issues whose bytes (key order included) are the contract's;
* what the check accepts through a leniency, the worker reads the same way.
"""
import json

import pytest
from rest_framework import serializers

from core.zod import expected_type
from inventory.ingest import schema, wire
from inventory.models import Endpoint, Host, IngestBatch

from .ingest_support import processed_trace, raw_trace, send

V1_SINGLE = "/api/v1/log-request/single"
V1_BATCH = "/api/v1/log-request/batch"
V2_BATCH = "/api/v2/log-request/batch"


# ---------------------------------------------------------------- the docs schema against the model

def _documented(fields) -> dict:
    return {f.name: f for f in fields if f.documented}


def _describe(field) -> tuple:
    """(type, item type, value type, nested fields) of a serializer field, in the model's terms."""
    if isinstance(field, serializers.ListSerializer):
        return "array", "object", None, field.child.fields
    if isinstance(field, serializers.ListField):
        return "array", expected_type(field.child), None, None
    if isinstance(field, serializers.DictField):
        return "object", None, expected_type(field.child), None
    if isinstance(field, serializers.Serializer):
        return "object", None, None, field.fields
    return expected_type(field), None, None, None


def _mismatches(model_fields, serializer_fields, where: str) -> list[str]:
    model = _documented(model_fields)
    found = []
    if set(model) != set(serializer_fields):
        found.append(f"{where}: keys {sorted(serializer_fields)} documented, {sorted(model)} in the model")
    for name in sorted(set(model) & set(serializer_fields)):
        spec, field, at = model[name], serializer_fields[name], f"{where}.{name}"
        kind, items, values, nested = _describe(field)
        got = (kind, items, values, field.required, field.allow_null,
               getattr(field, "allow_blank", None) if spec.type == "string" else None)
        want = (spec.type, spec.items, spec.values, spec.required, spec.nullable,
                spec.blank if spec.type == "string" else None)
        if got != want:
            found.append(f"{at}: documented (type, items, values, required, nullable, blank) {got}, model {want}")
        if nested is not None:
            found += _mismatches(spec.fields, nested, at)
    return found


@pytest.mark.parametrize("serializer,model", [
    (schema.RawTraceSerializer, wire.RAW_TRACE),
    (schema.ProcessedTraceSerializer, wire.PROCESSED_TRACE),
])
def test_the_docs_schema_documents_the_trace_model_key_by_key(serializer, model):
    assert _mismatches(model, serializer().fields, serializer.__name__) == []


def test_the_docs_schema_carries_the_models_limits():
    request, response = schema.TraceRequestSerializer(), schema.TraceResponseSerializer()
    status = response.fields["status"]
    assert (status.min_value, status.max_value) == (wire.STATUS_MIN, wire.STATUS_MAX)
    method = request.fields["method"]
    assert [v.regex.pattern for v in method.validators if hasattr(v, "regex")] == [
        f"^[A-Za-z]{{1,{wire.METHOD_MAX_LENGTH}}}$"
    ]
    choices = schema.ProcessedTraceSerializer().fields["analysisType"].choices
    assert list(choices) == list(wire.ANALYSIS_TYPES)


def test_the_model_check_catches_a_drift():
    """The comparison above is not vacuous: a key documented as required when the model says optional fails."""
    drifted = [wire.WireField(f.name, f.type, required=True, nullable=f.nullable, fields=f.fields)
               if f.name == "meta" else f for f in wire.RAW_TRACE]
    problems = _mismatches(drifted, schema.RawTraceSerializer().fields, "RawTrace")
    assert problems == ["RawTrace.meta: documented (type, items, values, required, nullable, blank) "
                        "('object', None, None, False, True, None), model ('object', None, None, True, True, None)"]


def test_the_served_schema_documents_the_lenient_keys(anon_client):
    components = anon_client.get("/api/v1/schema", {"format": "json"}).json()["components"]["schemas"]
    pair = components["PairRequest"]
    assert pair["required"] == ["name"]
    assert pair["properties"]["value"]["nullable"] is True and "minLength" not in pair["properties"]["value"]
    assert "minLength" not in components["UrlRequest"]["properties"]["host"]
    assert components["RawTraceRequest"]["properties"]["meta"]["nullable"] is True
    assert components["ProcessedTraceRequest"]["properties"]["analysisType"]["nullable"] is True


# ---------------------------------------------------------------- error bodies, byte for byte

def _error_bytes(issues: list) -> bytes:
    body = {"type": "ZOD", "message": "Invalid parameters", "err": {"name": "ZodError", "issues": issues}}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


@pytest.mark.django_db
def test_every_issue_the_check_writes_keeps_its_bytes(client):
    trace = raw_trace()
    trace["request"]["url"]["host"] = ""  # and no Host header
    trace["request"]["method"] = "GE T"
    trace["request"]["headers"] = [{"name": 7, "value": "x"}]
    del trace["request"]["url"]["path"]
    trace["response"]["status"] = 700
    second = raw_trace()
    second["response"]["status"] = "²"  # a digit int() cannot read: a type issue, not a 500
    second["meta"] = []
    response = client.post(V1_BATCH, [trace, second], format="json")
    assert response.status_code == 400
    # Bytes, not parsed JSON: the key order of each issue is part of the contract.
    assert response.content == _error_bytes([
        {"code": "invalid_type", "expected": "string", "received": "number",
         "path": [0, "request", "headers", 0, "name"], "message": "Expected string, received number"},
        {"code": "too_small", "minimum": 1, "type": "string", "inclusive": True, "exact": False,
         "path": [0, "request", "url", "host"], "message": "String must contain at least 1 character(s)"},
        {"code": "invalid_type", "expected": "string", "received": "undefined", "path": [0, "request", "url", "path"],
         "message": "Required"},
        {"code": "invalid_string", "validation": "regex", "path": [0, "request", "method"],
         "message": "Invalid HTTP method"},
        {"code": "too_big", "maximum": 599, "type": "number", "inclusive": True, "exact": False,
         "path": [0, "response", "status"], "message": "Number must be less than or equal to 599"},
        {"code": "invalid_type", "expected": "number", "received": "string", "path": [1, "response", "status"],
         "message": "Expected number, received string"},
        {"code": "invalid_type", "expected": "object", "received": "array", "path": [1, "meta"],
         "message": "Expected object, received array"},
    ])
    assert IngestBatch.objects.count() == 0


@pytest.mark.django_db
def test_processed_trace_issues_keep_their_bytes(client):
    trace = processed_trace(analysisType=["full"], sessionMeta="yes")
    trace["response"]["status"] = 99
    response = client.post(V2_BATCH, [trace], format="json")
    assert response.status_code == 400
    assert response.content == _error_bytes([
        {"code": "too_small", "minimum": 100, "type": "number", "inclusive": True, "exact": False,
         "path": [0, "response", "status"], "message": "Number must be greater than or equal to 100"},
        {"code": "invalid_type", "expected": "object", "received": "string", "path": [0, "sessionMeta"],
         "message": "Expected object, received string"},
        {"code": "invalid_enum_value", "options": ["full", "partial"], "received": None, "path": [0, "analysisType"],
         "message": "Invalid enum value. Expected 'full' | 'partial', received '['full']'"},
    ])


# ---------------------------------------------------------------- what is accepted is read the same way

@pytest.mark.django_db
def test_an_accepted_host_header_is_the_host_the_worker_uses(client, django_capture_on_commit_callbacks):
    """The check accepts an empty ``url.host`` when some Host header names a host: the worker reads that one."""
    trace = raw_trace(host="", headers={"X-Other": "1"})
    trace["request"]["headers"] = [{"name": "Host", "value": "  "}, {"name": "host", "value": "Shop.Example.com:8443"}]
    response = send(client, django_capture_on_commit_callbacks, V1_SINGLE, trace)
    assert response.status_code == 200
    assert IngestBatch.objects.get().status == IngestBatch.Status.DONE
    assert list(Host.objects.values_list("name", flat=True)) == ["shop.example.com"]
    assert Endpoint.objects.get().path == "/api/v1/users/{param1}"


@pytest.mark.django_db
def test_numbers_given_as_strings_and_scalar_values_are_read_as_accepted(client, django_capture_on_commit_callbacks):
    trace = raw_trace(path="/orders?page=2", response_body={"id": 7})
    trace["request"]["url"]["parameters"] = None
    trace["response"]["status"] = " 201 "
    trace["request"]["headers"].append({"name": "X-Retries", "value": 3})
    trace["request"]["body"] = {"email": "ada@example.com"}
    response = send(client, django_capture_on_commit_callbacks, V1_SINGLE, trace)
    assert response.status_code == 200
    endpoint = Endpoint.objects.get()
    assert endpoint.path == "/orders"
    fields = set(endpoint.data_fields.values_list("data_section", "status_code", "data_path"))
    assert ("REQUEST_QUERY", -1, "page") in fields
    assert ("REQUEST_HEADER", -1, "x-retries") in fields
    assert ("REQUEST_BODY", -1, "email") in fields
    assert ("RESPONSE_BODY", 201, "id") in fields  # the status read from " 201 "
