"""The detector: which data classes one field value belongs to.

A :class:`Detector` is built once per configuration (enabled built-ins plus the
operators' custom classes) and then called for every scalar of every analysed
trace, so it is written for throughput: all regexes are compiled at import or in
``__init__``, field-name hints are cached per key, and each value only reaches
the validators its shape allows (an e-mail check needs an ``@``, a card check a
leading digit, and so on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from core.budget import current as current_budget
from core.userregex import UserRegex, UserRegexError, user_regex

from . import validators as v
from .builtins import BUILTIN_CLASSES, normalize_class_name
from .keys import (
    HINT_ADDRESS,
    HINT_API_KEY,
    HINT_AUTH_TOKEN,
    HINT_CARD,
    HINT_COOKIE,
    HINT_DOB,
    HINT_DRIVER_LICENSE,
    HINT_IDENTIFIER,
    HINT_PASSPORT,
    HINT_PASSWORD,
    HINT_PHONE,
    HINT_SSN,
    HINT_USER_ID,
    HINT_VERSION,
    NO_HINTS,
    key_hints,
)

__all__ = ["CustomRule", "Detector"]

# Integers this large (over 21 digits) are hashes or counters, not any class we
# know; skipping them also avoids int->str conversion limits on absurd values.
_MAX_INT_BITS = 70
_KEY_CACHE_MAX = 16384

_DIGIT_LED = frozenset("0123456789+(")
_AUTH_SCHEME_INITIALS = frozenset("BbTt")
# Classes only a whole value gets before the free-text search: a value that is a card number,
# an SSN, a phone number, an IP address (list) or a MAC address is not text to search.
_SINGLE_VALUE_CLASSES = frozenset(("credit_card", "ssn", "phone_number", "ip_address", "mac_address"))


def _hints(key: str | None) -> frozenset[str]:
    return key_hints(key) if key and isinstance(key, str) else NO_HINTS


def _has_session_cookie(s: str) -> bool:
    # "Cookie: sessionid=...; theme=dark" or "Set-Cookie: JSESSIONID=...; Path=/":
    # judge each name=value pair as if the cookie name were a field name.
    for pair in s.split(";", 32)[:32]:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not (sep and name and HINT_AUTH_TOKEN in key_hints(name)):
            continue
        if v.is_opaque_secret(value.strip().strip('"')):
            return True
    return False


@dataclass(frozen=True)
class CustomRule:
    """An operator-defined data class.

    ``value_regex`` is searched in string values and in the decimal text of
    integers; ``key_regex`` is searched in the field name (the last key of the
    path; ``None`` keys never match). A field belongs to the class when
    *either* given pattern matches, which is how Metlo's agents evaluate
    ``regex``/``keyRegex``, so the server and v2 agents agree. A rule with
    neither pattern never matches. Booleans and nulls never match. Patterns
    run on the bounded engines of ``core.userregex`` (RE2, else ``regex`` with
    a timeout, on capped input): a search that times out is no match.
    """

    name: str
    value_regex: str | None = None
    key_regex: str | None = None


class Detector:
    """Classify field values into data class names.

    ``enabled`` are the enabled built-in class names (Metlo spellings are
    accepted; unknown names are ignored, so a list that also holds custom class
    names is fine). ``custom`` are the operators' rules; an invalid regex raises
    ``ValueError`` naming the rule. ``phone_regions`` are the ISO country codes
    tried, in order, for phone numbers written without ``+`` and country code.

    Instances are immutable after construction apart from an internal cache, and
    safe to share between threads.
    """

    __slots__ = (
        "enabled",
        "_email", "_ssn", "_card", "_phone", "_ip", "_dl", "_dob", "_address",
        "_api_key", "_auth", "_passport", "_mac", "_user_id", "_password",
        "_credentials", "_hinted_classes", "_text_scan",
        "_custom", "_custom_key_cache", "_regions",
    )

    def __init__(
        self,
        enabled: Iterable[str],
        custom: Iterable[CustomRule] = (),
        *,
        phone_regions: Iterable[str] = ("US",),
    ) -> None:
        names = {normalize_class_name(name) for name in enabled}
        self.enabled: frozenset[str] = frozenset(n for n in names if n in BUILTIN_CLASSES)
        on = self.enabled
        # Plain attributes rather than set lookups: detect() runs per field.
        self._email = "email" in on
        self._ssn = "ssn" in on
        self._card = "credit_card" in on
        self._phone = "phone_number" in on
        self._ip = "ip_address" in on
        self._dl = "driver_license" in on
        self._dob = "dob" in on
        self._address = "address" in on
        self._api_key = "api_key" in on
        self._auth = "authentication_token" in on
        self._passport = "passport_number" in on
        self._mac = "mac_address" in on
        self._user_id = "user_id" in on
        self._password = "password" in on
        self._text_scan = self._card or self._ssn or self._phone or self._ip or self._password
        self._credentials = self._api_key or self._auth
        self._hinted_classes = self._dob or self._address or self._dl or self._passport or self._user_id
        self._regions: tuple[str, ...] = tuple(r.upper() for r in phone_regions)

        # (name, value regex, key regex, label of the rule in the bounded engines' log lines)
        compiled: list[tuple[str, UserRegex | None, UserRegex | None, str]] = []
        for rule in custom:
            try:
                value_re = user_regex(rule.value_regex) if rule.value_regex else None
                key_re = user_regex(rule.key_regex) if rule.key_regex else None
            except UserRegexError as exc:
                raise ValueError(f"invalid regex in data class {rule.name!r}: {exc}") from exc
            if value_re is not None or key_re is not None:
                compiled.append((rule.name, value_re, key_re, f"data class {rule.name}"))
        self._custom = tuple(compiled)
        self._custom_key_cache: dict[str, tuple[str, ...]] = {}

    # ------------------------------------------------------------------ public

    def detect(self, key: str | None, value: object) -> set[str]:
        """Return the class names ``value`` (found under field name ``key``) belongs to.

        ``key`` is the last path component (JSON key, header or query-parameter
        name) or ``None`` for path segments and bare array items; ``value`` a JSON
        scalar. Guarantees: only enabled built-ins and custom classes are
        returned; ``None`` and booleans give an empty set; floats only match
        custom key rules; strings are judged with surrounding whitespace
        stripped; never raises for any scalar input. Returns a new set the caller
        may keep or mutate. Inside a budget scope (``core.budget``: the analysis of one trace) each
        string draws its searched length on the budget, and validators draw their candidates: once
        it is spent, what is left is not looked for (the trace is partial).
        """
        found: set[str] = set()
        if value is None or value is True or value is False:
            return found
        text: str | None = None
        if isinstance(value, str):
            stripped = value.strip()
            if stripped:
                # Over TEXT_SCAN_LIMIT characters only evenly spread windows are looked at
                # (no whole-value validator accepts values that long anyway); custom regexes
                # keep their own bound (core.userregex).
                text = stripped
                sampled = stripped if len(stripped) <= v.TEXT_SCAN_LIMIT else v.sample_text(stripped)
                if not current_budget().take_chars(len(sampled)):
                    return found
                self._detect_text(sampled, _hints(key), found)
        elif isinstance(value, int):
            if 0 <= value and value.bit_length() <= _MAX_INT_BITS:
                text = str(value)
                self._detect_int(text, _hints(key), found)
        if self._custom:
            self._detect_custom(key, text, found)
        return found

    # ----------------------------------------------------------------- strings

    def _detect_text(self, s: str, hints: frozenset[str], out: set[str]) -> None:
        first = s[0]

        if self._credentials:
            self._detect_credentials(s, first, hints, out)

        if self._email and "@" in s and v.find_email(s):
            out.add("email")

        if first in _DIGIT_LED:
            if (
                self._card
                and (HINT_IDENTIFIER not in hints or HINT_CARD in hints)
                and v.is_credit_card(s, hinted=HINT_CARD in hints)
            ):
                out.add("credit_card")
            if self._ssn and v.is_ssn(s, hinted=HINT_SSN in hints):
                out.add("ssn")
            if (
                self._phone
                and "credit_card" not in out
                and "ssn" not in out
                and v.is_phone_number(s, hinted=HINT_PHONE in hints, regions=self._regions)
            ):
                out.add("phone_number")

        if (
            self._ip
            and (":" in s or (first.isdigit() and "." in s))
            and HINT_VERSION not in hints
            and v.is_ip_address(s)
        ):
            out.add("ip_address")

        if self._mac and len(s) in (14, 17) and v.is_mac_address(s):
            out.add("mac_address")

        if self._address:
            if HINT_ADDRESS in hints:
                if v.is_address(s, hinted=True):
                    out.add("address")
            elif " " in s and v.is_address(s):
                out.add("address")

        if self._text_scan and out.isdisjoint(_SINGLE_VALUE_CLASSES) and v.is_free_text(s):
            self._detect_embedded(s, out)

        if self._password and HINT_PASSWORD in hints and "api_key" not in out and v.is_password_value(s):
            out.add("password")

        if hints and self._hinted_classes:
            if self._dob and HINT_DOB in hints and v.parse_past_date(s) is not None:
                out.add("dob")
            if self._dl and HINT_DRIVER_LICENSE in hints and v.is_driver_license(s):
                out.add("driver_license")
            if self._passport and HINT_PASSPORT in hints and v.is_passport_number(s):
                out.add("passport_number")
            if self._user_id and HINT_USER_ID in hints and (v.is_id_like(s) or v.is_uuid(s)):
                out.add("user_id")

    def _detect_embedded(self, s: str, out: set[str]) -> None:
        # Free text (a note, a description, a CSV or log line): the same validators on the
        # candidates cut out of it. E-mails, JWTs and vendor keys are already searched inside
        # text by their find_* validators; whole-value findings are not searched again.
        if v.has_long_number(s):
            if self._card and v.find_card_in_text(s):
                out.add("credit_card")
            if self._ssn and v.find_ssn_in_text(s):
                out.add("ssn")
            if self._phone and v.find_phone_in_text(s, self._regions):
                out.add("phone_number")
        if self._ip and v.may_hold_ip(s) and v.find_ip_in_text(s):
            out.add("ip_address")
        if self._password and "password" not in out and v.find_password_hash(s):
            out.add("password")

    def _detect_credentials(self, s: str, first: str, hints: frozenset[str], out: set[str]) -> None:
        # A vendor-format key is an API key even when sent as a Bearer token or
        # under a "token" field: the specific reading wins over the generic one.
        if v.find_api_key(s):
            if self._api_key:
                out.add("api_key")
            return
        if self._auth:
            if v.find_jwt(s):
                out.add("authentication_token")
            elif first in _AUTH_SCHEME_INITIALS and " " in s and v.is_auth_scheme_credential(s):
                out.add("authentication_token")
            elif HINT_AUTH_TOKEN in hints and v.is_opaque_secret(s):
                out.add("authentication_token")
            elif HINT_COOKIE in hints and _has_session_cookie(s):
                out.add("authentication_token")
        if self._api_key and HINT_API_KEY in hints and v.is_opaque_secret(s):
            out.add("api_key")

    # ---------------------------------------------------------------- integers

    def _detect_int(self, s: str, hints: frozenset[str], out: set[str]) -> None:
        # ``s`` is the decimal text of a non-negative int. Without hints only a
        # card number can be told from digits alone.
        n = len(s)
        if (
            self._card
            and 13 <= n <= 19
            and (HINT_IDENTIFIER not in hints or HINT_CARD in hints)
            and v.is_credit_card(s, hinted=HINT_CARD in hints)
        ):
            out.add("credit_card")
        if not hints:
            return
        if self._ssn and HINT_SSN in hints and 7 <= n <= 9 and v.is_ssn(s.zfill(9), hinted=True):
            # JSON numbers lose leading zeros: 12345678 is SSN 012-34-5678.
            out.add("ssn")
        if self._phone and HINT_PHONE in hints and v.is_phone_number(s, hinted=True, regions=self._regions):
            out.add("phone_number")
        if self._dob and HINT_DOB in hints and n == 8 and v.parse_past_date(s) is not None:
            out.add("dob")
        if self._dl and HINT_DRIVER_LICENSE in hints and 5 <= n <= 20:
            out.add("driver_license")
        if self._passport and HINT_PASSPORT in hints and 6 <= n <= 9:
            out.add("passport_number")
        if self._user_id and HINT_USER_ID in hints:
            out.add("user_id")
        if self._password and HINT_PASSWORD in hints and n >= 4:
            out.add("password")

    # ------------------------------------------------------------------ custom

    def _detect_custom(self, key: str | None, text: str | None, out: set[str]) -> None:
        key_matches = self._custom_key_matches(key) if key and isinstance(key, str) else ()
        for name, value_re, _, label in self._custom:
            if name in out:
                continue
            if name in key_matches or (
                value_re is not None and text is not None and value_re.search(text, label)
            ):
                out.add(name)

    def _custom_key_matches(self, key: str) -> tuple[str, ...]:
        cached = self._custom_key_cache.get(key)
        if cached is None:
            cached = tuple(
                name for name, _, key_re, label in self._custom
                if key_re is not None and key_re.search(key, label) is True
            )
            if len(self._custom_key_cache) >= _KEY_CACHE_MAX:
                # Keys are few in practice; a flood of unique keys just resets the cache.
                self._custom_key_cache.clear()
            self._custom_key_cache[key] = cached
        return cached
