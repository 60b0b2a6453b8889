"""The fields a JSON schema of an uploaded spec documents, in the data fields' path notation
(``items[].name``): their types, which are required, and where the schema is free-form."""
from __future__ import annotations

from dataclasses import dataclass, field

from .compiled import deref

MAX_DEPTH = 12
MAX_NODES = 5000


@dataclass
class Documented:
    types: dict[str, set[str]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    open: set[str] = field(default_factory=set)  # paths whose schema says nothing about their keys

    def lookup(self, path: str) -> set[str] | None:
        return self.types.get(path)

    def is_open(self, path: str) -> bool:
        """Whether ``path`` lies under a free-form part of the schema (an object without properties,
        a schema without a type)."""
        if "" in self.open:
            return True
        return any(char in ".[" and path[:index] in self.open for index, char in enumerate(path))


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def schema_paths(spec: dict, schema) -> Documented:
    """Walk ``schema`` ($refs in ``spec`` followed; ``allOf``/``anyOf``/``oneOf`` merged leniently)."""
    out = Documented()
    budget = [MAX_NODES]

    def walk(node, path: str, depth: int) -> None:
        node, _ = deref(spec, node, [])
        if not isinstance(node, dict) or depth > MAX_DEPTH or budget[0] <= 0:
            out.open.add(path)
            return
        budget[0] -= 1
        types = out.types.setdefault(path, set())
        declared = node.get("type")
        if isinstance(declared, str):
            types.add(declared)
        elif isinstance(declared, list):
            types.update(t for t in declared if isinstance(t, str))
        if node.get("nullable") is True:
            types.add("null")
        if isinstance(node.get("enum"), list) and None in node["enum"]:
            types.add("null")
        alternatives = [alt for key in ("allOf", "anyOf", "oneOf") for alt in node.get(key) or ()]
        for alternative in alternatives:
            walk(alternative, path, depth + 1)
        properties = node.get("properties")
        if isinstance(properties, dict):
            for key, child in properties.items():
                walk(child, _join(path, str(key)), depth + 1)
            for key in node.get("required") or ():
                if isinstance(key, str) and key in properties:
                    out.required.add(_join(path, key))
        if "items" in node:
            walk(node["items"], f"{path}[]", depth + 1)
        if not declared and not alternatives and not isinstance(properties, dict) and "items" not in node:
            out.open.add(path)
        elif (declared == "object" or isinstance(declared, list) and "object" in declared) and not isinstance(
                properties, dict):
            out.open.add(path)
        if isinstance(node.get("additionalProperties"), dict) or isinstance(node.get("patternProperties"), dict):
            out.open.add(path)

    walk(schema, "", 0)
    return out


def types_agree(documented: set[str], observed: str) -> bool:
    """Whether an observed data type is one the schema allows (no type stated: anything)."""
    if not documented or observed in documented:
        return True
    return observed == "integer" and "number" in documented
