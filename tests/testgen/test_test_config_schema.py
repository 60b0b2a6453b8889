"""Generated tests match SPEC's field tables (TestConfig, TestRequest, Assertion, results),
checked with a JSON schema written from those tables, plus the documented extensions."""
from __future__ import annotations

import jsonschema
import pytest

from tests.testgen.conftest import SHOP

pytestmark = pytest.mark.django_db

STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

# SPEC "Assertion"; type and condition values from DECISIONS §8. Our tests always carry all four.
ASSERTION = {
    "type": "object",
    "required": ["type", "field", "condition", "value"],
    "properties": {
        "type": {"type": "string", "enum": ["status", "header", "body", "duration"]},
        "field": {"type": "string"},
        "condition": {"type": "string", "enum": [
            "equals", "notEquals", "in", "notIn", "contains", "notContains", "lessThan", "greaterThan",
            "matches", "exists", "notExists"]},
        "value": {},
        # extensions (docs/testgen.md)
        "request": {"oneOf": [{"type": "integer", "minimum": 0},
                              {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 0}}]},
        "aggregate": {"enum": ["all", "any", "last"]},
        "compare": {"enum": ["exact", "similar"]},
        "ignoreCase": {"type": "boolean"},
        "whenContentType": {"type": "string"},
        "plus": {"type": "number"},
        "precondition": {"type": "boolean"},
        "inconclusive": {"type": "boolean"},
        "description": {"type": "string"},
        "otherwise": {"$ref": "#/$defs/assertion"},
        "keys": {"type": "string"},
        "verdict": {"enum": ["refused", "accepted", "loggedIn", "notLoggedIn"]},
        "item": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "private": {"type": "object", "additionalProperties": False,
                    "properties": {"paths": {"type": "array", "items": {"type": "string"}},
                                   "values": {"type": "array", "items": {"type": "string"}}}},
    },
    "additionalProperties": False,
}

PAIR = {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
# SPEC "TestRequest".
TEST_REQUEST = {
    "type": "object",
    "required": ["description"],
    "properties": {
        "description": {"type": "string"},
        "headers": STRING_MAP,
        "body": {},
        "queryParams": STRING_MAP,
        "expectedStatus": {"type": "number"},
        "expectedResponse": {},
        # extensions (docs/testgen.md)
        "method": {"enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]},
        "url": {"type": "string", "pattern": r"^(\{\{baseUrl\}\}/|\{\{responses\[\d+\]\.headers\.Location\}\}$)"},
        "omitHeaders": {"type": "array", "items": {"type": "string"}},
        "repeat": {"type": "integer", "minimum": 1},
        "stopWhenStatus": {"type": "array", "items": {"type": "integer"}},
        "timeout": {"type": "integer", "minimum": 1},
        "payload": {"type": "string"},
        "optional": {"type": "boolean"},
        "skipIfEquals": {"oneOf": [PAIR, {"type": "array", "items": PAIR, "minItems": 1}]},
        "jwtAttack": {"enum": ["none", "stripped", "otherKey", "weakSecret", "expired"]},
        "jwtHeader": {"type": "string"},
        "identity": {"type": "string"},
        "loginAs": {"type": "string"},
        "loginPassword": {"type": "string"},
        "skip": {"type": "string", "minLength": 1},
        "onlyIfStatus": {"type": "object", "required": ["request", "matches"], "additionalProperties": False,
                         "properties": {"request": {"type": "integer", "minimum": 0}, "matches": {"type": "string"}}},
        "onlyIfAccepted": {"type": "integer", "minimum": 0},
        "onlyIfLoggedIn": {"type": "integer", "minimum": 0},
        "adoptCredential": {"type": "boolean"},
    },
    "additionalProperties": False,
}

# SPEC "TestConfig".
TEST_CONFIG = {
    "type": "object",
    "required": ["id", "name", "endpoint", "method", "requests"],
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "endpoint": {"type": "string"},
        "method": {"type": "string"},
        "requests": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/request"}},
        "assertions": {"type": "array", "items": {"$ref": "#/$defs/assertion"}},
        "host": {"type": "string"},
        "endpointId": {"type": "string", "format": "uuid"},
        "templateName": {"type": "string"},
        "templateVersion": {"type": "number"},
        "passedMessage": {"type": "string"},
    },
    "additionalProperties": False,
}

DEFS = {"assertion": ASSERTION, "request": TEST_REQUEST, "testConfig": TEST_CONFIG}

# SPEC "Test generation result (single endpoint)": msg present on failure; no test then.
RESULT = {
    "$defs": DEFS,
    "type": "object",
    "required": ["success"],
    "properties": {
        "success": {"type": "boolean"},
        "templateName": {"type": "string"},
        "templateVersion": {"type": "number"},
        "test": {"$ref": "#/$defs/testConfig"},
        "msg": {"type": "string"},
    },
    "if": {"properties": {"success": {"const": True}}},
    "then": {"required": ["templateName", "templateVersion", "test"], "not": {"required": ["msg"]}},
    "else": {"required": ["msg"], "not": {"anyOf": [{"required": ["test"]}, {"required": ["templateName"]}]}},
}

# Per-host items: the result plus endpoint and method; a failed item has exactly these four keys.
HOST_ITEMS = {
    "$defs": DEFS,
    "type": "array",
    "items": {
        "allOf": [{"$ref": "#/$defs/result"}],
        "required": ["endpoint", "method"],
        "properties": {"endpoint": {"type": "string"}, "method": {"type": "string"}},
        "if": {"properties": {"success": {"const": False}}},
        "then": {"additionalProperties": False,
                 "properties": {"success": {}, "endpoint": {}, "method": {}, "msg": {}}},
    },
}
HOST_ITEMS["$defs"] = {**DEFS, "result": {k: v for k, v in RESULT.items() if k != "$defs"}}

TEMPLATE_CASES = [
    ("AUTH_BYPASS", "GET", "/api/users/{param1}"),
    ("BOLA", "GET", "/api/users/{param1}"),
    ("MASS_ASSIGNMENT", "PATCH", "/api/users/{param1}"),
    ("MASS_ASSIGNMENT", "POST", "/api/comments"),
    ("SQL_INJECTION", "POST", "/api/comments"),
    ("SQL_INJECTION", "GET", "/api/search"),
    ("XSS", "GET", "/api/search"),
    ("RATE_LIMIT", "POST", "/api/login"),
    ("RATE_LIMIT", "POST", "/api/comments"),
    ("USER_ENUMERATION", "POST", "/api/login"),
]


def test_the_schema_itself_is_valid():
    jsonschema.Draft202012Validator.check_schema(RESULT)
    jsonschema.Draft202012Validator.check_schema(HOST_ITEMS)


def test_the_schema_rejects_a_test_without_required_fields():
    broken = {"success": True, "templateName": "XSS", "templateVersion": 1,
              "test": {"id": "x", "name": "x", "endpoint": "/x", "requests": [{"headers": {"a": 1}}]}}
    errors = list(jsonschema.Draft202012Validator(RESULT).iter_errors(broken))
    messages = " ".join(e.message for e in errors)
    assert "'method' is a required property" in messages
    assert "'description' is a required property" in messages


@pytest.mark.parametrize(("template", "method", "path"), TEMPLATE_CASES)
def test_generated_test_validates_against_spec_tables(client, shop, template, method, path):
    body = client.get("/api/v1/gen-test-endpoint", {"endpoint": path, "method": method, "type": template}).json()
    jsonschema.validate(body, RESULT, cls=jsonschema.Draft202012Validator)
    assert body["success"] is True
    assert body["test"]["requests"]


def test_failure_result_validates(client, shop):
    body = client.get("/api/v1/gen-test-endpoint", {"endpoint": "/api/search", "type": "BOLA"}).json()
    jsonschema.validate(body, RESULT, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize("template", [None, "AUTH_BYPASS", "BOLA", "MASS_ASSIGNMENT", "SQL_INJECTION", "XSS",
                                      "RATE_LIMIT"])
def test_per_host_items_validate(client, shop, template):
    query = {"host": SHOP, **({"type": template} if template else {})}
    items = client.get("/api/v1/gen-test-endpoints", query).json()
    assert len(items) == 6
    jsonschema.validate(items, HOST_ITEMS, cls=jsonschema.Draft202012Validator)
