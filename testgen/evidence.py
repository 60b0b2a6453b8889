"""Evidence of a test result: the request/response pair that decided it (issue #15 item 8).

Every FAILED result, and every ERROR result that got as far as sending something, carries the
exchange that decided it: the request as sent (method, URL with its query, the test's headers,
a body excerpt) and the answer (status, headers, a body excerpt, its size, the time it took, or
the error when none came). The CLI table, the JUnit report and the runs API show it.

Secrets never appear in it, nor in the messages that quote answers (:class:`Redactor`):

* credential headers (``Authorization``, ``Cookie``, ``X-API-Key``…, and ``Set-Cookie``) keep
  only their scheme word (``Bearer [REDACTED]``), as stored traffic does (DECISIONS §4);
* JSON bodies go through the masking of ``core.masking`` (fields named like credentials:
  ``password``, ``token``, ``secret``…), other text through ingestion's ``scrub_text``
  (``password=…``, bearer tokens, JWTs, known key formats);
* every value the run knows to be secret is replaced wherever it shows (URL, headers, bodies,
  messages, also percent- or JSON-escaped): the environment's ``authToken`` and credential-named
  keys and headers, every identity's token (fetched or configured, refreshed ones too), the
  credential fields of login bodies, and values read from ``{{env.NAME}}``.

Excerpts are limited (``REQUEST_BODY_CHARS``, ``RESPONSE_BODY_CHARS``, ``HEADER_VALUE_CHARS``,
``MAX_HEADERS``) and redacted before they are cut, so a secret cannot be half shown.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, urlencode

from core.masking import secrets_masked, url_masked
from inventory.ingest.credentials import REDACTED, credential_redact, is_credential_header, is_credential_name, scrub_text

REQUEST_BODY_CHARS = 1000
RESPONSE_BODY_CHARS = 2000
HEADER_VALUE_CHARS = 200
MAX_HEADERS = 30
# Shorter known secrets are not replaced in free text (a one-letter password would blank every "a").
MIN_SECRET_CHARS = 4
_ALSO_CREDENTIAL_HEADERS = frozenset({"set-cookie"})
# How bad a finding of each template is (RiskScore's words). Data taken, changed or reachable by
# anyone: HIGH; abuse that needs more steps (a script in a page, brute force, a list of users): MEDIUM.
SEVERITY = {"BOLA": "HIGH", "AUTH_BYPASS": "HIGH", "MASS_ASSIGNMENT": "HIGH", "SQL_INJECTION": "HIGH",
            "DATA_EXPOSURE": "HIGH", "XSS": "MEDIUM", "RATE_LIMIT": "MEDIUM", "USER_ENUMERATION": "MEDIUM"}


def finding_severity(result: Any) -> str | None:
    """The severity of a FAILED result's finding (``SEVERITY`` by template; MEDIUM for another
    template); None for other outcomes and for hand-written tests that name no template."""
    if result.outcome != "FAILED" or not result.template:
        return None
    return SEVERITY.get(result.template, "MEDIUM")


def _credential_leaves(value: Any, secret: bool = False) -> Iterable[str]:
    """String values of ``value`` under credential-named keys (all of them when ``secret``)."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _credential_leaves(item, secret or is_credential_name(str(name)))
    elif isinstance(value, list):
        for item in value:
            yield from _credential_leaves(item, secret)
    elif secret and isinstance(value, (str, int)) and not isinstance(value, bool):
        yield str(value)


def run_secrets(*, environment: Any, identities: Iterable[Any], environ: Mapping[str, str]) -> set[str]:
    """The values a run holds as secrets (see the module docstring): what :class:`Redactor` hides.
    ``environment`` is the run's ``RunEnvironment``, ``identities`` its current ``Identity`` objects."""
    values, headers, login = environment.values, environment.headers, environment.login
    identity_recipes = environment.identities
    found: set[str] = set(environ.values())
    for name, value in values.items():
        if name == "authToken" or is_credential_name(name):
            found.add(value)
    for name, value in headers.items():
        if is_credential_header(name) or is_credential_name(name):
            found.add(value)
    for recipe in [login or {}, *[(item.get("login") or {}) for item in identity_recipes]]:
        found.update(_credential_leaves(recipe.get("body")))
        found.update(_credential_leaves(recipe.get("headers")))
        for name, value in (recipe.get("headers") or {}).items():
            if is_credential_header(str(name)):
                found.add(str(value))
    for item in identity_recipes:
        if item.get("authToken"):
            found.add(str(item["authToken"]))
    for identity in identities:
        if identity.token:
            found.update((identity.token, identity.credential() or ""))
    # A credential header value "Bearer x" is secret for its token "x" too.
    found |= {value.partition(" ")[2] for value in list(found) if " " in value.strip()}
    return {s.strip() for s in found if isinstance(s, str) and len(s.strip()) >= MIN_SECRET_CHARS}


class Redactor:
    """Hides a run's secrets and credential-looking text in what results show."""

    def __init__(self, secrets: Iterable[str] = ()):
        forms = set()
        for secret in secrets:
            forms.update({secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret)[1:-1]})
        self.forms = sorted((f for f in forms if len(f) >= MIN_SECRET_CHARS), key=len, reverse=True)

    def known(self, text: str) -> str:
        """The text with the run's known secrets hidden (messages, descriptions, errors: written by
        the runner, so scrubbing their wording as credential-like text would garble them)."""
        for form in self.forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text

    def text(self, text: str) -> str:
        """Text from the target or sent to it: known secrets and credential-looking substrings hidden."""
        return scrub_text(self.known(text))[0] if text else text

    def url(self, url: str) -> str:
        return url_masked(self.known(url))

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        shown: dict[str, str] = {}
        for name, value in list(headers.items())[:MAX_HEADERS]:
            value = str(value)
            if value and (is_credential_header(name) or name.lower() in _ALSO_CREDENTIAL_HEADERS):
                value = credential_redact(name, value)
            shown[name] = _cut(self.text(value), HEADER_VALUE_CHARS)[0]
        return shown

    def body(self, text: str, limit: int) -> tuple[str, bool]:
        """A redacted excerpt of a body: (text, whether it was cut)."""
        if not text:
            return "", False
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, (dict, list)):
            try:
                text = json.dumps(secrets_masked(parsed), ensure_ascii=False)
            except RecursionError:  # too deep to walk: scrubbed as text below
                pass
        return _cut(self.text(text), limit)


def _cut(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[: limit - 1] + "…", True)


def _body_text(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace") if data else ""


def exchange_evidence(record: Any, exchange: Any, redactor: Redactor) -> dict:
    """The evidence of one exchange of a request record (``runner.RequestRecord``/``Exchange``)."""
    url = exchange.url + (("&" if "?" in exchange.url else "?") + urlencode(exchange.params)
                          if exchange.params else "")
    body, cut = redactor.body(_body_text(exchange.request_body), REQUEST_BODY_CHARS)
    request = {"index": record.index, "description": redactor.known(record.description),
               "method": exchange.method, "url": redactor.url(url),
               "headers": redactor.headers(exchange.request_headers or {}), "body": body, "bodyTruncated": cut}
    if exchange.status is None:
        response = {"status": None, "error": redactor.known(exchange.error or "no answer"),
                    "durationMs": round(exchange.duration_ms, 1)}
    else:
        text, cut = redactor.body(exchange.text, RESPONSE_BODY_CHARS)
        response = {"status": exchange.status, "headers": redactor.headers(exchange.headers),
                    "body": text, "bodyTruncated": cut, "bodySize": len(exchange.text.encode("utf-8")),
                    "durationMs": round(exchange.duration_ms, 1)}
    return {"request": request, "response": response}


def evidence_lines(evidence: dict | None) -> list[str]:
    """The evidence as text lines (CLI and JUnit): ``> `` what was sent, ``< `` what came back."""
    if not evidence:
        return []
    request, response = evidence["request"], evidence["response"]
    lines = [f"request {request['index']} ({request['description']}):", f"> {request['method']} {request['url']}"]
    lines += [f"> {name}: {value}" for name, value in request.get("headers", {}).items()]
    if request.get("body"):
        lines.append(f"> {request['body']}" + (" [cut]" if request.get("bodyTruncated") else ""))
    if response.get("status") is None:
        lines.append(f"< no answer: {response.get('error')}")
        return lines
    lines.append(f"< {response['status']} ({response['bodySize']} bytes, {response['durationMs']} ms)")
    lines += [f"< {name}: {value}" for name, value in response.get("headers", {}).items()]
    if response.get("body"):
        lines.append(f"< {response['body']}" + (" [cut]" if response.get("bodyTruncated") else ""))
    return lines


def evidence_masked_for_read(evidence: dict | None) -> dict | None:
    """For ``read`` keys (DECISIONS §2): the shape stays (method, status, sizes, times), what was
    sent and what came back (URL, headers, bodies, descriptions, errors) is masked."""
    if not evidence:
        return evidence
    request = {**evidence["request"], "url": REDACTED, "description": REDACTED,
               "headers": {name: REDACTED for name in evidence["request"].get("headers", {})},
               "body": REDACTED if evidence["request"].get("body") else ""}
    response = dict(evidence["response"])
    for key in ("body", "error"):
        if response.get(key):
            response[key] = REDACTED
    if "headers" in response:
        response["headers"] = {name: REDACTED for name in response["headers"]}
    return {"request": request, "response": response}


def result_evidence(result: Any, redactor: Redactor) -> dict | None:
    """The exchange that decided a FAILED or ERROR ``runner.TestResult``: the first failed check's
    (a precondition's for an ERROR), else the first request that got no answer; None when nothing
    was sent (an invalid test, a missing placeholder) or the test passed."""
    if result.outcome not in ("FAILED", "ERROR"):
        return None
    failed = [a for a in result.assertions if a.outcome == "failed" and a.exchange is not None]
    deciding = [a for a in failed if not a.precondition] or failed
    if deciding:
        record = next(r for r in result.requests if r.index == deciding[0].request_index)
        return exchange_evidence(record, deciding[0].exchange, redactor)
    for record in result.requests:
        for exchange in record.exchanges:
            if exchange.status is None or result.outcome == "ERROR":
                return exchange_evidence(record, exchange, redactor)
    return None
