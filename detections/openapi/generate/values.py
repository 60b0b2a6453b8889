"""What observed values may say in a generated spec: formats, enums, keys, examples.

A generated spec copies nothing from traffic but vocabulary (DECISIONS §10, turn 3). A string seen in
traffic appears only as a value of an ``enum``, and only when it is vocabulary: the same value seen
from at least ``ENUM_MIN_USERS`` distinct users (a fingerprint of the request's credentials taken at
acceptance, or the client's address for anonymous traffic), short, one token (not free text), not a
name (a capitalised word that is no dictionary word), on a field without a data class, never
redacted, and whose key is not a credential, a secret, an answer, a note, a diagnosis, a code, a
name or another key that holds a person's own data (:func:`personal_key`). Examples are synthesised
from the type and format (``values.EXAMPLES``, ``0``, ``"string"``), never copied, integers included;
object keys that look like data (an e-mail, an id, a number) are not spelled out as properties.

Formats are claimed only when every sampled value conforms, checked with the same format checker the
spec diff validates responses with, so a spec uploaded back accepts the traffic it came from.
"""
from __future__ import annotations

import re
from functools import lru_cache

from inventory.ingest.credentials import REDACTED, is_credential_name

# (format, strict pattern): tried in this order; a sampled value must also pass the checker.
_FORMATS = (
    ("uuid", re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")),
    ("date-time", re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$")),
    ("date", re.compile(r"^\d{4}-\d{2}-\d{2}$")),
    ("ipv4", re.compile(r"^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$")),
    ("email", re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")),
    ("uri", re.compile(r"^https?://[^\s/$.?#][^\s]*$")),
)
EXAMPLES = {
    "uuid": "00000000-0000-0000-0000-000000000000",
    "date-time": "2026-01-31T12:00:00.000Z",
    "date": "2026-01-31",
    "ipv4": "192.0.2.1",
    "email": "user@example.com",
    "uri": "https://example.com/",
}
ENUM_MAX_VALUES = 8
ENUM_MIN_SAMPLES = 4
ENUM_MIN_USERS = 3  # distinct users each value must be seen from
ENUM_MAX_LENGTH = 32
# One token: letters first, then letters, digits and a few joiners; no spaces (free text), no "@".
_ENUM_VALUE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]{0,31}$")
# Key tokens (split on separators and camelCase) whose values are a person's own data or a secret,
# never vocabulary: credentials and secrets, answers, notes, diagnoses, codes, names, contact data.
_PERSONAL_KEY_TOKENS = frozenset("""
secret secrets password passwd passphrase token key answer answers hint question note notes memo remark remarks
comment comments diagnosis diagnoses condition conditions symptom symptoms allergy allergies medication
medications treatment code codes otp pin cvv name names fullname firstname lastname surname username nickname
displayname owner author tenant customer company organization organisation employer user email mail phone mobile
address street city zip postcode postal ssn dob birth birthday birthdate passport license licence iban account
card description message reason text body content bio title subject label signature
""".split())
_KEY_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_CAPITALISED = re.compile(r"^[A-Z][a-z]+$")
_DATA_KEY = re.compile(
    r"@|^\d|^[0-9a-fA-F-]{16,}$|\d{4,}|^[A-Za-z0-9_-]{24,}$|^[A-Za-z0-9+/=_-]{8,}\.[A-Za-z0-9+/=_-]{8,}"
)
MAX_KEY_LENGTH = 64


@lru_cache(maxsize=1)
def _checker():
    from openapi_schema_validator import oas31_format_checker

    from ...specregex import bounded_format_checker

    return bounded_format_checker(oas31_format_checker)


def formats_of(value: str, candidates: set[str] | frozenset | None) -> frozenset[str]:
    """The formats of ``candidates`` (all when None: the first string) that ``value`` has."""
    if candidates is not None and not candidates:
        return _NONE
    found = _value_formats(value) if len(value) <= 256 else _NONE
    return found if candidates is None else found & candidates


_NONE: frozenset[str] = frozenset()


@lru_cache(maxsize=65536)
def _value_formats(value: str) -> frozenset[str]:
    """Formats of one value (values repeat across sampled bodies: cached)."""
    checker = _checker()
    return frozenset(name for name, pattern in _FORMATS
                     if pattern.match(value) and (name == "uri" or checker.conforms(value, name)))


def string_format(formats: set[str] | None, *, redacted: int, classes: frozenset) -> str | None:
    """The format every sampled value has, or None. ``formats``: those every unredacted sampled
    string has (None: no unredacted string sampled); ``redacted``: how many sampled values were
    ``"[REDACTED]"`` (only an e-mail-only field keeps its format through redaction: each such value
    held an address, and the diff's e-mail check asks for an ``@``)."""
    if redacted:
        if classes != {"email"} or (formats is not None and "email" not in formats):
            return None
        return "email"
    if not formats:
        return None
    for name, _ in _FORMATS:
        if name in formats and not (name == "email" and classes - {"email"}):
            return name
    return None


def personal_key(key: str | None) -> bool:
    """A key whose values are a person's own data or a secret (:data:`_PERSONAL_KEY_TOKENS`, or a
    credential name): ``securityAnswer``, ``internalNote``, ``diagnosis``, ``verificationCode``,
    ``fullName``, ``X-Tenant``…"""
    if key is None:
        return False
    if is_credential_name(key):
        return True
    tokens = {t.lower() for t in _KEY_TOKENS.findall(key)}
    return bool(tokens & _PERSONAL_KEY_TOKENS) or key.replace("-", "").replace("_", "").lower() in _PERSONAL_KEY_TOKENS


def _is_name(value: str) -> bool:
    """A capitalised word that is no dictionary word (``Alice``, ``Rex``): a name, not vocabulary."""
    from inventory.patterns.words import is_dictionary_word

    return bool(_CAPITALISED.match(value)) and not is_dictionary_word(value.lower())


def enum_values(counts: dict, *, redacted: int, classes, key: str | None, total: int,
                users: dict | None = None) -> list[str] | None:
    """The values of a low-cardinality string field when they are vocabulary (module docstring), or None.
    ``counts``: value -> times sampled; ``users``: value -> the distinct users it was seen from."""
    if classes or redacted or total < ENUM_MIN_SAMPLES or not counts or len(counts) > ENUM_MAX_VALUES:
        return None
    if personal_key(key):
        return None
    users = users or {}
    for value in counts:
        if len(value) > ENUM_MAX_LENGTH or not _ENUM_VALUE.match(value) or _is_name(value):
            return None
        if len(users.get(value, ())) < ENUM_MIN_USERS:
            return None
    return sorted(counts)


def is_data_key(key: str) -> bool:
    """An object key that looks like data rather than a field name (an e-mail, an id, a number, a
    token): not written into a generated spec."""
    return not key or len(key) > MAX_KEY_LENGTH or key == REDACTED or bool(_DATA_KEY.search(key))


def sensitive_name(key: str | None) -> bool:
    return key is not None and is_credential_name(key)


def user_of(meta: object) -> str | None:
    """Who sent a sampled trace: its credential fingerprint (taken at acceptance), else its client
    address (anonymous traffic), else None (not counted)."""
    if not isinstance(meta, dict):
        return None
    fingerprint = meta.get("clientFingerprint")
    if isinstance(fingerprint, str) and fingerprint:
        return "c:" + fingerprint
    source = meta.get("source")
    return "a:" + source.split(",", 1)[0].strip() if isinstance(source, str) and source.strip() else None
