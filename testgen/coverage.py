"""The coverage report of a run (DECISIONS §8, turn 3): what was tested, as whom, and what could not be.

Per endpoint: the outcomes of its tests; per identity whose credential a request carried (``primary``,
another identity's name, ``<name> (login)``, ``anonymous``, ``other``: a credential of no identity, e.g.
a user a test registered) the requests sent and their statuses; the requests a test chose not to send
and why; the tests that could not decide (INCONCLUSIVE, ERROR) and why; and the environment keys that
would decide them (``objectIds.book``, ``identities.bob.objectIds.order``…), read from those reasons.
Endpoints without a test (excluded, no suitable template) are listed with the reason.

Built from the runner's results (pure); stored with the run (``TestRun.coverage``), shown by
``GET /testing/runs/{id}``, summarised at the end of ``run_security_tests`` and in JUnit properties.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

# Environment keys named in skip reasons and messages ("set objectIds.book", "{{identities.bob.userId}}").
_CONFIGURE = re.compile(
    r"\{\{\s*((?:identities\.[A-Za-z0-9_-]+\.)?(?:objectIds\.[A-Za-z0-9_-]+|userId|authToken|cookie|token|password)"
    r"|testUserId|authToken|authCookie|ownPassword|objectIds\.[A-Za-z0-9_-]+)\s*\}\}"
    r"|\bset ((?:identities\.[A-Za-z0-9_-]+\.)?objectIds\.[A-Za-z0-9_-]+|testUserId|identities)")
MAX_REASONS = 20
UNDECIDED = ("INCONCLUSIVE", "ERROR")
SEVERITY_ORDER = {"HIGH": 0, "MEDIUM": 1, "LOW": 2}


def configure_keys(texts: Iterable[str]) -> list[str]:
    """The environment keys the texts ask to configure (``{{identities.other.userId}}`` names the
    placeholder the test used when no second identity is set: ``identities``)."""
    keys: list[str] = []
    for text in texts:
        for match in _CONFIGURE.finditer(text or ""):
            key = match.group(1) or match.group(2)
            if key.startswith("identities.other."):
                key = "identities (a second test identity)"
            elif key == "ownPassword":
                key = "login (the test identity's login recipe, with its password)"
            if key not in keys:
                keys.append(key)
    return keys


def coverage_report(results: list, not_tested: Iterable[dict] = ()) -> dict:
    """The coverage of a run from its ``runner.TestResult`` list and the generation items that gave no
    test (``{endpoint, method, msg, host?}``)."""
    endpoints: dict[tuple, dict[str, Any]] = {}
    needed: Counter = Counter()
    for result in results:
        key = (result.host, result.method, result.endpoint)
        entry = endpoints.setdefault(key, {"host": result.host, "method": result.method, "endpoint": result.endpoint,
                                           "tests": Counter(), "requests": {}, "skipped": [], "undecided": [],
                                           "configure": []})
        entry["tests"][result.outcome] += 1
        for record in result.requests:
            if record.exchanges:
                who = entry["requests"].setdefault(record.identity or "anonymous", {"sent": 0, "statuses": Counter()})
                who["sent"] += len(record.exchanges)
                for exchange in record.exchanges:
                    who["statuses"][str(exchange.status) if exchange.status is not None else "no answer"] += 1
            elif record.skipped:
                item = {"template": result.template, "reason": record.skipped}
                if item not in entry["skipped"] and len(entry["skipped"]) < MAX_REASONS:
                    entry["skipped"].append(item)
        texts = [result.message, *(r.skipped or "" for r in result.requests)]
        keys = configure_keys(texts) if result.outcome in UNDECIDED else []
        if result.outcome in UNDECIDED and len(entry["undecided"]) < MAX_REASONS:
            entry["undecided"].append({"template": result.template, "outcome": result.outcome,
                                       "reason": result.message, "configure": keys})
        for k in keys:
            needed[k] += 1
            if k not in entry["configure"]:
                entry["configure"].append(k)
    findings = Counter(r.severity or "MEDIUM" for r in results if r.outcome == "FAILED")
    return {
        "findings": dict(sorted(findings.items(), key=lambda item: SEVERITY_ORDER.get(item[0], 9))),
        "endpoints": [{**e, "tests": dict(e["tests"]),
                       "requests": {who: {"sent": v["sent"], "statuses": dict(sorted(v["statuses"].items()))}
                                    for who, v in sorted(e["requests"].items())}}
                      for e in endpoints.values()],
        "notTested": [{"host": item.get("host", ""), "method": item.get("method", ""),
                       "endpoint": item.get("endpoint", ""), "reason": item.get("msg", "")} for item in not_tested],
        "configure": [{"key": k, "tests": n} for k, n in needed.most_common()],
    }


def coverage_masked(coverage: dict | None, mask: str) -> dict | None:
    """For ``read`` keys: reasons (which may quote values from traffic) masked; counts, statuses and
    configuration keys stay."""
    if not coverage:
        return coverage
    return {
        **coverage,
        "endpoints": [{**e, "skipped": [{**s, "reason": mask} for s in e["skipped"]],
                       "undecided": [{**u, "reason": mask} for u in e["undecided"]]} for e in coverage["endpoints"]],
        "notTested": [{**n, "reason": mask if not n["reason"].startswith(("Excluded", "No suitable")) else n["reason"]}
                      for n in coverage["notTested"]],
    }


def statuses_text(requests: dict) -> str:
    """``primary: 200×3, 401×2; anonymous: 401×4`` (CLI, JUnit)."""
    return "; ".join(f"{who}: " + ", ".join(f"{status}×{count}" for status, count in v["statuses"].items())
                     for who, v in requests.items())


def summary_lines(results: list, coverage: dict) -> list[str]:
    """The end of the command's output: findings by severity first, then what could not be decided and
    what to configure to decide it, then what was not tested."""
    lines = ["", "Summary"]
    failed = sorted((r for r in results if r.outcome == "FAILED"),
                    key=lambda r: SEVERITY_ORDER.get(r.severity or "MEDIUM", 9))
    counts = ", ".join(f"{n} {severity}" for severity, n in coverage["findings"].items())
    lines.append(f"  Findings: {len(failed)}" + (f" ({counts})" if counts else ""))
    lines += [f"    [{r.severity or 'MEDIUM'}] {r.template} {r.method} {r.endpoint}: {r.message}" for r in failed]
    undecided = [r for r in results if r.outcome in UNDECIDED]
    lines.append(f"  Not decided: {len(undecided)}" + (
        f" ({sum(r.outcome == 'INCONCLUSIVE' for r in undecided)} inconclusive, "
        f"{sum(r.outcome == 'ERROR' for r in undecided)} error(s))" if undecided else ""))
    lines += [f"    {r.outcome} {r.template} {r.method} {r.endpoint}: {r.message}" for r in undecided]
    if coverage["configure"]:
        lines.append("  To decide them, set in the testing environment: " + ", ".join(
            f"{c['key']} ({c['tests']} test{'s' if c['tests'] != 1 else ''})" for c in coverage["configure"]))
    if coverage["notTested"]:
        lines.append(f"  Not tested: {len(coverage['notTested'])} endpoint(s)")
        lines += [f"    {n['method']} {n['endpoint']}: {n['reason']}" for n in coverage["notTested"]]
    return lines
