"""Credentials in traffic: which headers, parameters and fields carry them (DECISIONS §4).

Used four ways: to decide whether a request was authenticated
(``isAuthenticatedDetected``), to spot Basic authentication, to redact the
credential channel of a batch as it is accepted (``staging.py``), and to redact
credentials from stored traces (and mask them for read keys, ``core/masking.py``)
whatever the endpoint's trace-capture setting.

Two notions, deliberately distinct:

* *counts as authentication* — ``AUTH_HEADERS`` and ``AUTH_QUERY_PARAMS``, the
  credential channel of DECISIONS §4 (Authorization, cookies, API-key headers and
  query parameters). Every name there is also redacted.
* *is redacted* — :func:`is_credential_name` (one rule for JSON keys, form fields,
  multipart part names, GraphQL arguments, ``key=value`` text and the extra
  keys of the testing environment), plus, per channel, :func:`is_credential_header`
  and :func:`is_credential_param`. These are wider than the authentication lists on
  purpose: ``Idempotency-Key``, ``X-CSRF-Token`` or an OAuth ``code=`` are
  redacted, but an unauthenticated request carrying one must still make the
  endpoint ``isAuthenticatedDetected: false``.

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
    "x-session-token", "x-amz-security-token", "x-goog-api-key", "ocp-apim-subscription-key", "x-key",
})
# Query parameters that authenticate a request (the credential channel; compared on credential_key).
AUTH_QUERY_PARAMS = frozenset({
    "api_key", "apikey", "api-key", "key", "access_token", "token", "auth", "auth_token", "session_token",
    "x-api-key", "client_secret", "sig", "signature",
})
# Query parameters redacted that do not authenticate the request itself: the OAuth authorization
# code (``?code=``, exchanged for a token) would otherwise count a callback as authenticated.
REDACTED_ONLY_QUERY_PARAMS = frozenset({"code"})
# Headers of the form "<scheme> <credentials>": redaction keeps a known scheme word
# (``Bearer [REDACTED]``), so Basic authentication and the header's shape stay known.
SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
AUTH_SCHEMES = frozenset({
    "basic", "bearer", "digest", "negotiate", "ntlm", "token", "hoba", "mutual", "oauth", "dpop", "hawk",
    "jwt", "apikey", "api-key", "aws4-hmac-sha256", "scram-sha-1", "scram-sha-256", "vapid", "gnap",
})

# Field names (JSON keys, form and query names, GraphQL arguments) whose values are credentials.
# Compared on the compact name (:func:`_compact`): case-folded, "-", "_", "." and spaces removed.
_CREDENTIAL_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
                     "privatekey", "credential", "authorization", "sessionid", "cookie", "signature")
# Ordinary words containing a credential word: removed before the word test (``tokenizer``, ``secretary``).
_BENIGN_WORDS = ("tokeniz", "tokenis", "secretar")
_CREDENTIAL_EXACT = frozenset({"pwd", "pw", "pass", "passcode", "otp", "pin", "cvv", "cvc", "sig", "auth", "hmac"})
# After an ``x`` extension prefix (``X-Key``, ``xKey``, ``X-Pass``) these are credentials too; a bare
# ``key`` field is usually a dictionary key and is not.
_X_EXACT = _CREDENTIAL_EXACT | {"key"}
# Header-name tokens (split on "-"/"_") that make a custom header a credential header.
_HEADER_TOKENS = frozenset({"key", "auth", "session", "jwt"})
# Every credential name (compact) contains one of these: a text without any (lower-cased, ASCII,
# no escapes) holds no credential name, so the field walk and the named patterns can be skipped.
CREDENTIAL_HINTS = ("pass", "pw", "secret", "token", "key", "credential", "auth", "session", "cookie", "sig",
                    "otp", "pin", "cvv", "cvc", "hmac")
_SEPARATORS = str.maketrans("", "", "-_. ")
# ``key[]``, ``key[0]`` → ``key``; ``user[password]`` → ``password`` (form and query array syntax).
_BRACKETS = re.compile(r"^(.*?)\[([^\[\]]{0,64})\]$")


@lru_cache(maxsize=16384)
def credential_key(name: str) -> str:
    """A header, parameter or field name as compared with the credential lists: percent-escapes
    decoded, NFKC-folded, case-folded, stripped (JSON escapes were decoded by the JSON parser);
    a trailing array subscript names the field it belongs to (``key[]``, ``key[0]`` → ``key``,
    ``user[password]`` → ``password``)."""
    if "%" in name:
        name = unquote(name)
    if not name.isascii():
        name = unicodedata.normalize("NFKC", name)
    name = name.strip().casefold()
    for _ in range(2):  # bounded: key[0][] → key
        match = _BRACKETS.match(name) if name.endswith("]") else None
        if match is None:
            break
        inner = match.group(2).strip()
        name = match.group(1).strip() if not inner or inner.isdigit() else inner
    return name


def _compact(name: str) -> str:
    return credential_key(name).translate(_SEPARATORS)


def may_hold_credential_names(text: str) -> bool:
    """False only when no key, field or argument in ``text`` can be a credential name (cheap
    substring tests; escapes, percent-escapes and non-ASCII text always answer True)."""
    if "\\u" in text or "%" in text or not text.isascii():
        return True
    lowered = text.lower()
    return any(hint in lowered for hint in CREDENTIAL_HINTS)


def is_auth_header(name: str) -> bool:
    """A header of the credential channel (``AUTH_HEADERS``)."""
    return credential_key(name) in AUTH_HEADERS


def is_auth_param(name: str) -> bool:
    """A query parameter of the credential channel (``AUTH_QUERY_PARAMS``)."""
    return credential_key(name) in AUTH_QUERY_PARAMS


@lru_cache(maxsize=8192)
def is_credential_header(name: str) -> bool:
    """A header redacted in stored traces and masked for read keys: the credential channel
    (``AUTH_HEADERS``), names that are credential names (:func:`is_credential_name`: ``X-Pass``,
    ``X-CSRF-Token``, ``X-Session-Id``) and custom headers with a ``key``, ``auth``, ``session`` or
    ``jwt`` token (``X-Key``, ``X-Auth-User``, ``Idempotency-Key``). ``X-Client-Id``, ``X-Author``,
    ``X-Keyword`` are not. Only ``AUTH_HEADERS`` counts as authentication."""
    key = credential_key(name)
    if key in AUTH_HEADERS or is_credential_name(key):
        return True
    return any(token in _HEADER_TOKENS for token in key.replace("_", "-").split("-"))


@lru_cache(maxsize=16384)
def is_credential_name(name: str) -> bool:
    """Whether a body field, form field, multipart part, GraphQL argument or query parameter of
    this name holds a credential: an exact short name (``pass``, ``pwd``, ``pin``, ``otp``, ``cvv``,
    ``sig``, ``hmac``…, also after an ``x`` prefix, where ``key`` counts too: ``xKey``, ``X-Pass``)
    or a name containing a credential word (``password``, ``secret``, ``token``, ``apiKey``,
    ``credentials``, ``sessionid``…) other than inside an ordinary word (``tokenizer``,
    ``secretary``). ``keyword``, ``monkey``, ``passenger``, ``author`` are not credentials."""
    compact = _compact(name)
    if compact in _CREDENTIAL_EXACT or (compact[:1] == "x" and compact[1:] in _X_EXACT):
        return True
    for benign in _BENIGN_WORDS:
        if benign in compact:
            compact = compact.replace(benign, "")
    return any(word in compact for word in _CREDENTIAL_WORDS)


def is_credential_param(name: str) -> bool:
    """A query parameter redacted in stored traces and masked in URLs: the credential channel,
    credential names and ``REDACTED_ONLY_QUERY_PARAMS`` (``code``)."""
    return is_auth_param(name) or is_credential_name(name) or credential_key(name) in REDACTED_ONLY_QUERY_PARAMS


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


# Credentials inside free text (XML, HTML, NDJSON, invalid or too deeply nested JSON, multipart
# bodies, plain text). Named values are found by shape and kept when their name is a credential
# name (:func:`is_credential_name`): ``key=value``, ``key: value``, ``"key": "value"``,
# ``<key>value</key>`` and multipart parts ``name="key"``. Every pattern is linear: bounded
# repetitions and alternatives that cannot match the same character.
_NAMED_PATTERNS = (
    # key=value, key: value, "key": "value", \"key\": \"value\" (JSON inside a JSON string), key='v'
    re.compile(r"""(?<![\w.\[\]-])\\?["']?([A-Za-z_][\w.\[\]-]{0,63})\\?["']?[ \t]{0,16}[:=][ \t]{0,16}"""
               r"""(?:"((?:[^"\\\r\n]|\\.){0,4096})"|\\"((?:[^"\\\r\n]|\\[^"\r\n]){0,4096})\\"|'([^'\r\n]{0,4096})'"""
               r"""|([^"'&\s,;<>{}()\[\]\\][^"'&\s,;<>{}()\[\]]{0,4095}))"""),
    # <key attr="…">value</key>, <ns:key>value
    re.compile(r"<(?:[\w.-]{1,32}:)?([A-Za-z_][\w.-]{0,63})\b[^<>]{0,256}>([^<]{1,4096})"),
    # multipart: Content-Disposition: form-data; name="key"  … blank line … value
    re.compile(r"\bname=\"([^\"\r\n]{1,128})\"[^\r\n]{0,256}(?:\r?\n[^\r\n]{1,512}){0,8}\r?\n\r?\n([^\r\n]{1,4096})"),
)
# Credentials recognised by their own shape.
_TEXT_PATTERNS = (
    re.compile(r"(?i)(\b(?:bearer|basic|token)\s+)([A-Za-z0-9._~+/=-]{6,})"),
    re.compile(r"()(eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)"),
    re.compile(r"()\b((?:AKIA|ASIA)[0-9A-Z]{16}|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|gh[pousr]_[A-Za-z0-9]{30,}"
               r"|AIza[0-9A-Za-z_-]{35}|xox[abposre]-[0-9A-Za-z-]{10,})"),
    # the password of a URL's userinfo, any scheme: postgres://user:password@host
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]{0,31}://[^\s:/@?#]{0,256}:)([^\s/@?#]{1,256})(?=@)"),
)


def _named_sub(match: re.Match, nested: bool = False) -> str:
    """The match with its value group replaced by ``[REDACTED]`` (quotes kept) when its name is a
    credential name. Otherwise unchanged, except that a quoted value that itself holds named values
    (JSON inside a JSON string: ``"payload": "{\\"password\\": …}"``) is scrubbed once more."""
    group = next(g for g in range(2, (match.lastindex or 2) + 1) if match.group(g) is not None)
    if is_credential_name(match.group(1)):
        return group_replaced(match, group, REDACTED)
    value = match.group(group)
    if not nested and group <= 3 and len(value) > 6 and match.re is _NAMED_PATTERNS[0]:
        return group_replaced(match, group, _NAMED_PATTERNS[0].sub(_nested_sub, value))
    return match.group(0)


def group_replaced(match: re.Match, group: int, value: str) -> str:
    """The text of ``match`` with its ``group`` replaced by ``value``."""
    start, end = match.span(group)
    offset = match.start(0)
    return match.group(0)[:start - offset] + value + match.group(0)[end - offset:]


def _nested_sub(match: re.Match) -> str:
    return _named_sub(match, nested=True)


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
    for pattern in _NAMED_PATTERNS if may_hold_credential_names(text) else ():
        new = pattern.sub(_named_sub, text)
        if new != text:
            changed = True
            text = new
    for pattern in _TEXT_PATTERNS:
        new = pattern.sub(lambda m: m.group(1) + REDACTED, text)
        if new != text:
            changed = True
            text = new
    return text, changed
