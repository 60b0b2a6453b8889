"""Government-issued numbers: US Social Security Numbers, driver's licences, passports."""

from __future__ import annotations

import re

from stdnum.us import ssn as us_ssn

from .common import HAS_DIGIT

__all__ = ["SSN_DASHED", "is_driver_license", "is_passport_number", "is_ssn"]

# ----------------------------------------------------------------------------- SSN

SSN_DASHED = re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}")
# Dashed or dotted, one separator throughout: "123-45-6789", "123.45.6789".
_SSN_SEPARATED = re.compile(r"[0-9]{3}([-.])[0-9]{2}\1[0-9]{4}")
_SSN_LOOSE = re.compile(r"[0-9]{3}[-. ]?[0-9]{2}[-. ]?[0-9]{4}")


def is_ssn(s: str, *, hinted: bool = False) -> bool:
    """True when ``s`` is a US Social Security Number.

    Guarantees: without a hint the dashed ``NNN-NN-NNNN`` and dotted ``NNN.NN.NNNN`` forms
    count; with a hint, spaces or no separators are accepted too. The area is not 000, 666 or
    900-999, the group not 00, the serial not 0000, and publicly misused numbers
    are rejected (``stdnum.us.ssn``).
    """
    if hinted:
        if not _SSN_LOOSE.fullmatch(s):
            return False
        digits = s.replace("-", "").replace(" ", "").replace(".", "")
    else:
        if not _SSN_SEPARATED.fullmatch(s):
            return False
        digits = s[:3] + s[4:6] + s[7:]
    return us_ssn.is_valid(digits)


# ------------------------------------------------------------------ documents

_DOC_NUMBER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 -]{0,24}[A-Za-z0-9])?")


def _document_number(s: str, low: int, high: int) -> bool:
    if not _DOC_NUMBER.fullmatch(s):
        return False
    compact = s.replace(" ", "").replace("-", "")
    return low <= len(compact) <= high and HAS_DIGIT.search(compact) is not None


def is_driver_license(s: str) -> bool:
    """True when ``s`` is a plausible driver's licence number (only meaningful under a licence field name).

    Guarantees: 5-20 letters and digits once spaces and dashes are removed, at
    least one digit.
    """
    return _document_number(s, 5, 20)


def is_passport_number(s: str) -> bool:
    """True when ``s`` is a plausible passport number (only meaningful under a passport field name).

    Guarantees: 6-9 letters and digits once spaces are removed, at least one digit.
    """
    return _document_number(s, 6, 9)
