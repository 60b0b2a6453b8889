"""Shapes shared by several validator families, and the record-identifier shapes.

``TEXT_SCAN_LIMIT`` bounds every search inside free text; ``HAS_DIGIT`` and
``LETTER`` are the cheap character-class checks most families start with;
:func:`is_uuid` and :func:`is_id_like` tell the detector a value is a record id
(which rules out several classes). Pure functions, never raising on a ``str``.
"""

from __future__ import annotations

import re

__all__ = ["HAS_DIGIT", "LETTER", "TEXT_SCAN_LIMIT", "is_id_like", "is_uuid"]

# Searches inside free text (emails, keys and JWTs embedded in a longer value) look at
# most at this many characters, so one huge field cannot stall a worker.
TEXT_SCAN_LIMIT = 8192

HAS_DIGIT = re.compile(r"[0-9]")
LETTER = re.compile(r"[A-Za-z]")

_UUID = re.compile(r"\{?[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}\}?")
_ID_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:|-]{0,63}")


def is_uuid(s: str) -> bool:
    """True when ``s`` is a UUID in canonical, braced or undashed hex form."""
    return len(s) <= 38 and _UUID.fullmatch(s) is not None


def is_id_like(s: str) -> bool:
    """True when ``s`` looks like a record identifier rather than a name or sentence.

    Guarantees: 1-64 characters of letters, digits and ``_ . : | -`` with at least
    one digit (``"12345"``, ``"usr_8f3k2"``, ``"auth0|5f7c..."``, UUIDs).
    """
    return _ID_TOKEN.fullmatch(s) is not None and HAS_DIGIT.search(s) is not None
