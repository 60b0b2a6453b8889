"""JUnit XML report of a test run (for CI systems)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .coverage import configure_keys, statuses_text
from .evidence import evidence_lines
from .runner import Outcome, TestResult


def junit_xml(results: list[TestResult], *, suite_name: str = "apiscope-security-tests",
              coverage: dict | None = None) -> bytes:
    """One ``<testcase>`` per test (classname = host, name = template, method and path);
    a failed test carries ``<failure>``, an errored one ``<error>``, each listing the failed checks and
    the request/response pair that decided it (secrets redacted), which ``<system-out>`` repeats; an
    inconclusive one is ``<skipped>`` with the reason (it could not decide; DECISIONS §8). The run's
    coverage report (``testgen/coverage.py``) goes into properties: the suite's (``coverage.findings``,
    ``coverage.configure``, ``coverage.notTested``) and each testcase's (``requests``: its requests per
    identity and status; ``configure``: what would decide it)."""
    suite = ET.Element("testsuite", {
        "name": suite_name,
        "tests": str(len(results)),
        "failures": str(sum(r.outcome == Outcome.FAILED for r in results)),
        "errors": str(sum(r.outcome == Outcome.ERROR for r in results)),
        "skipped": str(sum(r.outcome == Outcome.INCONCLUSIVE for r in results)),
        "time": f"{sum(r.duration_ms for r in results) / 1000:.3f}",
    })
    if coverage:
        suite_properties = ET.SubElement(suite, "properties")
        for name, value in (
            ("coverage.findings", ", ".join(f"{k} {v}" for k, v in coverage["findings"].items()) or "none"),
            ("coverage.configure", ", ".join(f"{c['key']} ({c['tests']})" for c in coverage["configure"]) or "none"),
            ("coverage.notTested", "; ".join(f"{n['method']} {n['endpoint']}: {n['reason']}"
                                            for n in coverage["notTested"]) or "none"),
        ):
            ET.SubElement(suite_properties, "property", {"name": name, "value": value})
    for result in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": result.host or "apiscope",
            "name": f"{result.template} {result.method} {result.endpoint}".strip(),
            "time": f"{result.duration_ms / 1000:.3f}",
        })
        properties = ET.SubElement(case, "properties")  # read by CI report viewers that show them
        if result.severity:
            ET.SubElement(properties, "property", {"name": "severity", "value": result.severity})
        ET.SubElement(properties, "property", {"name": "requests", "value": statuses_text(_requests(result))})
        configure = configure_keys([result.message, *(r.skipped or "" for r in result.requests)]) \
            if result.outcome in (Outcome.INCONCLUSIVE, Outcome.ERROR) else []
        if configure:
            ET.SubElement(properties, "property", {"name": "configure", "value": ", ".join(configure)})
        evidence = "\n".join(evidence_lines(result.evidence))
        details = "\n".join(f"- {a.description}: {a.message}" for a in result.failures)
        if evidence:
            details = f"{details}\n\nEvidence (secrets redacted):\n{evidence}".lstrip()
        if result.outcome == Outcome.FAILED:
            ET.SubElement(case, "failure", {"message": f"[{result.severity}] {result.message}" if result.severity
                                            else result.message, "type": "AssertionFailed"}).text = details
        elif result.outcome == Outcome.ERROR:
            ET.SubElement(case, "error", {"message": result.message, "type": "TestError"}).text = details or result.message
        elif result.outcome == Outcome.INCONCLUSIVE:
            ET.SubElement(case, "skipped", {"message": f"inconclusive: {result.message}"})
        summary = (f"test id {result.test_id}; {result.num_sent} requests sent; "
                   f"{sum(a.outcome == 'passed' for a in result.assertions)} of {len(result.assertions)} checks passed")
        ET.SubElement(case, "system-out").text = f"{summary}\n{evidence}" if evidence else summary
    return ET.tostring(ET.ElementTree(suite).getroot(), encoding="utf-8", xml_declaration=True)


def _requests(result: TestResult) -> dict:
    """The result's requests per identity and status (the coverage report's shape)."""
    out: dict = {}
    for record in result.requests:
        for exchange in record.exchanges:
            who = out.setdefault(record.identity or "anonymous", {"sent": 0, "statuses": {}})
            who["sent"] += 1
            status = str(exchange.status) if exchange.status is not None else "no answer"
            who["statuses"][status] = who["statuses"].get(status, 0) + 1
    return out
