"""JUnit XML report of a test run (for CI systems)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .runner import Outcome, TestResult


def junit_xml(results: list[TestResult], *, suite_name: str = "apiscope-security-tests") -> bytes:
    """One ``<testcase>`` per test (classname = host, name = template, method and path);
    a failed test carries ``<failure>``, an errored one ``<error>``, each listing the failed checks; an
    inconclusive one is ``<skipped>`` with the reason (it could not decide; DECISIONS §8)."""
    suite = ET.Element("testsuite", {
        "name": suite_name,
        "tests": str(len(results)),
        "failures": str(sum(r.outcome == Outcome.FAILED for r in results)),
        "errors": str(sum(r.outcome == Outcome.ERROR for r in results)),
        "skipped": str(sum(r.outcome == Outcome.INCONCLUSIVE for r in results)),
        "time": f"{sum(r.duration_ms for r in results) / 1000:.3f}",
    })
    for result in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": result.host or "apiscope",
            "name": f"{result.template} {result.method} {result.endpoint}".strip(),
            "time": f"{result.duration_ms / 1000:.3f}",
        })
        details = "\n".join(f"- {a.description}: {a.message}" for a in result.failures)
        if result.outcome == Outcome.FAILED:
            ET.SubElement(case, "failure", {"message": result.message, "type": "AssertionFailed"}).text = details
        elif result.outcome == Outcome.ERROR:
            ET.SubElement(case, "error", {"message": result.message, "type": "TestError"}).text = details or result.message
        elif result.outcome == Outcome.INCONCLUSIVE:
            ET.SubElement(case, "skipped", {"message": f"inconclusive: {result.message}"})
        ET.SubElement(case, "system-out").text = (
            f"test id {result.test_id}; {result.num_sent} requests sent; "
            f"{sum(a.outcome == 'passed' for a in result.assertions)} of {len(result.assertions)} checks passed"
        )
    return ET.tostring(ET.ElementTree(suite).getroot(), encoding="utf-8", xml_declaration=True)
