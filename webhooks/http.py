"""The one way out: every outbound webhook request goes through this module.

Guarantees:

* http and https only; no redirects are followed (a 3xx is just an answer);
* the target's addresses are resolved here, and unless ``settings.WEBHOOK_ALLOW_PRIVATE_TARGETS``
  is on, a name that resolves to any loopback, private, link-local (cloud metadata), shared,
  reserved, multicast or unspecified address is refused — at webhook creation
  (:func:`target_check`) and again at every send (:func:`post_json`), after DNS resolution;
* the connection goes to the very address that was checked (no second lookup an attacker's DNS
  could answer differently), with TLS verified against the URL's host name;
* one deadline covers the whole request — name resolution, connect, TLS handshake, sending and
  reading the answer. ``requests``/``urllib3`` time out each socket operation separately (a slow
  receiver could keep them busy for many multiples of the timeout) and cannot pin the checked
  address, hence the standard-library client below.
"""
from __future__ import annotations

import base64
import concurrent.futures
import http.client
import io
import ipaddress
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from django.conf import settings

# Bytes of the receiver's answer we read (the recorded msg keeps 1,000 characters of it).
MAX_ANSWER_BYTES = 4096

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_resolver = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="webhook-dns")
_tls = ssl.create_default_context()


class TargetError(Exception):
    """The URL cannot be sent to: bad URL, unresolvable name or a refused (private) address."""


class TargetRefused(TargetError):
    """The target resolves to an address the SSRF guard refuses."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # as written in the URL (IDNA-encoded for the wire)
    port: int
    request_target: str  # path and query
    host_header: str
    authorization: str | None  # Basic credentials from the URL's userinfo, if any


@dataclass(frozen=True)
class SendResult:
    """What happened to one POST. ``status_code`` is None when no HTTP answer arrived."""

    status_code: int | None
    answer: str
    error: str | None
    timed_out: bool
    duration_ms: int

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def target_parse(url: str) -> Target:
    """Split a webhook URL; raise :class:`TargetError` when it is not an absolute http(s) URL."""
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


def address_is_private(address: str) -> bool:
    """True for every address a webhook must not reach without the switch: anything not globally
    routable (loopback, RFC 1918, link-local incl. 169.254.169.254, CGNAT/100.64/10, ULA, reserved,
    unspecified), multicast, and IPv6 forms that embed such an IPv4 address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and address_is_private(str(embedded)):
            return True
    return not ip.is_global or ip.is_multicast


def _allow_private() -> bool:
    return bool(getattr(settings, "WEBHOOK_ALLOW_PRIVATE_TARGETS", False))


def _resolve(target: Target, timeout: float | None) -> list[tuple]:
    """getaddrinfo with a deadline (the lookup itself cannot be interrupted; we stop waiting)."""
    future = _resolver.submit(socket.getaddrinfo, target.host, target.port, 0, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        infos = future.result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        raise TimeoutError("name resolution timed out") from None
    except (socket.gaierror, UnicodeError):
        raise TargetError(f"Could not resolve host {target.host}.") from None
    unique, seen = [], set()
    for family, socktype, proto, _canon, sockaddr in infos:
        if sockaddr[0] not in seen:
            seen.add(sockaddr[0])
            unique.append((family, socktype, proto, sockaddr))
    return unique


def _checked_addresses(target: Target, timeout: float | None) -> list[tuple]:
    addresses = _resolve(target, timeout)
    if not addresses:
        raise TargetError(f"Could not resolve host {target.host}.")
    if not _allow_private() and any(address_is_private(a[3][0]) for a in addresses):
        raise TargetRefused(
            f"{target.host} resolves to a loopback, private, link-local or metadata address; "
            "refused (set WEBHOOK_ALLOW_PRIVATE_TARGETS to allow it)."
        )
    return addresses


def target_check(url: str) -> None:
    """Creation-time check of a webhook URL: well-formed and, unless the switch is on, resolving only
    to public addresses. Raises :class:`TargetError` / :class:`TargetRefused` with a user-facing message."""
    target = target_parse(url)
    if _allow_private():
        return
    try:
        _checked_addresses(target, timeout=5.0)
    except TimeoutError:
        raise TargetError(f"Could not resolve host {target.host} in time.") from None


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


def _connect(target: Target, addresses: list[tuple], deadline: float) -> socket.socket:
    last_error: Exception | None = None
    for family, socktype, proto, sockaddr in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline reached")
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(remaining)
            sock.connect(sockaddr)
            if target.scheme == "https":
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                sock = _tls.wrap_socket(sock, server_hostname=target.host)
            return sock
        except (TimeoutError, ssl.SSLError):
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            last_error = exc
    raise ConnectionError(str(last_error) if last_error else "no address to connect to")


def _message(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def post_json(url: str, body: bytes, *, headers: dict[str, str], timeout: float) -> SendResult:
    """POST ``body`` as JSON to ``url`` within ``timeout`` seconds in total. Never raises for network
    trouble: the result says what happened (an answer's status and first bytes, or the error)."""
    started = time.monotonic()
    deadline = started + timeout

    def result(status=None, answer="", error=None, timed_out=False) -> SendResult:
        return SendResult(status, answer, error, timed_out, int((time.monotonic() - started) * 1000))

    try:
        target = target_parse(url)
        addresses = _checked_addresses(target, timeout=max(deadline - time.monotonic(), 0.001))
    except TimeoutError:
        return result(error=f"Timed out after {int(timeout * 1000)} ms (name resolution).", timed_out=True)
    except TargetError as exc:
        return result(error=f"Target refused: {exc}" if isinstance(exc, TargetRefused) else str(exc))

    sock = None
    status = None
    try:
        sock = _connect(target, addresses, deadline)
        lines = [
            f"POST {target.request_target} HTTP/1.1",
            f"Host: {target.host_header}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            "Connection: close",
            *(f"{name}: {value}" for name, value in headers.items()),
        ]
        if target.authorization:
            lines.append(f"Authorization: {target.authorization}")
        sock.settimeout(max(deadline - time.monotonic(), 0.001))
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        response = http.client.HTTPResponse(_DeadlineSocket(sock, deadline), method="POST")
        response.begin()
        status = response.status
        try:
            raw = response.read(MAX_ANSWER_BYTES)
        except (TimeoutError, OSError, http.client.HTTPException):
            raw = b""  # the status arrived; a slow or broken body does not change the outcome
        return result(status, raw.decode("utf-8", "replace"))
    except TimeoutError:
        return result(status, error=f"Timed out after {int(timeout * 1000)} ms.", timed_out=True)
    except ssl.SSLError as exc:
        return result(error=f"TLS error: {_message(exc)}")
    except http.client.HTTPException as exc:
        return result(error=f"Invalid HTTP answer: {_message(exc)}")
    except OSError as exc:
        return result(error=f"Connection failed: {_message(exc)}")
    finally:
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass
