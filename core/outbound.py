"""The one way out: outbound HTTP to user-chosen targets, vetted and pinned.

Webhook deliveries (``webhooks.http``) and security test requests (``testgen.client``) both reach
targets that API-key holders choose, so both go through this module. Each caller adds its own
policy on top (which refused addresses an operator allowed); the mechanics are shared:

* :func:`target_parse`: absolute http/https URLs only; the host IDNA-encoded for the wire;
* :func:`address_refusal`: why an address is no public destination — loopback, private (RFC 1918,
  CGNAT 100.64/10, ULA), link-local, cloud metadata (169.254.169.254, fd00:ec2::254, Azure's
  168.63.129.16…), unspecified, multicast, reserved/documentation ranges — and every IPv6 form
  that embeds a refused IPv4 address (``::ffff:a.b.c.d``, IPv4-translated ``::ffff:0:a.b.c.d``,
  IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::/96``, local-use NAT64 ``64:ff9b:1::/48``, 6to4,
  Teredo). The tables are ours, not :mod:`ipaddress`'s ``is_global`` (which changes between Python
  versions); that one is consulted as well, so either saying "not public" refuses;
* :func:`addresses_resolve`: the name resolved once, under a deadline;
* :func:`exchange`: the request sent on a connection to exactly the vetted addresses (no second
  lookup that a rebinding DNS server could answer differently), TLS verified against the URL's
  host name, one deadline for connect, TLS, sending and reading, never a redirect followed (a 3xx
  is an answer like any other).
"""
from __future__ import annotations

import base64
import concurrent.futures
import http.client
import io
import ipaddress
import re
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# (family, socktype, proto, sockaddr) of one resolved address, as socket.socket() and connect() take them.
Address = tuple

_resolver = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-dns")
_verifying_tls: ssl.SSLContext | None = None
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


class TargetError(Exception):
    """The URL cannot be sent to: bad URL or unresolvable name. The message is user-facing."""


class TargetRefused(TargetError):
    """The target resolves to an address the caller's policy refuses. The message says which and why."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as written in the URL, IDNA-encoded for the wire, lower case; IPv6 without brackets
    port: int
    request_target: str  # path and query
    host_header: str
    authorization: str | None  # Basic credentials from the URL's userinfo, if any


def target_parse(url: str) -> Target:
    """Split an absolute http(s) URL; raise :class:`TargetError` for anything else."""
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in url):
        raise TargetError("URL must not contain whitespace or control characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetError(f"Invalid URL: {exc}.") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise TargetError("URL must use http or https.")
    host = parts.hostname
    if not host:
        raise TargetError("URL must name a host.")
    try:
        wire_host = host.encode("idna").decode("ascii") if not _is_ip_literal(host) else host
    except UnicodeError:
        raise TargetError("URL host is not a valid host name.") from None
    default_port = 443 if scheme == "https" else 80
    port = port or default_port
    shown = f"[{wire_host}]" if ":" in wire_host else wire_host
    host_header = shown if port == default_port else f"{shown}:{port}"
    request_target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    authorization = None
    if parts.username is not None:
        creds = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(creds).decode("ascii")
    return Target(scheme, wire_host, port, request_target, host_header, authorization)


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return True
    except ValueError:
        return False


# --- address classification ----------------------------------------------------------------

_net = ipaddress.ip_network
# Cloud metadata and host-agent services: AWS/GCP/OpenStack (and AWS's IPv6 one), AWS ECS task
# credentials and DNS, Azure's wire server (a public address!), Alibaba, Oracle.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "169.254.169.253", "168.63.129.16", "100.100.100.200",
    "192.0.0.192", "fd00:ec2::254", "fd00:ec2::23",
))
_IPV4_REFUSED = (
    (_net("0.0.0.0/8"), "an unspecified address"),  # 0.0.0.0 reaches this very host
    (_net("127.0.0.0/8"), "a loopback address"),
    (_net("10.0.0.0/8"), "a private address"),
    (_net("172.16.0.0/12"), "a private address"),
    (_net("192.168.0.0/16"), "a private address"),
    (_net("100.64.0.0/10"), "a shared (CGNAT) address"),
    (_net("169.254.0.0/16"), "a link-local address"),
    (_net("192.0.0.0/24"), "a reserved address"),
    (_net("192.0.2.0/24"), "a documentation address"),
    (_net("198.51.100.0/24"), "a documentation address"),
    (_net("203.0.113.0/24"), "a documentation address"),
    (_net("198.18.0.0/15"), "a benchmarking address"),
    (_net("224.0.0.0/4"), "a multicast address"),
    (_net("240.0.0.0/4"), "a reserved address"),  # 255.255.255.255 included
)
_IPV6_REFUSED = (
    (_net("::/128"), "an unspecified address"),
    (_net("::1/128"), "a loopback address"),
    (_net("fc00::/7"), "a private (unique local) address"),
    (_net("fe80::/10"), "a link-local address"),
    (_net("fec0::/10"), "a site-local address"),
    (_net("ff00::/8"), "a multicast address"),
    (_net("64:ff9b:1::/48"), "a local-use NAT64 address"),
    (_net("100::/64"), "a discard-only address"),
    (_net("2001::/23"), "a reserved (IETF protocol) address"),  # Teredo 2001::/32 included
    (_net("2001:db8::/32"), "a documentation address"),
    (_net("3fff::/20"), "a documentation address"),
    (_net("5f00::/16"), "a reserved (SRv6) address"),
    (_net("::/8"), "a reserved address"),  # IPv4-compatible ::a.b.c.d included
)
_IPV4_TRANSLATED = _net("::ffff:0:0:0/96")
_IPV4_COMPATIBLE = _net("::/96")
_NAT64 = (_net("64:ff9b::/96"), _net("64:ff9b:1::/48"))


def ip_normalize(address: str | IpAddress) -> IpAddress:
    """The address a socket really reaches: zone id dropped, ``::ffff:a.b.c.d`` as the IPv4 address.
    Raises ``ValueError`` for anything that is not an IP address."""
    ip = address if not isinstance(address, str) else ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def embedded_ipv4(ip: IpAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (translated, compatible, NAT64, 6to4, Teredo client)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _IPV4_TRANSLATED or any(ip in net for net in _NAT64):
        return low32
    if ip in _IPV4_COMPATIBLE and int(ip) > 1:  # :: and ::1 are themselves
        return low32
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def address_refusal(address: str | IpAddress) -> str | None:
    """Why ``address`` is no public destination (``"a loopback address"``…), or None when it is one.

    Embedded IPv4 addresses are judged as themselves: ``64:ff9b::7f00:1`` is refused as
    ``"an IPv6 form of 127.0.0.1 (a loopback address)"``.
    """
    ip = ip_normalize(address)
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    embedded = embedded_ipv4(ip)
    if embedded is not None:
        inner = address_refusal(embedded)
        if inner:
            return f"an IPv6 form of {embedded} ({inner})"
        if ip in _NAT64[0]:  # the well-known NAT64 prefix (inside ::/8) reaching a public IPv4 address
            return None
    for network, reason in _IPV4_REFUSED if ip.version == 4 else _IPV6_REFUSED:
        if ip in network:
            return reason
    if ip.is_multicast:
        return "a multicast address"
    if not ip.is_global:
        return "not a globally routable address"
    return None


def address_is_private(address: str) -> bool:
    """True for every address :func:`address_refusal` refuses."""
    return address_refusal(address) is not None


# --- resolution and connection -------------------------------------------------------------

def addresses_resolve(host: str, port: int | None, timeout: float | None) -> list[Address]:
    """getaddrinfo with a deadline (the lookup itself cannot be interrupted; we stop waiting).

    Returns the distinct addresses in the resolver's order. Raises ``TimeoutError`` or
    :class:`TargetError` (no address)."""
    future = _resolver.submit(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        infos = future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise TimeoutError("name resolution timed out") from None
    except (OSError, UnicodeError):
        raise TargetError(f"Could not resolve host {host}.") from None
    unique, seen = [], set()
    for family, socktype, proto, _canon, sockaddr in infos:
        if sockaddr[0] not in seen:
            seen.add(sockaddr[0])
            unique.append((family, socktype, proto, sockaddr))
    if not unique:
        raise TargetError(f"Could not resolve host {host}.")
    return unique


class _DeadlineRaw(io.RawIOBase):
    """A socket reader that gives every ``recv`` only what is left of the request's deadline."""

    def __init__(self, sock: socket.socket, deadline: float):
        super().__init__()
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline reached")
        self._sock.settimeout(remaining)
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """What ``http.client.HTTPResponse`` needs from a socket: ``makefile``."""

    def __init__(self, sock: socket.socket, deadline: float):
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str, *args, **kwargs):
        return io.BufferedReader(_DeadlineRaw(self._sock, self._deadline))


def verifying_tls() -> ssl.SSLContext:
    """The default TLS context: certificates verified against the system's CAs and the host name."""
    global _verifying_tls
    if _verifying_tls is None:
        _verifying_tls = ssl.create_default_context()
    return _verifying_tls


class ConnectFailed(ConnectionError):
    """No connection could be made to any vetted address (nothing was sent)."""


class ConnectTimeout(TimeoutError):
    """The deadline passed before a connection was made (nothing was sent)."""


def _connect(target: Target, addresses: list[Address], deadline: float, tls: ssl.SSLContext | None) -> socket.socket:
    last_error: Exception | None = None
    for family, socktype, proto, sockaddr in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ConnectTimeout("deadline reached")
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(remaining)
            sock.connect(sockaddr)
            if target.scheme == "https":
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                sock = (tls or verifying_tls()).wrap_socket(sock, server_hostname=target.host)
            return sock
        except TimeoutError as exc:
            sock.close()
            raise ConnectTimeout(str(exc) or "timed out") from None
        except ssl.SSLError:
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            last_error = exc
    raise ConnectFailed(str(last_error) if last_error else "no address to connect to")


def request_head(method: str, target: Target, headers: list[tuple[str, str]], body_length: int | None) -> bytes:
    """The request line and headers: ``Host`` (unless given), ``Content-Length`` (when a length is
    given), ``Connection: close`` (unless given), then ``headers`` in order. Raises ``ValueError``
    for a method or header that cannot be sent as is (a line break, a non-token name, non-Latin-1)."""
    if not _TOKEN.match(method):
        raise ValueError("invalid method")
    given = {name.lower() for name, _ in headers}
    lines = [f"{method} {target.request_target} HTTP/1.1"]
    if "host" not in given:
        lines.append(f"Host: {target.host_header}")
    if body_length is not None and "content-length" not in given:
        lines.append(f"Content-Length: {body_length}")
    if "connection" not in given:
        lines.append("Connection: close")
    for name, value in headers:
        if not _TOKEN.match(name) or any(c in value for c in "\r\n\0"):
            raise ValueError(f"header {name!r} cannot be sent")
        lines.append(f"{name}: {value}")
    if any(ch in target.request_target for ch in " \r\n\0"):
        raise ValueError("invalid request target")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@contextmanager
def exchange(target: Target, addresses: list[Address], *, method: str, headers: list[tuple[str, str]],
             body: bytes | None, deadline: float, tls: ssl.SSLContext | None = None,
             ) -> Iterator[http.client.HTTPResponse]:
    """Send one request on a new connection to the first of ``addresses`` that accepts, and yield
    the answer with its status and headers read; the connection is closed on leaving.

    Everything (connect, TLS handshake, sending, every read of the body by the caller) shares
    ``deadline`` (a ``time.monotonic()`` value). Raises ``ValueError`` before connecting when the
    request cannot be formatted, :class:`ConnectFailed` / :class:`ConnectTimeout` (a ``TimeoutError``)
    / ``ssl.SSLError`` when no connection was made, and ``TimeoutError`` / ``OSError`` / ``http.client.HTTPException`` for
    trouble after the request went out. ``tls`` defaults to a verifying context.
    """
    head = request_head(method, target, headers, len(body) if body is not None else None)
    sock = _connect(target, addresses, deadline, tls)
    try:
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(head + (body or b""))
        response = http.client.HTTPResponse(_DeadlineSocket(sock, deadline), method=method)
        response.begin()
        yield response
    finally:
        try:
            sock.close()
        except OSError:
            pass
