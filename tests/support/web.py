"""A real web process for the tests that need one: gunicorn started as the Procfile's ``web`` line.

The child gets exactly the environment the test gives it; :func:`web_env` builds one without this
process's ``DJANGO_SETTINGS_MODULE``, ``SECRET_KEY`` and ``DEBUG``, so that an entry point's
defaults (``config.wsgi`` → ``config.settings.local``) are what is under test.
"""
from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

import requests

from tests.support.processes import ProcessGroup, spawn, wait_started

GUNICORN = str(Path(sys.executable).parent / "gunicorn")
SCRUBBED = {"DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Web(ProcessGroup):
    """One gunicorn process group; ``base_url`` answers while it runs."""

    base_url: str = ""


def web_env(**overrides: str) -> dict[str, str]:
    """The child's environment: this process's, without the settings choice, plus ``overrides``."""
    return {**{k: v for k, v in os.environ.items() if k not in SCRUBBED}, **overrides}


# The Procfile's ``web`` options besides ``--bind``.
PROCFILE_OPTIONS = ["--workers", "1", "--threads", "8", "--access-logfile", "-", "--graceful-timeout", "10"]


def start_web(env: dict[str, str], *, wait: bool = True, plain: bool = False) -> Web:
    """Start ``gunicorn config.wsgi`` (the Procfile's options) on a free 127.0.0.1 port.

    With ``wait`` (default) return once ``GET /api/v1`` answers, or raise with the log if the
    process exits or does not answer within 60 s (it is stopped then). Without ``wait`` return at
    once: the caller watches the process (e.g. one expected to refuse to start).
    ``plain``: no option but ``--bind`` (the README's minimal line, gunicorn's defaults otherwise).
    """
    port = free_port()
    process, log_path = spawn(
        [GUNICORN, "config.wsgi", "--bind", f"127.0.0.1:{port}", *([] if plain else PROCFILE_OPTIONS)],
        env, log_prefix="gunicorn-",
    )
    web = Web(process, log_path, base_url=f"http://127.0.0.1:{port}")

    def answering() -> bool:
        try:
            requests.get(f"{web.base_url}/api/v1", timeout=5)
        except requests.RequestException:  # not listening yet, or still loading the app
            return False
        return True

    if wait:
        wait_started(web, answering, what="gunicorn", interval=0.2)
    return web
