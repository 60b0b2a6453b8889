"""Credentials in traffic: which headers, parameters and fields carry them (DECISIONS §4).

Used four ways: to decide whether a request was authenticated
(``isAuthenticatedDetected``), to spot Basic authentication, to redact the
credential channel of a batch as it is accepted (``staging.py``), and to redact
credentials from stored traces whatever the endpoint's trace-capture setting.
``AUTH_HEADERS`` and ``AUTH_QUERY_PARAMS`` are the one definition of the
credential channel: whatever authenticates a request is also redacted.

Names are compared as the server would read them (:func:`credential_key`):
JSON escapes already decoded by the parser (``"\u0070assword"`` is
``password``), percent-escapes decoded, Unicode compatibility forms folded
(NFKC: fullwidth ``ｐａｓｓｗｏｒｄ``), case-folded.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from urllib.parse import unquote

REDACTED = "[REDACTED]"

# Headers that authenticate a request (the credential channel; compared on credential_key).
AUTH_HEADERS = frozenset({
    "authorization", "proxy-authorization", "cookie",
    "x-api-key", "api-key", "apikey", "x-apikey", "x-auth-token", "x-access-token", "x-token",
    "x-session-token", "x-amz-security-token", "x-goog-api-key", "ocp-apim-subscription-key",
})
# Query parameters that authenticate a request (the credential channel; compared on credential_key).
AUTH_QUERY_PARAMS = frozenset({
    "api_key", "apikey", "api-key", "key", "access_token", "token", "auth", "auth_token", "session_token",
    "x-api-key", "client_secret", "sig", "signature",
})
# Headers of the form "<scheme> <credentials>": redaction keeps a known scheme word
# (``Bearer [REDACTED]``), so Basic authentication and the header's shape stay known.
SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
AUTH_SCHEMES = frozenset({
    "basic", "bearer", "digest", "negotiate", "ntlm", "token", "hoba", "mutual", "oauth", "dpop", "hawk",
    "jwt", "apikey", "api-key", "aws4-hmac-sha256", "scram-sha-1", "scram-sha-256", "vapid", "gnap",
})

_CREDENTIAL_HEADER = re.compile(r"api[-_]?key|token|secret|passw|auth|session|cookie|signature|credential", re.I)
# Field names (JSON keys, form and query names) whose values are credentials.
# Compared on the lower-cased name with "-" and "_" removed.
_CREDENTIAL_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
                     "privatekey", "credential", "authorization", "sessionid", "cookie", "signature")
_CREDENTIAL_EXACT = frozenset({"pwd", "pass", "otp", "pin", "cvv", "cvc", "sig", "auth"})


@lru_cache(maxsize=16384)
def credential_key(name: str) -> str:
    """A header, parameter or field name as compared with the credential lists: percent-escapes
    decoded, NFKC-folded, case-folded, stripped (JSON escapes were decoded by the JSON parser)."""
    if "%" in name:
        name = unquote(name)
    if not name.isascii():
        name = unicodedata.normalize("NFKC", name)
    return name.strip().casefold()


def is_auth_header(name: str) -> bool:
    """A header of the credential channel (``AUTH_HEADERS``)."""
    return credential_key(name) in AUTH_HEADERS


def is_auth_param(name: str) -> bool:
    """A query parameter of the credential channel (``AUTH_QUERY_PARAMS``)."""
    return credential_key(name) in AUTH_QUERY_PARAMS


@lru_cache(maxsize=8192)
def is_credential_header(name: str) -> bool:
    """A header redacted in stored traces: the credential channel and token/secret-like names."""
    key = credential_key(name)
    return key in AUTH_HEADERS or bool(_CREDENTIAL_HEADER.search(key))


@lru_cache(maxsize=8192)
def is_credential_name(name: str) -> bool:
    """Whether a body field, form field or query parameter of this name holds a credential."""
    compact = credential_key(name).replace("-", "").replace("_", "")
    if compact in _CREDENTIAL_EXACT:
        return True
    return any(word in compact for word in _CREDENTIAL_WORDS)


def is_credential_param(name: str) -> bool:
    """A query parameter redacted in stored traces: the credential channel and credential-like names."""
    return is_auth_param(name) or is_credential_name(name)


def credential_redact(name: str, value: str) -> str:
    """The redacted form of a credential header's value: ``Bearer [REDACTED]`` for a known scheme
    in an Authorization-type header, else ``[REDACTED]``. Idempotent."""
    if credential_key(name) in SCHEME_HEADERS:
        word, sep, rest = value.strip().partition(" ")
        if sep and rest.strip() and word.lower() in AUTH_SCHEMES:
            return f"{word} {REDACTED}"
    return REDACTED


def request_has_credentials(headers: list[tuple[str, str]], query: list[tuple[str, str]]) -> bool:
    """An ``Authorization`` header, a cookie, an API-key header or an API-key query parameter."""
    for name, value in headers:
        if value and is_auth_header(name):
            return True
    for name, value in query:
        if value and is_auth_param(name):
            return True
    return False


def names_have_credentials(header_names, query_names) -> bool:
    """The same test on names only (v2 agents report names, not values)."""
    return any(is_auth_header(n) for n in header_names) or any(is_auth_param(n) for n in query_names)


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


_JSON_ESCAPE = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})")


def _unescape(match: re.Match) -> str:
    if match.group(3):
        code = int(match.group(3), 16)
        # Control characters (NUL above all) and lone surrogates stay escaped: PostgreSQL stores neither.
        return match.group(0) if code < 0x20 or 0xD800 <= code <= 0xDFFF else chr(code)
    high, low = int(match.group(1), 16), int(match.group(2), 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def scrub_text(text: str) -> tuple[str, bool]:
    """Replace credential-looking substrings of free text; returns (text, changed).

    JSON-style ``\\uXXXX`` escapes are decoded first (``\\u0070assword=…`` is a password):
    when something is replaced the decoded text is returned, scrubbed.
    """
    if "\\u" in text:
        decoded = _JSON_ESCAPE.sub(_unescape, text)
        if decoded != text:
            scrubbed, changed = _scrub(decoded)
            if changed:
                return scrubbed, True
    return _scrub(text)


def _scrub(text: str) -> tuple[str, bool]:
    changed = False
    for pattern in _TEXT_PATTERNS:
        new = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        if new != text:
            changed = True
            text = new
    return text, changed
