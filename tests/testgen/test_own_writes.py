"""Writes go to the test identity's own objects, whatever the template (DECISIONS §8; testgen/own_writes.py).

A write naming an object in its path or query takes the primary identity's configured
``objectIds.<resource>``, else an object traffic showed the test user owning, else it is not sent and
the test is INCONCLUSIVE naming the id to configure. Reads keep the ids traffic showed. The end-to-end
runs use a small books API that lets anyone rewrite any book (the flaw that makes a stray write harm
someone) and records which books were written.
"""
from __future__ import annotations

import json
import re

import pytest

from testgen.models import GLOBAL_ENV_KEY, TestingEnvironment
from testgen.services import test_generate
from tests.testgen.conftest import run_command
from tests.testgen.factories import ApiTraceFactory, endpoint_from_traffic
from tests.testgen.target_app import RunningTarget

pytestmark = pytest.mark.django_db
HOST = "library.test"
WRITING = ("AUTH_BYPASS", "SQL_INJECTION", "XSS", "MASS_ASSIGNMENT", "RATE_LIMIT")


def book_write(method: str = "PUT"):
    """``PUT /books/{id}`` as traffic showed it: carol rewriting her book 3."""
    return endpoint_from_traffic(host=HOST, method=method, path="/books/{param1}", authenticated=True,
                                 paths=["/books/3"], body={"title": "Poems", "note": "draft"},
                                 response={"id": 3, "owner": "carol", "title": "Poems"})


def book_read(*owners: tuple[str, str]):
    """``GET /books/{id}``: each (id, owner) read once in traffic, its answer naming the owner."""
    endpoint = endpoint_from_traffic(host=HOST, method="GET", path="/books/{param1}", authenticated=True,
                                     paths=[f"/books/{i}" for i, _ in owners],
                                     response={"id": int(owners[0][0]), "owner": owners[0][1], "title": "x"})
    for book_id, owner in owners[1:]:
        ApiTraceFactory(endpoint=endpoint, path=f"/books/{book_id}", request_headers=[
            {"name": "Authorization", "value": "Bearer [REDACTED]"}],
            response_body=json.dumps({"id": int(book_id), "owner": owner, "title": "x"}))
    return endpoint


def generated(endpoint, template: str) -> dict:
    result = test_generate(endpoint=endpoint, template_name=template)
    assert result["success"], result
    return result["test"]


def writes(test: dict) -> list[dict]:
    return [r for r in test["requests"] if r.get("method") == "PUT"]


@pytest.fixture
def env(client):
    def put(**extra) -> None:
        response = client.put("/api/v1/testing/global-env", {"baseUrl": "http://library.test", "testUserId": "alice",
                                                               "authToken": "Bearer a", **extra}, format="json")
        assert response.status_code == 200, response.content
    return put


@pytest.mark.parametrize("template", ["AUTH_BYPASS", "SQL_INJECTION", "XSS", "MASS_ASSIGNMENT"])
def test_without_an_own_object_no_template_writes_to_the_object_traffic_showed(env, template):
    env()
    book_read(("3", "carol"))
    test = generated(book_write(), template)
    assert "/books/3" not in json.dumps(test)
    unsent = [r for r in writes(test) if "{{objectIds.book}}" in r["url"]]
    assert unsent and all("set objectIds.book" in r["skip"] for r in unsent), test["requests"]
    assert any(a.get("inconclusive") for a in test["assertions"])


def test_a_payload_standing_for_the_id_is_sent_the_rest_is_not(env):
    env()
    slug = endpoint_from_traffic(host=HOST, method="PUT", path="/poems/{param1}", authenticated=True,
                                 paths=["/poems/carols-best"], body={"title": "Poems"})
    test = generated(slug, "XSS")
    sent = [r for r in writes(test) if "skip" not in r]
    assert sent and all("alert(31337)" in r["url"] for r in sent)  # names no object at all
    assert any("{{objectIds.poem}}" in r["url"] and r["skip"] for r in writes(test))  # the body's payloads


@pytest.mark.parametrize("template", WRITING[:4])
def test_the_configured_own_object_is_written(env, template):
    env(objectIds={"books": "41"})
    test = generated(book_write(), template)
    assert all("{{objectIds.books}}" in r["url"] and "skip" not in r for r in writes(test)), test["requests"]
    assert not any(a.get("description", "").startswith("Every write was sent") for a in test["assertions"])


def test_an_object_traffic_showed_the_test_user_owning_is_written(env):
    env()
    book_read(("3", "carol"), ("1", "alice"))
    test = generated(book_write(), "SQL_INJECTION")
    urls = {r["url"] for r in writes(test)}
    assert "{{baseUrl}}/books/1" in urls and not any("/books/3" in u for u in urls)
    assert all("skip" not in r for r in writes(test))


def test_an_id_query_parameter_of_a_write_is_the_own_object_and_a_user_query_the_test_user(env):
    env(objectIds={"item": "9"})
    endpoint = endpoint_from_traffic(host=HOST, method="DELETE", path="/items", authenticated=True,
                                     query={"itemId": "5", "userId": "carol"})
    request = generated(endpoint, "AUTH_BYPASS")["requests"][0]
    assert request["queryParams"] == {"itemId": "{{objectIds.item}}", "userId": "{{testUserId}}"}


def test_reads_keep_the_ids_traffic_showed(env):
    env()
    read = book_read(("3", "carol"))
    assert generated(read, "AUTH_BYPASS")["requests"][0]["url"] == "{{baseUrl}}/books/3"


def test_time_based_payloads_in_a_write_narrow_the_statement_with_and(env):
    env(objectIds={"book": "41"})
    payloads = [r["payload"] for r in generated(book_write(), "SQL_INJECTION")["requests"] if "SLEEP" in r["payload"]]
    assert payloads and all(" AND (SELECT" in p and " OR " not in p for p in payloads)


def test_the_primary_object_ids_are_encrypted_at_rest_and_validated(env, client):
    env(objectIds={"book": "secret-shelf-41"})
    row = TestingEnvironment.objects.get(key=GLOBAL_ENV_KEY)
    assert "secret-shelf-41" not in json.dumps(row.extra) and "secret-shelf-41" not in row.identities_encrypted
    assert client.get("/api/v1/testing/global-env").json()["objectIds"] == {"book": "secret-shelf-41"}
    bad = client.put("/api/v1/testing/global-env", {"baseUrl": "http://library.test", "objectIds": {"a b": "1"}},
                     format="json")
    assert bad.status_code == 400 and "objectIds" in json.dumps(bad.json())


class Library:
    """Anyone may rewrite any book (the flaw); ``written`` lists the ids of the books written."""

    def __init__(self):
        self.written: list[str] = []

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ["REQUEST_METHOD"]
        book = path.rsplit("/", 1)[-1]
        if method == "PUT" and path.startswith("/books/"):
            self.written.append(book)
            status, value = 200, {"id": book, "title": "ok"}
        elif method == "GET" and path.startswith("/books/"):
            status, value = 200, {"id": book, "owner": "alice" if book == "41" else "carol", "title": "ok"}
        else:
            status, value = 404, {"error": "not found"}
        payload = json.dumps(value).encode()
        start_response(f"{status} X", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]


@pytest.fixture
def library(db, settings):
    settings.TESTGEN_SQLI_DELAY_SECONDS = 1
    book_write()
    book_read(("3", "carol"))
    app = Library()
    target = RunningTarget(app)
    yield target, app
    target.stop()


def test_a_run_without_an_own_book_writes_no_book_and_is_inconclusive(library, set_env):
    target, app = library
    set_env(target.base_url, testUserId="alice")
    status, output = run_command("--host", HOST, "--type", "SQL_INJECTION", "--method", "PUT")
    assert status == 0, output
    assert app.written == []
    assert "1 passed, 0 failed, 0 error(s), 1 inconclusive" in output and "set objectIds.book" in output


def test_a_run_with_the_own_book_configured_writes_only_that_book(library, set_env):
    target, app = library
    set_env(target.base_url, testUserId="alice", objectIds={"book": "41"})
    status, output = run_command("--host", HOST, "--type", "SQL_INJECTION", "--method", "PUT")
    assert "1 inconclusive" not in output, output
    assert app.written and {re.match(r"\d*", w).group() for w in app.written} == {"41"}, app.written
