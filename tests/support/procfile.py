"""The Procfile's processes, started from its own lines, for the tests that run the service as
``make run`` does (honcho runs the same lines).

Each line is expanded like a shell would (``${NAME:-default}`` from the child's environment) and
started in a process group of its own; ``celery`` and ``gunicorn`` are this virtualenv's.
"""
from __future__ import annotations

import re
import shlex
import sys

import requests

from tests.support.processes import ROOT, ProcessGroup, spawn, wait_started
from tests.support.web import GUNICORN, Web, free_port


def procfile_lines() -> dict[str, str]:
    """The Procfile's process types and their command lines."""
    return dict(line.split(": ", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line.strip())


def expanded(command: str, env: dict[str, str]) -> list[str]:
    """``command``'s arguments with ``${NAME:-default}`` taken from ``env``."""
    argv = shlex.split(re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: env.get(m[1]) or m[2], command))
    program = {"celery": [sys.executable, "-m", "celery"], "gunicorn": [GUNICORN]}.get(argv[0], argv[:1])
    return [*program, *argv[1:]]


def start_procfile(env: dict[str, str]) -> dict[str, ProcessGroup]:
    """Start every Procfile line (``WEB_BIND`` on a free port) and wait until each is ready: the web
    answers ``GET /api/v1``, workers log ``ready.``, beat logs its configuration. On failure the
    processes started so far are stopped."""
    env = {**env, "WEB_BIND": f"127.0.0.1:{free_port()}"}
    started: dict[str, ProcessGroup] = {}
    try:
        for name, command in procfile_lines().items():
            process, log_path = spawn(expanded(command, env), env, log_prefix=f"procfile-{name}-")
            if name == "web":
                group = started[name] = Web(process, log_path, base_url=f"http://{env['WEB_BIND']}")
                wait_started(group, lambda g=group: _answering(g.base_url), what="Procfile web", interval=0.2)
            else:
                group = started[name] = ProcessGroup(process, log_path)
                ready = "Configuration ->" if name == "beat" else "ready."
                wait_started(group, lambda g=group, r=ready: r in g.log(), what=f"Procfile {name}", interval=0.2)
    except BaseException:
        for group in started.values():
            group.stop()
        raise
    return started


def _answering(base_url: str) -> bool:
    try:
        requests.get(f"{base_url}/api/v1", timeout=5)
    except requests.RequestException:  # not listening yet, or still loading the app
        return False
    return True
