"""Field-name hints: what a key (field name, header or query-parameter name) says about its value.

Some classes cannot be told from the value alone (a date is only a date of birth
when the field says so; nine digits are only an SSN under an SSN-like name), so
the detector consults these hints. Keys are normalised first so that
``cardNumber``, ``card_number``, ``card-number`` and ``CARD_NUMBER`` all read the
same, then matched against per-hint patterns.

Hints are anchored at the *end* of the normalised key (the head noun): that is
what makes ``customer_phone`` a phone field while ``phone_verified`` or
``token_type`` are not, without long deny-lists.

The result for a key is cached: real traffic repeats a few thousand field names
millions of times, so hinting costs one dictionary lookup per field.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "HINT_ADDRESS",
    "HINT_API_KEY",
    "HINT_AUTH_TOKEN",
    "HINT_CARD",
    "HINT_COOKIE",
    "HINT_DOB",
    "HINT_DRIVER_LICENSE",
    "HINT_IDENTIFIER",
    "HINT_PASSPORT",
    "HINT_PASSWORD",
    "HINT_PHONE",
    "HINT_SSN",
    "HINT_USER_ID",
    "HINT_VERSION",
    "NO_HINTS",
    "key_hints",
    "normalize_key",
]

HINT_SSN = "ssn"
HINT_CARD = "card"
HINT_PHONE = "phone"
HINT_DOB = "dob"
HINT_ADDRESS = "address"
HINT_DRIVER_LICENSE = "driver_license"
HINT_PASSPORT = "passport"
HINT_USER_ID = "user_id"
HINT_AUTH_TOKEN = "auth_token"
HINT_API_KEY = "api_key"
HINT_PASSWORD = "password"
HINT_COOKIE = "cookie"  # the value is a cookie list whose names carry their own hints
# Negative hints: they make value-only detections less eager.
HINT_IDENTIFIER = "identifier"  # an order/trace/row id is not a card number even if it passes Luhn
HINT_VERSION = "version"  # "1.2.3.4" under "version" is a version, not an IP

NO_HINTS: frozenset[str] = frozenset()

# One token per run of lower-case letters (with an optional leading capital), per
# run of capitals not followed by a lower-case letter (acronyms: "ID", "SSN",
# "IP" in "IPAddress"), and per run of digits. Everything else (_, -, ., spaces)
# separates tokens.
_KEY_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def normalize_key(key: str) -> str:
    """Return ``key`` as lower-case snake_case tokens.

    Guarantees: camelCase, PascalCase, snake_case, kebab-case, dotted and
    upper-case spellings of the same words give the same result
    (``"userID"``, ``"user_id"``, ``"User-Id"`` -> ``"user_id"``); digit runs are
    their own tokens (``"address1"`` -> ``"address_1"``). Non-ASCII letters are
    dropped, so hints only recognise English ASCII field names.
    """
    return "_".join(token.lower() for token in _KEY_TOKEN.findall(key))


def _ends_with(alternatives: str) -> re.Pattern[str]:
    # Anchored at a token boundary and at the end of the key, allowing a trailing
    # number ("phone_2", "address_line_1").
    return re.compile(rf"(?:^|_)(?:{alternatives})(?:_[0-9]+)?$")


_NUM = r"(?:_?(?:number|num|no|nr))"

_HINT_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (HINT_SSN, _ends_with(
        rf"ssns?|social_?security{_NUM}?|social_?sec{_NUM}?|ss{_NUM}"
    )),
    (HINT_CARD, _ends_with(
        rf"(?:credit|debit|payment|bank)_?card{_NUM}?|card{_NUM}|cc{_NUM}|ccn|pan"
        r"|primary_?account_?number|card"
    )),
    (HINT_PHONE, _ends_with(
        rf"(?:tele)?phone{_NUM}?|mobile(?:_?phone)?{_NUM}?|cell(?:_?phone)?{_NUM}?|cellphone{_NUM}?"
        rf"|tel|fax{_NUM}?|msisdn|whats_?app{_NUM}?|contact{_NUM}"
    )),
    (HINT_DOB, _ends_with(
        r"dob|d_o_b|date_?of_?birth|birth_?(?:date|day|dt)|birthdate|birthday|bday"
        r"|born(?:_?(?:on|at|date))?"
    )),
    (HINT_ADDRESS, _ends_with(
        r"(?:street_?)?address(?:_?line)?|addr|street|streetaddress|address_?line"
    )),
    (HINT_DRIVER_LICENSE, _ends_with(
        rf"(?:drivers?|driving)_?(?:license|licence|lic)(?:{_NUM}|_?id)?|dl{_NUM}|dln"
    )),
    (HINT_PASSPORT, _ends_with(rf"passport(?:{_NUM}|_?id)?")),
    (HINT_USER_ID, _ends_with(
        r"(?:user|customer|cust|member|person|profile|subscriber|patient|employee|emp|student"
        r"|player|buyer|account|acct|owner|author)_?(?:id|uuid|guid)"
        rf"|(?:customer|member|employee|patient|student){_NUM}|uid|user_?uuid"
    )),
    (HINT_AUTH_TOKEN, _ends_with(
        r"[a-z]*token|jwt|session(?:_?(?:id|key|token))?|[a-z]*sessionid|[a-z]*sess_?id"
        r"|authorization|auth|x_?auth|bearer"
    )),
    (HINT_API_KEY, _ends_with(
        r"[a-z]*api_?key|api_?secret|api_?token|[a-z]*secret|secret_?key|secret_?access_?key"
        r"|access_?key(?:_?id)?|private_?key|app_?key|subscription_?key|master_?key|signing_?key"
        r"|consumer_?key"
    )),
    (HINT_COOKIE, _ends_with(r"(?:set_)?cookies?")),
    # A password, a passphrase, a password's hash or a secret: "userPassword", "password_hash",
    # "hashedPassword", "new_password_confirmation", "otp_secret". "pass" and "pw" only as the
    # whole key ("boarding_pass" is not one).
    (HINT_PASSWORD, re.compile(
        r"(?:^|_)(?:(?:hashed|encrypted|crypted)_)?(?:[a-z]*password|passwd|passphrase|pwd|passcode|[a-z]*secret)"
        r"(?:_(?:hash|hashed|digest|enc|encrypted|confirm|confirmation))?(?:_[0-9]+)?$"
        r"|^(?:pass|pw|pw_hash|pass_hash)$"
    )),
    (HINT_IDENTIFIER, _ends_with(
        r"ids?|uuid|guid|ref|reference|seq|sequence|hash|checksum|nonce|timestamp|ts"
        rf"|(?:order|invoice|transaction|tracking|confirmation|reference|ticket|request|trace|span"
        rf"|correlation|message|event|device|serial|account|routing|batch|shipment|booking){_NUM}"
    )),
    (HINT_VERSION, _ends_with(
        r"version|ver|v|build|release|revision|rev|firmware|fw"
    )),
)

# Tokens that, anywhere in the key, show that "address" means a network or
# account address rather than a postal one.
_NOT_POSTAL = re.compile(
    r"(?:^|_)(?:e_?mail|mail|ip|ipv|mac|wallet|remote|server|host|web|url|uri|bitcoin|btc|eth"
    r"|ethereum|crypto|contract|memory|mem|bind|listen|peer|socket|hw|hardware|network|net"
    r"|gateway|proxy|forwarded|origin|public|node|callback|redirect|smtp|dns|broadcast"
    r"|multicast|loopback|local|sender_?ip)(?:_|$)"
)

# Tokens that show a "...token" field is not a credential: paging cursors
# (AWS "NextToken"), anti-forgery and idempotency tokens, captcha and
# push-notification tokens. Distinctive words are matched anywhere (they also
# occur glued, as in "nextpagetoken"); short ones only as whole tokens.
_NOT_CREDENTIAL = re.compile(
    r"page|cursor|continuation|csrf|xsrf|idempotency|captcha|pagination"
    r"|(?:^|_)(?:next|prev|previous|continue|marker|start|starting|sync|upload|resume|push|fcm"
    r"|apns|nonce)(?:_|$)"
)


@lru_cache(maxsize=16384)
def key_hints(key: str) -> frozenset[str]:
    """Return the hint tags (``HINT_*``) that the field name ``key`` carries.

    Guarantees: pure function of ``key``; case and separator insensitive (see
    :func:`normalize_key`); returns :data:`NO_HINTS` for keys that hint nothing.
    Results are cached per exact key string.
    """
    norm = normalize_key(key)
    if not norm:
        return NO_HINTS
    hints = {tag for tag, pattern in _HINT_PATTERNS if pattern.search(norm)}
    if not hints:
        return NO_HINTS
    if HINT_ADDRESS in hints and _NOT_POSTAL.search(norm):
        hints.discard(HINT_ADDRESS)
    if HINT_AUTH_TOKEN in hints and _NOT_CREDENTIAL.search(norm):
        hints.discard(HINT_AUTH_TOKEN)
    if HINT_API_KEY in hints:
        # An API-key name is the more specific reading of "api_token" and the like.
        hints.discard(HINT_AUTH_TOKEN)
    if HINT_USER_ID in hints or HINT_CARD in hints:
        # "customer_id" is a user id, "card_id" a card reference: neither is a
        # generic identifier to be shielded from their own class.
        hints.discard(HINT_IDENTIFIER)
    return frozenset(hints)
