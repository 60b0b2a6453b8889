"""Evaluating test assertions against the answers a test run received (DECISIONS §8).

Assertion ``type``: ``status``, ``header`` (``field`` = header name), ``body``
(``field`` = dotted path into the JSON body, ``""`` = the whole body: its text,
or its JSON value when compared with ``equals``/``in`` to a non-string),
``duration`` (milliseconds). ``condition``: ``equals``, ``notEquals``, ``in``,
``notIn``, ``contains``, ``notContains``, ``lessThan``, ``greaterThan``,
``matches`` (regular expression, searched), ``exists``, ``notExists``.

A value absent from the answer fails the positive conditions and passes the
negative ones (``notEquals``, ``notIn``, ``notContains``, ``notExists``).
``contains``/``notContains`` with a list need all/none of its items.
Extensions: ``request``, ``aggregate``, ``compare``, ``ignoreCase``, ``otherwise`` (nests), ``keys``,
``whenContentType``, ``plus``, ``precondition``, ``inconclusive``, ``description``, ``verdict`` (the answer
was ``refused`` or ``accepted`` in any form, ``testgen/verdicts.py``; a login ``loggedIn`` or
``notLoggedIn``), ``private``, ``item`` (see ``docs/testgen.md``).
``request`` may be a list of indices: the answers of those requests that were sent.
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus

from .placeholders import MISSING, Resolver, Unresolved, json_path_get, response_reference
from .verdicts import refusal

TYPES = ("status", "header", "body", "duration")
CONDITIONS = ("equals", "notEquals", "in", "notIn", "contains", "notContains", "lessThan", "greaterThan",
              "matches", "exists", "notExists")
NEGATIVE = {"notEquals", "notIn", "notContains", "notExists"}
VERDICTS = ("refused", "accepted", "loggedIn", "notLoggedIn")
_SHOWN = 80


class AssertionOutcome:
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass
class AssertionResult:
    index: int
    description: str
    outcome: str
    message: str = ""
    precondition: bool = False
    # The answer that decided a failure (evidence): its request's index and the runner's Exchange.
    request_index: int | None = None
    exchange: Any = None
    inconclusive: bool = False


def describe(assertion: dict) -> str:
    if assertion.get("description"):
        return str(assertion["description"])
    field = f" {assertion.get('field')}" if assertion.get("field") else ""
    return f"{assertion.get('type')}{field} {assertion.get('condition')} {_show(assertion.get('value'))}"


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def validate_assertion(assertion: Any) -> str | None:
    """Why an assertion cannot be evaluated, or None."""
    if not isinstance(assertion, dict):
        return "an assertion must be an object"
    if assertion.get("type") not in TYPES:
        return f"assertion type must be one of {', '.join(TYPES)}"
    if assertion.get("condition") not in CONDITIONS:
        return f"assertion condition must be one of {', '.join(CONDITIONS)}"
    if assertion["condition"] in ("in", "notIn") and not isinstance(assertion.get("value"), list):
        return f"'{assertion['condition']}' needs a list value"
    target = assertion.get("request")
    if isinstance(target, list) and not all(isinstance(i, int) and not isinstance(i, bool) for i in target):
        return "request must be an index or a list of indices"
    if assertion.get("aggregate", "all") not in ("all", "any", "last"):
        return "aggregate must be all, any or last"
    if assertion.get("compare", "exact") not in ("exact", "similar"):
        return "compare must be exact or similar"
    if "whenContentType" in assertion:
        try:
            re.compile(str(assertion["whenContentType"]))
        except re.error:
            return "whenContentType must be a regular expression"
    if "keys" in assertion:
        if assertion["type"] != "body":
            return "keys needs type body"
        try:
            re.compile(str(assertion["keys"]))
        except re.error:
            return "keys must be a regular expression"
    if "plus" in assertion and _number(assertion["plus"]) is None:
        return "plus must be a number"
    if "verdict" in assertion and assertion["verdict"] not in VERDICTS:
        return f"verdict must be one of {', '.join(VERDICTS)}"
    if "private" in assertion and not isinstance(assertion["private"], dict):
        return "private must be an object"
    if "item" in assertion and assertion.get("compare") != "similar":
        return "item needs compare similar"
    if "otherwise" in assertion:
        return validate_assertion(assertion["otherwise"])
    return None


# --- similarity ---------------------------------------------------------------------------

_OPAQUE = re.compile(r"[0-9a-fA-F-]{8,}|\d+")


def _payload_forms(payloads: tuple[str, ...]) -> list[str]:
    """Every payload as it may be echoed, longest first (a payload holding a shorter one goes first)."""
    forms = {form for payload in payloads if payload
             for form in (payload, html.escape(payload), html.escape(payload, quote=False), json.dumps(payload)[1:-1],
                          quote(payload, safe=""), quote_plus(payload))}
    return sorted(forms, key=len, reverse=True)


def _unescaped(text: str) -> str:
    """The text with HTML character references and URL escapes decoded (``&#39;`` → ``'``)."""
    return unquote_plus(html.unescape(text)) if ("&" in text or "%" in text or "+" in text) else text


def _normal_text(text: str, payloads: tuple[str, ...]) -> str:
    text = _unescaped(text)
    for form in _payload_forms(payloads):
        text = text.replace(form, "")
    return _OPAQUE.sub("0", text)


def _shape(value: Any, payloads: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v, payloads) for k, v in value.items()}
    if isinstance(value, list):  # in any order: a listing's order is no difference (sets, hash order)
        return sorted((_shape(v, payloads) for v in value), key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, str):
        return _normal_text(value, payloads)
    if isinstance(value, bool) or value is None:
        return value
    return "number"


def similar(text_a: str, payload_a: str | None, text_b: str, payload_b: str | None) -> bool:
    """Answers alike once both injected payloads are left out of both (HTML character references
    and URL escapes decoded first): the same JSON structure (keys, list lengths and items in any order,
    booleans, strings without payloads and digits; numbers by type), or for non-JSON bodies the same
    text without payloads, digits and hex ids."""
    payloads = tuple(p for p in (payload_a, payload_b) if p)
    try:
        json_a, json_b = json.loads(text_a), json.loads(text_b)
        return _shape(json_a, payloads) == _shape(json_b, payloads)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to compare structurally
        return _normal_text(text_a, payloads) == _normal_text(text_b, payloads)


# --- conditions ---------------------------------------------------------------------------

def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _equal(actual: Any, expected: Any, ignore_case: bool = False) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        if isinstance(actual, bool) and isinstance(expected, bool):
            return actual is expected
        other, flag = (expected, actual) if isinstance(actual, bool) else (actual, expected)
        if isinstance(other, (int, float)):  # 1/0 for true/false, as many databases answer
            return other == int(flag)
        return str(other).strip().lower() == str(flag).lower()
    a, e = _number(actual), _number(expected)
    if a is not None and e is not None and (not isinstance(actual, str) or not isinstance(expected, str)):
        return a == e
    if ignore_case and isinstance(actual, str) and isinstance(expected, str):
        return actual.lower() == expected.lower()
    return actual == expected


def _contains(actual: Any, item: Any, ignore_case: bool) -> bool:
    if isinstance(actual, str):
        needle = item if isinstance(item, str) else json.dumps(item)
        return needle.lower() in actual.lower() if ignore_case else needle in actual
    if isinstance(actual, list):
        return any(_equal(a, item, ignore_case) for a in actual)
    if isinstance(actual, dict):
        return str(item) in actual
    return False


def check(condition: str, actual: Any, expected: Any, *, ignore_case: bool = False) -> tuple[bool, str]:
    """Whether ``actual`` satisfies the condition, and a short explanation when it does not."""
    if actual is MISSING:
        return condition in NEGATIVE, "absent"
    if condition == "exists":
        return True, ""
    if condition == "notExists":
        return False, f"present ({_show(actual)})"
    if condition in ("equals", "notEquals"):
        same = _equal(actual, expected, ignore_case)
        return same == (condition == "equals"), f"is {_show(actual)}"
    if condition in ("in", "notIn"):
        found = any(_equal(actual, e, ignore_case) for e in expected)
        return found == (condition == "in"), f"is {_show(actual)}"
    if condition == "contains":
        items = expected if isinstance(expected, list) and not isinstance(actual, list) else [expected]
        missing = [i for i in items if not _contains(actual, i, ignore_case)]
        return not missing, f"lacks {_show(missing[0]) if missing else ''}"
    if condition == "notContains":
        items = expected if isinstance(expected, list) and not isinstance(actual, list) else [expected]
        found = [i for i in items if _contains(actual, i, ignore_case)]
        return not found, f"contains {_show(found[0]) if found else ''}"
    if condition in ("lessThan", "greaterThan"):
        a, e = _number(actual), _number(expected)
        if a is None or e is None:
            return False, f"is {_show(actual)}, not comparable to {_show(expected)}"
        ok = a < e if condition == "lessThan" else a > e
        return ok, f"is {_show(actual if not isinstance(actual, float) else round(actual, 1))}"
    if condition == "matches":
        try:
            found = re.search(str(expected), actual if isinstance(actual, str) else json.dumps(actual),
                              re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            return False, f"invalid regular expression: {exc}"
        return bool(found), f"is {_show(actual)}"
    return False, f"unknown condition {condition}"


# --- evaluation -------------------------------------------------------------------------

_MAX_KEYED = 1000  # values under matching keys checked per answer (a huge listing stops there)


def _keyed_values(value: Any, pattern: re.Pattern, path: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    """(dotted path, value) of every key of a JSON value whose whole name matches ``pattern``."""
    found: list[tuple[str, Any]] = []
    if depth > 64:
        return found
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}" if path else str(key)
        if isinstance(key, str) and pattern.fullmatch(key):
            found.append((where, item))
        found += _keyed_values(item, pattern, where, depth + 1)
        if len(found) >= _MAX_KEYED:
            break
    return found


def _check_keys(assertion: dict, exchange: Any, expected: Any, ignore_case: bool) -> tuple[bool, str]:
    """``keys``: the condition holds for the value under every matching key of the JSON body (under
    ``field``); none = nothing to check. Values are never quoted (such keys hold secrets)."""
    body = exchange.json()
    if assertion.get("field"):
        body = json_path_get(body, str(assertion["field"]))
    for where, value in _keyed_values(body, re.compile(str(assertion["keys"]), re.IGNORECASE)):
        ok, _ = check(assertion["condition"], value, expected, ignore_case=ignore_case)
        if not ok:
            size = f"{len(value)} characters" if isinstance(value, str) else type(value).__name__
            return False, f"{where} holds a value ({size}), failing '{assertion['condition']}'"
    return True, ""


def _check_verdict(verdict: str, exchange: Any) -> tuple[bool, str]:
    """``verdict``: the answer was refused / accepted in any form (``testgen/verdicts.py``), or a
    login's answer carried the identity's credential (``loggedIn``; set by the runner)."""
    if verdict in ("loggedIn", "notLoggedIn"):
        logged_in = bool(getattr(exchange, "logged_in", False))
        why = getattr(exchange, "login_problem", None) or ""
        if verdict == "loggedIn":
            return logged_in, f"the login gave no credential ({why or exchange.status})"
        return not logged_in, f"the login was answered {exchange.status} with the identity's credential"
    reason = refusal(exchange.status, exchange.text)
    if verdict == "refused":
        return reason is not None, f"was accepted ({exchange.status}, no refusal in the body)"
    return reason is None, f"was refused ({reason})"


# Keys naming the caller in an answer (a value of the test identity under one makes the answer its own).
USER_KEYS = re.compile(r"^(user(name)?|user[_-]?id|login|e-?mail|email[_-]?address|owner|account|customer|member|"
                       r"handle|sub|full[_-]?name|display[_-]?name|phone(number)?)$", re.IGNORECASE)
_TRIVIAL = {"true", "false", "null", "none", "[redacted]", "user", "admin", "guest", "anonymous"}
_MAX_VALUES = 5000


def _leaves(value: Any, key: str = "", depth: int = 0):
    """(key, scalar) of a JSON value, breadth bounded by the caller."""
    if depth > 32:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k), depth + 1)
    elif isinstance(value, list):
        for v in value[:500]:
            yield from _leaves(v, key, depth + 1)
    elif value is not None and not isinstance(value, bool):
        yield key, value


def _values_at(value: Any, path: str) -> list[Any]:
    """Scalars at a data path where ``[]`` stands for every item of a list (``users[].email``)."""
    nodes = [value]
    for part in [p for p in path.split(".") if p]:
        name, lists = part.split("[", 1)[0], part.count("[]")
        nodes = [n.get(name) for n in nodes if isinstance(n, dict) and name in n]
        for _ in range(lists):
            nodes = [item for n in nodes if isinstance(n, list) for item in n[:500]]
    return [n for n in nodes if n is not None and not isinstance(n, (bool, dict, list))]


def _distinctive(value: Any) -> str | None:
    text = str(value).strip()
    if len(text) < 3 or text.lower() in _TRIVIAL or (text.lstrip("-").isdigit() and len(text) < 6):
        return None
    return text


def _check_private(private: dict, exchange: Any, control: Any, resolver: Resolver) -> tuple[bool, str]:
    """``private`` (AUTH_BYPASS): the answer carries none of the authenticated answer's (``value``, the
    control's body) sensitive values (those at ``private.paths``, the endpoint's classified fields) nor a
    value of the test identity (``private.values``) that the control shows under a key naming the caller.
    Values are compared whole, never quoted in the message."""
    try:
        parsed = json.loads(control) if isinstance(control, str) else control
    except (ValueError, RecursionError):
        return True, ""
    identity = set()
    for item in private.get("values") or []:
        try:
            resolved = resolver.resolve(item)
        except Unresolved:
            continue
        if resolved is not MISSING and resolved is not None:
            identity.add(str(resolved))
    secret: set[str] = set()
    for path in private.get("paths") or []:
        secret.update(filter(None, map(_distinctive, _values_at(parsed, str(path)))))
    for key, value in _leaves(parsed):
        if USER_KEYS.match(key) and str(value) in identity and _distinctive(value):
            secret.add(str(value))
        if len(secret) >= _MAX_VALUES:
            break
    if not secret:
        return True, ""
    answer = exchange.json()
    if answer is MISSING:
        shown = {s for s in secret if len(s) >= 5 and s in exchange.text}
    else:
        seen = {str(v) for _, v in _leaves(answer)}
        shown = secret & seen
    if not shown:
        return True, ""
    return False, (f"the answer without valid credentials shows {len(shown)} value(s) of the authenticated "
                   "answer's sensitive or user-specific content")


def _items_naming(text: str, value: str) -> list | None:
    """The objects of a JSON listing (dicts inside lists, at any depth) holding ``value`` as one of their
    own scalars (an id or a natural key), or None when the text is no JSON."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    found: list = []
    stack = [(parsed, False)]
    while stack and len(found) < 100:
        node, in_list = stack.pop()
        if isinstance(node, dict):
            if in_list and any(not isinstance(v, (dict, list)) and str(v) == value for v in node.values()):
                found.append(node)
            stack.extend((v, False) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, True) for v in node[:1000])
    return found


def _check_item(assertion: dict, after: str, before: str, resolver: Resolver) -> tuple[bool, str]:
    """``item`` with ``compare: similar``: a collection compared only where it lists the object (the
    entries naming ``item``, an id or natural key, or the first of a list of them the collection uses):
    the same before and after, or not listed before."""
    values = []
    for item in assertion["item"] if isinstance(assertion["item"], list) else [assertion["item"]]:
        try:
            values.append(str(resolver.resolve(item)))
        except Unresolved:
            continue
    listed = next((found for v in values if (found := _items_naming(before, v))), None)
    if not listed:
        return True, ""  # the view does not list the object: it says nothing of it
    value = next(v for v in values if _items_naming(before, v))
    now = _items_naming(after, value) or []
    if len(now) != len(listed):
        return False, f"lists the object {len(now)} time(s), {len(listed)} before"
    same = similar(json.dumps(now), None, json.dumps(listed), None)
    return same, "" if same else "its entry for the object differs from before"


def _actual(assertion: dict, exchange: Any, value: Any) -> Any:
    kind = assertion["type"]
    field = str(assertion.get("field") or "")
    if kind == "duration":
        return exchange.duration_ms
    if exchange.status is None:
        return MISSING
    if kind == "status":
        return exchange.status
    if kind == "header":
        found = exchange.headers.get(field)
        return MISSING if found is None else found
    if field:
        return json_path_get(exchange.json(), field)
    if assertion["condition"] in ("exists", "notExists"):
        return exchange.text if exchange.text else MISSING
    if assertion["condition"] in ("equals", "notEquals", "in", "notIn") and not isinstance(value, str) \
            and assertion.get("compare") != "similar":
        parsed = exchange.json()
        return exchange.text if parsed is MISSING else parsed
    return exchange.text


def assertion_evaluate(assertion: dict, index: int, *, records: list, resolver: Resolver) -> AssertionResult:
    """Evaluate one assertion over the answers of the request(s) it targets.

    ``records`` are the run's request records (``skipped``, ``exchanges``, ``payload``).
    Targets: request ``request`` or, when absent, every request that was sent. Skipped when
    its request was skipped or it compares with an answer that a skipped request never got.
    """
    result = _evaluate_with_alternatives(assertion, records, resolver)
    result.index = index
    result.precondition = bool(assertion.get("precondition"))
    result.inconclusive = bool(assertion.get("inconclusive"))
    return result


def _evaluate_with_alternatives(assertion: dict, records: list, resolver: Resolver) -> AssertionResult:
    """The assertion, or when it fails its ``otherwise`` (which may have its own ``otherwise``)."""
    result = _evaluate(assertion, records, resolver)
    if result.outcome == AssertionOutcome.FAILED and isinstance(assertion.get("otherwise"), dict):
        alternative = _evaluate_with_alternatives(assertion["otherwise"], records, resolver)
        if alternative.outcome == AssertionOutcome.PASSED:
            return AssertionResult(0, result.description, AssertionOutcome.PASSED)
        if result.exchange is None:
            result.request_index, result.exchange = alternative.request_index, alternative.exchange
        result.message = f"{result.message}; otherwise: {alternative.description}: {alternative.message}"
    return result


def _evaluate(assertion: dict, records: list, resolver: Resolver) -> AssertionResult:
    description = describe(assertion)
    target = assertion.get("request")
    if target is not None:
        indices = target if isinstance(target, list) else [target]
        wrong = [i for i in indices if not isinstance(i, int) or not 0 <= i < len(records)]
        if wrong or not indices:
            return AssertionResult(0, description, AssertionOutcome.FAILED, f"no request {target} in this test")
        chosen = [records[i] for i in indices]
    else:
        chosen = [r for r in records if not r.skipped]
    targets = [r for r in chosen if not r.skipped]
    exchanges = [(r, e) for r in targets for e in r.exchanges]
    if not exchanges:
        reasons = [f"request {r.index}: {r.skipped}" for r in chosen if r.skipped]
        return AssertionResult(0, description, AssertionOutcome.SKIPPED,
                               "its request was skipped" + (f" ({'; '.join(reasons[:3])})" if reasons else ""))
    aggregate = assertion.get("aggregate", "all")
    if aggregate == "last":
        exchanges = exchanges[-1:]

    reference = response_reference(assertion.get("value"))
    try:
        expected = resolver.resolve(assertion.get("value"))
    except Unresolved as exc:
        if exc.kind == "response" and exc.request_index is not None and exc.request_index < len(records) \
                and (records[exc.request_index].skipped or "private" in assertion):
            # Nothing to compare with (a skipped request, or a control that got no answer): undecided.
            return AssertionResult(0, description, AssertionOutcome.SKIPPED, "compares with a request that got "
                                   "no answer" if not records[exc.request_index].skipped else
                                   "compares with a skipped request")
        return AssertionResult(0, description, AssertionOutcome.FAILED, f"cannot resolve {exc}")
    if "plus" in assertion and _number(expected) is not None:
        expected = _number(expected) + _number(assertion["plus"])
    rendered = assertion.get("whenContentType")
    ignore_case = bool(assertion.get("ignoreCase"))
    similar_to = records[reference] if assertion.get("compare") == "similar" and reference is not None else None

    outcomes = []
    for record, exchange in exchanges:
        if exchange.status is None and assertion["type"] != "duration":
            outcomes.append((False, record, f"no answer ({exchange.error})", exchange))
            continue
        if rendered is not None and not re.search(str(rendered), exchange.headers.get("Content-Type") or "",
                                                  re.IGNORECASE):
            outcomes.append((True, record, "", exchange))  # not an answer of the kind this assertion is about
            continue
        if similar_to is not None and assertion["condition"] in ("equals", "notEquals") and "item" in assertion:
            ok, why = _check_item(assertion, exchange.text, str(expected), resolver)
            outcomes.append((ok == (assertion["condition"] == "equals"), record, why, exchange))
            continue
        if similar_to is not None and assertion["condition"] in ("equals", "notEquals"):
            same = similar(exchange.text, record.payload, str(expected), similar_to.payload)
            ok = same == (assertion["condition"] == "equals")
            outcomes.append((ok, record, "differs from the answer to request "
                             f"{similar_to.index}" if not same else "is alike the compared answer", exchange))
            continue
        if "verdict" in assertion:
            ok, why = _check_verdict(assertion["verdict"], exchange)
        elif "private" in assertion:
            ok, why = _check_private(assertion["private"], exchange, expected, resolver)
        elif "keys" in assertion:
            ok, why = _check_keys(assertion, exchange, expected, ignore_case)
        else:
            ok, why = check(assertion["condition"], _actual(assertion, exchange, expected), expected,
                            ignore_case=ignore_case)
        outcomes.append((ok, record, why, exchange))

    passed = any(o[0] for o in outcomes) if aggregate == "any" else all(o[0] for o in outcomes)
    if passed:
        return AssertionResult(0, description, AssertionOutcome.PASSED)
    if aggregate == "any":
        _, record, why, exchange = outcomes[-1]
        return AssertionResult(0, description, AssertionOutcome.FAILED,
                               f"no answer to request {record.index} did ({len(outcomes)} answers; last {why})",
                               request_index=record.index, exchange=exchange)
    _, record, why, exchange = next(o for o in outcomes if not o[0])
    subject = assertion["type"] + (f" {assertion['field']}" if assertion.get("field") else "")
    return AssertionResult(0, description, AssertionOutcome.FAILED,
                           f"request {record.index} ({record.description}): {subject} {why}",
                           request_index=record.index, exchange=exchange)
