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


class TestEscapesAndExtensions:
    """Issue #15: escapes decoded before comparing; only rendered answers for XSS; chained
    alternatives; a numeric offset over an earlier answer's value."""

    def test_an_error_page_echoing_the_quote_as_a_character_reference_is_alike(self):
        a = "<p>No account named alice&#39; AND &#39;1&#39;=&#39;1&#39; -- .</p>"
        b = "<p>No account named alice&#39; AND &#39;1&#39;=&#39;2&#39; -- .</p>"
        assert similar(a, "alice' AND '1'='1' -- ", b, "alice' AND '1'='2' -- ")

    def test_a_url_escaped_echo_is_alike(self):
        assert similar("next=%2Fa%27%20AND", "/a' AND", "next=%2Fb%27%20AND", "/b' AND")

    def test_both_payloads_leave_both_answers(self):
        # The baseline value 'ali' reflected in one page, the true payload (holding it) in the other.
        base = "<p>Results for ali</p><li>alice</li>"
        true = "<p>Results for ali%' AND '1'='1' -- </p><li>alice</li>"
        assert similar(true, "ali%' AND '1'='1' -- ", base, "ali")

    @staticmethod
    def _records(*answers):
        from requests.structures import CaseInsensitiveDict

        from testgen.runner import Exchange, RequestRecord

        records = []
        for i, (status, content_type, text, duration) in enumerate(answers):
            record = RequestRecord(i, f"request {i}")
            record.exchanges.append(Exchange("GET", "http://x/", status, CaseInsensitiveDict(
                {"Content-Type": content_type}), text, duration))
            records.append(record)
        return records

    def _evaluate(self, assertion, records):
        from testgen.assertions import assertion_evaluate
        from testgen.placeholders import Resolver

        answer = (lambda i: records[i].exchanges[-1] if 0 <= i < len(records) else None)
        return assertion_evaluate(assertion, 0, records=records, resolver=Resolver({}, {}, answer)).outcome

    def test_when_content_type_checks_only_matching_answers(self):
        xss = {"type": "body", "field": "", "condition": "notContains", "value": "<script>", "whenContentType": "html"}
        assert self._evaluate(xss, self._records((200, "application/json", '{"q": "<script>"}', 1))) == "passed"
        assert self._evaluate(xss, self._records((200, "text/html", '{"q": "<script>"}', 1))) == "failed"

    def test_otherwise_chains_and_plus_offsets(self):
        records = self._records((200, "text/html", "", 100.0), (200, "text/html", "", 1000.0), (200, "text/html", "", 150.0))
        late = {"type": "duration", "field": "", "condition": "lessThan", "value": "{{responses[0].duration}}",
                "plus": 800, "request": 1}
        assert self._evaluate(late, records) == "failed"  # 1000 ≥ 100 + 800
        slow_control = {"type": "duration", "field": "", "condition": "greaterThan",
                        "value": "{{responses[0].duration}}", "plus": 400, "request": 2}
        never = {"type": "status", "field": "", "condition": "equals", "value": 500, "request": 0}
        assert self._evaluate({**late, "otherwise": slow_control}, records) == "failed"
        assert self._evaluate({**late, "otherwise": {**never, "otherwise": {**slow_control, "plus": 10}}},
                              records) == "passed"
