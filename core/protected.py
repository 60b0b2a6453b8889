"""The service's own database and broker: endpoints no outbound request may reach.

Both outbound powers of the service — security test runs (``testgen.targets``) and webhook
deliveries (``webhooks.http``) — refuse these address:port pairs whatever the operator allows,
so neither can be turned against the service's own storage (an attacker's first idea: point a
webhook or a test's ``baseUrl`` at ``127.0.0.1:6379`` and let the service talk to its own Redis).

Sources: ``DATABASES``, ``CELERY_BROKER_URL`` and ``REDIS_URL``. Names are resolved; a host on
this machine (loopback, empty or socket host, or one of this host's own addresses) covers every
loopback and unspecified address and this host's own addresses at that port; IPv6 forms
embedding a protected IPv4 address are protected too. SQLite and file brokers have no address.
"""
from __future__ import annotations

import functools
import ipaddress
import logging
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from .outbound import TargetError, addresses_resolve, embedded_ipv4, ip_normalize

logger = logging.getLogger(__name__)

RESOLVE_TIMEOUT_S = 5.0
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"),
             ipaddress.ip_network("0.0.0.0/32"), ipaddress.ip_network("::/128"))
_DEFAULT_PORTS = {"postgres": 5432, "postgresql": 5432, "postgis": 5432, "mysql": 3306, "redis": 6379,
                  "rediss": 6379, "amqp": 5672, "amqps": 5671}


@dataclass(frozen=True)
class Protected:
    """A service endpoint no test may reach: addresses (networks) at one port, or a name we could not resolve."""

    what: str
    port: int
    networks: tuple = ()
    name: str | None = None


_SIOCGIFADDR = 0x8915  # Linux: an interface's IPv4 address
_IF_INET6 = "/proc/net/if_inet6"  # Linux: every IPv6 address, one per line, 32 hex digits first


def interface_addresses() -> set:
    """This machine's interface addresses, IPv4 and IPv6 (Linux; elsewhere an empty set): a server
    listening on ``0.0.0.0`` or ``::`` answers on every one of them, whatever the host name says."""
    found: set = set()
    try:
        import fcntl
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for _index, name in socket.if_nameindex():
                try:
                    packed = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name[:15].encode()))
                except OSError:  # no IPv4 address on this interface
                    continue
                found.add(ipaddress.IPv4Address(packed[20:24]))
    except (ImportError, OSError):
        pass
    try:
        with open(_IF_INET6, encoding="ascii") as lines:
            for line in lines:
                found.add(ipaddress.IPv6Address(int(line.split()[0], 16)))
    except (OSError, ValueError, IndexError):
        pass
    return found


def _this_host() -> tuple:
    """Loopback and unspecified networks, this machine's interface addresses, and the addresses its
    host name resolves to (best effort): a server on this machine may listen on all of them."""
    try:
        own = {ip_normalize(a[3][0]) for a in addresses_resolve(socket.gethostname(), None, RESOLVE_TIMEOUT_S)}
    except (TargetError, TimeoutError, OSError):
        own = set()
    own |= interface_addresses()
    return _LOOPBACK + tuple(ipaddress.ip_network(ip) for ip in own if not ip.is_loopback)


def _endpoint(what: str, host: str | None, port: int, this_host: tuple) -> Protected:
    host = (host or "").strip("[]")
    if not host or host.startswith("/"):  # a Unix socket: the server runs on this machine
        return Protected(what, port, this_host)
    try:
        ips = {ip_normalize(a[3][0]) for a in addresses_resolve(host, port, RESOLVE_TIMEOUT_S)}
    except (TargetError, TimeoutError):
        logger.warning("The %s host cannot be resolved here; only its name is protected", what)
        return Protected(what, port, name=host.lower())
    if any(ip.is_loopback or ip.is_unspecified or any(ip in net for net in this_host if net.version == ip.version)
           for ip in ips):
        return Protected(what, port, this_host + tuple(ipaddress.ip_network(ip) for ip in ips), name=host.lower())
    return Protected(what, port, tuple(ipaddress.ip_network(ip) for ip in ips), name=host.lower())


def service_endpoints(*, databases: dict | None = None, broker_urls: list[tuple[str, str]] | None = None,
                      ) -> list[Protected]:
    """The service's own database(s) and broker: ``settings.DATABASES``, ``CELERY_BROKER_URL`` and
    ``REDIS_URL`` unless given. SQLite and file brokers have no address."""
    if databases is None:
        databases = settings.DATABASES
    if broker_urls is None:
        broker_urls = [("broker", getattr(settings, "CELERY_BROKER_URL", "")), ("Redis", settings.REDIS_URL)]
    found: list[Protected] = []
    this_host = _this_host()
    for alias, db in databases.items():
        if db.get("ENGINE", "").endswith("sqlite3"):
            continue
        engine = db.get("ENGINE", "").rsplit(".", 1)[-1]
        port = int(db.get("PORT") or _DEFAULT_PORTS.get(engine, 5432))
        found.append(_endpoint(f"database ({alias})", db.get("HOST"), port, this_host))
    for what, url in broker_urls:
        for one in (url or "").split(";"):
            parts = urlsplit(one.strip())
            if parts.scheme in _DEFAULT_PORTS:
                found.append(_endpoint(what, parts.hostname, parts.port or _DEFAULT_PORTS[parts.scheme], this_host))
    return found


def protected_by(endpoints: list[Protected], host: str, address: str, port: int) -> Protected | None:
    ip = ip_normalize(address)
    views = [ip, *filter(None, [embedded_ipv4(ip)])]
    for endpoint in endpoints:
        if endpoint.port != port:
            continue
        if endpoint.name and endpoint.name == host.lower():
            return endpoint
        if any(view.version == net.version and view in net for view in views for net in endpoint.networks):
            return endpoint
    return None


@functools.cache
def own_endpoints() -> tuple[Protected, ...]:
    """:func:`service_endpoints` from settings, resolved once per process (settings do not change
    while it runs; a webhook delivery must not pay a DNS lookup of the database host)."""
    return tuple(service_endpoints())
