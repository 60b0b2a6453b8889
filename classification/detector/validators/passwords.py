"""Passwords and secrets: values under a password-like field name, and password hashes.

The ``password`` class (DECISIONS §5, HIGH, "Password or secret") is a non-empty,
non-placeholder value under a password/passwd/secret/hash-like field name. Which *section* it
counts in (response sections and query parameters, not the login request's own body) is the
ingestion's business; these functions only judge values.
"""

from __future__ import annotations

import re

__all__ = ["find_password_hash", "is_password_hash", "is_password_value"]

# Values that stand in for a password rather than being one: masks, redaction markers,
# template variables and "no value" words.
_PLACEHOLDER_WORDS = frozenset({
    "null", "none", "nil", "undefined", "n/a", "na", "redacted", "[redacted]", "<redacted>", "[filtered]",
    "filtered", "hidden", "masked", "[masked]", "<hidden>", "-", "empty",
    "not set", "unset", "(none)", "(hidden)", "xxx", "***",
})
_TEMPLATE = re.compile(r"\{\{.*\}\}|\$\{.*\}|<[^<>]*>|%\(?[a-z_]+\)?s?|:[a-z_]+")
# Words of validation and status messages ("This field is required.", "Password too short").
_MESSAGE_WORDS = frozenset({
    "required", "must", "invalid", "incorrect", "blank", "empty", "characters", "match", "too", "least",
    "field", "password", "enter", "please", "should", "cannot", "not", "is", "was", "has", "be",
    "expired", "wrong", "missing", "allowed", "length", "weak", "strong",
})
_WORD = re.compile(r"[a-z']+")

# Password hash formats: bcrypt, modular crypt ($1$ MD5, $5$ SHA-256, $6$ SHA-512, yescrypt $y$),
# argon2, scrypt, Django's <algorithm>$<iterations>$<salt>$<hash>.
_HASH = (
    r"\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}"
    r"|\$(?:1|5|6)\$(?:rounds=[0-9]{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{22,86}"
    r"|\$y\$[./A-Za-z0-9]{1,32}\$[./A-Za-z0-9]{1,32}\$[./A-Za-z0-9]{43}"
    r"|\$argon2(?:id|i|d)\$v=[0-9]{1,3}\$m=[0-9]{1,10},t=[0-9]{1,10},p=[0-9]{1,3}\$[A-Za-z0-9+/]{8,}\$[A-Za-z0-9+/]{16,}"
    r"|\$scrypt\$[^\s$]{1,64}\$[A-Za-z0-9+/=]{8,}\$[A-Za-z0-9+/=]{16,}"
    r"|(?:pbkdf2_sha(?:1|256|512)|bcrypt_sha256|argon2|scrypt)\$[^\s]{20,256}"
)
_HASH_FULL = re.compile(_HASH)
_HASH_IN_TEXT = re.compile(rf"(?<![\w$])(?:{_HASH})(?![\w./$])")


def is_password_hash(s: str) -> bool:
    """True when the whole of ``s`` is a password hash in a known format (bcrypt, modular crypt
    ``$1$``/``$5$``/``$6$``/``$y$``, argon2, scrypt, Django's ``pbkdf2_sha256$…``)."""
    return len(s) <= 512 and "$" in s and _HASH_FULL.fullmatch(s) is not None


def find_password_hash(s: str) -> bool:
    """True when ``s`` is or contains a password hash in a known format (see :func:`is_password_hash`)."""
    return "$" in s and _HASH_IN_TEXT.search(s) is not None


def is_password_value(s: str) -> bool:
    """True when ``s``, found under a password-like field name, is a password or secret.

    Guarantees: 1-1024 characters; not a placeholder (a mask of one repeated character such as
    ``********`` or ``••••``, ``[REDACTED]``, ``null``, ``n/a``, ``{{password}}``, ``${PASSWORD}``,
    ``<hidden>``), and not a message: three or more words including one of the vocabulary of
    validation and status messages (``This field is required.``, ``Password must be at least 8
    characters``).
    """
    if not s or len(s) > 1024:
        return False
    lowered = s.lower()
    if lowered in _PLACEHOLDER_WORDS or len(set(s)) == 1 or _TEMPLATE.fullmatch(lowered):
        return False
    if " " in s:
        words = _WORD.findall(lowered)
        if len(words) >= 3 and any(word in _MESSAGE_WORDS for word in words):
            return False
    return True
