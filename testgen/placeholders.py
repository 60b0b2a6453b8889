"""``{{placeholder}}`` resolution in test requests and assertion values (DECISIONS §8).

Names:

* ``{{baseUrl}}``, ``{{authToken}}``, ``{{testUserId}}`` and any extra key of the
  testing environment (``{{otherObjectId}}``...);
* ``{{env.NAME}}``: the variable NAME of the environment variables the caller hands over
  (``run_security_tests`` hands over only the names in ``TESTING_ENV_ALLOWLIST``; runs
  in the worker hand over none);
* ``{{responses[i].status}}``, ``.duration`` (ms), ``.body`` (the text),
  ``.body.a.b[0].c`` (a value of the JSON body), ``.headers.Name``: the last answer
  to request ``i`` of the same test (0-based), for requests that depend on an
  earlier answer and for assertions comparing answers;
* ``{{'{'}}``: the escape, one literal ``{``. :func:`literal` writes any text with it
  so that the text resolves to itself and can never form a placeholder: every
  value copied from traffic into a generated test goes through it.

A string that is exactly one placeholder takes the placeholder's value with its
type (a number stays a number in a JSON body); otherwise values are
interpolated as text, in one pass: a value put in (an answer's text, an
environment value) is never scanned for placeholders again. Only environment
values are resolved in turn (an ``authToken`` of ``Bearer {{env.API_TOKEN}}``),
up to a depth of 5.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

# {{name}}, or the escape {{'{'}} standing for one literal "{".
PLACEHOLDER = re.compile(r"\{\{\s*(?:(?P<escape>'\{')|(?P<name>[^{}]+?))\s*\}\}")
ESCAPE = "{{'{'}}"
# Any reference to an environment variable, resolvable or not (what the run policies look for).
ENV_REFERENCE = re.compile(r"\{\{\s*env\.([^{}\s]*)")
_RESPONSE_REF = re.compile(r"^responses\[(\d+)\](?:\.(status|duration|body|headers)(?:\.(.+))?)?$")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
MISSING = object()
MAX_DEPTH = 5


class Unresolved(Exception):
    """A placeholder without a value. ``kind``: ``env`` (environment, process
    environment) or ``response`` (an earlier answer that is missing or lacks the value)."""

    def __init__(self, name: str, kind: str, request_index: int | None = None):
        self.name = name
        self.kind = kind
        self.request_index = request_index
        super().__init__(f"{{{{{name}}}}}")


def json_path_get(value: Any, path: str) -> Any:
    """``a.b[0].c`` (numeric segments index lists too) in a JSON value; ``MISSING`` when absent."""
    node = value
    for name, index in _PATH_PART.findall(path or ""):
        if index:
            key: Any = int(index)
        elif isinstance(node, list) and name.isdigit():
            key = int(name)
        else:
            key = name
        if isinstance(node, dict) and isinstance(key, str) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and -len(node) <= key < len(node):
            node = node[key]
        else:
            return MISSING
    return node


class Resolver:
    """Resolves placeholders against environment values, the process environment and the
    answers received so far (``answer(i)`` returns the last exchange of request ``i`` or None)."""

    def __init__(self, values: Mapping[str, str], environ: Mapping[str, str],
                 answer: Callable[[int], Any] | None = None):
        self.values = values
        self.environ = environ
        self.answer = answer or (lambda index: None)

    # --- names ------------------------------------------------------------------
    def lookup(self, name: str, depth: int = 0) -> Any:
        if name.startswith("env."):
            value = self.environ.get(name[4:])
            if value is None:
                raise Unresolved(name, "env")
            return value
        match = _RESPONSE_REF.match(name)
        if match:
            return self._response_value(name, int(match.group(1)), match.group(2) or "body", match.group(3))
        if name not in self.values:
            raise Unresolved(name, "env")
        value = self.values[name]
        if isinstance(value, str) and PLACEHOLDER.search(value) and depth < MAX_DEPTH:
            return self.resolve(value, depth + 1)
        return value

    def _response_value(self, name: str, index: int, part: str, path: str | None) -> Any:
        exchange = self.answer(index)
        if exchange is None or exchange.status is None:
            raise Unresolved(name, "response", index)
        if part == "status":
            return exchange.status
        if part == "duration":
            return round(exchange.duration_ms, 1)
        if part == "headers":
            value = exchange.headers.get(path or "")
            if value is None:
                raise Unresolved(name, "response", index)
            return value
        if not path:
            return exchange.text
        value = json_path_get(exchange.json(), path)
        if value is MISSING:
            raise Unresolved(name, "response", index)
        return value

    # --- values -----------------------------------------------------------------
    def _replacement(self, match: re.Match, depth: int) -> Any:
        return "{" if match.group("escape") else self.lookup(match.group("name"), depth)

    def resolve(self, value: Any, depth: int = 0) -> Any:
        """``value`` with every placeholder replaced (recursively in lists and dict values; keys are
        left as they are). One pass: what a placeholder put in is not resolved again."""
        if isinstance(value, str):
            whole = PLACEHOLDER.fullmatch(value.strip()) if value.strip() == value else None
            if whole:
                return self._replacement(whole, depth)
            return PLACEHOLDER.sub(lambda m: _text(self._replacement(m, depth)), value)
        if isinstance(value, list):
            return [self.resolve(v, depth) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v, depth) for k, v in value.items()}
        return value

    def missing_env(self, value: Any) -> list[str]:
        """Names of environment placeholders in ``value`` that have no value (answers are not checked)."""
        missing: list[str] = []
        for text in _strings(value):
            for match in PLACEHOLDER.finditer(text):
                name = match.group("name")
                if name is None or _RESPONSE_REF.match(name):
                    continue
                try:
                    self.lookup(name)
                except Unresolved as exc:
                    if exc.kind == "env" and exc.name not in missing:
                        missing.append(exc.name)
        return missing


def response_reference(value: Any) -> int | None:
    """The request index when ``value`` is exactly a ``{{responses[i]...}}`` placeholder."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value)
        if whole and whole.group("name"):
            match = _RESPONSE_REF.match(whole.group("name"))
            if match:
                return int(match.group(1))
    return None


def literal(text: str) -> str:
    """``text`` written so that it resolves to exactly itself and forms no placeholder, whatever it
    holds (``{{env.SECRET_KEY}}``, ``{{authToken}}``, an escape...): every ``{`` next to another
    ``{`` or at either end is written as the escape ``{{'{'}}``. Ends count so that literals put
    side by side, or next to template text, cannot join into a ``{{`` either."""
    if "{" not in text:
        return text
    last = len(text) - 1
    return "".join(
        ESCAPE if ch == "{" and (i in (0, last) or text[i - 1] == "{" or text[i + 1] == "{") else ch
        for i, ch in enumerate(text)
    )


def literal_text(text: str) -> str:
    """``text`` with its escapes turned back into ``{`` (other placeholders left as they are)."""
    return PLACEHOLDER.sub(lambda m: "{" if m.group("escape") else m.group(0), text)


def literal_values(value: Any) -> Any:
    """A copy of a JSON value whose strings (not keys) are :func:`literal`."""
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, list):
        return [literal_values(v) for v in value]
    if isinstance(value, dict):
        return {k: literal_values(v) for k, v in value.items()}
    return value


def is_placeholder(text: str) -> bool:
    """True when ``text`` is exactly one placeholder (the escape is text, not a placeholder)."""
    whole = PLACEHOLDER.fullmatch(text)
    return bool(whole and whole.group("name"))


def env_references(value: Any) -> list[str]:
    """``env.NAME`` of every environment-variable reference in the strings of ``value`` (dict
    values, list items), in order, without repeats. Looser than resolution: ``{{ env.X``
    without its closing braces counts too."""
    names: list[str] = []
    for text in _strings(value):
        for match in ENV_REFERENCE.finditer(text):
            name = f"env.{match.group(1)}"
            if name not in names:
                names.append(name)
    return names


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)
