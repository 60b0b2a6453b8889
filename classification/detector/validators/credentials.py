"""Credentials: JSON Web Tokens, ``Authorization`` scheme values, vendor API keys, opaque secrets."""

from __future__ import annotations

import base64
import binascii
import json
import re
from functools import lru_cache

from .common import HAS_DIGIT, LETTER, TEXT_SCAN_LIMIT

__all__ = ["find_api_key", "find_jwt", "is_api_key_format", "is_auth_scheme_credential", "is_jwt", "is_opaque_secret"]

# ----------------------------------------------------------- authentication tokens

_B64URL_PART = r"[A-Za-z0-9_-]"
_JWT = re.compile(
    # JWS: header.payload.signature (signature empty for alg "none")
    rf"(eyJ{_B64URL_PART}{{4,}})\.({_B64URL_PART}+)\.({_B64URL_PART}*)"
    # JWE: header.encrypted_key.iv.ciphertext.tag (key empty for alg "dir")
    rf"|(eyJ{_B64URL_PART}{{4,}})\.({_B64URL_PART}*)\.({_B64URL_PART}+)"
    rf"\.({_B64URL_PART}+)\.({_B64URL_PART}+)"
)
_JWT_IN_TEXT = re.compile(
    rf"(?<![A-Za-z0-9_.-])(eyJ{_B64URL_PART}{{4,}})\.{_B64URL_PART}+\.{_B64URL_PART}*"
    rf"(?:\.{_B64URL_PART}+\.{_B64URL_PART}+)?(?![A-Za-z0-9_.-])"
)


@lru_cache(maxsize=1024)
def _jwt_header_ok(segment: str, encrypted: bool) -> bool:
    # Headers repeat across tokens (same alg/kid), hence the cache. It holds
    # headers only, which are not secret. Real headers are a few hundred bytes;
    # the cap also keeps json.loads away from pathological nesting.
    if len(segment) > 2048:
        return False
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        header = json.loads(raw)
    except (binascii.Error, ValueError):
        return False
    if not isinstance(header, dict) or not isinstance(header.get("alg"), str):
        return False
    return not encrypted or isinstance(header.get("enc"), str)


def is_jwt(s: str) -> bool:
    """True when the whole of ``s`` is a JSON Web Token (JWS with 3 parts or JWE with 5).

    Guarantees: base64url parts; the header decodes to a JSON object with a
    string ``alg`` (and ``enc`` for JWE). Signatures are not verified.
    """
    m = _JWT.fullmatch(s)
    if m is None:
        return False
    if m.group(1) is not None:
        return _jwt_header_ok(m.group(1), False)
    return _jwt_header_ok(m.group(4), True)


def find_jwt(s: str) -> bool:
    """True when ``s`` is or contains (within :data:`TEXT_SCAN_LIMIT`) a JWT.

    Guarantees: as :func:`is_jwt`; an embedded token (``"Bearer eyJ..."``, a
    cookie ``"session=eyJ...; Path=/"``) must be delimited by non-base64url characters.
    """
    if "eyJ" not in s:
        return False
    if is_jwt(s):
        return True
    for m in _JWT_IN_TEXT.finditer(s, 0, TEXT_SCAN_LIMIT):
        segments = m.group(0).split(".")
        if _jwt_header_ok(m.group(1), len(segments) == 5):
            return True
    return False


_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]{8,4096}=*")
_AUTH_SCHEME = re.compile(r"(bearer|token|basic)\s+(\S+)", re.IGNORECASE)


def is_auth_scheme_credential(s: str) -> str | None:
    """Classify an HTTP ``Authorization``-style value.

    Returns the credential part of ``"Bearer <token>"`` or ``"Token <token>"``
    (token68 syntax, at least 8 characters) or of ``"Basic <base64 of user:password>"``;
    ``None`` when ``s`` is not such a value. Guarantees: the scheme word is
    matched case-insensitively and the whole value must be scheme plus credential.
    """
    m = _AUTH_SCHEME.fullmatch(s)
    if m is None:
        return None
    scheme = m.group(1).lower()
    credential = m.group(2)
    if not _TOKEN68.fullmatch(credential):
        return None
    if scheme == "basic":
        try:
            decoded = base64.b64decode(credential, validate=True)
        except (binascii.Error, ValueError):
            return None
        if b":" not in decoded:
            return None
    return credential


# --------------------------------------------------------------------------- API keys

# Known vendor formats. Each is specific enough on its own; the boundaries keep
# them from matching inside longer identifiers.
_API_KEY_FORMATS = (
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key id (long-term / temporary)
    r"(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,247}",  # Stripe secret / restricted keys
    r"gh[pousr]_[A-Za-z0-9]{36,251}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{22,255}",  # GitHub fine-grained tokens
    r"AIza[0-9A-Za-z_-]{35}",  # Google API key
    r"xox[abposre]-[0-9A-Za-z-]{10,250}",  # Slack tokens
    r"glpat-[0-9A-Za-z_-]{20,}",  # GitLab personal access token
    r"npm_[A-Za-z0-9]{36}",  # npm token
    r"SG\.[0-9A-Za-z_-]{22}\.[0-9A-Za-z_-]{43}",  # SendGrid
    r"sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{32,}",  # OpenAI / Anthropic style
    r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",  # PEM
)
_API_KEY = re.compile(
    r"(?<![A-Za-z0-9_-])(?:" + "|".join(_API_KEY_FORMATS) + r")(?![A-Za-z0-9_-])"
)
# Every format above starts with one of these; checking them first is cheaper than
# running the alternation over every long value.
_API_KEY_MARKERS = re.compile(
    r"AKIA|ASIA|k_(?:live|test)_|gh[pousr]_|github_pat_|AIza|xox|glpat-|npm_|SG\.|sk-|PRIVATE KEY"
)
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")


def _mixed_case_with_digit(s: str) -> bool:
    return bool(_UPPER.search(s) and _LOWER.search(s) and HAS_DIGIT.search(s))


def find_api_key(s: str) -> bool:
    """True when ``s`` is or contains (within :data:`TEXT_SCAN_LIMIT`) a key in a known vendor format.

    Guarantees: only the formats listed in ``_API_KEY_FORMATS`` (AWS ``AKIA``,
    Stripe ``sk_live_``, GitHub ``ghp_``/``github_pat_``, Google ``AIza``, Slack
    ``xox?-``, GitLab, npm, SendGrid, OpenAI-style ``sk-``, PEM private keys), each
    delimited by non-key characters. The loose ``sk-`` form must also mix upper
    case, lower case and digits, as generated keys do and kebab-case slugs do not.
    """
    if len(s) < 15 or not _API_KEY_MARKERS.search(s, 0, TEXT_SCAN_LIMIT):
        return False
    for m in _API_KEY.finditer(s, 0, TEXT_SCAN_LIMIT):
        found = m.group(0)
        if found.startswith("sk-") and not _mixed_case_with_digit(found):
            continue
        return True
    return False


def is_api_key_format(s: str) -> bool:
    """True when the whole of ``s`` is a key in a known vendor format (see :func:`find_api_key`)."""
    m = _API_KEY.fullmatch(s) if len(s) >= 15 else None
    return m is not None and (not s.startswith("sk-") or _mixed_case_with_digit(s))


_OPAQUE = re.compile(r"[A-Za-z0-9._~+/=:-]{16,4096}")
_ISO_DATE_PREFIX = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_opaque_secret(s: str, min_length: int = 16) -> bool:
    """True when ``s`` looks like a generated secret (token, key, session id).

    Guarantees: at least ``min_length`` characters from the token alphabet
    (letters, digits, ``._~+/=:-``), no spaces; contains both a letter and a digit;
    at least 6 distinct characters; not a URL or an ISO date/time.
    """
    if len(s) < min_length or not _OPAQUE.fullmatch(s):
        return False
    if not (HAS_DIGIT.search(s) and LETTER.search(s)):
        return False
    if "://" in s or _ISO_DATE_PREFIX.match(s):
        return False
    return len(set(s[:64])) >= 6
