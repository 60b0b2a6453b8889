"""Data-field extraction from raw traces (DECISIONS §5).

A trace's five sections (query parameters, request headers, request body,
response headers, response body) become *leaves*: (section, dataPath, key,
value, dataType). Conventions:

* dotted keys, arrays as ``[]`` (``items[].name``); header names lower-cased;
* JSON and ``application/x-www-form-urlencoded`` bodies are walked field by
  field; multipart form fields by name; any other non-empty body (text, XML,
  HTML, a bare JSON scalar) is one string field with the empty path ``""``;
* GraphQL requests (``{"query": "...", "variables": {...}}`` bodies, or
  ``?query=`` on GET) are parsed with graphql-core: each argument of each
  selected field becomes ``<operation type>.<field path>.__args.<argument>``
  (variables substituted), like Metlo's agents report them; a GraphQL response's
  ``data.*`` is reported under the operation type (``query.user.email``).

Bounds keep one huge trace from stalling a batch: at most 50 items of any
array, 1,000 leaves per section, nesting depth 32; long strings are sampled by the
detector (8,192 characters looked at, however long the value).
"""
from __future__ import annotations

from functools import lru_cache
from urllib.parse import parse_qsl

import orjson

from core.enums import DataSection
from core.jsontypes import json_type
from core.safejson import nested_deeper_than, strip_nul

MAX_ARRAY_ITEMS = 50
MAX_LEAVES = 1000
MAX_DEPTH = 32
MAX_PARSED_DEPTH = 128

# A leaf is a plain tuple (section, dataPath, key, value, dataType): traces have tens of
# them and a tuple is the cheapest object Python builds.
Leaf = tuple


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()[:255]


def flatten_json(value: object, section: str, out: list[Leaf], prefix: str = "", key: str | None = None) -> None:
    """Append the leaves of a JSON value; containers recurse, empty containers are leaves."""
    stack = [(value, prefix, key, 0)]
    budget = MAX_LEAVES
    while stack and budget > 0:
        node, path, last_key, depth = stack.pop()
        if isinstance(node, dict) and node and depth < MAX_DEPTH:
            for k, child in reversed(list(node.items())):
                k = str(k)
                stack.append((child, f"{path}.{k}" if path else k, k, depth + 1))
        elif isinstance(node, list) and node and depth < MAX_DEPTH:
            child_path = f"{path}[]"
            for child in reversed(node[:MAX_ARRAY_ITEMS]):
                stack.append((child, child_path, last_key, depth + 1))
        else:
            out.append((section, path, last_key, node, json_type(node)))
            budget -= 1


def parse_json(text: str) -> tuple[bool, object]:
    """(True, value) for a JSON body the analysis can handle; a body nested deeper than
    ``MAX_PARSED_DEPTH`` is treated as text (redaction walks it recursively, orjson re-encodes it)."""
    try:
        parsed = orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        return False, None
    if nested_deeper_than(parsed, MAX_PARSED_DEPTH):
        return False, None
    # An escaped NUL (\u0000) becomes a real one: PostgreSQL refuses it in data paths and stored bodies.
    return True, strip_nul(parsed) if "\\u0000" in text else parsed


def parse_body(text: str, content_type: str) -> tuple[str, object]:
    """Classify and parse a body: ("empty"|"json"|"form"|"multipart"|"text", parsed)."""
    if not text or not text.strip():
        return "empty", None
    stripped = text.lstrip()
    if "json" in content_type or (stripped[:1] in "{[" and not content_type.startswith("multipart/")):
        ok, parsed = parse_json(text)
        if ok:
            return "json", parsed
    if content_type == "application/x-www-form-urlencoded":
        return "form", parse_qsl(text, keep_blank_values=True)
    if content_type.startswith("multipart/form-data"):
        return "multipart", _multipart_fields(text, content_type)
    return "text", text


def _multipart_fields(text: str, content_type_header: str) -> list[tuple[str, str]]:
    boundary = ""
    for part in content_type_header.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "boundary":
            boundary = value.strip('"')
    if not boundary:
        return []
    fields = []
    for part in text.split("--" + boundary)[1:]:
        head, _, body = part.partition("\r\n\r\n")
        if not _:
            head, _, body = part.partition("\n\n")
        if "filename=" in head.lower():
            continue  # file uploads are content, not fields
        marker = 'name="'
        at = head.find(marker)
        if at < 0:
            continue
        name = head[at + len(marker):head.find('"', at + len(marker))]
        fields.append((name, body.rstrip("\r\n-")))
    return fields[:MAX_LEAVES]


def body_leaves(kind: str, parsed: object, section: str, out: list[Leaf]) -> None:
    if kind == "json":
        if isinstance(parsed, (dict, list)):
            flatten_json(parsed, section, out)
        else:
            out.append((section, "", None, parsed, json_type(parsed)))
    elif kind in ("form", "multipart"):
        for name, value in parsed[:MAX_LEAVES]:  # type: ignore[index]
            out.append((section, name[:1024], name, value, "string"))
    elif kind == "text":
        # Whole: the detector samples long text itself (classification.detector.validators.text).
        out.append((section, "", None, parsed, "string"))


# ---------------------------------------------------------------- GraphQL

def graphql_requests(body_kind: str, body: object, query: list[tuple[str, str]]) -> list[tuple[str, str, dict]]:
    """The (section, document, variables) a request carries, if it looks like GraphQL: JSON bodies
    ``{"query": ..., "variables": ...}`` (or arrays of them), else ``?query=`` (and ``&variables=``)."""
    found: list[tuple[str, str, dict]] = []
    items = body if body_kind == "json" and isinstance(body, list) else [body] if body_kind == "json" else []
    for item in items[:MAX_ARRAY_ITEMS]:
        if isinstance(item, dict) and isinstance(item.get("query"), str):
            variables = item.get("variables")
            found.append((DataSection.REQUEST_BODY, item["query"], variables if isinstance(variables, dict) else {}))
    if not found and query:
        params = dict(query)
        if "query" in params:
            ok, variables = parse_json(params.get("variables") or "{}")
            found.append((DataSection.REQUEST_QUERY, params["query"],
                          variables if ok and isinstance(variables, dict) else {}))
    return found


GRAPHQL_QUERY_PARAMS = frozenset({"query", "variables", "operationName", "extensions"})


@lru_cache(maxsize=2048)
def _parse_document(text: str):
    from graphql import parse
    from graphql.error import GraphQLError

    try:
        return parse(text, no_location=True, max_tokens=20000)
    except (GraphQLError, RecursionError, TypeError):
        return None


def graphql_leaves(document: str, variables: dict, section: str, out: list[Leaf]) -> list[str]:
    """Append argument leaves of a GraphQL document; return its operation types ([] when not GraphQL)."""
    from graphql.language import FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode
    from graphql.language import OperationDefinitionNode
    from graphql.utilities import value_from_ast_untyped

    doc = _parse_document(document[:100_000])
    if doc is None:
        return []
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    operations = [d for d in doc.definitions if isinstance(d, OperationDefinitionNode)]
    budget = [MAX_LEAVES]

    def walk(selection_set, path: str, depth: int, seen: frozenset) -> None:
        if selection_set is None or depth > MAX_DEPTH or budget[0] <= 0:
            return
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                name = selection.name.value
                field_path = f"{path}.{name}"
                for argument in selection.arguments or ():
                    try:
                        value = value_from_ast_untyped(argument.value, variables)
                    except Exception:  # noqa: BLE001 - a malformed literal is just skipped
                        continue
                    before = len(out)
                    flatten_json(value, section, out, f"{field_path}.__args.{argument.name.value}", argument.name.value)
                    budget[0] -= len(out) - before
                walk(selection.selection_set, field_path, depth + 1, seen)
            elif isinstance(selection, InlineFragmentNode):
                walk(selection.selection_set, path, depth + 1, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name in fragments and name not in seen:
                    walk(fragments[name].selection_set, path, depth + 1, seen | {name})

    types = []
    for operation in operations:
        op_type = operation.operation.value
        types.append(op_type)
        walk(operation.selection_set, op_type, 0, frozenset())
    return types


def graphql_response_leaves(parsed: object, op_types: list[str], section: str, out: list[Leaf]) -> None:
    """A GraphQL response: ``data`` under the operation type when there is one type, the rest as is."""
    if not isinstance(parsed, dict):
        flatten_json(parsed, section, out)
        return
    single = op_types[0] if len(set(op_types)) == 1 else None
    for key, value in parsed.items():
        if key == "data" and single and isinstance(value, dict):
            flatten_json(value, section, out, single, None)
        else:
            flatten_json(value, section, out, str(key), str(key))


def header_leaves(headers: list[tuple[str, str]], section: str, out: list[Leaf]) -> None:
    for name, value in headers[:MAX_LEAVES]:
        lowered = name.lower()
        out.append((section, lowered[:1024], lowered, value, "string"))


def query_leaves(query: list[tuple[str, str]], out: list[Leaf]) -> None:
    for name, value in query[:MAX_LEAVES]:
        out.append((DataSection.REQUEST_QUERY, name[:1024], name, value, "string"))
