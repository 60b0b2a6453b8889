"""Assertion conditions and the 'similar' comparison, as pure functions."""
from __future__ import annotations

import pytest

from testgen.assertions import check, similar
from testgen.placeholders import MISSING


@pytest.mark.parametrize(("condition", "actual", "expected", "ok"), [
    ("equals", 200, 200, True),
    ("equals", "200", 200, True),      # header text against a number
    ("equals", 1, True, True),         # databases answer 1 for true
    ("equals", "true", True, True),
    ("equals", {"a": [1]}, {"a": [1]}, True),
    ("equals", "admin", "Admin", False),
    ("notEquals", "user", "admin", True),
    ("notEquals", MISSING, "admin", True),  # absent is not equal
    ("equals", MISSING, "admin", False),
    ("in", 403, [401, 403], True),
    ("in", 200, [401, 403], False),
    ("notIn", 200, [401, 403], True),
    ("contains", "<b>x</b>", "<b>", True),
    ("contains", "abc", ["a", "c"], True),
    ("contains", "abc", ["a", "z"], False),
    ("contains", ["admin", "user"], "admin", True),
    ("contains", {"role": "x"}, "role", True),
    ("notContains", "ok", ["SQL syntax", "SQLSTATE"], True),
    ("notContains", "ERROR: SQLSTATE 42601", ["SQL syntax", "SQLSTATE"], False),
    ("notContains", MISSING, "x", True),
    ("lessThan", 120.5, 2400, True),
    ("lessThan", "2500", 2400, False),
    ("greaterThan", 1500, 1000, True),
    ("greaterThan", "soon", 1000, False),
    ("matches", "application/json; charset=utf-8", r"^application/json", True),
    ("matches", "text/html", r"^application/json", False),
    ("matches", "x", r"(", False),  # an invalid regex fails, it does not raise
    ("exists", "", None, True),
    ("exists", MISSING, None, False),
    ("notExists", MISSING, None, True),
    ("notExists", "v", None, False),
])
def test_conditions(condition, actual, expected, ok):
    assert check(condition, actual, expected)[0] is ok


def test_ignore_case():
    assert check("notContains", "you have an error in your sql syntax", ["SQL syntax"], ignore_case=True)[0] is False
    assert check("notContains", "you have an error in your sql syntax", ["SQL syntax"])[0] is True


def test_failure_explains_what_was_seen():
    assert check("in", 200, [401, 403]) == (False, "is 200")
    assert check("notContains", "x sqlite3.OperationalError y", ["sqlite3.OperationalError"]) == (
        False, "contains sqlite3.OperationalError")


class TestSimilar:
    def test_same_error_mentioning_each_payload_is_similar(self):
        a = '{"error": "no user named ali\' OR \'1\'=\'1\' -- "}'
        b = '{"error": "no user named ali\' AND \'1\'=\'2\' -- "}'
        assert similar(a, "ali' OR '1'='1' -- ", b, "ali' AND '1'='2' -- ")

    def test_rows_for_one_and_none_for_the_other_differ(self):
        assert not similar('[{"id": 1}, {"id": 2}]', "t", "[]", "f")

    def test_ids_timestamps_and_numbers_do_not_matter(self):
        a = '{"requestId": "9f8e7d6c5b4a", "at": "2026-01-01T10:00:00Z", "tookMs": 3, "items": []}'
        b = '{"requestId": "0a1b2c3d4e5f", "at": "2026-01-01T10:00:01Z", "tookMs": 4, "items": []}'
        assert similar(a, None, b, None)

    def test_html_with_escaped_payloads_is_compared_without_them(self):
        a = "<p>Results for a&#x27; OR &#x27;1&#x27;=&#x27;1&#x27; -- </p><ul></ul>"
        b = "<p>Results for a&#x27; AND &#x27;1&#x27;=&#x27;2&#x27; -- </p><ul></ul>"
        assert similar(a, "a' OR '1'='1' -- ", b, "a' AND '1'='2' -- ")

    def test_html_listing_rows_differs_from_an_empty_one(self):
        a = "<p>Results</p><ul><li>alice</li><li>bob</li></ul>"
        b = "<p>Results</p><ul></ul>"
        assert not similar(a, None, b, None)

    def test_changed_booleans_differ(self):
        assert not similar('{"found": true}', None, '{"found": false}', None)
