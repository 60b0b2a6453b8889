"""Where security tests may be sent: the runner's policy on top of ``core.outbound``.

* A public address may be tested.
* An address ``core.outbound.address_refusal`` refuses (loopback, private, link-local, cloud
  metadata, unspecified, multicast, reserved, IPv6 forms embedding such an IPv4 address) may be
  tested only when the operator lists it in ``TESTING_ALLOWED_TARGETS``: the URL's host name
  (``staging.internal``, matched exactly, case-insensitively), or an IP address / CIDR containing
  the address connected to (``10.0.0.0/8``; ``::ffff:a.b.c.d`` counts as ``a.b.c.d``, every other
  IPv6 form must be listed as IPv6, e.g. ``64:ff9b::/96``).
* The service's own database and broker — address **and** port, from ``DATABASES``,
  ``CELERY_BROKER_URL`` and ``REDIS_URL`` — are refused even when listed. Names are resolved; a
  host on this machine (loopback, empty or socket host, or one of this host's own addresses)
  covers every loopback and unspecified address and this host's own addresses at that port; IPv6
  forms embedding a protected IPv4 address are protected too.

A :class:`TargetGuard` lives for one run: each host:port is resolved and vetted once, and every
request of the run connects to those very addresses (``testgen.client``), so a DNS answer that
changes during the run (rebinding) reaches nothing new.
"""
from __future__ import annotations

import ipaddress
import logging
import re
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.outbound import (
    Address,
    Target,
    TargetError,
    TargetRefused,
    address_refusal,
    addresses_resolve,
    embedded_ipv4,
    ip_normalize,
    target_parse,
)

logger = logging.getLogger(__name__)

RESOLVE_TIMEOUT_S = 5.0
_HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"),
             ipaddress.ip_network("0.0.0.0/32"), ipaddress.ip_network("::/128"))
_DEFAULT_PORTS = {"postgres": 5432, "postgresql": 5432, "postgis": 5432, "mysql": 3306, "redis": 6379,
                  "rediss": 6379, "amqp": 5672, "amqps": 5671}


@dataclass(frozen=True)
class AllowedTargets:
    """``TESTING_ALLOWED_TARGETS`` parsed: host names and networks."""

    hosts: frozenset[str] = frozenset()
    networks: tuple = ()

    @classmethod
    def parse(cls, entries: list[str]) -> AllowedTargets:
        """Raises ``ImproperlyConfigured`` naming an entry that is neither a host name nor an IP/CIDR."""
        hosts, networks = set(), []
        for raw in entries:
            entry = raw.strip().lower().rstrip(".")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if not _HOST_NAME.match(entry):
                raise ImproperlyConfigured(f"TESTING_ALLOWED_TARGETS: {raw!r} is not a host name, IP address or CIDR.")
            hosts.add(entry)
        return cls(frozenset(hosts), tuple(networks))

    def allows(self, host: str, ip) -> bool:
        return host.lower().rstrip(".") in self.hosts or any(
            ip.version == net.version and ip in net for net in self.networks)


@dataclass(frozen=True)
class Protected:
    """A service endpoint no test may reach: addresses (networks) at one port, or a name we could not resolve."""

    what: str
    port: int
    networks: tuple = ()
    name: str | None = None


def _this_host() -> tuple:
    """Loopback and unspecified networks, and the addresses this host's name resolves to (best effort):
    a server on this machine may listen on all of them."""
    try:
        own = {ip_normalize(a[3][0]) for a in addresses_resolve(socket.gethostname(), None, RESOLVE_TIMEOUT_S)}
    except (TargetError, TimeoutError, OSError):
        own = set()
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


def _protected_by(endpoints: list[Protected], host: str, address: str, port: int) -> Protected | None:
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


@dataclass
class TargetGuard:
    """The policy of one run, with the addresses it vetted (see the module docstring)."""

    allowed: AllowedTargets
    protected: list[Protected]
    resolve_timeout: float = RESOLVE_TIMEOUT_S
    _vetted: dict = field(default_factory=dict)

    @classmethod
    def from_settings(cls) -> TargetGuard:
        return cls(AllowedTargets.parse(settings.TESTING_ALLOWED_TARGETS), service_endpoints())

    def vet(self, target: Target) -> list[Address]:
        """The addresses requests to ``target`` connect to, resolved and checked once per guard.

        Raises ``TargetRefused`` (with what and why; never sent anything), ``TargetError`` or
        ``TimeoutError`` when the name does not resolve."""
        key = (target.host, target.port)
        if key not in self._vetted:
            addresses = addresses_resolve(target.host, target.port, self.resolve_timeout)
            for address in addresses:
                self._check(target, address[3][0])
            self._vetted[key] = addresses
        return self._vetted[key]

    def vet_url(self, url: str) -> list[Address]:
        return self.vet(target_parse(url))

    def _check(self, target: Target, address: str) -> None:
        shown = f"{target.host}:{target.port}" + (f" ({address})" if address != target.host else "")
        endpoint = _protected_by(self.protected, target.host, address, target.port)
        if endpoint is not None:
            raise TargetRefused(f"Target refused: {shown} is this service's own {endpoint.what}; "
                                "it is never tested, even when listed in TESTING_ALLOWED_TARGETS.")
        reason = address_refusal(address)
        if reason and not self.allowed.allows(target.host, ip_normalize(address)):
            raise TargetRefused(f"Target refused: {shown} is {reason}; list it in TESTING_ALLOWED_TARGETS "
                                "to test it.")
