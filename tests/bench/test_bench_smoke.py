"""Every benchmark script still runs: each ``bench/*.py`` in ``--small`` mode, as a subprocess.

These check that the scripts work (service start-up, traffic, figures printed, clean exit), not
how fast anything is: there are no timing assertions here. The figures themselves come from
the full-size runs described in ``bench/README.md``.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent
# "FIGURE <name>: <value> <unit> ..." where the name may itself hold ": ".
FIGURE = re.compile(r"^FIGURE (?P<name>.+?): (?P<value>-?[\d,]+(?:\.\d+)?) (?P<unit>\S+)", re.M)

# Options a script's smoke run adds (to exercise its optional parts too).
OPTIONS = {"webhooks.py": ["--with-ingestion", "--burst"]}
# script -> (Redis db it may flush, figures it must print)
SCRIPTS = {
    "ingestion.py": (10, ["ingest batches (empty inventory): analysed", "ingest single posts (known inventory): analysed",
                          "after batch ingestion: worker RSS"]),
    "metlo_workload.py": (2, ["400 single posts, 10 clients: first post → all 400 endpoints listed",
                              "400 single posts, 10 clients: CPU per trace", "GET /endpoints?limit=10",
                              "GET /gen-test-endpoints?host=…", "after reads: web RSS"]),
    "reads.py": (11, ["GET /endpoints", "after reads: web RSS"]),
    "testgen.py": (12, ["gen-test-endpoints over HTTP"]),
    "webhooks.py": (13, ["webhooks paced: alert commit → receipt p99", "webhooks burst: lost deliveries",
                         "webhooks while ingesting: lost deliveries", "burst (minimal set): FAILED deliveries",
                         "burst (Procfile): FAILED deliveries"]),
    "profile_ingest.py": (14, ["analysis in one process", "analysis CPU per trace: Python"]),
    "console.py": (15, ["dashboard server time (warm) p50", "endpoint page server time (warm) p50"]),
    "hostile.py": (9, ["cpu per trace: fragment bomb 20", "worker cpu per trace: phone bait JSON",
                       "N: bombs relayed by a Metlo 0.0.17 Flask app",
                       "legitimate trace listed while bombed at N: p50"]),
}


def _database_name(script: str) -> str:
    """A database of this suite's own (named after its test database), so two suites run side by
    side (different DATABASE_URL names) never drop each other's bench database."""
    from django.conf import settings

    suite = settings.DATABASES["default"]["NAME"]
    return f"{suite}_bench_{script[:-3]}"[:63]


def _run_script(command: list, *, env: dict, timeout: float) -> subprocess.CompletedProcess:
    """Run a bench script; past ``timeout`` interrupt it (SIGINT) so that it stops the web and worker
    processes it started (in sessions of their own) before failing: a killed script would leave them
    consuming its Redis db, where the next run's tasks would go."""
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        pytest.fail(f"{command[1]} did not finish within {timeout:.0f} s:\n{out[-3000:]}{err[-3000:]}")
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_bench_script_runs_in_small_mode(script, tmp_path):
    redis_db, expected = SCRIPTS[script]
    results = tmp_path / "figures.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_") and k not in ("DATABASE_URL",)}
    completed = _run_script(
        [sys.executable, f"bench/{script}", "--small", "--db", _database_name(script),
         "--redis-db", str(redis_db), "--json", str(results), *OPTIONS.get(script, [])],
        env=env, timeout=600,
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    printed = [(m["name"], float(m["value"].replace(",", ""))) for m in FIGURE.finditer(completed.stdout)]
    for name in expected:
        assert any(figure.startswith(name) for figure, _ in printed), (name, printed)
    # The JSON lines mirror the printed figures, marked as small-size runs.
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [row["name"] for row in rows] == [name for name, _ in printed]
    assert [row["value"] for row in rows] == pytest.approx([value for _, value in printed], abs=0.06)
    assert all(row["small"] for row in rows)
