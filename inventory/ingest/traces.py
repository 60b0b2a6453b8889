"""The internal shape of one trace, built from what Metlo agents send (DECISIONS §9).

:func:`trace_from_agent` is the one place where the worker turns a stored trace (an element of an
``IngestBatch`` row's ``traces``) into a :class:`Trace`. What is accepted and how each value is read
(hosts with schemes and ports, numeric strings, null or absent lists, scalar header values, bodies
given as JSON) are ``wire.py``'s rules, the same the accept-time check (``validation.py``) applies:
this module only reads, with those rules.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from core.enums import DataSection, SHORT_SECTION

from inventory.patterns.normalize import host_normalize, host_scheme, path_normalize
from inventory.patterns.segments import pattern_renumber

from .addresses import address_normalize
from .decrypt import trace_decrypt
from .staging import staged_classes, staged_client, staged_cookies, staged_marker
from .wire import (
    endpoint_path_read,
    graphql_paths_read,
    host_raw,
    short_text,
    method_read,
    pairs_read,
    port_read,
    query_read,
    status_number,
    text,
)

# Methods that make endpoints (SPEC's enum); other verbs are counted as skipped.
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
META_KEYS = ("environment", "incoming", "source", "sourcePort", "destination", "destinationPort",
             "originalSource", "metloSource")
# Meta keys the service adds (never taken from an agent: ``_meta`` keeps only ``META_KEYS``).
META_CREDENTIAL_COOKIES = "credentialCookies"
META_CLIENT = "clientFingerprint"


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
    # Cookies found credentials at acceptance, on their values (staging.py): their values are redacted now.
    credential_cookies: frozenset = frozenset()
    # A keyed hash of the request's credentials taken at acceptance (staging.py), None when it had none.
    client: str | None = None
    # The test-run marker as judged at acceptance (staging.py): "test", "forged" or None (no marker).
    marker: str | None = None

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
    out.request_content_type = short_text(raw.get("requestContentType"))
    out.response_content_type = short_text(raw.get("responseContentType"))
    return out


def trace_from_agent(raw: dict, index: int, *, processed: bool, received_at: datetime) -> Trace:
    """Build a :class:`Trace` from a stored agent trace (raw v1 or processed v2), read with ``wire.py``'s rules.

    Raises ``ValueError`` / ``TypeError`` / ``AttributeError`` for a trace that cannot be read
    (the pipeline skips it); the accept-time check lets none of those through.
    """
    if processed and isinstance(raw.get("encryption"), dict):
        raw = trace_decrypt(raw, index)  # in clear and staged, or TraceUndecryptable (a skipped ValueError)
    request = raw.get("request") or {}
    response = raw.get("response") or {}
    url = request.get("url") or {}
    raw_host = host_raw(url.get("host") or "", request.get("headers"))
    raw_path = text(url.get("path") or "/")
    processed_raw = raw.get("processedTraceData") if processed else None
    endpoint_path = endpoint_path_read(raw, url, processed_raw)
    meta = _meta(raw.get("meta"))
    trace = Trace(
        index=index,
        received_at=received_at,
        host=host_normalize(raw_host),
        scheme=host_scheme(raw_host),
        method=method_read(request.get("method")),
        path=path_normalize(raw_path),
        endpoint_path=pattern_renumber(endpoint_path) if isinstance(endpoint_path, str) and endpoint_path else None,
        query=query_read(raw_path, pairs_read(url.get("parameters"))),
        req_headers=pairs_read(request.get("headers")),
        req_body=text(request.get("body")),
        status=_status(response.get("status")),
        resp_headers=pairs_read(response.get("headers")),
        resp_body=text(response.get("body")),
        meta=meta,
        source_address=address_normalize(meta.get("source")),
        staged=staged_classes(raw),
        credential_cookies=staged_cookies(raw),
        client=staged_client(raw),
        marker=staged_marker(raw),
    )
    # Kept with the stored trace (names and a keyed hash only): which cookies were credentials, and
    # whose credentials these were, for readers of stored traces (generated specs, test generation).
    if trace.credential_cookies:
        meta[META_CREDENTIAL_COOKIES] = sorted(trace.credential_cookies)
    if trace.client:
        meta[META_CLIENT] = trace.client
    if processed:
        _read_processed(trace, raw, processed_raw)
    return trace


def _meta(meta_in: object) -> dict:
    """The meta keys the analysis reads: ports as short text, names as text (at most 255 characters)."""
    if not isinstance(meta_in, dict):
        return {}
    meta = {k: meta_in.get(k) for k in META_KEYS if k in meta_in}
    for key in ("sourcePort", "destinationPort"):
        if key in meta:
            meta[key] = port_read(meta[key])
    for key in ("source", "destination", "originalSource", "environment", "metloSource"):
        if key in meta and meta[key] is not None:
            meta[key] = short_text(meta[key])
    return meta


def _status(value: object) -> int:
    number = status_number(value)
    if number is None:
        raise ValueError("response.status is not a number")
    return int(number)


def _read_processed(trace: Trace, raw: dict, processed_raw: object) -> None:
    """A processed (v2) trace's extras: findings, withheld or encrypted parts, session, GraphQL hint."""
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
    trace.graphql_hint = bool(graphql_paths_read(raw, processed_raw))
