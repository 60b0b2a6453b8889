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
detector (8,192 characters looked at, however long the value). On top of these, every walker
draws on the trace's budget (``core.budget``: nodes visited, CPU time) and stops where it is
when the budget is spent: the trace is then analysed partially. Walkers never materialise more
of a container than they visit (a 60,000-key object costs what its first visited keys cost),
form bodies are parsed only as far as a stored body reaches (:data:`PARSED_FORM_CHARS`), and
GraphQL documents are parsed up to :data:`GRAPHQL_MAX_TOKENS` tokens, with each fragment
expanded at most once per operation (:func:`graphql_leaves`).
"""
from __future__ import annotations

from functools import lru_cache
from itertools import islice
from urllib.parse import parse_qsl

import orjson

from core.budget import TIME_LIMITS, UNLIMITED, Budget
from core.enums import DataSection
from core.jsontypes import json_type
from core.safejson import nested_deeper_than, strip_nul

MAX_ARRAY_ITEMS = 50
MAX_LEAVES = 1000
MAX_DEPTH = 32
MAX_PARSED_DEPTH = 128
# Form bodies are parsed up to the first "&" after this many characters: the stored body is cut at
# 64 KB (redact.MAX_STORED_BODY), so every pair a stored body shows is parsed (and redacted).
PARSED_FORM_CHARS = 64 * 1024
# GraphQL documents: each parsed up to this many tokens (graphql-core: ~5 µs a token), a trace's
# documents together up to this many characters; documents up to GRAPHQL_CACHED_CHARS are kept parsed
# (the same queries come again and again; a parsed document takes ~100 times its text).
GRAPHQL_MAX_TOKENS = 8000
GRAPHQL_MAX_CHARS = 32 * 1024
GRAPHQL_CACHED_CHARS = 4096
# Fragment spreads followed per operation (each fragment is expanded once per operation anyway).
GRAPHQL_MAX_SPREADS = 1000

# A leaf is a plain tuple (section, dataPath, key, value, dataType): traces have tens of
# them and a tuple is the cheapest object Python builds.
Leaf = tuple


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()[:255]


def flatten_json(value: object, section: str, out: list[Leaf], prefix: str = "", key: str | None = None, *,
                 budget: Budget = UNLIMITED) -> None:
    """Append the leaves of a JSON value (at most ``MAX_LEAVES``), in document order; containers
    recurse, empty containers (and containers past ``MAX_DEPTH``) are leaves. Each value visited
    draws a node from ``budget``; children are generated as they are visited, never listed."""
    frames = [(iter(((value, prefix, key),)), 0)]
    leaves = MAX_LEAVES
    while frames and leaves > 0:
        children, depth = frames[-1]
        item = next(children, None)
        if item is None:
            frames.pop()
            continue
        if not budget.take_nodes():
            return
        node, path, last_key = item
        if isinstance(node, dict) and node and depth < MAX_DEPTH:
            frames.append((_object_children(node, path), depth + 1))
        elif isinstance(node, list) and node and depth < MAX_DEPTH:
            frames.append((_array_children(node, path, last_key), depth + 1))
        else:
            out.append((section, path, last_key, node, json_type(node)))
            leaves -= 1


def _object_children(node: dict, path: str):
    for key, child in node.items():
        key = str(key)
        yield child, f"{path}.{key}" if path else key, key


def _array_children(node: list, path: str, last_key: str | None):
    child_path = f"{path}[]"
    for child in islice(node, MAX_ARRAY_ITEMS):
        yield child, child_path, last_key


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
        return "form", parse_qsl(_form_head(text), keep_blank_values=True)
    if content_type.startswith("multipart/form-data"):
        return "multipart", _multipart_fields(text, content_type)
    return "text", text


def _form_head(text: str) -> str:
    """``text`` up to the first ``&`` after :data:`PARSED_FORM_CHARS` characters (all of it when shorter)."""
    if len(text) <= PARSED_FORM_CHARS:
        return text
    end = text.find("&", PARSED_FORM_CHARS)
    return text if end < 0 else text[:end]


def _multipart_fields(text: str, content_type_header: str) -> list[tuple[str, str]]:
    boundary = ""
    for part in content_type_header.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "boundary":
            boundary = value.strip('"')
    if not boundary:
        return []
    fields = []
    for part in islice(text.split("--" + boundary), 1, MAX_LEAVES + 1):
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
    return fields


def body_leaves(kind: str, parsed: object, section: str, out: list[Leaf], *, budget: Budget = UNLIMITED) -> None:
    if kind == "json":
        if isinstance(parsed, (dict, list)):
            flatten_json(parsed, section, out, budget=budget)
        elif budget.take_nodes():
            out.append((section, "", None, parsed, json_type(parsed)))
    elif kind in ("form", "multipart"):
        pairs_leaves(parsed, section, out, budget=budget)  # type: ignore[arg-type]
    elif kind == "text" and budget.take_nodes():
        # Whole: the detector samples long text itself (classification.detector.validators.text).
        out.append((section, "", None, parsed, "string"))


def pairs_leaves(pairs: list[tuple[str, str]], section: str, out: list[Leaf], *, budget: Budget = UNLIMITED) -> None:
    """Form fields and multipart parts by name (at most ``MAX_LEAVES``, each drawing a node)."""
    for name, value in islice(pairs, MAX_LEAVES):
        if not budget.take_nodes():
            return
        out.append((section, name[:1024], name, value, "string"))


# ---------------------------------------------------------------- GraphQL

def graphql_requests(body_kind: str, body: object, query: list[tuple[str, str]], *,
                     budget: Budget = UNLIMITED) -> list[tuple[str, str, dict]]:
    """The (section, document, variables) a request carries, if it looks like GraphQL: JSON bodies
    ``{"query": ..., "variables": ...}`` (or arrays of them), else ``?query=`` (and ``&variables=``).

    Documents are parsed later at about 5 µs a token, so a trace's documents together are given at
    most :data:`GRAPHQL_MAX_CHARS` characters: a document past what is left is left out and the
    trace is partial (``budget.reason``)."""
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
    allowed, left = [], GRAPHQL_MAX_CHARS
    for request in found:
        if len(request[1]) > left:
            budget.refuse("graphql document size")
            continue
        left -= len(request[1])
        allowed.append(request)
    return allowed


GRAPHQL_QUERY_PARAMS = frozenset({"query", "variables", "operationName", "extensions"})


_TOO_MANY_TOKENS = object()


def _parse_document(text: str):
    """The parsed document; ``None`` when it is not GraphQL, ``_TOO_MANY_TOKENS`` when parsing
    stopped at GRAPHQL_MAX_TOKENS. Small documents are kept parsed (the same queries come again)."""
    return _parse_cached(text) if len(text) <= GRAPHQL_CACHED_CHARS else _parse(text)


def _parse(text: str):
    from graphql import parse
    from graphql.error import GraphQLError

    try:
        return parse(text, no_location=True, max_tokens=GRAPHQL_MAX_TOKENS)
    except GraphQLError as exc:
        return _TOO_MANY_TOKENS if "tokens" in (exc.message or "") else None
    except (RecursionError, TypeError):
        return None


_parse_cached = lru_cache(maxsize=512)(_parse)


def graphql_leaves(document: str, variables: dict, section: str, out: list[Leaf], *,
                   budget: Budget = UNLIMITED) -> list[str]:
    """Append argument leaves of a GraphQL document; return its operation types ([] when not GraphQL).

    Each operation's selections are walked with every fragment expanded at most once in that
    operation (a later spread of a fragment already expanded is not walked again: the argument leaves
    it would repeat at that position are not reported) and at most ``GRAPHQL_MAX_SPREADS`` spreads
    followed: the walk is linear in the document whatever the nesting of spreads (a fragment bomb
    doubling at each level costs what its text costs). Each selection draws a node from ``budget``;
    a document over GRAPHQL_MAX_TOKENS, a spread past the cap or the budget spent make the trace
    partial (``budget.reason``).
    """
    from graphql.language import FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode
    from graphql.language import OperationDefinitionNode
    from graphql.utilities import value_from_ast_untyped

    doc = _parse_document(document)
    if doc is _TOO_MANY_TOKENS:
        budget.refuse("graphql tokens")
        return []
    if doc is None:
        return []
    fragments = {d.name.value: d for d in doc.definitions if isinstance(d, FragmentDefinitionNode)}
    operations = [d for d in doc.definitions if isinstance(d, OperationDefinitionNode)]
    leaves = [MAX_LEAVES]

    def walk(selection_set, path: str, depth: int, expanded: set, spreads: list) -> None:
        if selection_set is None or depth > MAX_DEPTH or leaves[0] <= 0:
            return
        for selection in selection_set.selections:
            if not budget.take_nodes():
                return
            if isinstance(selection, FieldNode):
                name = selection.name.value
                field_path = f"{path}.{name}"
                for argument in selection.arguments or ():
                    try:
                        value = value_from_ast_untyped(argument.value, variables)
                    except TIME_LIMITS:
                        raise
                    except Exception:  # noqa: BLE001 - a malformed literal is just skipped
                        continue
                    before = len(out)
                    flatten_json(value, section, out, f"{field_path}.__args.{argument.name.value}",
                                 argument.name.value, budget=budget)
                    leaves[0] -= len(out) - before
                walk(selection.selection_set, field_path, depth + 1, expanded, spreads)
            elif isinstance(selection, InlineFragmentNode):
                walk(selection.selection_set, path, depth + 1, expanded, spreads)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name not in fragments or name in expanded:
                    continue
                spreads[0] -= 1
                if spreads[0] < 0:
                    budget.refuse("graphql spreads")
                    return
                expanded.add(name)
                walk(fragments[name].selection_set, path, depth + 1, expanded, spreads)

    types = []
    for operation in operations:
        op_type = operation.operation.value
        types.append(op_type)
        walk(operation.selection_set, op_type, 0, set(), [GRAPHQL_MAX_SPREADS])
    return types


def graphql_response_leaves(parsed: object, op_types: list[str], section: str, out: list[Leaf], *,
                            budget: Budget = UNLIMITED) -> None:
    """A GraphQL response: ``data`` under the operation type when there is one type, the rest as is."""
    if not isinstance(parsed, dict):
        flatten_json(parsed, section, out, budget=budget)
        return
    single = op_types[0] if len(set(op_types)) == 1 else None
    for key, value in islice(parsed.items(), MAX_LEAVES):
        if key == "data" and single and isinstance(value, dict):
            flatten_json(value, section, out, single, None, budget=budget)
        else:
            flatten_json(value, section, out, str(key), str(key), budget=budget)


def header_leaves(headers: list[tuple[str, str]], section: str, out: list[Leaf], *, budget: Budget = UNLIMITED) -> None:
    for name, value in islice(headers, MAX_LEAVES):
        if not budget.take_nodes():
            return
        lowered = name.lower()
        out.append((section, lowered[:1024], lowered, value, "string"))


def query_leaves(query: list[tuple[str, str]], out: list[Leaf], *, budget: Budget = UNLIMITED) -> None:
    for name, value in islice(query, MAX_LEAVES):
        if not budget.take_nodes():
            return
        out.append((DataSection.REQUEST_QUERY, name[:1024], name, value, "string"))
