"""Network addresses: IPv4/IPv6 (with ports, zones, forwarded lists) and MAC addresses."""

from __future__ import annotations

import ipaddress
import re

from .common import HAS_DIGIT

__all__ = ["IPV4_SHAPE", "is_ip_address", "is_mac_address"]

# ------------------------------------------------------------------------------ IP

IPV4_SHAPE = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}")
_IPV6_CHARS = re.compile(r"[0-9A-Fa-f:.]+")


def _single_ip(s: str) -> bool:
    if not s or len(s) > 64:
        return False
    colons = s.count(":")
    if colons == 0:
        if not IPV4_SHAPE.fullmatch(s):
            return False
    elif colons == 1:
        # IPv4 with a port ("10.0.0.1:8080"); one colon is never IPv6.
        host, _, port = s.partition(":")
        if not (port.isdigit() and len(port) <= 5 and IPV4_SHAPE.fullmatch(host)):
            return False
        s = host
    else:
        if s[0] == "[":  # "[::1]:8080" or "[::1]"
            host, sep, rest = s[1:].partition("]")
            if not sep or (rest and not (rest[0] == ":" and rest[1:].isdigit())):
                return False
            s = host
        host, _, zone = s.partition("%")  # fe80::1%eth0
        if not _IPV6_CHARS.fullmatch(host) or not HAS_DIGIT.search(host):
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
