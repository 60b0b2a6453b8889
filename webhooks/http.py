"""Webhook deliveries on the shared outbound guard (``core.outbound``), with the webhooks' policy.

Guarantees:

* http and https only; no redirects are followed (a 3xx is just an answer);
* the target's addresses are resolved here, and unless ``settings.WEBHOOK_ALLOW_PRIVATE_TARGETS``
  is on, a name that resolves to any address ``core.outbound.address_refusal`` refuses (loopback,
  private, link-local, cloud metadata, shared, reserved, multicast, unspecified, and IPv6 forms
  embedding such an IPv4 address) is refused — at webhook creation (:func:`target_check`) and
  again at every send (:func:`post_json`), after DNS resolution;
* the service's own database and broker (address and port, ``core.protected``) are refused at
  creation and at every send even with the switch on: a webhook never talks to them;
* the connection goes to the very address that was checked, with TLS verified against the URL's
  host name; one deadline covers name resolution, connect, TLS handshake, sending and reading.
"""
from __future__ import annotations

import http.client
import ssl
import time
from dataclasses import dataclass

from django.conf import settings

from core.outbound import (
    Address,
    ConnectFailed,
    Target,
    TargetError,
    TargetRefused,
    address_is_private,
    addresses_resolve,
    exchange,
    target_parse,
)
from core.protected import own_endpoints, protected_by

__all__ = ["SendResult", "Target", "TargetError", "TargetRefused", "address_is_private", "post_json",
           "target_check", "target_parse"]

# Bytes of the receiver's answer we read (the recorded msg keeps 1,000 characters of it).
MAX_ANSWER_BYTES = 4096


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


def _allow_private() -> bool:
    return bool(getattr(settings, "WEBHOOK_ALLOW_PRIVATE_TARGETS", False))


def _refuse_own(target: Target, addresses: list[Address]) -> None:
    for address in addresses:
        own = protected_by(own_endpoints(), target.host, address[3][0], target.port)
        if own is not None:
            raise TargetRefused(f"{target.host}:{target.port} is this service's own {own.what}; refused.")


def _checked_addresses(target: Target, timeout: float | None) -> list[Address]:
    addresses = addresses_resolve(target.host, target.port, timeout)
    _refuse_own(target, addresses)
    # address_is_private is looked up in this module at call time (tests stand in for it).
    if not _allow_private() and any(address_is_private(a[3][0]) for a in addresses):
        raise TargetRefused(
            f"{target.host} resolves to a loopback, private, link-local or metadata address; "
            "refused (set WEBHOOK_ALLOW_PRIVATE_TARGETS to allow it)."
        )
    return addresses


def target_check(url: str) -> None:
    """Creation-time check of a webhook URL: well-formed, never the service's own database or broker,
    and, unless the switch is on, resolving only to public addresses. Raises :class:`TargetError` /
    :class:`TargetRefused` with a user-facing message. With the switch on, a name that does not resolve
    yet is accepted (it is checked again at every send)."""
    target = target_parse(url)
    try:
        _checked_addresses(target, timeout=5.0)
    except TimeoutError:
        if not _allow_private():
            raise TargetError(f"Could not resolve host {target.host} in time.") from None
    except TargetError as exc:  # a refusal always stands; an unresolvable name only without the switch
        if isinstance(exc, TargetRefused) or not _allow_private():
            raise


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

    lines = [("Content-Type", "application/json"), *headers.items()]
    if target.authorization:
        lines.append(("Authorization", target.authorization))
    status = None
    try:
        with exchange(target, addresses, method="POST", headers=lines, body=body, deadline=deadline) as response:
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
    except ConnectFailed as exc:
        return result(error=f"Connection failed: ConnectionError: {exc}")
    except OSError as exc:
        return result(error=f"Connection failed: {_message(exc)}")
    except ValueError as exc:  # a header that cannot be sent
        return result(error=f"Request not sent: {_message(exc)}")
