"""The hostile-traffic corpus: what anyone who can reach a monitored app can make its agent send us.

Each item is a request an outsider sends to a monitored app (no key needed), as the app's Metlo
agent relays it: a raw v1 trace (``trace``), and, for the bench, the HTTP request itself
(``request``: method, path with query, headers, body) to send through a real Flask app with
Metlo 0.0.17. Items are built at the ingestion limits (1 MB per trace, 128 levels of JSON).

Used by ``tests/hardening/test_hostile_traffic.py`` (through the ingestion routes to real gunicorn
and worker processes: budget counters asserted) and ``bench/hostile.py`` (worker CPU per item).
The corpus is built from the public descriptions of each attack class (GraphQL fragment
expansion, validator amplification, deep and wide JSON, regex backtracking bait), not from the
service's code: sizes are the protocol's limits.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from urllib.parse import quote

# Just under the 1 MB per trace the ingestion routes accept (the rest of the trace needs room).
BODY_BYTES = 900_000


@dataclass(frozen=True)
class Hostile:
    """One hostile request: its name, what it is, the trace an agent sends for it, and the request."""

    name: str
    what: str
    trace: dict
    request: tuple[str, str, dict, bytes | None] = field(default=("GET", "/", {}, None))


def agent_trace(*, host: str = "shop.example.com", path: str = "/", method: str = "GET",
                query: list[tuple[str, str]] | None = None, headers: dict | None = None, body: str = "",
                status: int = 200, response_body: str = '{"ok": true}',
                response_content_type: str = "application/json") -> dict:
    """A raw trace as Metlo 0.0.17's Flask agent posts it to ``/api/v1/log-request/single``."""
    return {
        "request": {
            "url": {"host": host, "path": path,
                    "parameters": [{"name": k, "value": v} for k, v in (query or [])]},
            "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()],
            "body": body,
            "method": method,
        },
        "response": {
            "status": status,
            "headers": [{"name": "Content-Type", "value": response_content_type}],
            "body": response_body,
        },
        "meta": {"environment": "production", "incoming": True, "source": "198.51.100.23", "sourcePort": "40123",
                 "destination": "10.0.0.5", "destinationPort": "443", "metloSource": "python/flask"},
    }


def fragment_bomb(levels: int) -> str:
    """``query { ...F0 } fragment F0 on Q { ...F1 ...F1 } … fragment Fn on Q { a }``: each level
    doubles the selections a naive expansion walks (2**levels for ``levels`` fragments); plain fields,
    no arguments, so a budget that counts only argument leaves never stops it."""
    parts = ["query { ...F0 }"]
    for level in range(levels):
        parts.append(f"fragment F{level} on Q {{ ...F{level + 1} ...F{level + 1} }}")
    parts.append(f"fragment F{levels} on Q {{ a }}")
    return " ".join(parts)


def wide_fragment_bomb(levels: int, width: int = 8) -> str:
    """Each fragment spreads the next ``width`` times: ``width**levels`` selections naively."""
    parts = ["query { ...W0 }"]
    for level in range(levels):
        parts.append(f"fragment W{level} on Q {{ {' '.join([f'...W{level + 1}'] * width)} }}")
    parts.append(f"fragment W{levels} on Q {{ b }}")
    return " ".join(parts)


def many_operations(count: int) -> str:
    """Many operations sharing one large fragment: expanded once per operation."""
    fields = " ".join(f"f{i}(v: {i})" for i in range(400))
    ops = " ".join(f"query Q{i} {{ ...Big }}" for i in range(count))
    return f"{ops} fragment Big on Q {{ {fields} }}"


def _json_body(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _graphql(name: str, what: str, document: str, *, variables: dict | None = None) -> Hostile:
    body = _json_body({"query": document, "variables": variables or {}})
    headers = {"Content-Type": "application/json"}
    return Hostile(name, what, agent_trace(path="/graphql", method="POST", headers=headers, body=body,
                                           response_body='{"data": {}}'),
                   ("POST", "/graphql", headers, body.encode()))


def _graphql_get(name: str, what: str, document: str) -> Hostile:
    return Hostile(name, what, agent_trace(path="/search", query=[("query", document)],
                                           response_body='{"results": []}'),
                   ("GET", f"/search?query={quote(document)}", {}, None))


def _json_post(name: str, what: str, body: str, *, path: str = "/api/notes") -> Hostile:
    headers = {"Content-Type": "application/json"}
    return Hostile(name, what, agent_trace(path=path, method="POST", headers=headers, body=body,
                                           response_body=body if len(body) < 200 else '{"ok": true}'),
                   ("POST", path, headers, body.encode()))


def _text_post(name: str, what: str, body: str, content_type: str, *, path: str = "/api/import") -> Hostile:
    headers = {"Content-Type": content_type}
    return Hostile(name, what, agent_trace(path=path, method="POST", headers=headers, body=body),
                   ("POST", path, headers, body.encode()))


def deep_json(depth: int = 120, width: int = 4) -> str:
    """Objects and arrays nested ``depth`` levels deep (the routes refuse more than 128), each level
    with ``width`` siblings, and beside the chain an array of such leaves up to the body size."""
    node: object = "leaf"
    for level in range(depth):
        node = {f"k{level}": node, **{f"s{i}": [i, "x" * 8] for i in range(width)}} if level % 2 else [node, level]
    filler = ["deep-" + str(i) for i in range(BODY_BYTES // 16)]
    body = _json_body({"chain": node, "filler": filler})
    while len(body) > BODY_BYTES:
        filler = filler[: len(filler) * 9 // 10]
        body = _json_body({"chain": node, "filler": filler})
    return body


def wide_json_object() -> str:
    """One object with as many keys as fit in the body (~60,000 distinct keys)."""
    keys: dict = {}
    size, index = 2, 0
    while size < BODY_BYTES - 40:
        key, value = f"field_{index}", f"v{index}"
        keys[key] = value
        size += len(key) + len(value) + 6
        index += 1
    return _json_body(keys)


def wide_json_array() -> str:
    """One array of ~220,000 small numbers."""
    count = BODY_BYTES // 4
    return _json_body([(i * 7919) % 1000 for i in range(count)])


def nested_arrays_of_objects() -> str:
    """Arrays of arrays of objects (50 × 25 × 8 items): the outer level past the array cap."""
    item = {f"a{i}": "1990-01-01" for i in range(4)}
    return _json_body([[[item] * 8] * 25] * 50)


PHONE_BAIT = "(000) 000-0000; "


def phone_bait_json(leaves: int = 1000) -> str:
    """``leaves`` string values of invalid phone-like text (``(000) 000-0000;`` repeated): every one
    is free text full of candidates for ``phonenumbers``."""
    per_leaf = max(1, (BODY_BYTES // leaves - 16) // len(PHONE_BAIT))
    return _json_body({f"note{i}": PHONE_BAIT * per_leaf for i in range(leaves)})


def phone_bait_text() -> str:
    return PHONE_BAIT * (BODY_BYTES // len(PHONE_BAIT))


def validator_bait_mixed(leaves: int = 1000) -> str:
    """Each leaf holds candidates for every validator: card-like digit runs, SSN shapes, IPv4/IPv6-like
    runs, long numbers, ``$`` (hash bait)."""
    chunk = "4111 1111 1111 1112 123-45-6789 10.0.0.999 ::ffff:1.2.3.4 +1 (212) 555-01 $2b$ "
    per_leaf = max(1, (BODY_BYTES // leaves - 16) // len(chunk))
    return _json_body({f"c{i}": chunk * per_leaf for i in range(leaves)})


def regex_bait_values() -> str:
    """Values shaped to make backtracking regexes work hard: long runs of separators and digits,
    ``a=`` chains, unclosed quotes and tags, digit groups split by single spaces."""
    baits = [
        "1 " * 4000, "1-" * 4000, "a=" * 4000, '"a": "' * 1500, "<a " * 3000, "name=\"x\"\n" * 800,
        "::" * 4000, "1." * 4000, "Bearer " * 1200, "eyJ" + "A" * 8000 + ".", "x" * 8190 + "@",
        "0" * 8000, "(0)" * 2500, "+1" * 4000, "ssn " * 2000, "$" * 8000,
    ]
    values = {f"b{i}": bait for i, bait in enumerate(baits)}
    body = _json_body(values)
    while len(body) < BODY_BYTES // 2:
        values = {**values, **{f"b{len(values) + i}": bait for i, bait in enumerate(baits)}}
        body = _json_body(values)
    return body


def form_body(fields: int = 60_000) -> str:
    return "&".join(f"f{i}=v{i}" for i in range(fields))[:BODY_BYTES]


def multipart_body(parts: int = 8000) -> tuple[str, str]:
    boundary = "----hostile"
    chunks = [f'--{boundary}\r\nContent-Disposition: form-data; name="p{i}"\r\n\r\n(000) 000-0000\r\n'
              for i in range(parts)]
    body = "".join(chunks)[:BODY_BYTES] + f"--{boundary}--\r\n"
    return body, f"multipart/form-data; boundary={boundary}"


def xml_body() -> str:
    item = "<note><phone>(000) 000-0000</phone><pass>x</pass><ip>10.0.0.1</ip></note>"
    return "<root>" + item * ((BODY_BYTES - 20) // len(item)) + "</root>"


def long_path() -> str:
    """A path of ~200,000 one-letter segments (an outsider chooses the path)."""
    return "/" + "/".join(["a"] * 200_000)


def many_headers(count: int = 2000) -> dict:
    return {f"X-H{i}": "(000) 000-0000; " * 20 for i in range(count)}


def many_query_params(count: int = 20_000) -> list[tuple[str, str]]:
    return [(f"q{i}", "(000) 000-0000") for i in range(count)]


def big_variables() -> dict:
    return {f"v{i}": {"inner": [PHONE_BAIT * 4] * 5} for i in range(2000)}


def corpus() -> list[Hostile]:
    """Every hostile item, cheapest to build first (a few MB in memory in all)."""
    items = [
        _graphql("fragment bomb 20", "fragment bomb, 20 levels (802 bytes)", fragment_bomb(20)),
        _graphql("fragment bomb 30", "fragment bomb, 30 levels", fragment_bomb(30)),
        _graphql("fragment bomb 40", "fragment bomb, 40 levels", fragment_bomb(40)),
        _graphql("wide fragment bomb", "fragments spreading the next 8 times, 12 levels", wide_fragment_bomb(12)),
        _graphql("many operations", "300 operations sharing one 400-field fragment", many_operations(300)),
        _graphql("big variables", "GraphQL variables: 2,000 objects of phone bait",
                 "query($v0: In) { f(a: $v0) }", variables=big_variables()),
        _graphql_get("query-string bomb", "GET /search?query=<fragment bomb, 20 levels>", fragment_bomb(20)),
        _graphql_get("query-string bomb 28", "GET /search?query=<fragment bomb, 28 levels>", fragment_bomb(28)),
        _json_post("deep JSON", "JSON 120 levels deep, 4 siblings a level", deep_json()),
        _json_post("wide JSON object", "one object of ~60,000 keys", wide_json_object()),
        _json_post("wide JSON array", "one array of ~220,000 numbers", wide_json_array()),
        _json_post("nested arrays", "50 × 25 × 8 arrays of objects", nested_arrays_of_objects()),
        _json_post("phone bait JSON", "1,000 leaves of '(000) 000-0000; ' text (1 MB)", phone_bait_json()),
        _text_post("phone bait text", "1 MB text body of '(000) 000-0000; '", phone_bait_text(), "text/plain"),
        _json_post("validator bait", "1,000 leaves with card, SSN, IP and hash candidates", validator_bait_mixed()),
        _json_post("regex bait", "values shaped against backtracking regexes", regex_bait_values()),
        _text_post("form fields", "60,000 form fields", form_body(), "application/x-www-form-urlencoded"),
        _text_post("multipart parts", "8,000 multipart parts of phone bait", *multipart_body()),
        _text_post("XML", "1 MB of XML with phone, password and IP elements", xml_body(), "application/xml"),
    ]
    path = long_path()
    items.append(Hostile("long path", "a path of 200,000 segments", agent_trace(path=path), ("GET", path, {}, None)))
    headers = many_headers()
    items.append(Hostile("many headers", "2,000 request headers of phone bait", agent_trace(path="/api/h", headers=headers),
                         ("GET", "/api/h", headers, None)))
    query = many_query_params()
    items.append(Hostile("many query parameters", "20,000 query parameters",
                         agent_trace(path="/api/q", query=query),
                         ("GET", "/api/q?" + "&".join(f"{k}={quote(v)}" for k, v in query), {}, None)))
    return items


def many_hosts(count: int = 300) -> list[dict]:
    """``count`` traces with distinct forged ``Host`` values (the Flask agent takes the host from the
    client's ``Host`` header): one host and one endpoint each (a documented limit)."""
    return [agent_trace(host=f"forged-{i}.example.net", path="/login") for i in range(count)]


def legitimate(index: int, *, host: str = "shop.example.com") -> dict:
    """An ordinary trace of a new endpoint: what the corpus must not delay."""
    return agent_trace(host=host, path=f"/api/legit{index}/orders", response_body=_json_body(
        {"id": index, "email": f"buyer{index}@example.com", "total": 12.5}))
