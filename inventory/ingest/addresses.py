"""Hosts' addresses and public/private detection (DECISIONS §4 hostType).

Pure functions, no database. Host names and paths themselves are normalised in
``inventory.patterns.normalize``.

* ``host_name_is_public``: the name heuristics, used while no destination address was seen.
* ``address_normalize``: an IP address as text (zone, brackets, IPv4-mapped IPv6 and an
  X-Forwarded-For list's proxies dropped), or ``None``.
* ``address_is_global``: whether an address is a global (public) one.
"""
from __future__ import annotations

import ipaddress
from functools import lru_cache

_PRIVATE_SUFFIXES = (".local", ".internal", ".lan", ".svc", ".cluster.local", ".localhost", ".localdomain",
                     ".home.arpa", ".intranet", ".corp")


def host_name_is_public(name: str) -> bool:
    """DECISIONS §4 name heuristics, used while no destination address was seen for the host."""
    if not name or name == "localhost":
        return False
    try:
        return ipaddress.ip_address(name).is_global
    except ValueError:
        pass
    if "." not in name:
        return False
    return not name.endswith(_PRIVATE_SUFFIXES)


@lru_cache(maxsize=65536)
def _address_normalize(text: str) -> str | None:
    text = text.strip().strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped:
        address = address.ipv4_mapped
    return str(address)


def address_normalize(raw: object) -> str | None:
    """An IP address as text (zone and brackets dropped), or ``None`` when ``raw`` is not one."""
    if not isinstance(raw, str) or not raw:
        return None
    if "," in raw:  # an X-Forwarded-For list ("client, proxy"): the client
        raw = raw.split(",", 1)[0]
    return _address_normalize(raw)


@lru_cache(maxsize=65536)
def address_is_global(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_global
    except ValueError:
        return False
