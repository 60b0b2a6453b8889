"""JSON Schema of one body (or parameter set) from the inventory's data fields and sampled values.

A :class:`Node` tree is built from two sources: the endpoint's data fields (``items[].name``, each
with its merged type, nullability and data classes: every field ever seen, at most 200) and the
stored traces sampled for it (exact types, which keys every object had, string values for formats
and enums). :meth:`Node.schema` turns it into JSON Schema 2020-12 (OpenAPI 3.1):

* types: a field's merged type plus every type sampled (``integer`` vs ``number``; ``null`` when
  nullable); a node with properties is an ``object``, one with items an ``array``;
* ``required``: keys present in every sampled object of that node (none for GraphQL data, whose
  selections vary);
* ``format`` / ``enum`` / examples: ``values.py`` (an enum only for vocabulary seen from several users;
  examples synthesised, never copied); ``x-data-classes`` on nodes with classes;
* limits: ``MAX_DEPTH`` levels (deeper nodes are ``{}``), ``MAX_PROPERTIES`` per object; objects
  are open (no ``additionalProperties: false``: fields past the inventory's 200 may exist).
"""
from __future__ import annotations

from core.jsontypes import json_type
from inventory.ingest.credentials import REDACTED

from . import values

MAX_DEPTH = 12
MAX_PROPERTIES = 200
MAX_SAMPLE_NODES = 2000  # values visited per sampled body
MAX_SAMPLE_ITEMS = 50  # array items visited, as ingestion does
_MAX_STRINGS = 16  # distinct strings kept per node (more: no enum anyway)
_TYPE_ORDER = ("object", "array", "string", "integer", "number", "boolean", "null")


class Node:
    """One position in a body (``__slots__``: a host has tens of thousands)."""

    __slots__ = ("key", "types", "classes", "props", "items", "objects", "present", "strings", "string_total",
                 "redacted", "users", "formats")

    def __init__(self, key: str | None = None):
        self.key = key
        self.types: set[str] = set()
        self.classes: set[str] = set()
        self.props: dict[str, Node] = {}
        self.items: Node | None = None
        self.objects = 0
        self.present: dict[str, int] = {}
        self.strings: dict[str, int] = {}
        self.string_total = 0
        self.redacted = 0
        self.users: dict[str, set] = {}  # string value -> the users it was sampled from
        self.formats: set[str] | None = None  # formats every sampled string has (None: none sampled)

    # ------------------------------------------------------------ building
    def child(self, token: str) -> Node | None:
        if token == "[]":
            if self.items is None:
                self.items = Node(self.key)
            return self.items
        node = self.props.get(token)
        if node is None:
            if len(self.props) >= MAX_PROPERTIES or values.is_data_key(token):
                return None
            node = self.props[token] = Node(token)
        return node

    def add_field(self, path: str, dtype: str, nullable: bool, classes) -> None:
        """Fold one data field (``items[].name``) in."""
        node: Node | None = self
        for token in split_path(path)[:MAX_DEPTH]:
            node = node.child(token)
            if node is None:
                return
        if dtype == "null":
            nullable = True
        elif dtype in ("object", "array") and (node.props or node.items):
            pass  # an empty container leaf of a node that has children: already typed by them
        else:
            node.types.add(dtype)
        if nullable:
            node.types.add("null")
        node.classes.update(classes or ())

    def add_sample(self, value: object, user: str | None = None) -> None:
        """Fold one sampled (stored, redacted) body in: exact types, present keys, strings and who sent
        them (``user``: ``values.user_of`` the trace's meta)."""
        budget = MAX_SAMPLE_NODES
        formats_of = values.formats_of
        stack = [(self, value, 0)]
        while stack and budget > 0:
            node, value, depth = stack.pop()
            budget -= 1
            if value.__class__ is str:
                if value == REDACTED:
                    node.redacted += 1
                    continue
                node.types.add("string")
                node.string_total += 1
                if node.formats is None or node.formats:
                    node.formats = formats_of(value, node.formats)
                strings = node.strings
                if value in strings:
                    strings[value] += 1
                elif len(strings) < _MAX_STRINGS:
                    strings[value] = 1
                else:
                    continue
                if user is not None:
                    node.users.setdefault(value, set()).add(user)
                continue
            kind = json_type(value)
            node.types.add(kind)
            if depth >= MAX_DEPTH:
                continue
            if kind == "object":
                node.objects += 1
                present = node.present
                for key, child_value in value.items():
                    child = node.child(key)
                    if child is not None:
                        present[key] = present.get(key, 0) + 1
                        stack.append((child, child_value, depth + 1))
            elif kind == "array" and value:
                items = node.child("[]")
                stack.extend((items, item, depth + 1) for item in value[:MAX_SAMPLE_ITEMS])

    # ------------------------------------------------------------ output
    def schema(self, *, required: bool = True, depth: int = 0) -> dict:
        """JSON Schema of this node (``required``: write ``required`` lists)."""
        if depth > MAX_DEPTH:
            return {}
        types = set(self.types)
        if self.props:
            types.add("object")
        if self.items is not None:
            types.add("array")
        out: dict = {}
        ordered = [t for t in _TYPE_ORDER if t in types]
        if "number" in ordered and "integer" in ordered:
            ordered.remove("integer")
        if ordered:
            out["type"] = ordered[0] if len(ordered) == 1 else ordered
        if "string" in types:
            classes = frozenset(self.classes)
            fmt = values.string_format(self.formats, redacted=self.redacted, classes=classes)
            if fmt:
                out["format"] = fmt
            elif ordered == ["string"] or ordered == ["string", "null"]:
                enum = values.enum_values(self.strings, redacted=self.redacted, classes=classes, key=self.key,
                                          total=self.string_total, users=self.users)
                if enum and self.string_total == sum(self.strings.values()):
                    out["enum"] = enum + ([None] if "null" in types else [])
        if self.props:
            out["properties"] = {key: node.schema(required=required, depth=depth + 1)
                                 for key, node in sorted(self.props.items())}
            if required and self.objects:
                always = sorted(k for k, n in self.present.items() if n == self.objects and k in self.props)
                if always:
                    out["required"] = always
        if self.items is not None:
            out["items"] = self.items.schema(required=required, depth=depth + 1)
        if self.classes:
            out["x-data-classes"] = sorted(self.classes)
        return out

    def example(self, depth: int = 0) -> object:
        """An example synthesised from type and format, never a value from traffic but vocabulary
        (an enum's first value; ``values`` module docstring)."""
        if depth > 6:
            return None
        types = self.types | ({"object"} if self.props else set()) | ({"array"} if self.items is not None else set())
        if self.props and "object" in types:
            return {k: n.example(depth + 1) for k, n in sorted(self.props.items())[:20]}
        if self.items is not None and "array" in types:
            return [self.items.example(depth + 1)]
        if self.classes or values.sensitive_name(self.key) or (self.redacted and not self.strings):
            return REDACTED
        if "string" in types:
            classes = frozenset(self.classes)
            fmt = values.string_format(self.formats, redacted=self.redacted, classes=classes)
            if fmt:
                return values.EXAMPLES[fmt]
            enum = values.enum_values(self.strings, redacted=self.redacted, classes=classes, key=self.key,
                                      total=self.string_total, users=self.users) if types <= {"string", "null"} else None
            return enum[0] if enum and self.string_total == sum(self.strings.values()) else "string"
        for kind, example in (("integer", 0), ("number", 0.0), ("boolean", True), ("object", {}), ("array", [])):
            if kind in types:
                return example
        return None


def split_path(path: str) -> list[str]:
    """``items[].name`` -> ``["items", "[]", "name"]``; ``[]`` -> ``["[]"]``; ``""`` -> ``[]``."""
    tokens: list[str] = []
    for part in path.split(".") if path else ():
        arrays = 0
        while part.endswith("[]"):
            part, arrays = part[:-2], arrays + 1
        if part:
            tokens.append(part)
        tokens.extend(["[]"] * arrays)
    return tokens
