"""Values embedded in free text: card numbers, SSNs, phone numbers and IP addresses inside a
note, comment, description, CSV or log line (DECISIONS §5 "Free text").

Each finder cuts candidates out of the text with a shape regex (delimited: a candidate never
starts or ends inside a word or a longer number) and hands every candidate to the *same*
validator the whole-value path uses (Luhn and issuer prefixes, SSN area/group/serial rules,
``phonenumbers`` validity and digit grouping, :mod:`ipaddress`). A few words just before a
candidate act as the field-name hints do for whole values: ``SSN 123 45 6789`` is an SSN,
``version 10.2.0.1`` is not an IP address.

Cost is bounded: :func:`sample_text` reduces any value over :data:`TEXT_SCAN_LIMIT` characters
to evenly spread windows of that many characters in all, so every finder (and the e-mail, JWT
and key searches) looks at most at that much text, whatever the value's size; and each candidate
a finder validates draws on the budget of the trace being analysed (``core.budget``): once it is
spent, finders answer "not found" (the trace is partial).

Pure functions, never raising on a ``str``.
"""

from __future__ import annotations

import re

from core.budget import current as current_budget

from .cards import is_credit_card
from .common import HAS_DIGIT, TEXT_SCAN_LIMIT
from .contact import is_phone_number
from .national_ids import is_ssn
from .network import is_ip_address

__all__ = [
    "SAMPLE_WINDOWS",
    "find_card_in_text",
    "find_ip_in_text",
    "find_phone_in_text",
    "find_ssn_in_text",
    "has_long_number",
    "is_free_text",
    "may_hold_ip",
    "sample_text",
]

SAMPLE_WINDOWS = 8
# Windows and the newlines joining them fit in TEXT_SCAN_LIMIT (the e-mail, JWT and key searches' bound).
_WINDOW = (TEXT_SCAN_LIMIT - (SAMPLE_WINDOWS - 1)) // SAMPLE_WINDOWS
# A value is "text" (and worth searching inside) when it is longer than a token and has a
# separator: whitespace, or the delimiters of CSV, log, query-string and key=value lines.
_TEXT_MIN_LENGTH = 12
_SEPARATOR = re.compile(r"[\s,;|&=]")
# Separators are possessive (``?+``): a separator must be followed by a digit, so giving it back
# could never help a match, and not trying halves the time on digit-heavy text.
# Cheap gates: a card, an SSN or a phone has 7+ digits with at most single separators between
# them; an IPv4 address a digit-dot-digit-dot-digit run, an IPv6 one "::" or seven colons.
_LONG_NUMBER = re.compile(r"[0-9](?:[ ().-]?+[0-9]){6}")
_IPV4_HINT = re.compile(r"[0-9]\.[0-9]{1,3}\.[0-9]")

# Where a number in text may start and end: not inside a word, a decimal or a longer number,
# but a CSV field ("Ada,536-90-4399,1906-12-09") is fine.
_START = r"(?<![\w./:+#$-])"
_END = r"(?![\w/]|[.-][0-9]|,[0-9]{3}\b)"
# Digit groups separated by single spaces or dashes; 13-19 digits in all (card shapes).
_CARD_IN_TEXT = re.compile(rf"{_START}[0-9](?:[ -]?+[0-9]){{12,18}}{_END}")
# NNN-NN-NNNN or NNN.NN.NNNN (one separator throughout), plus spaced/undashed after an SSN word.
_SSN_IN_TEXT = re.compile(rf"{_START}[0-9]{{3}}([-.])[0-9]{{2}}\1[0-9]{{4}}{_END}")
_SSN_LOOSE_IN_TEXT = re.compile(rf"{_START}[0-9]{{3}}[ -]?[0-9]{{2}}[ -]?[0-9]{{4}}{_END}")
_SSN_WORDS = re.compile(r"(?i)\b(?:ssn|ss#|social security(?: number| no\.?| #)?)\W{0,4}$")
# An international number, a (NNN) area code, or digit groups with single separators.
_PHONE_IN_TEXT = re.compile(
    rf"{_START}(?:\+[0-9]{{1,3}}[ .-]?)?(?:\([0-9]{{1,4}}\)[ .-]?)?[0-9]{{1,10}}(?:[ .-][0-9]{{1,8}}){{0,5}}"
    rf"(?:\s*(?:ext\.?|x)\s*[0-9]{{1,6}})?{_END}(?!:[0-9])"
)
# A phone word, then at most two short words ("call me on", "text us at").
_PHONE_WORDS = re.compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|call|fax|sms|text|whatsapp|contact)(?:\s+[a-z]{1,3}){0,2}\W{0,4}$"
)
_DATE_PREFIX = re.compile(r"[0-9]{4}[-./][0-9]{1,2}[-./][0-9]{1,2}|[0-9]{1,2}[-./][0-9]{1,2}[-./][0-9]{2,4}")
# Not inside a path ("/v/1.2.3.4"), but a URL's host ("http://10.0.0.1/") is fine.
_IPV4_IN_TEXT = re.compile(r"(?<![\w.:-])(?<![^/]/)[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?::[0-9]{1,5})?(?![\w-]|\.[0-9])")
_IPV6_IN_TEXT = re.compile(
    r"(?<![\w:.])(?:\[[0-9A-Fa-f:.]{2,45}\](?::[0-9]{1,5})?"
    r"|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?:%[\w.-]{1,16})?)(?![\w:])"
)
_VERSION_WORDS = re.compile(r"(?i)(?:\b(?:v|ver|version|build|release|rev|revision|firmware|fw|oid)\W{0,3}|@)$")
_CONTEXT = 24


def is_free_text(s: str) -> bool:
    """True when ``s`` is longer than a token, has a separator (space, tab, newline, ``, ; | & =``)
    and something an embedded value needs (7+ digits, an IPv4-like run, ``::``, seven colons or
    ``$``): the one cheap test before the finders run."""
    # Each search starts with a character class, which the regex engine skips to quickly.
    if len(s) < _TEXT_MIN_LENGTH or _SEPARATOR.search(s) is None:
        return False
    if "$" in s:
        return True
    if HAS_DIGIT.search(s) is None:
        return False
    return (_LONG_NUMBER.search(s) is not None or _IPV4_HINT.search(s) is not None
            or "::" in s or s.count(":") >= 7)


def has_long_number(s: str) -> bool:
    """True when ``s`` has 7 or more digits with at most single separators between them."""
    return _LONG_NUMBER.search(s) is not None


def may_hold_ip(s: str) -> bool:
    """True when ``s`` has an IPv4-like ``d.d.d`` run, ``::`` or seven colons."""
    return _IPV4_HINT.search(s) is not None or "::" in s or s.count(":") >= 7


def sample_text(s: str) -> str:
    """``s`` itself when it has at most :data:`TEXT_SCAN_LIMIT` characters; otherwise
    :data:`SAMPLE_WINDOWS` windows of about ``TEXT_SCAN_LIMIT / SAMPLE_WINDOWS`` characters spread evenly
    from its start to its end (the first at the start, the last at the end), joined by newlines
    so that no value is made up across two windows."""
    n = len(s)
    if n <= TEXT_SCAN_LIMIT:
        return s
    step = (n - _WINDOW) / (SAMPLE_WINDOWS - 1)
    return "\n".join(s[int(i * step):int(i * step) + _WINDOW] for i in range(SAMPLE_WINDOWS))


def _before(s: str, start: int) -> str:
    return s[max(0, start - _CONTEXT):start]


def find_card_in_text(s: str) -> bool:
    """True when ``s`` contains a payment card number (:func:`~.cards.is_credit_card`, unhinted:
    issuer prefix and Luhn; an undivided run of more than 16 digits is an id, not a card)."""
    budget = current_budget()
    for m in _CARD_IN_TEXT.finditer(s):
        if not budget.take_candidate():
            return False
        if is_credit_card(m.group(0)):
            return True
    return False


def find_ssn_in_text(s: str) -> bool:
    """True when ``s`` contains an SSN: ``NNN-NN-NNNN`` or ``NNN.NN.NNNN`` anywhere, spaced or
    undashed only right after an SSN word (``SSN: 123 45 6789``); validity as :func:`~.national_ids.is_ssn`."""
    budget = current_budget()
    for m in _SSN_IN_TEXT.finditer(s):
        if not budget.take_candidate():
            return False
        if is_ssn(m.group(0)):
            return True
    lowered = s.lower()
    if "ssn" in lowered or "ss#" in lowered or "social" in lowered:
        for m in _SSN_LOOSE_IN_TEXT.finditer(s):
            if not budget.take_candidate():
                return False
            if _SSN_WORDS.search(_before(s, m.start())) and is_ssn(m.group(0), hinted=True):
                return True
    return False


def find_phone_in_text(s: str, regions: tuple[str, ...] = ("US",)) -> bool:
    """True when ``s`` contains a phone number (:func:`~.contact.is_phone_number`): formatted
    (``+``, spaces, dashes, dots or parentheses in the canonical grouping) anywhere, or bare digits
    right after a phone word (``call 6502530000``). Dates and date-times are never phones."""
    budget = current_budget()
    for m in _PHONE_IN_TEXT.finditer(s):
        candidate = m.group(0)
        digits = sum(c.isdigit() for c in candidate)
        if digits < 7 or digits > 15 or _DATE_PREFIX.match(candidate):
            continue
        if not budget.take_candidate():  # each phonenumbers call draws one more (contact._valid_phone)
            return False
        if is_phone_number(candidate, regions=regions):
            return True
        if candidate.isdigit() and _PHONE_WORDS.search(_before(s, m.start())) and \
                is_phone_number(candidate, hinted=True, regions=regions):
            return True
    return False


def find_ip_in_text(s: str) -> bool:
    """True when ``s`` contains an IPv4 (optionally ``:port``) or IPv6 address valid for
    :mod:`ipaddress`, unless a version word (``v``, ``version``, ``build``…) comes right before it."""
    budget = current_budget()
    if _IPV4_HINT.search(s):
        for m in _IPV4_IN_TEXT.finditer(s):
            if not budget.take_candidate():
                return False
            if is_ip_address(m.group(0)) and not _VERSION_WORDS.search(_before(s, m.start())):
                return True
    if "::" in s or s.count(":") >= 7:
        for m in _IPV6_IN_TEXT.finditer(s):
            candidate = m.group(0)
            if candidate.count(":") >= 2:
                if not budget.take_candidate():
                    return False
                if is_ip_address(candidate):
                    return True
    return False
