"""Akto's URL-merging cases (``tests/inventory/data/akto_url_cases.json``, copied from ``../shared/data/``), as traffic for our ingestion.

The cases are Akto's own unit tests transcribed as data: the URLs one test feeds and the endpoint
template Akto ends with (``{p}`` for a parameter segment). Each case is fed on hosts of its own
(``<case>.akto.test``, or ``<case>.<the URL's host>``), all its URLs in one batch, every URL of a case
answered alike (a JSON object; a text body for ``MN.nonJson``, none for ``MN.emptyResponse``, as in
Akto's tests): for our key-set rule that is the strongest evidence for merging there is.

A case *agrees* when every URL it feeds ends in an endpoint whose pattern, parameters written
``{p}``, is Akto's template. Matching cases (a URL against a template built by the test) are fed
after an operator wrote the template (update-paths) and agree when each URL lands in it or not as
Akto says. Debatable cases (Akto's outcome depends on its options) are reported, not scored.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

# A copy of ``../shared/data/akto_url_cases.json`` kept with the tests, so a clone anywhere runs them.
DATA = Path(__file__).resolve().parent / "data" / "akto_url_cases.json"
_PARAM = re.compile(r"\{[^{}/]*\}")
ANSWER = {"id": 7, "name": "value", "status": "ok", "createdAt": "2026-01-31T12:00:00.000Z"}


def cases_load() -> list[dict]:
    return json.loads(DATA.read_text())["cases"]


def case_slug(case_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", case_id.lower()).strip("-")


@dataclass
class Fed:
    """One URL of a case as fed: its trace's host, path and query, and what Akto expects."""

    method: str
    host: str
    path: str
    query: list[tuple[str, str]]
    expected: str | None
    match: bool | None = None


def case_inputs(case: dict) -> list[Fed]:
    slug = case_slug(case["id"])
    fed = []
    for item in case["inputs"]:
        url = item["url"]
        parts = urlsplit(url if "://" in url else "http://placeholder/" + url.lstrip("/"))
        host = f"{slug}.{parts.hostname}" if "://" in url else f"{slug}.akto.test"
        path = "/" + parts.path.lstrip("/")
        if (case.get("template") or {}).get("host") is not None:
            host = f"{slug}.akto.test"  # the template's own host, as the URLs give it
        fed.append(Fed(item["method"], host, path, parse_qsl(parts.query, keep_blank_values=True),
                       item.get("expected"), item.get("match")))
    return fed


def answer_of(case: dict) -> tuple[str, str]:
    """(content type, body) every URL of the case is answered with."""
    if case["id"] == "MN.nonJson":
        return "text/html", "<html><body>Invoice</body></html>"
    if case["id"] == "MN.emptyResponse":
        return "application/json", ""
    return "application/json", json.dumps(ANSWER)


def as_akto(pattern: str) -> str:
    """Our pattern in Akto's spelling: every parameter ``{p}``."""
    return _PARAM.sub("{p}", pattern)


@dataclass
class Outcome:
    case: dict
    agrees: bool | None  # None: not scored (debatable)
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # (url, expected, ours)


def outcome_of(case: dict, results: list[tuple[Fed, str | None, bool | None]]) -> Outcome:
    """``results``: per fed URL, our endpoint pattern (None: no endpoint) and, for matching cases,
    whether it landed in the template's endpoint."""
    wrong = []
    for fed, pattern, matched in results:
        if fed.match is not None:
            if matched != fed.match:
                wrong.append((f"{fed.method} {fed.path}", "matches" if fed.match else "does not match",
                              "matches" if matched else "does not match"))
        elif fed.expected is not None and (pattern is None or as_akto(pattern) != fed.expected):
            wrong.append((f"{fed.method} {fed.path}", fed.expected, as_akto(pattern) if pattern else "(none)"))
    return Outcome(case, None if case["debatable"] else not wrong, wrong)


def table(outcomes: list[Outcome], explanations: dict[str, str]) -> str:
    scored = [o for o in outcomes if o.agrees is not None and o.case["kind"] != "matching"]
    agree = sum(o.agrees for o in scored)
    matching = [o for o in outcomes if o.case["kind"] == "matching"]
    lines = [f"{len(outcomes)} cases. URL merging, not debatable: {len(scored)}, {agree} agree, "
             f"{len(scored) - agree} disagree. Template matching: {len(matching)}, "
             f"{sum(bool(o.agrees) for o in matching)} agree. Debatable: "
             f"{sum(o.agrees is None for o in outcomes)}.", "",
             "| case | kind | agrees | first difference (URL: Akto → ours) | why |", "|---|---|---|---|---|"]
    for o in outcomes:
        verdict = "debatable" if o.agrees is None else "yes" if o.agrees else "**no**"
        diff = f"`{o.wrong[0][0]}`: `{o.wrong[0][1]}` → `{o.wrong[0][2]}` ({len(o.wrong)} URL(s))" if o.wrong else ""
        lines.append(f"| {o.case['id']} | {o.case['kind']} | {verdict} | {diff} | "
                     f"{explanations.get(o.case['id'], '') if o.wrong or o.agrees is None else ''} |")
    return "\n".join(lines)
