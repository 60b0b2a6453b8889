"""What a run may read, checked before anything is sent (DECISIONS §8).

``{{env.NAME}}`` placeholders read environment variables, which in the service's processes hold
its secrets (``SECRET_KEY``, ``DATABASE_URL``, ``FIELD_ENCRYPTION_KEY``…). So:

* a run started through the API (``POST /testing/runs``, run by the worker) reads none: a
  reference anywhere in the testing environment (it may have come in through the admin or the
  database; the API refuses it) or in a test fails the run before a single request;
* a run of ``manage.py run_security_tests`` reads only the names the operator lists in
  ``TESTING_ENV_ALLOWLIST``; a reference to any other name fails the run, naming the variable
  (never its value).

Where the tests may be sent is the runner's business (``testgen.targets``).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping

from django.conf import settings

from ..placeholders import env_references
from .environment import RunEnvironment


class RunRefused(Exception):
    """The run may not start; the message (user-facing, naming no secret value) says why."""


# The parts of a TestConfig the runner resolves (names and descriptions are only shown).
_RESOLVED_REQUEST_KEYS = ("url", "method", "headers", "queryParams", "body", "skipIfEquals", "payload")


def _resolved_parts(test: dict) -> list:
    if not isinstance(test, dict):
        return []
    parts = [request.get(key) for request in test.get("requests") or [] if isinstance(request, dict)
             for key in _RESOLVED_REQUEST_KEYS]
    parts += [request.get("expectedResponse") for request in test.get("requests") or [] if isinstance(request, dict)]
    for assertion in test.get("assertions") or []:
        while isinstance(assertion, dict):
            parts.append(assertion.get("value"))
            assertion = assertion.get("otherwise")
    return parts


def _references(environment: RunEnvironment, tests: list[dict]) -> list[tuple[str, str]]:
    """(reference, where) of every ``{{env.…}}`` a run would resolve."""
    found = [(name, key) for key, value in environment.values.items() for name in env_references(value)]
    found += [(name, f"headers.{key}") for key, value in environment.headers.items() for name in env_references(value)]
    found += [(name, f"test {test.get('id') if isinstance(test, dict) else position}")
              for position, test in enumerate(tests) for name in env_references(_resolved_parts(test))]
    return found


def env_references_check(*, environment: RunEnvironment, tests: list[dict],
                         allowlist: Collection[str] | None) -> None:
    """Raise :class:`RunRefused` for a reference the run may not resolve: any (``allowlist`` None,
    runs started through the API) or one naming a variable not in ``allowlist`` (the command)."""
    for name, where in _references(environment, tests):
        if allowlist is None:
            raise RunRefused(
                f"The run was not started: {{{{{name}}}}} (in {where}) refers to an environment variable, and runs "
                "started through the API never read any (only manage.py run_security_tests does, for the names "
                "in TESTING_ENV_ALLOWLIST). Remove it from the testing environment. Nothing was sent.")
        if name[len("env."):] not in allowlist:
            raise RunRefused(
                f"The run was not started: {{{{{name}}}}} (in {where}) is not in TESTING_ENV_ALLOWLIST; "
                "list the variable there to let run_security_tests read it. Nothing was sent.")


def env_allowed(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that ``TESTING_ENV_ALLOWLIST`` names (what the command may resolve)."""
    return {name: environ[name] for name in settings.TESTING_ENV_ALLOWLIST if name in environ}
