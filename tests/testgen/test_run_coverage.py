"""Runs cover every applicable template per endpoint unless ``--type`` / ``type`` narrows them
(issue #15 item 7); SPEC's generation routes keep one result per endpoint. And the auth scheme seen
in traffic survives redaction and reaches the generated tests (DECISIONS §4)."""
from __future__ import annotations

import json

import pytest

from inventory.models import ApiTrace
from testgen.models import TestRun, TestRunResult
from testgen.services import test_run_execute
from tests.inventory.ingest_support import ingest, raw_trace  # noqa: F401 - fixture
from tests.testgen.conftest import SHOP, run_command
from tests.testgen.login_target import USERS, LoginApp
from tests.testgen.target_app import RunningTarget
from tests.testgen.test_runs_api import start

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_templates")]


class TestEveryTemplate:
    def test_a_run_without_type_runs_every_applicable_template(self, shop, serve, set_env):
        set_env(serve(vulnerable=False).base_url)
        _, output = run_command("--endpoint", "/api/login", "--method", "POST")
        assert "Running 4 test(s)" in output, output
        for template in ("USER_ENUMERATION", "SQL_INJECTION", "XSS", "RATE_LIMIT"):  # no mass assignment on a login
            assert f"{template} POST /api/login (" in output
        # Enumeration runs first: the other tests' failed logins could have the login throttled by then.
        assert "[1/4] PASS  USER_ENUMERATION POST /api/login" in output
        assert "PASS  RATE_LIMIT POST /api/login" in output  # the fixed login throttles

    def test_type_narrows_to_one_template(self, shop, serve, set_env):
        set_env(serve(vulnerable=False).base_url)
        status, output = run_command("--endpoint", "/api/login", "--method", "POST", "--type", "RATE_LIMIT")
        assert status == 0, output
        assert "Running 1 test(s)" in output
        assert "RATE_LIMIT POST /api/login (" in output and "XSS POST" not in output

    def test_runs_api_without_type_covers_every_template(self, client, shop, serve, set_env,
                                                         django_capture_on_commit_callbacks):
        set_env(serve(vulnerable=True).base_url)
        body, _ = start(client, {"host": SHOP, "endpoint": "/api/search"}, django_capture_on_commit_callbacks)
        assert body["type"] is None
        run = test_run_execute(run_id=body["uuid"])
        assert run.status == TestRun.Status.DONE
        templates = sorted(TestRunResult.objects.filter(run=run).values_list("template_name", flat=True))
        assert templates == ["SQL_INJECTION", "XSS"]  # no JSON answer seen: no DATA_EXPOSURE
        assert (run.num_tests, run.num_failed, run.num_not_generated) == (2, 2, 0)

    def test_generation_routes_keep_one_result_per_endpoint(self, client, shop):
        items = client.get("/api/v1/gen-test-endpoints", {"host": SHOP}).json()
        assert len(items) == len(shop)
        assert {(i["method"], i["endpoint"]) for i in items} == {(e.method, e.path) for e in shop.values()}
        one = client.get("/api/v1/gen-test-endpoint", {"endpoint": "/api/login", "method": "POST"}).json()
        assert one["success"] is True and one["templateName"] == "SQL_INJECTION"


class TestAuthScheme:
    def test_bearer_survives_redaction_and_tests_send_scheme_and_token(self, client, ingest, tmp_path):  # noqa: F811
        ingest(raw_trace(host="notes.test", path="/me", headers={"Authorization": "Bearer eyJ.real.sig"},
                         response_body={"user": "alice"}))
        stored = ApiTrace.objects.get().request_headers
        assert {"name": "Authorization", "value": "Bearer [REDACTED]"} in stored
        target = RunningTarget(LoginApp(uses=100))
        try:
            login = {"url": "/auth/login", "tokenPath": "data.token",
                     "body": {"username": "alice", "password": USERS["alice"]}}
            # A login recipe gives a bare token; an operator's authToken may carry the scheme: both work.
            for env in ({"login": login}, {"authToken": "Bearer tk-none"}):
                assert client.put("/api/v1/testing/global-env", {"baseUrl": target.base_url, "retries": 0, **env},
                                  format="json").status_code == 200
                run_command("--host", "notes.test", "--type", "AUTH_BYPASS")
            sent = [h for h in target.app.auth_headers if h]
            assert sent, target.app.auth_headers
            assert any(h.startswith("Bearer tk1-alice") for h in sent)
            assert any(h.startswith("Bearer tk-none") for h in sent)
            assert not any(h.startswith("Bearer Bearer") or h.startswith("tk") for h in sent)
        finally:
            target.stop()


class TestRateLimitUsesNoRealUser:
    def test_login_burst_names_a_user_that_does_not_exist(self, client, shop, serve, set_env):
        answer = client.get("/api/v1/gen-test-endpoint",
                            {"endpoint": "/api/login", "method": "POST", "type": "RATE_LIMIT"}).json()
        request = answer["test"]["requests"][0]
        assert request["body"] == {"username": "apiscope-no-such-user", "password": "apiscope-not-a-password"}
        assert "alice" not in json.dumps(answer)
        # Still a real test: the fixed login throttles the burst, the vulnerable one does not.
        for vulnerable, expected in ((False, 0), (True, 1)):
            set_env(serve(vulnerable=vulnerable).base_url)
            status, output = run_command("--endpoint", "/api/login", "--method", "POST", "--type", "RATE_LIMIT")
            assert status == expected, output
