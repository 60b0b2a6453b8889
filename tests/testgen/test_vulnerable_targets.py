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
    ("XSS", "POST", "/api/comments"),
    ("RATE_LIMIT", "POST", "/api/login"),
]


def _run(template: str, method: str, path: str) -> tuple[int, str]:
    return run_command("--host", SHOP, "--endpoint", path, "--method", method, "--type", template)


@pytest.mark.parametrize(("template", "method", "path"), CASES)
def test_generated_test_fails_against_the_vulnerable_shop(shop, serve, set_env, template, method, path):
    set_env(serve(vulnerable=True).base_url)
    status, output = _run(template, method, path)
    assert status == 1, output
    assert f"[1/1] FAIL  {template} {method} {path} (" in output
    assert "0 passed, 1 failed, 0 error(s)" in output


@pytest.mark.parametrize(("template", "method", "path"), CASES)
def test_generated_test_passes_against_the_fixed_shop(shop, serve, set_env, template, method, path):
    set_env(serve(vulnerable=False).base_url)
    status, output = _run(template, method, path)
    assert status == 0, output
    assert f"[1/1] PASS  {template} {method} {path} (" in output
    assert "1 passed, 0 failed, 0 error(s)" in output
