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
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.outbound import Address, Target, TargetRefused, address_refusal, addresses_resolve, ip_normalize, target_parse
from core.protected import RESOLVE_TIMEOUT_S, Protected, protected_by, service_endpoints

__all__ = ["AllowedTargets", "TargetGuard", "service_endpoints"]

logger = logging.getLogger(__name__)

_HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$")


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
        endpoint = protected_by(self.protected, target.host, address, target.port)
        if endpoint is not None:
            raise TargetRefused(f"Target refused: {shown} is this service's own {endpoint.what}; "
                                "it is never tested, even when listed in TESTING_ALLOWED_TARGETS.")
        reason = address_refusal(address)
        if reason and not self.allowed.allows(target.host, ip_normalize(address)):
            raise TargetRefused(f"Target refused: {shown} is {reason}; list it in TESTING_ALLOWED_TARGETS "
                                "to test it.")
