"""Running generated (or hand-written) tests against the testing environment.

Pure service: no database access, no output. The management command
``run_security_tests`` (and the test suite) call :func:`tests_run`.

How a TestConfig is run (see ``docs/testgen.md``):

* requests are sent in order, each ``repeat`` times (default 1; a burst stops at
  a status in ``stopWhenStatus``), to ``url`` (default ``{{baseUrl}}`` +
  ``endpoint``) with ``method`` (default the test's), ``queryParams``, ``body``
  (JSON unless the Content-Type says form or the body is a string), and the
  environment's ``headers`` overridden by the request's, minus ``omitHeaders``;
* every request goes through ``testgen.client`` to an address the run's
  ``TargetGuard`` vetted (``testgen.targets``): a refused target raises
  ``TargetRefused`` out of :func:`test_run` / :func:`tests_run` — the run stops,
  and nothing was sent to that target;
* the timeout of each request is its ``timeout`` (ms) or the environment's, for
  the whole request; connection failures are retried ``retries`` times;
  redirects are not followed; cookies are never carried from one request to the
  next; nothing is taken from the process (proxies, ``.netrc``);
* before anything is sent, every environment placeholder must have a value: a
  request marked ``optional`` is skipped when it lacks one, any other makes the
  test an ERROR. A request whose placeholders need an earlier answer that did not
  come is skipped; so is a request whose two ``skipIfEquals`` values are equal (or, given a list of
  pairs, the two values of any pair);
* a request with ``loginAs`` sends that identity's login recipe instead (its password replaced by
  ``loginPassword`` when given), without changing the identity's token;
* a request with ``jwtAttack`` sends a variant of the JWT in its credential header
  (``testgen/jwt.py``), or is skipped with the reason when that variant cannot be made;
* a request with ``identity`` carries that identity's credential (header and/or cookie) and no other
  identity's (``IdentitySet.send_as``);
* every request of a run carries the run's ``X-Apiscope-Test`` marker, added by the client at send
  time (``core/testmarker.py``; never written into a test);
* then every assertion is evaluated (plus ``expectedStatus`` and
  ``expectedResponse`` of each request).

Outcome: FAILED when an assertion failed; ERROR when the test could not say
anything (invalid test, missing placeholder, no answer at all, a failed
precondition, nothing left to check); INCONCLUSIVE when nothing failed but a check
marked ``inconclusive`` (what the test needs to decide, e.g. a read-back) failed or
was skipped (DECISIONS §8); PASSED otherwise.
"""
from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from requests.structures import CaseInsensitiveDict

from core.outbound import TargetError, TargetRefused

from .assertions import AssertionOutcome, AssertionResult, assertion_evaluate, validate_assertion
from .evidence import Redactor, finding_severity, result_evidence, run_secrets
from .client import AnswerTimeout, ConnectionFailed, NotSent, TestClient
from .gates import not_sent
from .identities import IdentitySet, UnknownIdentity, login_credentials
from .placeholders import MISSING, Resolver, Unresolved, literal
from .run_credentials import forge_jwt, login_as, one_scheme, refresh_credential
from .services.environment import RunEnvironment
from .targets import TargetGuard

MAX_REPEAT = 1000
RETRY_BACKOFF_S = 0.2
# A path parameter left in a URL (one brace each side; environment placeholders have two).
PATH_PARAMETER = re.compile(r"(?<!\{)\{[^{}/]*\}(?!\})")
# "Bearer Bearer x": a template wrote the scheme seen in traffic and authToken carried it too.


class Outcome:
    PASSED = "PASSED"
    FAILED = "FAILED"
    ERROR = "ERROR"
    INCONCLUSIVE = "INCONCLUSIVE"


@dataclass
class Exchange:
    """One request sent and what came back (``status`` None: no answer, see ``error``)."""

    method: str
    url: str
    status: int | None
    headers: CaseInsensitiveDict
    text: str
    duration_ms: float
    error: str | None = None
    _json: Any = field(default=None, repr=False)
    # A login's answer (``loginAs``): whether it delivered the identity's credential, and what was missing.
    logged_in: bool | None = None
    login_problem: str | None = None
    # What was sent (the evidence of a finding, testgen/evidence.py).
    request_headers: Mapping[str, str] | None = field(default=None, repr=False)
    request_body: bytes | None = field(default=None, repr=False)
    params: dict | None = field(default=None, repr=False)

    def json(self) -> Any:
        """The body parsed as JSON, or ``MISSING``."""
        if self._json is None:
            try:
                self._json = json.loads(self.text) if self.text else MISSING
            except (ValueError, RecursionError):  # a target may answer anything
                self._json = MISSING
        return self._json


@dataclass
class RequestRecord:
    index: int
    description: str
    payload: str | None = None
    skipped: str | None = None  # why, when skipped
    exchanges: list[Exchange] = field(default_factory=list)
    # Whose credential it carried (coverage): an identity's name, "<name> (login)", "anonymous" or "other".
    identity: str | None = None


@dataclass
class TestResult:
    """The outcome of one test, with what was sent and checked."""

    __test__ = False

    test_id: str
    name: str
    template: str
    host: str
    method: str
    endpoint: str
    outcome: str
    message: str = ""
    assertions: list[AssertionResult] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)
    duration_ms: float = 0.0
    evidence: dict | None = None  # the request/response pair that decided a FAILED/ERROR outcome
    severity: str | None = None  # of a FAILED result's finding (testgen/evidence.py)
    endpoint_id: str = ""

    @property
    def failures(self) -> list[AssertionResult]:
        return [a for a in self.assertions if a.outcome == AssertionOutcome.FAILED]

    @property
    def num_sent(self) -> int:
        return sum(len(r.exchanges) for r in self.requests)


def _invalid(test: Any) -> str | None:
    if not isinstance(test, dict):
        return "a test must be an object"
    for key in ("id", "name", "endpoint", "method"):
        if not isinstance(test.get(key), str) or not test.get(key):
            return f"'{key}' must be a non-empty string"
    if not isinstance(test.get("requests"), list) or not test["requests"]:
        return "'requests' must be a non-empty list"
    for i, request in enumerate(test["requests"]):
        if not isinstance(request, dict) or not isinstance(request.get("description"), str):
            return f"request {i} must be an object with a description"
        repeat = request.get("repeat", 1)
        if not isinstance(repeat, int) or not 1 <= repeat <= MAX_REPEAT:
            return f"request {i}: repeat must be 1 to {MAX_REPEAT}"
        for key in ("headers", "queryParams"):
            if key in request and not isinstance(request[key], dict):
                return f"request {i}: {key} must be an object"
    assertions = test.get("assertions", [])
    if not isinstance(assertions, list):
        return "'assertions' must be a list"
    for i, assertion in enumerate(assertions):
        problem = validate_assertion(assertion)
        if problem:
            return f"assertion {i}: {problem}"
    return None


def _encode_body(body: Any, headers: CaseInsensitiveDict) -> bytes | None:
    if body is None:
        return None
    content_type = headers.get("Content-Type", "")
    if isinstance(body, str):
        return body.encode("utf-8")
    if "x-www-form-urlencoded" in content_type and isinstance(body, dict):
        return urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}).encode()
    if not content_type:
        headers["Content-Type"] = "application/json"
    return json.dumps(body).encode("utf-8")


def _send(client: TestClient, *, method: str, url: str, headers: CaseInsensitiveDict, params: dict | None,
          data: bytes | None, timeout_ms: int, retries: int) -> Exchange:
    exchange = _exchange(client, method=method, url=url, headers=headers, params=params, data=data,
                         timeout_ms=timeout_ms, retries=retries)
    exchange.request_headers, exchange.request_body, exchange.params = dict(headers), data, params
    return exchange


def _exchange(client: TestClient, *, method: str, url: str, headers: CaseInsensitiveDict, params: dict | None,
              data: bytes | None, timeout_ms: int, retries: int) -> Exchange:
    attempt = 0
    while True:
        started = time.perf_counter()
        try:
            answer = client.send(method=method, url=url, headers=headers, params=params, data=data,
                                 timeout_ms=timeout_ms)
            return Exchange(method, url, answer.status, answer.headers, answer.text,
                            (time.perf_counter() - started) * 1000)
        except AnswerTimeout:
            return Exchange(method, url, None, CaseInsensitiveDict(), "", (time.perf_counter() - started) * 1000,
                            error=f"timed out after {timeout_ms} ms")
        except ConnectionFailed as exc:
            if attempt < retries:
                attempt += 1
                time.sleep(RETRY_BACKOFF_S * attempt)
                continue
            return Exchange(method, url, None, CaseInsensitiveDict(), "", (time.perf_counter() - started) * 1000,
                            error=f"connection failed ({exc})")
        except NotSent as exc:
            return Exchange(method, url, None, CaseInsensitiveDict(), "", 0.0, error=f"request not sent ({exc})")


def test_run(*, test: dict, environment: RunEnvironment, environ: Mapping[str, str] | None = None,
             verify_tls: bool = True, client: TestClient | None = None,
             identities: IdentitySet | None = None) -> TestResult:
    """Run one TestConfig against the environment (see the module docstring).

    ``environ``: the only values ``{{env.NAME}}`` may take (the caller's policy decides which; none
    by default). ``client``: the run's client (a new one on the settings' policy by default).
    ``identities``: the run's test users (logged in by :func:`tests_run`; by default the
    environment's, with the tokens as configured).
    Raises ``TargetRefused`` when a request's target is refused (that request was not sent)."""
    started = time.perf_counter()
    result = TestResult(
        test_id=str(test.get("id", "")) if isinstance(test, dict) else "",
        name=str(test.get("name", "")) if isinstance(test, dict) else "",
        template=str(test.get("templateName", "")) if isinstance(test, dict) else "",
        host=str(test.get("host", "")) if isinstance(test, dict) else "",
        method=str(test.get("method", "")) if isinstance(test, dict) else "",
        endpoint=str(test.get("endpoint", "")) if isinstance(test, dict) else "",
        outcome=Outcome.ERROR,
        endpoint_id=str(test.get("endpointId", "")) if isinstance(test, dict) else "",
    )
    problem = _invalid(test)
    if problem:
        result.message = f"invalid test: {problem}"
        return result

    records = [RequestRecord(i, r["description"], payload=r.get("payload") if isinstance(r.get("payload"), str)
                             else None) for i, r in enumerate(test["requests"])]

    def answer(index: int) -> Exchange | None:
        if 0 <= index < len(records) and records[index].exchanges:
            return records[index].exchanges[-1]
        return None

    client = client or TestClient(TargetGuard.from_settings(), verify_tls=verify_tls)
    identities = identities or IdentitySet(environment, client, environ)
    # {{uniqueName}}: fresh per test (a new user a test registers), unless the environment sets it.
    resolver = Resolver({"uniqueName": f"apiscope{secrets.token_hex(4)}", "repeat": "0", **environment.values,
                         **identities.values()}, environ or {}, answer)
    for record in records:  # the injected value as sent (a payload built from traffic holds escapes)
        try:
            record.payload = str(resolver.resolve(record.payload)) if record.payload else record.payload
        except Unresolved:
            pass

    # Every environment placeholder must have a value before anything is sent.
    env_headers = dict(environment.headers)
    missing_in_env_headers = resolver.missing_env(env_headers)
    if missing_in_env_headers:
        result.message = f"environment header needs {{{{{missing_in_env_headers[0]}}}}}, which is not set"
        return result
    for record, request in zip(records, test["requests"], strict=True):
        missing = resolver.missing_env(request)
        if missing and (request.get("optional") or request.get("skip")):  # a request never sent needs no value
            record.skipped = request.get("skip") or f"optional; {{{{{missing[0]}}}}} is not set"
        elif missing:
            result.message = f"request {record.index} needs {{{{{missing[0]}}}}}, which is not set"
            return result

    words = _target_words(test, environment)
    for record, request in zip(records, test["requests"], strict=True):
        if not record.skipped:
            _run_request(client, test, request, record, resolver, environment, env_headers, identities, records,
                         words)

    result.requests = records
    result.assertions = _evaluate_all(test, records, resolver)
    result.duration_ms = (time.perf_counter() - started) * 1000
    result.outcome, result.message = _outcome(result)
    if result.outcome == Outcome.PASSED and isinstance(test.get("passedMessage"), str):
        result.message = test["passedMessage"]  # what a pass proved (RATE_LIMIT: "survived a burst…")
    _redacted(result, Redactor(run_secrets(environment=environment, identities=identities.all(),
                                           environ=environ or {})))
    return result


def _redacted(result: TestResult, redactor: Redactor) -> None:
    """Messages (which may quote answers and values sent) with the run's secrets hidden, and the
    evidence of a FAILED/ERROR result (testgen/evidence.py)."""
    result.message = redactor.known(result.message)
    for check in result.assertions:
        check.message = redactor.known(check.message)
    result.evidence = result_evidence(result, redactor)
    result.severity = finding_severity(result)


test_run.__test__ = False


def _target_words(test: dict, environment: RunEnvironment) -> tuple[str, ...]:
    """The target's host and app names (JWT secrets made of them are tried): the test's host and
    the base URL's host."""
    names = [str(test.get("host") or "")]
    try:
        names.append(urlsplit(environment.base_url).hostname or "")
    except ValueError:
        pass
    return tuple(n for n in names if n)


def _whose(identities: IdentitySet, headers: CaseInsensitiveDict) -> str:
    """Whose credential a request carries, for the coverage report."""
    for identity in identities.all():
        if identities.carries(identity, headers):
            return identity.name
    credential = any(name.lower() in ("authorization", "cookie") or "key" in name.lower() or "token" in name.lower()
                     for name, value in headers.items() if value)
    return "other" if credential else "anonymous"


def _run_request(client, test, request, record, resolver, environment, env_headers, identities,
                 records=(), words: tuple[str, ...] = ()) -> None:
    reason = not_sent(request, list(records))
    if reason:
        record.skipped = reason
        return
    if request.get("loginAs") is not None:
        record.identity = f"{request['loginAs']} (login)"
        _login_as(client, request, record, resolver, environment, identities)
        return
    skip = request.get("skipIfEquals")
    for pair in (skip if isinstance(skip, list) and skip and isinstance(skip[0], list) else [skip]):
        if not (isinstance(pair, list) and len(pair) == 2):
            continue
        try:
            left, right = resolver.resolve(pair[0]), resolver.resolve(pair[1])
        except Unresolved:
            left, right = MISSING, None
        if left is not MISSING and str(left) == str(right):
            record.skipped = f"{pair[1]} is the test user's own value"
            return
    try:
        method = str(resolver.resolve(request.get("method") or test["method"])).upper()
        url = str(resolver.resolve(request.get("url") or "{{baseUrl}}" + literal(test["endpoint"])))
        if url.startswith("/"):  # a path from an answer (a Location header): relative to baseUrl
            url = environment.base_url + url
        headers = CaseInsensitiveDict({k: str(v) for k, v in resolver.resolve(env_headers).items()})
        for name, value in resolver.resolve(request.get("headers") or {}).items():
            headers[name] = "" if value is None else one_scheme(str(value))
        params = {k: "" if v is None else str(v) for k, v in resolver.resolve(request.get("queryParams") or {}).items()}
        body = resolver.resolve(request.get("body"))
    except Unresolved as exc:
        record.skipped = f"needs {exc} from an earlier answer, which did not come"
        return
    if request.get("identity") is not None:
        try:
            identity = identities.identity(str(request["identity"]))
        except UnknownIdentity:
            record.skipped = f"identity {request['identity']} is not configured"
            return
        if not identity.has_credential:
            record.skipped = f"identity {identity.name} has no credential"
            return
        identities.send_as(identity, headers)
    for name in request.get("omitHeaders") or []:
        headers.pop(str(name), None)
    if request.get("jwtAttack") and not forge_jwt(request, headers, record, words):
        return
    record.identity = str(request["identity"]) if request.get("identity") is not None else _whose(identities, headers)
    if PATH_PARAMETER.search(url):  # {param1} or an operator's {itemId}; {{…}} were resolved above
        record.exchanges.append(Exchange(method, url, None, CaseInsensitiveDict(), "", 0.0,
                                         error="the URL still has a path parameter; give the request a url"))
        return
    data = _encode_body(body, headers)
    timeout_ms = request.get("timeout") if isinstance(request.get("timeout"), int) and request["timeout"] > 0 \
        else environment.timeout_ms
    stop = {s for s in request.get("stopWhenStatus") or [] if isinstance(s, int)}
    refreshed = False
    per_repeat = "{{repeat}}" in json.dumps([request.get("body"), request.get("queryParams")])
    for number in range(request.get("repeat", 1)):
        if per_repeat:  # {{repeat}}: the repetition's number (a registration burst registers one user each)
            resolver.values["repeat"] = str(number)
            try:
                params = {k: "" if v is None else str(v)
                          for k, v in resolver.resolve(request.get("queryParams") or {}).items()}
                data = _encode_body(resolver.resolve(request.get("body")), headers)
            except Unresolved:
                break
        exchange = _send(client, method=method, url=url, headers=headers, params=params or None, data=data,
                         timeout_ms=timeout_ms, retries=environment.retries)
        if exchange.status == 401 and not refreshed:
            refreshed = True
            if refresh_credential(identities, headers, resolver):
                exchange = _send(client, method=method, url=url, headers=headers, params=params or None, data=data,
                                 timeout_ms=timeout_ms, retries=environment.retries)
        record.exchanges.append(exchange)
        if exchange.status in stop:
            break


def _login_as(client, request, record, resolver, environment, identities) -> None:
    """Send an identity's login (``loginAs``, see :func:`.run_credentials.login_as`) and record the answer."""
    prepared = login_as(request, resolver, identities)
    if isinstance(prepared, str):
        record.skipped = prepared
        return
    method, url, headers, data = prepared
    exchange = _send(client, method=method, url=url, headers=headers, params=None, data=data,
                     timeout_ms=environment.timeout_ms, retries=environment.retries)
    if exchange.status is not None:  # a login proves something only by the credential it returns
        identity = identities.identity(str(request["loginAs"]))
        token, cookie, problem = login_credentials(identity.login or {}, exchange.status, exchange.headers,
                                                   exchange.text)
        exchange.logged_in, exchange.login_problem = problem is None, problem
        if problem is None and request.get("adoptCredential"):
            # The identity's password is what this login used now: its credential is this login's.
            identities.adopt(identity, token, cookie)
            resolver.values.update(identities.values())
    record.exchanges.append(exchange)


def _evaluate_all(test: dict, records: list[RequestRecord], resolver: Resolver) -> list[AssertionResult]:
    assertions = list(test.get("assertions") or [])
    # expectedStatus / expectedResponse of a request are assertions on its answers.
    for i, request in enumerate(test["requests"]):
        if isinstance(request.get("expectedStatus"), int):
            assertions.append({"type": "status", "field": "", "condition": "equals",
                               "value": request["expectedStatus"], "request": i,
                               "description": f"request {i} is answered {request['expectedStatus']}"})
        if "expectedResponse" in request:
            assertions.append({"type": "body", "field": "", "condition": "equals", "value": request["expectedResponse"],
                               "request": i, "description": f"request {i} is answered the expected body"})
    return [assertion_evaluate(a, i, records=records, resolver=resolver) for i, a in enumerate(assertions)]


def _outcome(result: TestResult) -> tuple[str, str]:
    sent = [e for r in result.requests for e in r.exchanges]
    if sent and all(e.status is None for e in sent):
        return Outcome.ERROR, f"no answer from the target: {sent[0].error}"
    undecided = [a for a in result.assertions if a.inconclusive and a.outcome != AssertionOutcome.PASSED]
    if not sent:
        reasons = [r.skipped for r in result.requests if r.skipped]
        if undecided:  # the test chose not to send (e.g. no object of its own to write to)
            return Outcome.INCONCLUSIVE, f"nothing was sent: {reasons[0] if reasons else 'every request was skipped'}"
        return Outcome.ERROR, "nothing was sent: every request was skipped"
    failed = [a for a in result.assertions if a.outcome == AssertionOutcome.FAILED]
    real_failures = [a for a in failed if not a.precondition and not a.inconclusive]
    if real_failures:
        first = real_failures[0]
        more = f" (+{len(real_failures) - 1} more)" if len(real_failures) > 1 else ""
        return Outcome.FAILED, f"{first.description}: {first.message}{more}"
    preconditions = [a for a in failed if a.precondition]
    if preconditions:
        return Outcome.ERROR, f"precondition failed: {preconditions[0].description}: {preconditions[0].message}"
    if undecided:
        return Outcome.INCONCLUSIVE, f"{undecided[0].description}: {undecided[0].message}"
    checked = [a for a in result.assertions if a.outcome == AssertionOutcome.PASSED and not a.precondition]
    if not checked:
        return Outcome.ERROR, "nothing was checked: the requests under test were skipped"
    return Outcome.PASSED, ""


def tests_run(*, tests: Iterable[dict], environment: RunEnvironment, environ: Mapping[str, str] | None = None,
              verify_tls: bool = True, on_result: Callable[[int, TestResult], None] | None = None,
              guard: TargetGuard | None = None, marker: str | None = None) -> list[TestResult]:
    """Run tests one after the other; ``on_result(position, result)`` after each (progress).

    ``baseUrl`` is vetted before the first test: a refused one raises ``TargetRefused`` with
    nothing sent at all (a name that does not resolve is left to each test, which then has no
    answer). ``guard``: the run's policy (``TargetGuard.from_settings()`` by default), whose
    vetted addresses every request of the run reuses.

    Every identity with a login recipe logs in first: one that cannot raises ``LoginFailed``
    (nothing else is sent). ``marker``: the run's ``X-Apiscope-Test`` value, sent with every request
    (logins included)."""
    client = TestClient(guard or TargetGuard.from_settings(), verify_tls=verify_tls, marker=marker)
    try:
        client.guard.vet_url(environment.base_url)
    except TargetRefused:
        raise
    except (TargetError, TimeoutError):
        pass
    identities = IdentitySet(environment, client, environ)
    identities.login_all()
    results = []
    for position, test in enumerate(tests, start=1):
        result = test_run(test=test, environment=environment, environ=environ, client=client,
                          identities=identities)
        results.append(result)
        if on_result:
            on_result(position, result)
    return results


tests_run.__test__ = False
