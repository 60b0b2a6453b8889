"""Example values for generated tests: plausible synthetic values for fields whose real values we
may not reuse (redacted), example bodies parsed from traces or rebuilt from data fields, and
their scalar leaves (the inputs a test may change).
"""
from __future__ import annotations

import copy
import json
import re
from typing import Any
from urllib.parse import parse_qsl

from core.safejson import nested_deeper_than

REDACTED = "[REDACTED]"
MAX_EXAMPLE_DEPTH = 64
_INDEX = re.compile(r"\[(\d*)\]")


# --- synthetic values ---------------------------------------------------------------

_SYNTHETIC_BY_NAME = (
    (re.compile(r"e-?mail", re.I), "apiscope.test@example.com"),
    (re.compile(r"pass(word|wd)?|secret|pin$", re.I), "Apiscope-Test-Passw0rd!"),
    (re.compile(r"token|api_?key|otp|code$", re.I), "apiscope-test-123456"),
    (re.compile(r"phone|mobile", re.I), "+15555550100"),
    (re.compile(r"url|website|link", re.I), "https://example.com/apiscope"),
    (re.compile(r"dob|birth|date", re.I), "1990-01-01"),
    (re.compile(r"user_?name|login", re.I), "apiscope-test-user"),
    (re.compile(r"name", re.I), "Apiscope Test"),
)


def synthetic_value(name: str, data_type: str) -> Any:
    """A plausible value for a field we saw but whose value we may not reuse (redacted)."""
    leaf = re.split(r"[.\[\]]", name.rstrip("[]"))[-1] if name else ""
    if data_type == "integer":
        return 1
    if data_type == "number":
        return 1.5
    if data_type == "boolean":
        return True
    if data_type == "null":
        return None
    if data_type == "object":
        return {}
    if data_type == "array":
        return []
    for pattern, value in _SYNTHETIC_BY_NAME:
        if pattern.search(leaf):
            return value
    return "apiscope-test"


def redacted_replaced(value: Any, name: str = "") -> Any:
    """Replace redacted values in an example body (recursively) with synthetic ones."""
    if isinstance(value, dict):
        return {k: redacted_replaced(v, f"{name}.{k}" if name else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted_replaced(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, str) and REDACTED in value:
        return synthetic_value(name, "string")
    return value


# --- bodies -------------------------------------------------------------------------

def body_parse(text: str, content_type: str) -> tuple[Any, str | None]:
    """An example body from a trace: (value, format) or (None, None) when unusable."""
    text = (text or "").strip()
    if not text:
        return None, None
    ctype = content_type.lower()
    if "json" in ctype or text[:1] in "{[":
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            if "json" in ctype:
                return None, None
        else:
            # Examples are walked recursively (redacted_replaced, payload placement): deep nesting is unusable.
            return (value, "json") if not nested_deeper_than(value, MAX_EXAMPLE_DEPTH) else (None, None)
    if "x-www-form-urlencoded" in ctype or ("=" in text and " " not in text and "\n" not in text):
        pairs = parse_qsl(text, keep_blank_values=True)
        if pairs:
            return dict(pairs), "form"
    return text, "text"


def body_from_fields(fields: list[tuple[str, str]]) -> dict:
    """Rebuild an example JSON object from request-body data paths and types."""
    root: dict = {}
    for data_path, data_type in sorted(fields):
        parts = [p for p in re.split(r"\.(?![^\[]*\])", data_path) if p]
        node: Any = root
        for i, part in enumerate(parts):
            is_last = i == len(parts) - 1
            key, arrays = part.split("[", 1)[0], len(_INDEX.findall(part))
            if not key:
                break
            if not isinstance(node, dict):
                break
            if arrays:
                lst = node.setdefault(key, [])
                if not isinstance(lst, list):
                    break
                if not lst:
                    lst.append(synthetic_value(data_path, data_type) if is_last else {})
                node = lst[0]
            elif is_last:
                node.setdefault(key, synthetic_value(data_path, data_type))
            else:
                node = node.setdefault(key, {})
    return root


def scalar_leaves(value: Any, key: tuple = (), name: str = "") -> list[tuple[tuple, str, Any]]:
    """Scalar leaves of a JSON value: (key path, display name, value)."""
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out += scalar_leaves(v, (*key, k), f"{name}.{k}" if name else str(k))
        return out
    if isinstance(value, list):
        return scalar_leaves(value[0], (*key, 0), f"{name}[0]") if value else []
    return [(key, name, value)]


def field_type_for(name: str, types: dict[str, str]) -> str | None:
    """The data-field type for a display path (``items[0].name`` is recorded as ``items[].name``)."""
    return types.get(name) or types.get(_INDEX.sub("[]", name))


def body_with(body: Any, key: tuple, value: Any) -> Any:
    """A copy of ``body`` with the leaf at ``key`` set to ``value``."""
    result = copy.deepcopy(body)
    node = result
    for part in key[:-1]:
        node = node[part]
    node[key[-1]] = value
    return result
