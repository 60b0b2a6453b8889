"""Credentials in traffic: which headers, parameters and fields carry them (DECISIONS §4).

Used three ways: to decide whether a request was authenticated
(``isAuthenticatedDetected``), to spot Basic authentication, and to redact
credentials from stored traces whatever the endpoint's trace-capture setting.
"""
from __future__ import annotations

import re
from functools import lru_cache

REDACTED = "[REDACTED]"

# Headers that authenticate a request.
AUTH_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie",
    "x-api-key", "api-key", "apikey", "x-apikey", "x-auth-token", "x-access-token", "x-token",
    "x-session-token", "x-amz-security-token", "x-goog-api-key", "ocp-apim-subscription-key",
})
# Query parameters that authenticate a request.
AUTH_QUERY_PARAMS = frozenset({
    "api_key", "apikey", "api-key", "key", "access_token", "token", "auth", "auth_token", "session_token",
    "x-api-key", "client_secret", "sig", "signature",
})

_CREDENTIAL_HEADER = re.compile(r"api[-_]?key|token|secret|passw|auth|session|cookie|signature|credential", re.I)
# Field names (JSON keys, form and query names) whose values are credentials.
# Compared on the lower-cased name with "-" and "_" removed.
_CREDENTIAL_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
                     "privatekey", "credential", "authorization", "sessionid", "cookie", "signature")
_CREDENTIAL_EXACT = frozenset({"pwd", "pass", "otp", "pin", "cvv", "cvc", "sig", "auth"})


@lru_cache(maxsize=8192)
def is_credential_header(name: str) -> bool:
    lowered = name.lower()
    return lowered in AUTH_HEADERS or bool(_CREDENTIAL_HEADER.search(lowered))


@lru_cache(maxsize=8192)
def is_credential_name(name: str) -> bool:
    """Whether a body field, form field or query parameter of this name holds a credential."""
    compact = name.lower().replace("-", "").replace("_", "")
    if compact in _CREDENTIAL_EXACT:
        return True
    return any(word in compact for word in _CREDENTIAL_WORDS)


def request_has_credentials(headers: list[tuple[str, str]], query: list[tuple[str, str]]) -> bool:
    """An ``Authorization`` header, a cookie, an API-key header or an API-key query parameter."""
    for name, value in headers:
        if value and name.lower() in AUTH_HEADERS:
            return True
    for name, value in query:
        if value and name.lower() in AUTH_QUERY_PARAMS:
            return True
    return False


def names_have_credentials(header_names, query_names) -> bool:
    """The same test on names only (v2 agents report names, not values)."""
    return any(n.lower() in AUTH_HEADERS for n in header_names) or any(
        n.lower() in AUTH_QUERY_PARAMS for n in query_names
    )


def is_basic_auth(value: str | None) -> bool:
    return bool(value) and value.lstrip()[:6].lower() == "basic "


# Credentials inside free text (XML, HTML, plain text bodies we cannot parse by field).
_TEXT_PATTERNS = (
    re.compile(r"(?i)(\b(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)"
               r"\b[\"']?\s*[:=]\s*[\"']?)([^\"'&\s,;<>]+)"),
    re.compile(r"(?i)(<(?:password|passwd|secret|token|api[_-]?key|access[_-]?token)\b[^>]*>)([^<]+)"),
    re.compile(r"(?i)(\b(?:bearer|basic|token)\s+)([A-Za-z0-9._~+/=-]{6,})"),
    re.compile(r"()(eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)"),
    re.compile(r"()\b((?:AKIA|ASIA)[0-9A-Z]{16}|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|gh[pousr]_[A-Za-z0-9]{30,}"
               r"|AIza[0-9A-Za-z_-]{35}|xox[abposre]-[0-9A-Za-z-]{10,})"),
)


def scrub_text(text: str) -> tuple[str, bool]:
    """Replace credential-looking substrings of free text; returns (text, changed)."""
    changed = False
    for pattern in _TEXT_PATTERNS:
        new = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        if new != text:
            changed = True
            text = new
    return text, changed
