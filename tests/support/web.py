"""A real web process for the tests that need one: gunicorn started as the Procfile's ``web`` line.

The child gets exactly the environment the test gives it on top of a clean base: the test's own
``DJANGO_SETTINGS_MODULE``, ``SECRET_KEY`` and ``DEBUG`` are removed, so an entry point's defaults
(``config.wsgi`` → ``config.settings.local``) are what is under test unless the test sets them.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import requests

from tests.support.processes import ROOT, wait_for

GUNICORN = str(Path(sys.executable).parent / "gunicorn")
SCRUBBED = {"DJANGO_SETTINGS_MODULE", "SECRET_KEY", "DEBUG"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Web:
    """One gunicorn process group; ``base_url`` answers while it runs."""

    process: subprocess.Popen
    base_url: str
    log_path: str

    def log(self) -> str:
        return Path(self.log_path).read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)


def web_env(**overrides: str) -> dict[str, str]:
    """The child's environment: this process's, without the settings choice, plus ``overrides``."""
    return {**{k: v for k, v in os.environ.items() if k not in SCRUBBED}, **overrides}


def start_web(env: dict[str, str], *, wait: bool = True) -> Web:
    """Start ``gunicorn config.wsgi`` (the Procfile's options) on a free 127.0.0.1 port.

    With ``wait`` (default) return once ``GET /api/v1`` answers, or raise with the log if the
    process exits or does not answer within 60 s (the web is stopped then). Without ``wait``
    return at once: the caller watches the process (e.g. one expected to refuse to start).
    """
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="gunicorn-", suffix=".log", delete=False)
    log.close()
    with open(log.name, "w") as out:
        process = subprocess.Popen(
            [GUNICORN, "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "8",
             "--access-logfile", "-", "--graceful-timeout", "10"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    web = Web(process, f"http://127.0.0.1:{port}", log.name)
    if not wait:
        return web

    def answering() -> bool:
        if process.poll() is not None:
            return True
        try:
            requests.get(f"{web.base_url}/api/v1", timeout=5)
        except requests.RequestException:  # not listening yet, or still loading the app
            return False
        return True

    try:
        wait_for(answering, timeout=60, interval=0.2)
    except AssertionError:
        output = web.log()
        web.stop()
        raise AssertionError(f"gunicorn did not answer within 60 s:\n{output}") from None
    except BaseException:
        web.stop()
        raise
    if process.poll() is not None:
        output = web.log()
        web.stop()
        raise RuntimeError(f"gunicorn exited:\n{output}")
    return web
