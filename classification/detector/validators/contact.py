"""Contact details: e-mail addresses, phone numbers and postal street addresses."""

from __future__ import annotations

import re

import phonenumbers
from phonenumbers import NumberParseException

from core.budget import current as current_budget

from .common import HAS_DIGIT, LETTER, TEXT_SCAN_LIMIT
from .national_ids import SSN_DASHED
from .network import IPV4_SHAPE

__all__ = ["find_email", "is_address", "is_email", "is_phone_number"]

# --------------------------------------------------------------------------- email

_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_DOMAIN = (
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+"
    r"(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})"
)
_EMAIL_FULL = re.compile(rf"({_ATEXT}+(?:\.{_ATEXT}+)*)@({_DOMAIN})")
# Inside text the local part is narrowed to the characters real addresses use, so
# that "a=b&c@d.com" in a query string does not swallow "a=b&c".
_EMAIL_IN_TEXT = re.compile(
    rf"(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{{1,64}})@({_DOMAIN})(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
)
# "icon@2x.png" has an e-mail's shape; file extensions are not top-level domains.
_NOT_TLDS = frozenset(
    "png jpg jpeg gif svg webp bmp ico tif tiff heic avif js mjs css map html htm json xml txt "
    "csv pdf woff woff2 ttf otf eot mp3 mp4 wav webm ogg php jsp asp aspx py rb java".split()
)


def _email_parts_ok(local: str, domain: str) -> bool:
    if len(local) > 64 or len(local) + 1 + len(domain) > 254 or local.startswith("."):
        return False
    tld = domain.rsplit(".", 1)[1].lower()
    return tld not in _NOT_TLDS


def is_email(s: str) -> bool:
    """True when the whole of ``s`` is one e-mail address.

    Guarantees: exactly one ``@``; an RFC 5322 dot-atom local part of at most 64
    characters; a domain of valid labels ending in an alphabetic (or punycode)
    top-level domain that is not a file extension; at most 254 characters.
    """
    if len(s) > 254 or s.count("@") != 1:
        return False
    m = _EMAIL_FULL.fullmatch(s)
    return m is not None and _email_parts_ok(m.group(1), m.group(2))


def find_email(s: str) -> bool:
    """True when ``s`` is, or contains (within :data:`TEXT_SCAN_LIMIT`), an e-mail address.

    Guarantees: an embedded address must be delimited by characters that cannot
    belong to it (``"Ann <ann@example.com>"``, ``"mailto:ann@example.com"``) and
    pass the same sanity checks as :func:`is_email`.
    """
    if is_email(s):
        return True
    for m in _EMAIL_IN_TEXT.finditer(s, 0, TEXT_SCAN_LIMIT):
        if _email_parts_ok(m.group(1), m.group(2)):
            return True
    return False


# ---------------------------------------------------------------------------- phone

# Phone-ish characters only, 7+ digits' worth of length, optional extension.
_PHONE_SHAPE = re.compile(
    r"(\+?\(?[0-9][0-9 ().\-]{5,22}[0-9])(?:\s*(?:ext\.?|x|#)\s*[0-9]{1,6})?", re.IGNORECASE
)
_NON_DIGIT = re.compile(r"[^0-9]")
_PHONE_FORMATTING = re.compile(r"[ ().\-]")
# Dates have digits and separators too; "2023-01-15" must not be tried as a phone.
_DATE_SHAPE = re.compile(
    r"[0-9]{4}[-./][0-9]{1,2}[-./][0-9]{1,2}|[0-9]{1,2}[-./][0-9]{1,2}[-./](?:[0-9]{4}|[0-9]{2})"
)
_DIGIT_RUN = re.compile(r"[0-9]+")


def _group_ends(text: str) -> set[int]:
    # Positions, counted in digits from the end, where ``text`` separates digit groups.
    ends: set[int] = set()
    total = 0
    for run in reversed(_DIGIT_RUN.findall(text)[1:]):
        total += len(run)
        ends.add(total)
    return ends


def _valid_phone(text: str, region: str | None, *, grouping_of: str | None = None) -> bool:
    # The most expensive validator (~40 µs a call): each call draws on the trace's budget (core.budget).
    if not current_budget().take_candidate():
        return False
    try:
        number = phonenumbers.parse(text, region)
    except NumberParseException:
        return False
    if not phonenumbers.is_valid_number(number):
        return False
    if grouping_of is None:
        return True
    # phonenumbers ignores separators, so "2404-49-2473" would pass as
    # (240) 449-2473. A national number written with separators must split
    # only where the canonical format does (omitting some splits is fine).
    canonical = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)
    return _group_ends(grouping_of) <= _group_ends(canonical)


def is_phone_number(s: str, *, hinted: bool = False, regions: tuple[str, ...] = ("US",)) -> bool:
    """True when ``s`` is a valid phone number according to ``phonenumbers``.

    Guarantees: ``+``-prefixed numbers are parsed as international; others are
    tried as national numbers of each of ``regions`` in turn. Without a hint the
    value must carry phone formatting (a leading ``+`` or spaces, dashes, dots or
    parentheses), a national number's digit groups must split where the
    canonical format splits, and dates, dotted-quad IPs and dashed SSNs are never
    phones; so bare integers, ids and odd dashed codes never match. With a hint,
    bare digit strings and any grouping are accepted, and 11+ digit strings are
    also tried as international numbers missing their ``+``.
    """
    m = _PHONE_SHAPE.fullmatch(s)
    if m is None:
        return False
    main = m.group(1)
    # E.164 caps numbers at 15 digits; card numbers (16+) and short codes are out
    # before the comparatively slow phonenumbers parse.
    if not 7 <= len(_NON_DIGIT.sub("", main)) <= 15:
        return False
    international = s[0] == "+"
    if not international and not hinted and not _PHONE_FORMATTING.search(main):
        return False
    if _DATE_SHAPE.fullmatch(s) or IPV4_SHAPE.fullmatch(s) or SSN_DASHED.fullmatch(s):
        return False
    if international:
        return _valid_phone(s, None)
    for region in regions:
        # The extension does not affect validity and would skew the grouping check.
        if _valid_phone(main, region, grouping_of=None if hinted else main):
            return True
    if hinted and s.isdigit() and len(s) >= 11:
        return _valid_phone("+" + s, None)
    return False


# ---------------------------------------------------------------------------- address

_STREET_WORDS = frozenset(
    "street st avenue ave road rd boulevard blvd lane ln drive dr court ct place pl way terrace ter "
    "parkway pkwy highway hwy circle cir square sq trail trl crescent cres close alley plaza row walk "
    "grove gardens mews loop pike route rte broadway strasse straße".split()
)
# A house number, one to four name words each starting with a capital or digit
# ("Main", "5th", "Pennsylvania"), then a street word. Capitalised names keep
# prose ("walked 3 miles down the road") out.
_STREET_ADDRESS = re.compile(
    r"\b[0-9]{1,6}[A-Za-z]?,?\s+(?:[A-Z0-9][A-Za-z0-9.'-]*\s+){1,4}(?i:"
    + "|".join(sorted(_STREET_WORDS, key=len, reverse=True))
    + r")\b"
)
_WORDS = re.compile(r"[^\W\d_]+")
_ETH_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")


def is_address(s: str, *, hinted: bool = False) -> bool:
    """True when ``s`` is a postal street address.

    Guarantees: without a hint, a value of at most 200 characters containing a
    house number, capitalised street name words and a street word ("123 Main St",
    "221B Baker Street, London"). With a hint (field named address/street),
    5-300 characters with letters and a space, and a digit or a street word;
    never an e-mail, URL or blockchain address.
    """
    if hinted:
        if not (5 <= len(s) <= 300) or " " not in s or "@" in s or "://" in s:
            return False
        if not LETTER.search(s) or _ETH_ADDRESS.search(s):
            return False
        if HAS_DIGIT.search(s):
            return True
        return any(word in _STREET_WORDS for word in _WORDS.findall(s.lower()))
    if len(s) > 200 or " " not in s or not HAS_DIGIT.search(s) or not LETTER.search(s):
        return False
    return _STREET_ADDRESS.search(s) is not None
