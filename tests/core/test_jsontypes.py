"""One JSON-type helper: dataType names (ingestion, test generation) and zod's ``received`` names.

The table pins what every caller answered before the helper was shared: ingestion's
data fields and test generation's profiles name DataField.dataType (DECISIONS §4),
zod folds ``integer`` into ``number`` and says ``undefined`` for a missing value.
"""
from __future__ import annotations

import enum

import orjson
import pytest
from rest_framework.fields import empty

from core.enums import DataSection
from core.jsontypes import json_type
from core.zod import zod_type
from inventory.ingest.fields import body_leaves, flatten_json


class _Level(enum.IntEnum):
    HIGH = 3


# value, dataType name, zod's received name
TABLE = [
    (True, "boolean", "boolean"),
    (False, "boolean", "boolean"),
    (0, "integer", "number"),
    (1, "integer", "number"),
    (-7, "integer", "number"),
    (2**70, "integer", "number"),
    (1.0, "number", "number"),
    (0.0, "number", "number"),
    (-2.5, "number", "number"),
    (None, "null", "null"),
    ("", "string", "string"),
    ("1", "string", "string"),
    ("true", "string", "string"),
    ("null", "string", "string"),
    ({}, "object", "object"),
    ({"a": {"b": [1, None]}}, "object", "object"),
    ([], "array", "array"),
    ([1, "a"], "array", "array"),
    ([[None]], "array", "array"),
    (_Level.HIGH, "integer", "number"),
    ((1, 2), "string", "array"),
    (set(), "string", "unknown"),
    (object(), "string", "unknown"),
]


@pytest.mark.parametrize(("value", "data_type", "zod"), TABLE, ids=[repr(row[0]) for row in TABLE])
def test_each_value_has_its_data_type_and_zod_name(value, data_type, zod):
    assert json_type(value) == data_type
    assert zod_type(value) == zod


def test_a_missing_value_is_undefined_for_zod():
    assert zod_type(empty) == "undefined"


def test_a_value_json_has_no_type_for_gets_the_default():
    assert json_type(object(), default="unknown") == "unknown"
    assert json_type(1.5, default="unknown") == "number"


def test_ingested_leaves_carry_the_data_type_of_each_parsed_value():
    body = orjson.loads(b'{"on": true, "n": 1, "x": 1.0, "none": null, "s": "1",'
                        b' "deep": {"list": [[2]], "empty": {}, "no": []}}')
    leaves: list = []
    flatten_json(body, DataSection.RESPONSE_BODY, leaves)
    assert {path: kind for _, path, _, _, kind in leaves} == {
        "on": "boolean", "n": "integer", "x": "number", "none": "null", "s": "string",
        "deep.list[][]": "integer", "deep.empty": "object", "deep.no": "array"}


@pytest.mark.parametrize(("text", "kind"), [(b"true", "boolean"), (b"3", "integer"), (b"3.0", "number"),
                                            (b"null", "null"), (b'"x"', "string")])
def test_a_scalar_json_body_is_one_leaf_of_its_type(text, kind):
    leaves: list = []
    body_leaves("json", orjson.loads(text), DataSection.RESPONSE_BODY, leaves)
    assert [leaf[4] for leaf in leaves] == [kind]
