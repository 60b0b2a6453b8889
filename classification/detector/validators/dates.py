"""Dates of birth: plausible past calendar dates in the common written forms."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

__all__ = ["parse_past_date"]

_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december")
_DATE_YMD = re.compile(
    r"([0-9]{4})([-/.])([0-9]{1,2})\2([0-9]{1,2})"
    r"(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,9})?)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?"
)
_DATE_XXY = re.compile(r"([0-9]{1,2})([-/.])([0-9]{1,2})\2([0-9]{4}|[0-9]{2})")
_DATE_COMPACT = re.compile(r"(1[89][0-9]{2}|20[0-9]{2})([0-9]{2})([0-9]{2})")
_DATE_D_MON_Y = re.compile(r"([0-9]{1,2})(?:st|nd|rd|th)?[ -]([A-Za-z]{3,9})\.?,?[ -]([0-9]{4})")
_DATE_MON_D_Y = re.compile(r"([A-Za-z]{3,9})\.? ([0-9]{1,2})(?:st|nd|rd|th)?,? ([0-9]{4})")


def _month(name: str) -> int | None:
    lower = name.lower()
    number = _MONTHS.get(lower[:3])
    if number is None:
        return None
    full = _MONTH_NAMES[number - 1]
    # "Sept" and "Sep." are fine, "Marchx" is not.
    return number if full.startswith(lower) or lower == "sept" else None


def _past_date(year: int, month: int, day: int, today: date) -> date | None:
    if year < 1900:
        return None
    try:
        d = date(year, month, day)
    except ValueError:
        return None
    return d if d <= today else None


def parse_past_date(s: str) -> date | None:
    """Return the calendar date ``s`` denotes when it is a plausible birth date, else ``None``.

    Accepts ``YYYY-MM-DD`` (``/`` or ``.`` too, optionally with an ISO time part),
    ``DD/MM/YYYY`` and ``MM/DD/YYYY`` (either reading), two-digit years (the most
    recent past century), ``YYYYMMDD``, ``5 Jan 1990`` and ``January 5, 1990``.
    Guarantees: the date exists, its year is 1900 or later and it is not in the
    future (one day of slack for time zones).
    """
    if len(s) > 40:
        return None
    today = datetime.now(timezone.utc).date() + timedelta(days=1)
    m = _DATE_YMD.fullmatch(s)
    if m:
        return _past_date(int(m.group(1)), int(m.group(3)), int(m.group(4)), today)
    m = _DATE_XXY.fullmatch(s)
    if m:
        a, b, y = int(m.group(1)), int(m.group(3)), m.group(4)
        year = int(y)
        if len(y) == 2:
            year += 2000 if year <= today.year % 100 else 1900
        return _past_date(year, b, a, today) or _past_date(year, a, b, today)
    m = _DATE_COMPACT.fullmatch(s)
    if m:
        return _past_date(int(m.group(1)), int(m.group(2)), int(m.group(3)), today)
    m = _DATE_D_MON_Y.fullmatch(s)
    if m:
        month = _month(m.group(2))
        return _past_date(int(m.group(3)), month, int(m.group(1)), today) if month else None
    m = _DATE_MON_D_Y.fullmatch(s)
    if m:
        month = _month(m.group(1))
        return _past_date(int(m.group(3)), month, int(m.group(2)), today) if month else None
    return None
