"""Test runs: POST /testing/runs queues a run for the worker; GET reads runs and their results."""
from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import Scope
from testgen.models import TestRun, TestRunResult
from testgen.services import test_run_execute, test_runs_sweep
from tests.support.processes import start_worker, wait_for
from tests.testgen.conftest import SHOP, run_command

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_templates")]
RUNS = "/api/v1/testing/runs"


def start(client, body: dict, django_capture_on_commit_callbacks) -> tuple[dict, list]:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(RUNS, body, format="json")
    assert response.status_code == 202, response.content
    return response.json(), callbacks


class TestStart:
    def test_missing_key_is_client_unauthorized(self, anon_client):
        for response in (anon_client.post(RUNS, {}, format="json"), anon_client.get(RUNS),
                         anon_client.get(f"{RUNS}/{uuid.uuid4()}")):
            assert (response.status_code, response.json()) == (401, "Client unauthorized")
        assert not TestRun.objects.exists()

    def test_without_environment_it_is_a_conflict(self, client, shop):
        response = client.post(RUNS, {"host": SHOP}, format="json")
        assert (response.status_code, response.json()) == (409, "No testing environment configured.")
        assert not TestRun.objects.exists()

    def test_unknown_endpoint_is_could_not_find_endpoint(self, client, shop, set_env):
        set_env("http://127.0.0.1:9")
        response = client.post(RUNS, {"endpoint": "/api/nothing"}, format="json")
        assert (response.status_code, response.json()) == (404, {"success": False, "msg": "Could not find endpoint."})
        assert not TestRun.objects.exists()

    @pytest.mark.parametrize(("body", "path"), [({"type": "CSRF"}, ["type"]), ({"method": "FETCH"}, ["method"]),
                                                 ({"version": 1}, ["version"]), ({"host": ["a"]}, ["host"])])
    def test_bad_input_is_a_validation_error(self, client, shop, set_env, body, path):
        set_env("http://127.0.0.1:9")
        response = client.post(RUNS, body, format="json")
        assert response.status_code == 400
        assert response.json()["err"]["issues"][0]["path"] == path
        assert not TestRun.objects.exists()

    def test_a_run_is_queued_for_the_worker(self, client, shop, set_env, django_capture_on_commit_callbacks):
        set_env("http://127.0.0.1:9")
        body, callbacks = start(client, {"host": SHOP, "type": "XSS"}, django_capture_on_commit_callbacks)
        assert body["status"] == "PENDING"
        assert (body["source"], body["host"], body["type"], body["endpoint"]) == ("API", SHOP, "XSS", None)
        assert body["baseUrl"] == "http://127.0.0.1:9"
        assert len(callbacks) == 1
        assert TestRun.objects.get().status == TestRun.Status.PENDING


class TestExecution:
    def test_worker_side_runs_and_records_results(self, client, shop, serve, set_env,
                                                  django_capture_on_commit_callbacks):
        set_env(serve(vulnerable=True).base_url)
        body, _ = start(client, {"host": SHOP, "type": "XSS"}, django_capture_on_commit_callbacks)
        run = test_run_execute(run_id=body["uuid"])
        assert run.status == TestRun.Status.DONE
        assert test_run_execute(run_id=body["uuid"]) is None  # a duplicate message does nothing

        detail = client.get(f"{RUNS}/{body['uuid']}").json()
        # Only the HTML search page renders a reflection; the JSON endpoints echoing it are no
        # XSS finding (issue #15).
        assert (detail["status"], detail["numTests"], detail["numPassed"], detail["numFailed"], detail["numErrors"],
                detail["numNotGenerated"]) == ("DONE", 4, 3, 1, 0, 2)
        by_endpoint = {(r["method"], r["endpoint"]): r for r in detail["results"]}
        search = by_endpoint[("GET", "/api/search")]
        assert (search["outcome"], search["templateName"], search["numRequests"]) == ("FAILED", "XSS", 4)
        assert search["checks"][0] == {
            "description": "No payload comes back unescaped", "outcome": "failed", "precondition": False,
            "message": "request 1 (query parameter 'q': <script>alert(31337)</script>): body contains "
                       "<script>alert(31337)",
        }
        assert search["checks"][1]["outcome"] == "passed"  # the example request alone was accepted
        # The coverage report: per endpoint, whose requests were sent and how they were answered.
        coverage = {(e["method"], e["endpoint"]): e for e in detail["coverage"]["endpoints"]}
        assert coverage[("GET", "/api/search")]["requests"] == {"anonymous": {"sent": 4, "statuses": {"200": 4}}}
        assert coverage[("GET", "/api/search")]["tests"] == {"FAILED": 1}
        assert detail["coverage"]["findings"] == {"MEDIUM": 1}
        assert {n["reason"] for n in detail["coverage"]["notTested"]} == {"No suitable test template found"}
        assert by_endpoint[("POST", "/api/login")]["outcome"] == "PASSED"
        # A finding says how bad it is and shows the exchange that proved it; a pass has neither.
        assert (search["severity"], search["evidence"]["response"]["status"]) == ("MEDIUM", 200)
        assert "<script>alert(31337)</script>" in search["evidence"]["response"]["body"]
        assert (by_endpoint[("POST", "/api/login")]["severity"], by_endpoint[("POST", "/api/login")]["evidence"]) \
            == (None, None)
        assert TestRunResult.objects.filter(run_id=body["uuid"]).count() == 4

    def test_a_read_key_reads_the_outcomes_of_a_real_run_but_not_its_evidence(
            self, client, scoped_client, shop, serve, set_env, django_capture_on_commit_callbacks):
        set_env(serve(vulnerable=True).base_url)
        body, _ = start(client, {"host": SHOP, "type": "XSS"}, django_capture_on_commit_callbacks)
        test_run_execute(run_id=body["uuid"])
        clear = client.get(f"{RUNS}/{body['uuid']}").json()
        masked = scoped_client(Scope.READ).get(f"{RUNS}/{body['uuid']}").json()

        def without_messages(detail: dict) -> dict:
            return {**detail, "results": [
                {**r, "message": bool(r["message"]), "checks": [{**c, "message": bool(c["message"])}
                                                                for c in r["checks"]], "evidence": bool(r["evidence"])}
                for r in detail["results"]]}

        assert without_messages(masked) == without_messages(clear)
        messages = [m for r in masked["results"] for m in [r["message"], *(c["message"] for c in r["checks"])]]
        assert set(messages) == {"", "[REDACTED]"}
        assert any("<script>" in c["message"] for r in clear["results"] for c in r["checks"])
        # The evidence keeps its shape (method, status, sizes) but not what was sent or came back.
        found = next(r["evidence"] for r in clear["results"] if r["outcome"] == "FAILED")
        hidden = next(r["evidence"] for r in masked["results"] if r["outcome"] == "FAILED")
        assert "<script>" in found["response"]["body"] and "/api/search" in found["request"]["url"]
        assert (hidden["request"]["method"], hidden["response"]["status"]) == ("GET", 200)
        assert (hidden["request"]["url"], hidden["response"]["body"]) == ("[REDACTED]", "[REDACTED]")
        assert hidden["response"]["bodySize"] == found["response"]["bodySize"]

    def test_a_run_whose_endpoint_was_deleted_fails(self, client, shop, set_env, django_capture_on_commit_callbacks):
        set_env("http://127.0.0.1:9")
        body, _ = start(client, {"endpoint": "/api/search"}, django_capture_on_commit_callbacks)
        shop["search"].delete()
        run = test_run_execute(run_id=body["uuid"])
        assert (run.status, run.error) == (TestRun.Status.FAILED, "Could not find endpoint.")

    def test_sweep_closes_lost_runs_and_requeues_forgotten_ones(self, set_env, django_capture_on_commit_callbacks,
                                                               monkeypatch):
        old = timezone.now() - timedelta(hours=3)
        lost = TestRun.objects.create(status=TestRun.Status.RUNNING, started_at=old, created_at=old)
        forgotten = TestRun.objects.create(status=TestRun.Status.PENDING, created_at=old)
        fresh = TestRun.objects.create(status=TestRun.Status.PENDING)
        sent = []
        monkeypatch.setattr("testgen.tasks.test_run_execute_task.delay", sent.append)
        assert test_runs_sweep(stale_after=timedelta(hours=1)) == {"lost": 1, "requeued": 1}
        lost.refresh_from_db()
        assert lost.status == TestRun.Status.FAILED
        assert sent == [str(forgotten.uuid)]
        assert TestRun.objects.get(uuid=fresh.uuid).status == TestRun.Status.PENDING


class TestRead:
    def test_list_is_newest_first_with_a_total(self, client):
        now = timezone.now()
        runs = [TestRun.objects.create(created_at=now - timedelta(minutes=i)) for i in range(3)]
        response = client.get(RUNS, {"limit": 2})
        assert response.status_code == 200
        assert [r["uuid"] for r in response.json()] == [str(runs[0].uuid), str(runs[1].uuid)]
        assert response["X-Total-Count"] == "3"
        assert "results" not in response.json()[0]

    def test_bad_paging_is_a_validation_error(self, client):
        assert client.get(RUNS, {"limit": 501}).json()["err"]["issues"][0]["code"] == "too_big"

    @pytest.mark.parametrize("run_id", [str(uuid.uuid4()), "not-a-uuid"])
    def test_unknown_run_does_not_exist(self, client, run_id):
        response = client.get(f"{RUNS}/{run_id}")
        assert (response.status_code, response.json()) == (404, "Test run does not exist.")

    def test_command_runs_are_recorded_too(self, client, shop, serve, set_env):
        set_env(serve(vulnerable=False).base_url)
        status, output = run_command("--endpoint", "/api/search", "--type", "SQL_INJECTION")
        assert status == 0
        run = TestRun.objects.get()
        assert (run.source, run.status, run.num_passed, run.endpoint) == ("CLI", "DONE", 1, "/api/search")
        assert f"Recorded as test run {run.uuid}" in output


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_queued_run(client, shop, serve, set_env):
    """POST /testing/runs, a Celery worker process picks the run up from Redis and records it."""
    set_env(serve(vulnerable=True).base_url)
    worker = start_worker("celery", pool="solo", TESTGEN_SQLI_DELAY_SECONDS="1")
    try:
        response = client.post(RUNS, {"endpoint": "/api/search", "type": "SQL_INJECTION"}, format="json")
        assert response.status_code == 202
        run_id = response.json()["uuid"]
        detail = wait_for(lambda: (d := client.get(f"{RUNS}/{run_id}").json())["status"] in ("DONE", "FAILED") and d,
                          timeout=60, interval=0.3)
        assert detail["status"] == "DONE", detail
        assert (detail["numTests"], detail["numFailed"]) == (1, 1)
        assert detail["results"][0]["templateName"] == "SQL_INJECTION"
    finally:
        worker.stop()

