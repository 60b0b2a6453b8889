"""Guards for parsed JSON headed to PostgreSQL and to recursive code.

* :func:`strip_nul`: PostgreSQL refuses NUL in ``text`` and ``jsonb``; agents may capture
  binary bodies that carry it, so ingestion drops it rather than refusing the trace.
* :func:`nested_deeper_than`: orjson accepts 1,024 levels, but Python's ``json`` encoder
  (Django's ``JSONField``), recursive walks and orjson's own encoder (254 levels) do not;
  input nested deeper than a route's limit is refused (or, in trace bodies, kept as text).

Both are iterative, so no input can exhaust the Python stack.
"""
from __future__ import annotations

from typing import Any

NUL = "\x00"


def strip_nul(value: Any) -> Any:
    """``value`` with every NUL character removed from strings and object keys.

    Lists and dicts are changed in place (they come fresh from a parser).
    """
    if isinstance(value, str):
        return value.replace(NUL, "")
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            if NUL in item:
                container[key] = item.replace(NUL, "")
        elif isinstance(item, list):
            stack.extend((item, index) for index in range(len(item)))
        elif isinstance(item, dict):
            if any(NUL in name for name in item):
                item = {name.replace(NUL, ""): child for name, child in item.items()}
                container[key] = item
            stack.extend((item, name) for name in item)
    return root[0]


def nested_deeper_than(value: Any, limit: int) -> bool:
    """True when ``value`` nests arrays/objects more than ``limit`` levels deep."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def has_nul(value: Any) -> bool:
    """True when a string or object key anywhere in ``value`` holds a NUL character."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if NUL in node:
                return True
        elif isinstance(node, dict):
            if any(NUL in str(name) for name in node):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
