"""Reading sampled stored traces: bodies, headers and credentials as a generated spec describes them."""
from __future__ import annotations

import orjson

from inventory.ingest.classes import UNCLASSIFIED_HEADERS
from inventory.ingest.credentials import (
    AUTH_SCHEMES,
    SCHEME_HEADERS,
    cookie_header_credentials,
    cookie_pairs,
    credential_key,
    is_auth_header,
    is_auth_param,
)
from inventory.ingest.fields import media_type, parse_body
from inventory.ingest.traces import META_CREDENTIAL_COOKIES

# Request and response headers that say nothing about the API (transport, caching, browsers,
# proxies, tracing), beside ingestion's infrastructure headers.
BORING_HEADERS = UNCLASSIFIED_HEADERS | frozenset({
    "cookie", "set-cookie", "authorization", "proxy-authorization", "origin", "referer", "forwarded", "x-real-ip",
    "upgrade-insecure-requests", "if-none-match", "if-modified-since", "dnt", "priority", "te", "upgrade",
    "x-requested-with", "cdn-loop", "true-client-ip", "traceparent", "tracestate", "x-amzn-trace-id",
    "x-cloud-trace-context", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-sampled", "x-b3-parentspanid",
    "strict-transport-security", "x-content-type-options", "x-frame-options", "x-xss-protection",
    "content-security-policy", "referrer-policy", "permissions-policy", "access-control-allow-origin",
    "access-control-allow-credentials", "access-control-allow-headers", "access-control-allow-methods",
    "access-control-expose-headers", "access-control-max-age", "alt-svc", "nel", "report-to", "x-powered-by",
    "x-runtime", "accept-ranges", "content-language", "content-disposition", "location", "x-envoy-upstream-service-time",
})
_BORING_PREFIXES = ("sec-", "x-forwarded-", "cf-", "x-amz-cf-", "x-cache", "x-envoy-", "x-vercel-", "fly-")


def boring_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in BORING_HEADERS or lowered.startswith(_BORING_PREFIXES) or is_auth_header(lowered)


def header(pairs: list, name: str) -> str | None:
    for pair in pairs or ():
        if isinstance(pair, dict) and str(pair.get("name", "")).lower() == name:
            return str(pair.get("value", ""))
    return None


def body(text: str, headers: list) -> tuple[str, str, object]:
    """(media type, kind, parsed) of a stored body: kinds of ``inventory.ingest.fields.parse_body``.
    JSON is parsed without ingestion's depth check: the schema walk stops at its own depth."""
    media = media_type(header(headers, "content-type"))
    if text and ("json" in media or text.lstrip()[:1] in ("{", "[")) and not media.startswith("multipart/"):
        try:
            return media, "json", orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    kind, parsed = parse_body(text or "", media)
    return media, kind, parsed


def credentials(headers: list, params: list, meta: dict | None = None) -> list[tuple[str, dict]]:
    """(scheme component name, security scheme) for each credential a request carried (its own
    channel, DECISIONS §5; values are redacted in storage, the scheme word and names are kept).
    Only credential cookies count (DECISIONS §4): each is an ``apiKey`` scheme ``in: cookie`` named
    after it; consent, language or analytics cookies are none. ``meta``: the stored trace's meta,
    whose ``credentialCookies`` names the cookies found credentials by their values at acceptance."""
    known = set((meta or {}).get(META_CREDENTIAL_COOKIES) or ()) if isinstance(meta, dict) else set()
    found: list[tuple[str, dict]] = []
    for pair in headers or ():
        name, value = str(pair.get("name", "")), str(pair.get("value", "") or "")
        if not value or not is_auth_header(name):
            continue
        key = credential_key(name)
        if key in SCHEME_HEADERS:
            word, space, rest = value.strip().partition(" ")
            word = word.lower() if space and rest.strip() and word.lower() in AUTH_SCHEMES else ""
            if word in ("bearer", "jwt"):
                scheme = {"type": "http", "scheme": "bearer"}
                if word == "jwt":
                    scheme["bearerFormat"] = "JWT"
                found.append(("bearerAuth" if word == "bearer" else "jwtAuth", scheme))
            elif word in ("basic", "digest"):
                found.append((f"{word}Auth", {"type": "http", "scheme": word}))
            else:
                found.append(("authorizationHeader", {
                    "type": "apiKey", "in": "header", "name": "Authorization",
                    "description": "A credential in the Authorization header" + (f" (scheme word '{word}')" if word else
                                                                                " without a scheme word") + ".",
                }))
        elif key == "cookie":
            found.extend(_cookie_schemes(value, known))
        else:
            found.append((f"apiKeyHeader_{_component(name)}", {"type": "apiKey", "in": "header", "name": name}))
    for pair in params or ():
        name, value = str(pair.get("name", "")), pair.get("value")
        if value not in (None, "") and is_auth_param(name):
            found.append((f"apiKeyQuery_{_component(name)}", {"type": "apiKey", "in": "query", "name": name}))
    return found


def _cookie_schemes(value: str, known: set[str]) -> list[tuple[str, dict]]:
    names = cookie_header_credentials(value)
    if names is None:  # stored before cookie names were kept: one scheme standing for them
        return [("cookieAuth", {
            "type": "apiKey", "in": "cookie", "name": "session",
            "description": "Requests authenticate with cookies (their names were not kept in the stored traces, "
                           "so 'session' stands for them).",
        })]
    names = sorted({*names, *(n for n, v in cookie_pairs(value) or () if n in known and v)})
    return [(f"cookieAuth_{_component(n)}", {"type": "apiKey", "in": "cookie", "name": n}) for n in names]


def _component(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:64] or "key"
