"""Akto's URL-merging cases through the real ingestion route (DECISIONS §9, issue #25).

Every case of ``../shared/data/akto_url_cases.json`` is posted to ``/api/v1/log-request/batch`` with an
``ingest`` key, analysed by the worker's task (learning included), and read back from the inventory.
The table published in docs/inventory.md ("Akto's URL-merging cases") is what
``pytest tests/inventory/test_akto_cases.py -s -k table`` prints; the disagreements below are the
documented ones, each with its reason.
"""
from __future__ import annotations

import pytest

from core.models import Scope
from inventory.models import Endpoint, ObservedPath
from inventory.patterns.normalize import path_normalize

from .akto_cases import DATA, answer_of, case_inputs, cases_load, outcome_of, table
from .ingest_support import raw_trace, send

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not DATA.exists(), reason=f"{DATA} (the shared data beside the repository) is absent"),
]

# Cases where we differ from Akto on purpose, and why (published beside the table).
EXPLANATIONS = {
    "MN.emptyResponse": "Two rules of DECISIONS §9: a short number first, followed by literal segments, is an API "
                        "version and stays literal (`/1/kb/…`, as `/2/tweets/…`); and 30 distinct values "
                        "`param0`…`param29` with no key set against them (empty answers) are learned as one "
                        "parameter, where Akto keeps 30 endpoints.",
    "DF.testEveryCase": "`smallDog_Cute`, `You.and-JohnHappy`, `DEMO_goingWhere`, `DEMO_goingWhereIS` join several "
                        "words: DECISIONS §9 counts only single dictionary words as words (slugs of joined words "
                        "are values), and four of them answering alike are learned as `/api/{p}`.",
    "MN.first.email": "Debatable (Akto skips data types for one-segment paths): an e-mail is a value wherever it is.",
    "MN.caseInsensitive.merge": "Debatable (Akto's case-insensitive option): we keep paths as written, so the six "
                                "spellings stay six endpoints, as in MN.caseInsensitive.literal.",
    "MN.slashBug": "Debatable: `api/books` and `/api/books` are one path for us (a path always starts with `/`).",
}
EXPECTED_DISAGREEMENTS = {"MN.emptyResponse", "DF.testEveryCase"}


@pytest.fixture
def agent(scoped_client):
    return scoped_client(Scope.INGEST)


def _trace(case: dict, fed) -> dict:
    content_type, body = answer_of(case)
    return raw_trace(host=fed.host, path=fed.path, method=fed.method, query=fed.query, response_body=body,
                     response_headers={"Content-Type": content_type})


def _landed(fed) -> Endpoint | None:
    """The endpoint a fed URL ended in: the literal endpoint of that path, else the one that observed it."""
    path = path_normalize(fed.path)
    endpoints = Endpoint.objects.filter(host__name=fed.host, method=fed.method)
    literal = endpoints.filter(path=path).first()
    if literal is not None:
        return literal
    observed = ObservedPath.objects.filter(endpoint__in=endpoints, path=path).select_related("endpoint").first()
    return observed.endpoint if observed else None


def _post(agent, captured, traces: list[dict]) -> None:
    response = send(agent, captured, "/api/v1/log-request/batch", traces)
    assert response.status_code == 200, response.content


def _run(agent, operator, captured, case: dict):
    fed = case_inputs(case)
    template_endpoint = None
    if case["kind"] == "matching":
        # The test's template, written by an operator: the first URL that matches makes an endpoint,
        # which update-paths renames to the template.
        template = case["template"]
        first = next(f for f in fed if f.match and f.method == template["method"])
        _post(agent, captured, [_trace(case, first)])
        endpoint = _landed(first)
        named = template["path"].replace("{p}", "{id}")
        answer = operator.post(f"/api/v1/endpoint/{endpoint.uuid}/update-paths", {"paths": [named]}, format="json")
        assert answer.status_code == 200, answer.content
        template_endpoint = answer.json()[0]["uuid"]
    _post(agent, captured, [_trace(case, f) for f in fed])
    results = []
    for f in fed:
        endpoint = _landed(f)
        matched = None if template_endpoint is None else endpoint is not None and str(endpoint.uuid) == template_endpoint
        results.append((f, endpoint.path if endpoint else None, matched))
    return outcome_of(case, results)


@pytest.fixture
def outcomes(agent, client, django_capture_on_commit_callbacks):
    return [_run(agent, client, django_capture_on_commit_callbacks, case) for case in cases_load()]


def test_akto_cases_agree_but_for_the_documented_differences(outcomes):
    scored = [o for o in outcomes if o.agrees is not None and o.case["kind"] != "matching"]
    assert len(scored) == 49
    disagreeing = {o.case["id"] for o in scored if not o.agrees}
    assert disagreeing == EXPECTED_DISAGREEMENTS, table(outcomes, EXPLANATIONS)
    # Akto's dictionary cases, its English words under /link/ and /api/: every one stays a literal endpoint.
    for o in outcomes:
        if o.case["kind"] == "dictionary" and o.case["id"] != "DF.testEveryCase" or o.case["id"] in (
                "MN.englishWords", "MN.string.words", "MN.string.merge", "MN.caseInsensitive.literal"):
            assert o.agrees, (o.case["id"], o.wrong)
    # A lone number is a parameter (`GET /3`), matching cases land where Akto's template says.
    assert next(o for o in outcomes if o.case["id"] == "MN.first.integer").agrees
    assert all(o.agrees for o in outcomes if o.case["kind"] == "matching"), table(outcomes, EXPLANATIONS)


def test_table(outcomes):
    """Prints the table published in docs/inventory.md (run with ``-s``)."""
    text = table(outcomes, EXPLANATIONS)
    print("\n" + text)
    assert "disagree" in text
