"""Each template's generated test, run through the runner command, fails against the vulnerable
shop and passes against its fixed twin (real HTTP to 127.0.0.1, real sqlite3 injection)."""
from __future__ import annotations

import pytest

from tests.testgen.conftest import SHOP, run_command

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_templates")]

CASES = [
    ("AUTH_BYPASS", "GET", "/api/users/{param1}"),
    ("BOLA", "GET", "/api/users/{param1}"),
    ("MASS_ASSIGNMENT", "PATCH", "/api/users/{param1}"),
    ("MASS_ASSIGNMENT", "POST", "/api/comments"),
    ("SQL_INJECTION", "GET", "/api/search"),
    ("SQL_INJECTION", "GET", "/api/users/{param1}"),
    ("XSS", "GET", "/api/search"),
    ("RATE_LIMIT", "POST", "/api/login"),
]
# The shop's comments are JSON (application/json): a browser does not render them, so a stored
# payload in them is no XSS finding (issue #15); the fixed shop passes as well.
FIXED_ONLY = [("XSS", "POST", "/api/comments")]


def _run(template: str, method: str, path: str) -> tuple[int, str]:
    return run_command("--host", SHOP, "--endpoint", path, "--method", method, "--type", template)


@pytest.mark.parametrize(("template", "method", "path"), CASES)
def test_generated_test_fails_against_the_vulnerable_shop(shop, serve, set_env, template, method, path):
    set_env(serve(vulnerable=True).base_url)
    status, output = _run(template, method, path)
    assert status == 1, output
    assert f"[1/1] FAIL  {template} {method} {path} (" in output
    assert "0 passed, 1 failed, 0 error(s)" in output


@pytest.mark.parametrize(("template", "method", "path"), CASES + FIXED_ONLY)
def test_generated_test_passes_against_the_fixed_shop(shop, serve, set_env, template, method, path):
    set_env(serve(vulnerable=False).base_url)
    status, output = _run(template, method, path)
    assert status == 0, output
    assert f"[1/1] PASS  {template} {method} {path} (" in output
    assert "1 passed, 0 failed, 0 error(s)" in output


def test_a_payload_stored_in_json_answers_is_no_xss_finding(shop, serve, set_env):
    set_env(serve(vulnerable=True).base_url)
    status, output = _run("XSS", "POST", "/api/comments")
    assert status == 0, output
    assert "1 passed, 0 failed, 0 error(s)" in output
