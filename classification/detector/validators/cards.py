"""Payment card numbers (issuer prefixes per length, Luhn)."""

from __future__ import annotations

import re

from stdnum import luhn

__all__ = ["is_credit_card"]

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
