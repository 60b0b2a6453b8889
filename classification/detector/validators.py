"""Value validators, one family per built-in data class.

Every function here is pure, takes an already stripped, non-empty string (plus,
where the class needs it, whether the field name hinted the class) and answers
a yes/no question precisely: a cheap shape check first (compiled once, at import)
and the expensive validator (Luhn, ``phonenumbers``, ``ipaddress``, base64/JSON
decoding) only on values of the right shape.

Functions never raise on any ``str`` input.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import re
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache

import phonenumbers
from phonenumbers import NumberParseException
from stdnum import luhn
from stdnum.us import ssn as us_ssn

__all__ = [
    "TEXT_SCAN_LIMIT",
    "find_api_key",
    "find_email",
    "find_jwt",
    "is_address",
    "is_api_key_format",
    "is_auth_scheme_credential",
    "is_credit_card",
    "is_driver_license",
    "is_email",
    "is_id_like",
    "is_ip_address",
    "is_jwt",
    "is_mac_address",
    "is_opaque_secret",
    "is_passport_number",
    "is_phone_number",
    "is_ssn",
    "is_uuid",
    "parse_past_date",
]

# Searches inside free text (emails, keys and JWTs embedded in a longer value) look at
# most at this many characters, so one huge field cannot stall a worker.
TEXT_SCAN_LIMIT = 8192

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


# --------------------------------------------------------------------- credit card

# Digits with optional single space or dash separators (any grouping: 4-4-4-4,
# Amex 4-6-5, ...), 13 to 19 digits in all.
_CARD_SHAPE = re.compile(r"[0-9](?:[ -]?[0-9]){12,18}")
_MAESTRO_PREFIXES = frozenset(("5018", "5020", "5038", "5893", "6304", "6759", "6761", "6762", "6763"))


def _issuer_accepts(d: str) -> bool:
    """True when the IIN prefix of digit string ``d`` belongs to a card scheme issuing that length."""
    n = len(d)
    first = d[0]
    if first == "4":  # Visa
        return n in (13, 16, 19)
    p2 = int(d[:2])
    p4 = int(d[:4])
    if first == "5":
        if 51 <= p2 <= 55:  # Mastercard
            return n == 16
        return d[:4] in _MAESTRO_PREFIXES and n >= 13
    if first == "2":
        if 2221 <= p4 <= 2720:  # Mastercard 2-series
            return n == 16
        if 2200 <= p4 <= 2204:  # Mir
            return 16 <= n <= 19
        return False
    if first == "3":
        if p2 in (34, 37):  # American Express
            return n == 15
        if 3528 <= p4 <= 3589:  # JCB
            return 16 <= n <= 19
        if 300 <= int(d[:3]) <= 305 or p4 == 3095 or p2 in (36, 38, 39):  # Diners Club
            return 14 <= n <= 19
        return False
    if first == "6":
        if d.startswith("6011") or p2 == 65 or 644 <= int(d[:3]) <= 649:  # Discover
            return 16 <= n <= 19
        if p2 == 62:  # UnionPay (includes Discover's co-branded 622126-622925)
            return 16 <= n <= 19
        return d[:4] in _MAESTRO_PREFIXES and n >= 13
    return False


def is_credit_card(s: str, *, hinted: bool = False) -> bool:
    """True when ``s`` is a payment card number.

    Guarantees: 13-19 digits, optionally grouped with single spaces or dashes;
    passes the Luhn check (``stdnum.luhn``); and, unless the field name hinted a
    card (``hinted``), starts with an issuer prefix valid for its length (Visa,
    Mastercard incl. 2-series, Amex, Discover, JCB, Diners, UnionPay, Maestro, Mir)
    and, when written without separators, has at most 16 digits. A run of one
    repeated digit is never a card.
    """
    if not _CARD_SHAPE.fullmatch(s):
        return False
    if s.isdigit():
        # Undivided 17-19 digit numbers are overwhelmingly int64 ids and
        # snowflakes, of which ~2% would pass prefix and Luhn by chance; the
        # rare 19-digit card is still found when grouped or under a card key.
        if len(s) > 16 and not hinted:
            return False
        d = s
    else:
        d = s.replace(" ", "").replace("-", "")
    if d.count(d[0]) == len(d):
        return False
    if not hinted and not _issuer_accepts(d):
        return False
    return luhn.is_valid(d)


# ----------------------------------------------------------------------------- SSN

_SSN_DASHED = re.compile(r"[0-9]{3}-[0-9]{2}-[0-9]{4}")
_SSN_LOOSE = re.compile(r"[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}")


def is_ssn(s: str, *, hinted: bool = False) -> bool:
    """True when ``s`` is a US Social Security Number.

    Guarantees: without a hint only the dashed form ``NNN-NN-NNNN`` counts; with a
    hint, spaces or no separators are accepted too. The area is not 000, 666 or
    900-999, the group not 00, the serial not 0000, and publicly misused numbers
    are rejected (``stdnum.us.ssn``).
    """
    if hinted:
        if not _SSN_LOOSE.fullmatch(s):
            return False
        digits = s.replace("-", "").replace(" ", "")
    else:
        if not _SSN_DASHED.fullmatch(s):
            return False
        digits = s.replace("-", "")
    return us_ssn.is_valid(digits)


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
_IPV4_SHAPE = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}")


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
    if _DATE_SHAPE.fullmatch(s) or _IPV4_SHAPE.fullmatch(s) or _SSN_DASHED.fullmatch(s):
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


# ------------------------------------------------------------------------------ IP

_IPV6_CHARS = re.compile(r"[0-9A-Fa-f:.]+")
_HAS_DIGIT = re.compile(r"[0-9]")


def _single_ip(s: str) -> bool:
    if not s or len(s) > 64:
        return False
    colons = s.count(":")
    if colons == 0:
        if not _IPV4_SHAPE.fullmatch(s):
            return False
    elif colons == 1:
        # IPv4 with a port ("10.0.0.1:8080"); one colon is never IPv6.
        host, _, port = s.partition(":")
        if not (port.isdigit() and len(port) <= 5 and _IPV4_SHAPE.fullmatch(host)):
            return False
        s = host
    else:
        if s[0] == "[":  # "[::1]:8080" or "[::1]"
            host, sep, rest = s[1:].partition("]")
            if not sep or (rest and not (rest[0] == ":" and rest[1:].isdigit())):
                return False
            s = host
        host, _, zone = s.partition("%")  # fe80::1%eth0
        if not _IPV6_CHARS.fullmatch(host) or not _HAS_DIGIT.search(host):
            # Requiring a digit keeps words made of hex letters ("dead::beef",
            # C++ scopes) out.
            return False
        if zone and not zone.replace("_", "").replace("-", "").replace(".", "").isalnum():
            return False
    try:
        ipaddress.ip_address(s)
    except ValueError:
        return False
    return True


def is_ip_address(s: str) -> bool:
    """True when ``s`` is an IPv4 or IPv6 address, or a short comma-separated list of them.

    Guarantees: parsed by :mod:`ipaddress` (so octets are 0-255, no leading
    zeros, IPv6 groups valid); accepts ``ip:port`` and ``[v6]:port`` and zone ids;
    a list (``X-Forwarded-For``) counts only when every element is an address.
    Version strings like ``"1.2.3"`` and times like ``"12:30:45"`` never match.
    """
    if "," in s:
        parts = s.split(",")
        return 2 <= len(parts) <= 16 and all(_single_ip(p.strip()) for p in parts)
    return _single_ip(s)


# ----------------------------------------------------------------------------- MAC

_MAC = re.compile(
    r"[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}(?:-[0-9A-Fa-f]{2}){5}"
    r"|[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}"
)


def is_mac_address(s: str) -> bool:
    """True when ``s`` is a MAC address.

    Guarantees: six octets separated consistently by ``:`` or ``-``, or Cisco's
    three dotted quads (``0123.4567.89ab``); the all-zero and broadcast addresses
    (placeholders, not device identifiers) are rejected.
    """
    if len(s) not in (14, 17) or not _MAC.fullmatch(s):
        return False
    hexdigits = s.replace(":", "").replace("-", "").replace(".", "").lower()
    return hexdigits not in ("000000000000", "ffffffffffff")


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
    return bool(_UPPER.search(s) and _LOWER.search(s) and _HAS_DIGIT.search(s))


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
_LETTER = re.compile(r"[A-Za-z]")
_ISO_DATE_PREFIX = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_opaque_secret(s: str, min_length: int = 16) -> bool:
    """True when ``s`` looks like a generated secret (token, key, session id).

    Guarantees: at least ``min_length`` characters from the token alphabet
    (letters, digits, ``._~+/=:-``), no spaces; contains both a letter and a digit;
    at least 6 distinct characters; not a URL or an ISO date/time.
    """
    if len(s) < min_length or not _OPAQUE.fullmatch(s):
        return False
    if not (_HAS_DIGIT.search(s) and _LETTER.search(s)):
        return False
    if "://" in s or _ISO_DATE_PREFIX.match(s):
        return False
    return len(set(s[:64])) >= 6


# -------------------------------------------------------------------------------- DOB

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
        if not _LETTER.search(s) or _ETH_ADDRESS.search(s):
            return False
        if _HAS_DIGIT.search(s):
            return True
        return any(word in _STREET_WORDS for word in _WORDS.findall(s.lower()))
    if len(s) > 200 or " " not in s or not _HAS_DIGIT.search(s) or not _LETTER.search(s):
        return False
    return _STREET_ADDRESS.search(s) is not None


# --------------------------------------------------------------- documents and ids

_DOC_NUMBER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9 -]{0,24}[A-Za-z0-9])?")


def _document_number(s: str, low: int, high: int) -> bool:
    if not _DOC_NUMBER.fullmatch(s):
        return False
    compact = s.replace(" ", "").replace("-", "")
    return low <= len(compact) <= high and _HAS_DIGIT.search(compact) is not None


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
    return _ID_TOKEN.fullmatch(s) is not None and _HAS_DIGIT.search(s) is not None
