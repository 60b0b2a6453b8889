"""The web process's memory settings through a real gunicorn (``core/malloc.py``, ``core/memdebug.py``).

Started as the README's minimal line (``gunicorn config.wsgi --bind ...``, gunicorn's defaults) and as
the Procfile's (8 threads): in both glibc keeps at most 2 malloc arenas however many threads answer,
and the debug-only report (``APISCOPE_MEMDEBUG`` + SIGUSR2 to the worker) is written.
"""
from __future__ import annotations

import os
import re
import signal
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.support.processes import process_env, wait_for
from tests.support.web import start_web

pytestmark = pytest.mark.django_db(transaction=True)


def _worker_pid(master: int) -> int:
    with open(f"/proc/{master}/task/{master}/children") as fh:
        children = fh.read().split()
    assert len(children) == 1, children
    return int(children[0])


@pytest.mark.parametrize("plain", [True, False], ids=["readme-minimal", "procfile"])
def test_arenas_bounded_and_memory_report(transactional_db, tmp_path, plain):
    report = tmp_path / "mem.txt"
    server = start_web(process_env(APISCOPE_MEMDEBUG=str(report)), plain=plain)
    try:
        # Many concurrent requests: each gunicorn thread that allocates would get an arena of its own.
        with ThreadPoolExecutor(16) as pool:
            codes = list(pool.map(lambda _: requests.get(f"{server.base_url}/api/v1", timeout=30).status_code,
                                  range(200)))
        assert set(codes) == {200}
        os.kill(_worker_pid(server.process.pid), signal.SIGUSR2)
        wait_for(lambda: report.exists() and "KiB" in report.read_text(), message="no memory report written")
        text = report.read_text()
        arenas = int(re.search(r"; arenas (\d+);", text).group(1))
        assert 1 <= arenas <= 2, text.splitlines()[0]
        assert re.search(r"RSS \d+ MB; Python traced \d+ MB", text)
        # The process is still serving after the report.
        assert requests.get(f"{server.base_url}/api/v1", timeout=30).status_code == 200
    finally:
        server.stop()
