"""JUnit XML report of a test run (for CI systems)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .evidence import evidence_lines
from .runner import Outcome, TestResult


def junit_xml(results: list[TestResult], *, suite_name: str = "apiscope-security-tests") -> bytes:
    """One ``<testcase>`` per test (classname = host, name = template, method and path);
    a failed test carries ``<failure>``, an errored one ``<error>``, each listing the failed checks and
    the request/response pair that decided it (secrets redacted), which ``<system-out>`` repeats; an
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
        if result.severity:  # read by CI report viewers that show testcase properties
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", {"name": "severity", "value": result.severity})
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
