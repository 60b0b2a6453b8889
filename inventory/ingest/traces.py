"""The internal shape of one trace, built from what Metlo agents send (DECISIONS §9).

Agents are lenient and so are we: ``url.host`` may carry a scheme and a port,
ports may be strings, numbers or null, header and parameter values may be
numbers or null, bodies are strings (an object is accepted and re-serialised).
Structural validation already happened at accept time (``validation.py``);
this module only coerces.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import orjson

from core.enums import DataSection, SHORT_SECTION

from inventory.patterns.normalize import host_normalize, host_scheme, path_normalize
from inventory.patterns.segments import pattern_renumber

from .addresses import address_normalize
from .decrypt import trace_decrypt
from .staging import staged_classes

# Methods that make endpoints (SPEC's enum); other verbs are counted as skipped.
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
META_KEYS = ("environment", "incoming", "source", "sourcePort", "destination", "destinationPort",
             "originalSource", "metloSource")


@dataclass(slots=True)
class Trace:
    """One request/response as the pipeline analyses it."""

    index: int
    received_at: datetime
    host: str
    scheme: str | None
    method: str
    path: str
    endpoint_path: str | None
    query: list[tuple[str, str]]
    req_headers: list[tuple[str, str]]
    req_body: str
    status: int
    resp_headers: list[tuple[str, str]]
    resp_body: str
    meta: dict
    processed: "Processed | None" = None
    # v2: headers/bodies were withheld (redacted) or encrypted by the agent.
    withheld: bool = False
    partial: bool = False
    auth_provided: bool | None = None
    auth_type: str | None = None
    graphql_hint: bool = False
    # meta.source as an IP address (first entry of an X-Forwarded-For list), if it is one.
    source_address: str | None = None
    # Classes of credential values redacted at acceptance, by (section, name) (staging.py).
    staged: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def header(self, name: str, *, response: bool = False) -> str | None:
        """The first value of a header (case-insensitive)."""
        for key, value in self.resp_headers if response else self.req_headers:
            if key.lower() == name:
                return value
        return None


@dataclass(slots=True)
class Processed:
    """A v2 agent's pre-computed findings, keyed by (section, dataPath)."""

    data_types: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    classes: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    request_content_type: str = ""
    response_content_type: str = ""


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


def _pairs(raw: object) -> list[tuple[str, str]]:
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        if isinstance(item, dict):
            name = item.get("name")
            if isinstance(name, str) and name:
                out.append((name, _text(item.get("value"))))
    return out


def _port(value: object) -> str | None:
    if value is None or value == "":
        return None
    return _text(value)[:16]


def agent_key(key: str) -> tuple[str, str] | None:
    """``reqBody.user.tags.[]`` -> (REQUEST_BODY, ``user.tags[]``); ``resBody`` -> (RESPONSE_BODY, "")."""
    prefix, _, rest = key.partition(".")
    section = SHORT_SECTION.get(prefix)
    if section is None:
        return None
    rest = rest.replace(".[]", "[]")
    if section in (DataSection.REQUEST_HEADER, DataSection.RESPONSE_HEADER):
        rest = rest.lower()
    return section, rest[:1024]


def _processed(raw: object) -> Processed | None:
    if not isinstance(raw, dict):
        return None
    out = Processed()
    for source, target in ((raw.get("dataTypes"), out.data_types), (raw.get("sensitiveDataDetected"), out.classes)):
        if isinstance(source, dict):
            for key, names in source.items():
                parsed = agent_key(key) if isinstance(key, str) else None
                if parsed is not None and isinstance(names, list):
                    target[parsed] = [n for n in names if isinstance(n, str)]
    out.request_content_type = _text(raw.get("requestContentType"))[:255]
    out.response_content_type = _text(raw.get("responseContentType"))[:255]
    return out


def trace_from_agent(raw: dict, index: int, *, processed: bool, received_at: datetime) -> Trace:
    """Build a :class:`Trace` from a validated agent trace (raw v1 or processed v2)."""
    if processed and isinstance(raw.get("encryption"), dict):
        raw = trace_decrypt(raw, index)  # in clear and staged, or TraceUndecryptable (a skipped ValueError)
    request = raw.get("request") or {}
    response = raw.get("response") or {}
    url = request.get("url") or {}
    req_headers = _pairs(request.get("headers"))
    raw_host = url.get("host") or ""
    if not host_normalize(raw_host):
        raw_host = next((v for k, v in req_headers if k.lower() == "host"), "")
    meta_in = raw.get("meta") if isinstance(raw.get("meta"), dict) else {}
    meta = {k: meta_in.get(k) for k in META_KEYS if k in meta_in}
    for key in ("sourcePort", "destinationPort"):
        if key in meta:
            meta[key] = _port(meta[key])
    for key in ("source", "destination", "originalSource", "environment", "metloSource"):
        if key in meta and meta[key] is not None:
            meta[key] = _text(meta[key])[:255]

    raw_path = url.get("path") or "/"
    query = _pairs(url.get("parameters"))
    if "?" in raw_path and not query:
        from urllib.parse import parse_qsl

        query = parse_qsl(raw_path.split("?", 1)[1].split("#", 1)[0], keep_blank_values=True)

    endpoint_path = url.get("endpointPath") or raw.get("endpointPath")
    processed_raw = raw.get("processedTraceData") if processed else None
    if endpoint_path is None and isinstance(processed_raw, dict):
        endpoint_path = processed_raw.get("endpointPath")

    status = response.get("status")
    trace = Trace(
        index=index,
        received_at=received_at,
        host=host_normalize(raw_host),
        scheme=host_scheme(raw_host),
        method=_text(request.get("method")).strip().upper(),
        path=path_normalize(_text(raw_path)),
        endpoint_path=pattern_renumber(endpoint_path) if isinstance(endpoint_path, str) and endpoint_path else None,
        query=query,
        req_headers=req_headers,
        req_body=_text(request.get("body")),
        status=int(status) if not isinstance(status, bool) else 0,
        resp_headers=_pairs(response.get("headers")),
        resp_body=_text(response.get("body")),
        meta=meta,
        source_address=address_normalize(meta.get("source")),
        staged=staged_classes(raw),
    )
    if processed:
        trace.processed = _processed(processed_raw)
        encrypted = isinstance(raw.get("encryption"), dict)
        trace.withheld = bool(raw.get("redacted", True)) or encrypted
        if encrypted:
            # Encrypted with a key we do not hold: names and values are ciphertext.
            trace.query, trace.req_headers, trace.resp_headers = [], [], []
            trace.req_body = trace.resp_body = ""
        trace.partial = raw.get("analysisType") == "partial"
        session = raw.get("sessionMeta") if isinstance(raw.get("sessionMeta"), dict) else {}
        provided = session.get("authenticationProvided")
        trace.auth_provided = provided if isinstance(provided, bool) else None
        auth_type = session.get("authType")
        trace.auth_type = auth_type.lower() if isinstance(auth_type, str) else None
        graphql_paths = (processed_raw or {}).get("graphqlPaths") if isinstance(processed_raw, dict) else None
        if graphql_paths is None:
            graphql_paths = raw.get("graphqlPaths")
        trace.graphql_hint = bool(graphql_paths)
    return trace
