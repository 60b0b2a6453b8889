"""What observed values may say in a generated spec: formats, enums, keys, examples.

The rules keep real data out of the document (DECISIONS §10: "redacted examples, never a real
sensitive value"): a string from traffic appears only as a value of an ``enum`` (a field without a
data class and without a credential-like name, whose sampled values were never redacted, few and
short); examples never copy a free string (formatted placeholders, ``"[REDACTED]"`` for fields with a
class or a credential-like name); object keys that look like data (an e-mail, an id, a number) are
not spelled out as properties.

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
ENUM_MAX_LENGTH = 40
_ENUM_VALUE = re.compile(r"^[A-Za-z][A-Za-z _./:-]{0,39}$")
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


def enum_values(counts: dict, *, redacted: int, classes, key: str | None, total: int) -> list[str] | None:
    """The values of a low-cardinality string field, or None: no class, no credential-like name, no
    redacted sample, at least ``ENUM_MIN_SAMPLES`` samples and at most ``ENUM_MAX_VALUES`` distinct
    word-like values, each seen twice on average."""
    if classes or redacted or total < ENUM_MIN_SAMPLES or not counts or len(counts) > ENUM_MAX_VALUES:
        return None
    if key is not None and is_credential_name(key):
        return None
    if len(counts) * 2 > total or not all(_ENUM_VALUE.match(v) for v in counts):
        return None
    return sorted(counts)


def is_data_key(key: str) -> bool:
    """An object key that looks like data rather than a field name (an e-mail, an id, a number, a
    token): not written into a generated spec."""
    return not key or len(key) > MAX_KEY_LENGTH or key == REDACTED or bool(_DATA_KEY.search(key))


def sensitive_name(key: str | None) -> bool:
    return key is not None and is_credential_name(key)
