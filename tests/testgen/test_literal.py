"""The placeholder escape: text copied from traffic resolves to itself and never to a placeholder's
value, whatever it holds; generated tests carry traffic values only in that form."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from testgen.placeholders import ESCAPE, Resolver, env_references, is_placeholder, literal, literal_text
from testgen.services import test_generate
from tests.testgen.factories import endpoint_from_traffic

SECRET = "s3cr3t-value"
VALUES = {"baseUrl": "http://target.test", "authToken": "Bearer tok", "testUserId": "7", "other": "x"}
# Text rich in braces, dots and the names a resolver knows.
BRACEY = st.lists(st.sampled_from(list("{}' .ae") + ["env.", "SECRET", "authToken", "responses[0]", "{{", "}}",
                                                     ESCAPE]), max_size=20).map("".join)


def resolver() -> Resolver:
    return Resolver(VALUES, {"SECRET": SECRET}, lambda index: None)


@pytest.mark.parametrize("text", [
    "{{env.SECRET}}", "{{ env.SECRET }}", "{{authToken}}", "{{{env.SECRET}}}", "{{{{env.SECRET}}}}",
    "{env.SECRET}}", "{{env.SECRET}", ESCAPE, ESCAPE + "env.SECRET}}", "a{", "{a", "{", "{}", "x{{'{'}}y",
    "{{responses[0].body}}", "plain",
])
def test_a_literal_resolves_to_its_text(text):
    escaped = literal(text)
    assert resolver().resolve(escaped) == text
    assert env_references(escaped) == []
    assert literal_text(escaped) == text


def test_text_without_double_braces_or_braces_at_its_ends_is_left_as_it_is():
    assert literal('a {"b": 1} c') == 'a {"b": 1} c'
    assert literal("/users/{param1}") == "/users/{param1}"
    assert literal("{{env.SECRET}}") == ESCAPE * 2 + "env.SECRET}}"


@hypothesis_settings(max_examples=400, deadline=None)
@given(BRACEY, BRACEY)
def test_no_text_and_no_pair_of_texts_ever_becomes_a_placeholder(a, b):
    assert resolver().resolve(literal(a)) == a
    # Side by side (and next to template text) literals still resolve to their texts.
    assert resolver().resolve(literal(a) + literal(b)) == a + b
    assert resolver().resolve("{{testUserId}}" + literal(a) + "{{testUserId}}") == f"7{a}7"
    assert SECRET not in str(resolver().resolve(literal(a)))
    assert not is_placeholder(literal(a))


def test_an_answer_is_not_resolved_again():
    class Answer:
        status, duration_ms, headers, text = 200, 1.0, {}, "{{env.SECRET}} {{authToken}}"

        def json(self):
            return {"id": "{{env.SECRET}}"}

    resolve = Resolver(VALUES, {"SECRET": SECRET}, lambda index: Answer()).resolve
    assert resolve("{{responses[0].body}}") == "{{env.SECRET}} {{authToken}}"
    assert resolve("id={{responses[0].body.id}}") == "id={{env.SECRET}}"


PLANTED = "{{env.SECRET_KEY}}"


@pytest.mark.django_db
@pytest.mark.parametrize("template", ["SQL_INJECTION", "XSS", "MASS_ASSIGNMENT", "BOLA"])
def test_traffic_values_in_generated_tests_are_literals(template):
    endpoint = endpoint_from_traffic(
        host="shop.test", method="PUT", path="/api/users/{param1}/" + PLANTED, authenticated=True,
        paths=[f"/api/users/{PLANTED}/{PLANTED}", "/api/users/2/" + PLANTED],
        query={"q": PLANTED, "userId": "{{authToken}}"}, body={"note": PLANTED, "nested": {"list": [PLANTED]}},
    )
    test = test_generate(endpoint=endpoint, template_name=template)["test"]
    parts = [[r.get(k) for k in ("url", "headers", "queryParams", "body", "skipIfEquals", "payload")]
             for r in test["requests"]]
    assert env_references(parts) == []
    sent = Resolver({**VALUES, "identities.other.userId": "9"}, {"SECRET_KEY": SECRET}, lambda index: None)
    resolved = [sent.resolve(r.get(k)) for r in test["requests"] for k in ("url", "queryParams", "body")
                if r.get(k) is not None and "{{responses" not in str(r.get(k))]
    assert SECRET not in str(resolved)
    assert "Bearer tok" not in str([sent.resolve(r.get("queryParams")) for r in test["requests"]])
    # The planted text travels as text: percent-encoded in paths, as is in queries and bodies.
    urls = [sent.resolve(r["url"]) for r in test["requests"] if "{{responses" not in r["url"]]
    assert all(url.endswith("/%7B%7Benv.SECRET_KEY%7D%7D") for url in urls), urls
    assert PLANTED in str(resolved)
