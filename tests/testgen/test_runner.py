"""The runner against real HTTP servers on 127.0.0.1: placeholders, headers, bursts, timeouts,
retries, skipping, outcomes."""
from __future__ import annotations

import pytest

from testgen.runner import Outcome, test_run
from testgen.services import RunEnvironment
from tests.support.receiver import Answer, Receiver
from tests.testgen.target_app import EchoApp, RunningTarget


@pytest.fixture
def echo():
    target = RunningTarget(EchoApp())
    yield target
    target.stop()


def env(base_url: str, **values) -> RunEnvironment:
    options = {k: values.pop(k) for k in ("timeout_ms", "retries", "headers") if k in values}
    return RunEnvironment(base_url=base_url, values={"baseUrl": base_url, **values}, **options)


def make_test(*requests: dict, assertions: list | None = None, **extra) -> dict:
    return {"id": "t1", "name": "runner test", "endpoint": "/echo", "method": "GET", "templateName": "CUSTOM",
            "requests": list(requests), "assertions": assertions or [], **extra}


def exchange(result, index: int = 0, repetition: int = -1):
    return result.requests[index].exchanges[repetition]


def status_is(code: int, **ext) -> dict:
    return {"type": "status", "field": "", "condition": "equals", "value": code, **ext}


class TestPlaceholders:
    def test_environment_values_extra_keys_and_process_environment(self, echo):
        test = make_test({
            "description": "everything",
            "url": "{{baseUrl}}/users/{{testUserId}}",
            "headers": {"Authorization": "{{authToken}}", "X-Tenant": "{{tenant}}"},
            "queryParams": {"home": "{{env.SHOP_HOME}}"},
        }, assertions=[status_is(200)])
        result = test_run(
            test=test,
            environment=env(echo.base_url, authToken="Bearer {{env.SHOP_TOKEN}}", testUserId="7", tenant="qa"),
            environ={"SHOP_TOKEN": "t0k3n", "SHOP_HOME": "/home/qa"},
        )
        assert result.outcome == Outcome.PASSED, result.message
        seen = exchange(result).json()
        assert seen["path"] == "/users/7"
        assert seen["headers"]["authorization"] == "Bearer t0k3n"
        assert seen["headers"]["x-tenant"] == "qa"
        assert seen["query"] == {"home": "/home/qa"}

    def test_a_request_can_use_an_earlier_answer(self, echo):
        test = make_test(
            {"description": "create", "method": "POST", "url": "{{baseUrl}}/items", "body": {"name": "x"}},
            {"description": "read", "url": "{{baseUrl}}/items/{{responses[0].body.id}}",
             "body": {"ref": "{{responses[0].body.id}}", "text": "id {{responses[0].body.id}}"}},
            assertions=[status_is(200, request=1)],
        )
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.outcome == Outcome.PASSED, result.message
        seen = exchange(result, 1).json()
        assert seen["path"] == "/items/5"
        assert seen["body"] == '{"ref": 5, "text": "id 5"}'  # a whole placeholder keeps its type

    def test_missing_environment_value_is_an_error_and_sends_nothing(self, echo):
        test = make_test({"description": "a", "url": "{{baseUrl}}/a"},
                         {"description": "b", "url": "{{baseUrl}}/b", "headers": {"Authorization": "{{authToken}}"}},
                         assertions=[status_is(200)])
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.outcome == Outcome.ERROR
        assert result.message == "request 1 needs {{authToken}}, which is not set"
        assert echo.app.requests_seen == 0

    def test_optional_request_is_skipped_when_its_value_is_missing(self, echo):
        test = make_test({"description": "a", "url": "{{baseUrl}}/a"},
                         {"description": "b", "url": "{{baseUrl}}/b/{{otherObjectId}}", "optional": True},
                         assertions=[status_is(200)])
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.outcome == Outcome.PASSED
        assert result.requests[1].skipped == "optional; {{otherObjectId}} is not set"
        assert echo.app.requests_seen == 1

    def test_request_needing_a_missing_answer_is_skipped(self, echo):
        test = make_test(
            {"description": "create", "url": "{{baseUrl}}/status/400"},
            {"description": "read", "url": "{{baseUrl}}/items/{{responses[0].body.id}}"},
            assertions=[status_is(400, request=0), status_is(200, request=1)],
        )
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.requests[1].skipped.startswith("needs {{responses[0].body.id}}")
        assert [a.outcome for a in result.assertions] == ["passed", "skipped"]
        assert result.outcome == Outcome.PASSED

    def test_skip_if_equals_skips_the_test_users_own_object(self, echo):
        test = make_test(
            {"description": "other 1", "url": "{{baseUrl}}/users/1", "skipIfEquals": ["{{testUserId}}", "1"]},
            {"description": "other 2", "url": "{{baseUrl}}/users/2", "skipIfEquals": ["{{testUserId}}", "2"]},
            assertions=[status_is(200, request=0), status_is(200, request=1)],
        )
        result = test_run(test=test, environment=env(echo.base_url, testUserId="1"))
        assert result.requests[0].skipped and not result.requests[1].skipped
        assert echo.app.requests_seen == 1
        assert result.outcome == Outcome.PASSED

    def test_skip_if_equals_takes_several_pairs(self, echo):
        # The test user's name, and its numeric id as an earlier answer gave it: either is its own.
        test = make_test(
            {"description": "own id", "url": "{{baseUrl}}/items"},  # the echo answers {"id": 5}
            {"description": "owner 5", "url": "{{baseUrl}}/a", "skipIfEquals": [["{{testUserId}}", "5"],
                                                                              ["{{responses[0].body.id}}", "5"]]},
            {"description": "owner 6", "url": "{{baseUrl}}/b", "skipIfEquals": [["{{testUserId}}", "6"],
                                                                              ["{{responses[0].body.id}}", "6"]]},
            assertions=[status_is(200, request=2)],
        )
        test["requests"][0]["method"] = "POST"
        result = test_run(test=test, environment=env(echo.base_url, testUserId="alice"))
        assert result.requests[1].skipped == "5 is the test user's own value"
        assert not result.requests[2].skipped and result.outcome == Outcome.PASSED


class TestRequests:
    def test_environment_headers_are_merged_and_omitted_on_request(self, echo):
        test = make_test(
            {"description": "merged", "url": "{{baseUrl}}/a", "headers": {"X-Two": "request"}},
            {"description": "without auth", "url": "{{baseUrl}}/b", "omitHeaders": ["authorization"]},
            {"description": "empty auth", "url": "{{baseUrl}}/c", "headers": {"Authorization": ""}},
            assertions=[status_is(200)],
        )
        environment = env(echo.base_url, headers={"Authorization": "Bearer env", "X-One": "env", "X-Two": "env"})
        result = test_run(test=test, environment=environment)
        first, second, third = (exchange(result, i).json()["headers"] for i in range(3))
        assert (first["authorization"], first["x-one"], first["x-two"]) == ("Bearer env", "env", "request")
        assert "authorization" not in second and second["x-one"] == "env"
        assert third["authorization"] == ""
        assert first["user-agent"] == "apiscope-security-tests/1"

    def test_bodies_are_json_form_or_text(self, echo):
        test = make_test(
            {"description": "json", "method": "POST", "url": "{{baseUrl}}/a", "body": {"a": [1, True]}},
            {"description": "form", "method": "POST", "url": "{{baseUrl}}/b", "body": {"a": "1 2", "b": "x"},
             "headers": {"Content-Type": "application/x-www-form-urlencoded"}},
            {"description": "text", "method": "PUT", "url": "{{baseUrl}}/c", "body": "plain words",
             "headers": {"Content-Type": "text/plain"}},
            assertions=[status_is(200)],
        )
        result = test_run(test=test, environment=env(echo.base_url))
        seen = [exchange(result, i).json() for i in range(3)]
        assert (seen[0]["body"], seen[0]["headers"]["content-type"]) == ('{"a": [1, true]}', "application/json")
        assert seen[1]["body"] == "a=1+2&b=x"
        assert (seen[2]["method"], seen[2]["body"]) == ("PUT", "plain words")

    def test_default_target_is_base_url_plus_endpoint(self, echo):
        result = test_run(test=make_test({"description": "d"}, assertions=[status_is(200)]),
                          environment=env(echo.base_url))
        assert exchange(result).json()["path"] == "/echo"

    def test_unresolved_path_parameter_is_not_sent(self, echo):
        test = make_test({"description": "d"}, endpoint="/users/{param1}", assertions=[status_is(200)])
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.outcome == Outcome.ERROR
        assert "path parameter" in result.message
        assert echo.app.requests_seen == 0

    def test_burst_repeats_and_stops_at_a_status(self, echo):
        test = make_test(
            {"description": "burst", "url": "{{baseUrl}}/a", "repeat": 4},
            {"description": "limited", "url": "{{baseUrl}}/status/429", "repeat": 10, "stopWhenStatus": [429]},
            assertions=[status_is(200, request=0, aggregate="all"), status_is(429, request=1, aggregate="any")],
        )
        result = test_run(test=test, environment=env(echo.base_url))
        assert [len(r.exchanges) for r in result.requests] == [4, 1]
        assert result.outcome == Outcome.PASSED

    def test_redirects_are_not_followed(self, echo):
        result = test_run(test=make_test({"description": "r", "url": "{{baseUrl}}/redirect"},
                                         assertions=[status_is(302)]), environment=env(echo.base_url))
        assert result.outcome == Outcome.PASSED

    def test_cookies_are_not_carried_to_the_next_request(self, echo):
        test = make_test({"description": "set", "url": "{{baseUrl}}/cookie"},
                         {"description": "then", "url": "{{baseUrl}}/a"}, assertions=[status_is(200)])
        result = test_run(test=test, environment=env(echo.base_url))
        assert "cookie" not in exchange(result, 1).json()["headers"]

    def test_timeout_ends_a_request_and_counts_as_a_slow_answer(self, echo):
        test = make_test(
            {"description": "fast", "url": "{{baseUrl}}/a"},
            {"description": "slow", "url": "{{baseUrl}}/slow?ms=700"},
            assertions=[{"type": "duration", "field": "", "condition": "lessThan", "value": 5000}],
        )
        result = test_run(test=test, environment=env(echo.base_url, timeout_ms=150))
        slow = exchange(result, 1)
        assert slow.status is None
        assert slow.error == "timed out after 150 ms"
        assert result.outcome == Outcome.PASSED  # 150 ms < 5 s; the duration of a timeout is its wait

    def test_request_timeout_overrides_the_environment(self, echo):
        test = make_test({"description": "slow", "url": "{{baseUrl}}/slow?ms=300", "timeout": 3000},
                         assertions=[status_is(200)])
        result = test_run(test=test, environment=env(echo.base_url, timeout_ms=100))
        assert result.outcome == Outcome.PASSED

    def test_connection_failures_are_retried(self):
        flaky = Receiver(Answer(body=b"ok", content_type="text/plain"), drop_first=1)  # drops its first connection
        try:
            test = make_test({"description": "d", "url": "{{baseUrl}}/x"},
                             assertions=[{"type": "body", "field": "", "condition": "equals", "value": "ok"}])
            result = test_run(test=test, environment=env(flaky.url, retries=1))
            assert result.outcome == Outcome.PASSED, result.message
            assert flaky.connections == 2
        finally:
            flaky.close()

    def test_without_retries_a_dropped_connection_is_an_error(self):
        flaky = Receiver(Answer(body=b"ok", content_type="text/plain"), drop_first=1)  # drops its first connection
        try:
            result = test_run(test=make_test({"description": "d", "url": "{{baseUrl}}/x"}, assertions=[status_is(200)]),
                              environment=env(flaky.url, retries=0))
            assert result.outcome == Outcome.ERROR
            assert result.message.startswith("no answer from the target: connection failed")
            assert flaky.connections == 1
        finally:
            flaky.close()


class TestOutcomes:
    def test_failed_assertion_fails_the_test(self, echo):
        result = test_run(test=make_test({"description": "d", "url": "{{baseUrl}}/status/500"},
                                         assertions=[status_is(200, description="answers 200")]),
                          environment=env(echo.base_url))
        assert result.outcome == Outcome.FAILED
        assert result.message == "answers 200: request 0 (d): status is 500"

    def test_expected_status_and_response_are_checked(self, echo):
        test = make_test({"description": "d", "url": "{{baseUrl}}/items", "method": "POST", "expectedStatus": 201,
                          "expectedResponse": {"id": 6}})
        result = test_run(test=test, environment=env(echo.base_url))
        assert [a.outcome for a in result.assertions] == ["passed", "failed"]
        assert result.outcome == Outcome.FAILED

    def test_failed_precondition_is_an_error_not_a_finding(self, echo):
        test = make_test({"description": "own", "url": "{{baseUrl}}/status/401"},
                         {"description": "other", "url": "{{baseUrl}}/status/404"},
                         assertions=[status_is(200, request=0, precondition=True), status_is(404, request=1)])
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.outcome == Outcome.ERROR
        assert result.message.startswith("precondition failed")

    def test_nothing_checked_is_an_error(self, echo):
        test = make_test({"description": "own", "url": "{{baseUrl}}/a"},
                         {"description": "other", "url": "{{baseUrl}}/b", "skipIfEquals": ["1", "1"]},
                         assertions=[status_is(200, request=0, precondition=True), status_is(404, request=1)])
        result = test_run(test=test, environment=env(echo.base_url))
        assert result.outcome == Outcome.ERROR
        assert result.message == "nothing was checked: the requests under test were skipped"

    def test_unreachable_target_is_an_error(self):
        result = test_run(test=make_test({"description": "d"}, assertions=[status_is(200)]),
                          environment=env("http://127.0.0.1:9", retries=0))
        assert result.outcome == Outcome.ERROR
        assert result.message.startswith("no answer from the target")

    @pytest.mark.parametrize(("test", "message"), [
        ({"name": "x"}, "invalid test: 'id' must be a non-empty string"),
        (make_test(), "invalid test: 'requests' must be a non-empty list"),
        (make_test({"description": "d", "repeat": 0}), "invalid test: request 0: repeat must be 1 to 1000"),
        (make_test({"description": "d"}, assertions=[{"type": "size", "condition": "equals"}]),
         "invalid test: assertion 0: assertion type must be one of status, header, body, duration"),
        (make_test({"description": "d"}, assertions=[{"type": "status", "condition": "in", "value": 200}]),
         "invalid test: assertion 0: 'in' needs a list value"),
    ])
    def test_invalid_test_is_an_error(self, echo, test, message):
        result = test_run(test=test, environment=env(echo.base_url))
        assert (result.outcome, result.message) == (Outcome.ERROR, message)
        assert echo.app.requests_seen == 0
