"""A test that cannot decide is INCONCLUSIVE (DECISIONS §8), end to end: the runner's outcome, the
command's table, summary and exit status, JUnit ``skipped``, and ``numInconclusive`` in the runs API
(runs of the command and runs through ``POST /testing/runs``).

The target is a small notes API whose writes cannot all be read back, as real ones often are:
``POST /api/notes`` answers 201 without an id and nothing reads a note; ``POST /api/drafts`` answers
an id but ``GET /api/drafts/{id}`` only serves published drafts (404); ``POST /api/strict`` refuses
unknown properties (422); ``POST /api/fragile`` breaks on them (500) and has no read either.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from testgen.services import test_run_execute
from tests.testgen.conftest import run_command
from tests.testgen.factories import endpoint_from_traffic
from tests.testgen.target_app import RunningTarget

pytestmark = [pytest.mark.django_db]
HOST = "notes.test"
RUNS = "/api/v1/testing/runs"


class NotesApp:
    def __init__(self):
        self.notes: list[dict] = []

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            body = json.loads(environ["wsgi.input"].read(length) or b"{}") if length else {}
        except ValueError:
            body = {}
        status, value = self.route(environ["REQUEST_METHOD"], environ.get("PATH_INFO", ""), body)
        payload = json.dumps(value).encode()
        start_response(f"{status} X", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]

    def route(self, method: str, path: str, body: dict):
        unknown = set(body) - {"text"}
        if method == "POST" and path == "/api/notes":
            self.notes.append(body)  # every property stored, but nothing ever shows a note again
            return 201, {"status": "ok"}
        if method == "POST" and path == "/api/drafts":
            self.notes.append(body)
            return 201, {"id": len(self.notes)}
        if method == "GET" and path.startswith("/api/drafts/"):
            return 404, {"error": "not published"}
        if method == "POST" and path == "/api/strict":
            return (422, {"error": f"unknown property {sorted(unknown)[0]}"}) if unknown else (201, {"id": 1})
        if method == "POST" and path == "/api/fragile":
            return (500, {"error": "internal error"}) if unknown else (201, {"status": "ok"})
        return 404, {"error": "not found"}


@pytest.fixture
def notes(db):
    for path in ("/api/notes", "/api/drafts", "/api/strict", "/api/fragile"):
        endpoint_from_traffic(host=HOST, method="POST", path=path, body={"text": "hello"},
                              response={"id": 7} if path in ("/api/drafts", "/api/strict") else {"status": "ok"})
    endpoint_from_traffic(host=HOST, method="GET", path="/api/drafts/{param1}", paths=["/api/drafts/7"],
                          response={"id": 7, "text": "hello", "published": False})
    target = RunningTarget(NotesApp())
    yield target
    target.stop()


def test_the_command_reports_undecidable_tests_inconclusive_and_exits_0(notes, set_env, client, tmp_path):
    set_env(notes.base_url)
    junit = tmp_path / "report.xml"
    status, output = run_command("--host", HOST, "--type", "MASS_ASSIGNMENT", "--junit", str(junit))

    assert status == 0, output  # nothing FAILED or errored: inconclusive is not a failure
    assert "1 passed, 0 failed, 0 error(s), 3 inconclusive" in output
    lines = {line.split()[3]: line for line in output.splitlines() if line.startswith(("PASS ", "INCONCLUSIVE "))}
    assert lines["/api/strict"].startswith("PASS ")  # the write was refused (422)
    for path in ("/api/notes", "/api/drafts", "/api/fragile"):
        assert lines[path].startswith("INCONCLUSIVE "), output
    assert "no GET of the inventory reads the object back" in lines["/api/notes"]
    assert "a read-back answered 2xx" in lines["/api/drafts"]  # GET /api/drafts/{id} answered 404
    assert "status is 500" in lines["/api/fragile"]  # a 5xx on a guess is no finding by itself

    suite = ET.fromstring(junit.read_bytes())
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("4", "0", "0", "3")
    skipped = [case.get("name") for case in suite if case.find("skipped") is not None]
    assert sorted(skipped) == ["MASS_ASSIGNMENT POST /api/drafts", "MASS_ASSIGNMENT POST /api/fragile",
                               "MASS_ASSIGNMENT POST /api/notes"]
    assert all(case.find("skipped").get("message").startswith("inconclusive: ") for case in suite
               if case.find("skipped") is not None)

    run = client.get(f"{RUNS}?limit=1").json()[0]
    assert (run["source"], run["numTests"], run["numPassed"], run["numFailed"], run["numErrors"],
            run["numInconclusive"]) == ("CLI", 4, 1, 0, 0, 3)
    detail = client.get(f"{RUNS}/{run['uuid']}").json()
    assert sorted(r["outcome"] for r in detail["results"]) == ["INCONCLUSIVE"] * 3 + ["PASSED"]


def test_a_run_through_the_api_counts_inconclusive_results(notes, set_env, client, django_capture_on_commit_callbacks):
    set_env(notes.base_url)
    with django_capture_on_commit_callbacks(execute=False):
        body = client.post(RUNS, {"host": HOST, "type": "MASS_ASSIGNMENT"}, format="json").json()
    assert body["numInconclusive"] == 0 and body["status"] == "PENDING"
    test_run_execute(run_id=body["uuid"])  # the worker's side, in this process
    detail = client.get(f"{RUNS}/{body['uuid']}").json()
    assert (detail["status"], detail["numPassed"], detail["numFailed"], detail["numInconclusive"]) == ("DONE", 1, 0, 3)
    listed = client.get(RUNS).json()[0]
    assert listed["uuid"] == body["uuid"] and listed["numInconclusive"] == 3
