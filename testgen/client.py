"""HTTP for the test runner: every request goes through ``core.outbound``, to the addresses its
run's :class:`~testgen.targets.TargetGuard` vetted.

Unlike a general-purpose client it takes nothing from the process: no proxy variables, no
``~/.netrc``, no cookie jar; it follows no redirect and keeps no connection between requests;
TLS is verified against the URL's host name unless the command's ``--insecure`` says otherwise.
The request's timeout is one deadline for connecting, the TLS handshake, sending and reading
the answer (at most ``MAX_BODY_BYTES`` of it).
"""
from __future__ import annotations

import http.client
import ssl
import time
from dataclasses import dataclass, replace
from email.message import Message
from urllib.parse import quote, urlencode

from requests.structures import CaseInsensitiveDict  # a data structure only: nothing is sent with requests

from core.outbound import ConnectTimeout, TargetError, TargetRefused, exchange, target_parse
from core.testmarker import HEADER as MARKER_HEADER

from .targets import TargetGuard

USER_AGENT = "apiscope-security-tests/1"
MAX_BODY_BYTES = 2 * 1024 * 1024
# Characters left as they are in a request target (the rest is percent-encoded, existing escapes kept).
_TARGET_SAFE = "!#$%&'()*+,/:;=?@[]~"


class NotSent(Exception):
    """The request cannot be sent as written (bad URL, header or method); not worth retrying."""


class ConnectionFailed(Exception):
    """No answer: no connection, or it broke before a whole answer came. Worth retrying."""


class AnswerTimeout(Exception):
    """The request went out and the deadline passed before the answer was read."""


@dataclass
class Answer:
    status: int
    headers: CaseInsensitiveDict
    text: str


def _encoding(content_type: str | None) -> str:
    """The charset of the Content-Type; ISO-8859-1 for text without one (RFC 2616), else UTF-8."""
    if not content_type:
        return "utf-8"
    message = Message()
    message["Content-Type"] = content_type
    charset = message.get_param("charset")
    if isinstance(charset, str) and charset.strip("'\""):
        return charset.strip("'\"")
    return "ISO-8859-1" if "text" in content_type.lower() else "utf-8"


def _decode(raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding, errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


class TestClient:
    """Sends one request at a time for a run (see the module docstring)."""

    __test__ = False

    def __init__(self, guard: TargetGuard, *, verify_tls: bool = True, marker: str | None = None):
        self.guard = guard
        self.marker = marker  # the run's X-Apiscope-Test value (core/testmarker.py), added to every request
        self.tls: ssl.SSLContext | None = None
        if not verify_tls:
            self.tls = ssl.create_default_context()
            self.tls.check_hostname = False
            self.tls.verify_mode = ssl.CERT_NONE

    def send(self, *, method: str, url: str, headers: CaseInsensitiveDict, params: dict[str, str] | None,
             data: bytes | None, timeout_ms: int) -> Answer:
        """Send one request and read its answer.

        Raises ``TargetRefused`` (nothing sent: the guard refuses the target), :class:`NotSent`,
        :class:`ConnectionFailed` or :class:`AnswerTimeout`.
        """
        deadline = time.monotonic() + max(timeout_ms, 1) / 1000
        try:
            target = target_parse(url)
        except TargetError as exc:
            raise NotSent(str(exc)) from None
        query = urlencode(params or {})
        request_target = quote(target.request_target, safe=_TARGET_SAFE)
        if query:
            request_target += ("&" if "?" in request_target else "?") + query
        # Credentials in the URL are not sent (as before: tests carry theirs in headers).
        target = replace(target, request_target=request_target, authorization=None)
        try:
            addresses = self.guard.vet(target)
        except TargetRefused:
            raise
        except (TargetError, TimeoutError) as exc:  # the name does not resolve (now)
            raise ConnectionFailed(f"{type(exc).__name__}: {exc}") from None
        sent = CaseInsensitiveDict({"User-Agent": USER_AGENT, "Accept": "*/*"})
        sent.update(headers)
        if self.marker:
            sent[MARKER_HEADER] = self.marker
        if data is None and method not in ("GET", "HEAD"):
            data = b""
        try:
            with exchange(target, addresses, method=method, headers=list(sent.items()), body=data,
                          deadline=deadline, tls=self.tls) as response:
                answer_headers = CaseInsensitiveDict()
                for name, value in response.getheaders():
                    answer_headers[name] = f"{answer_headers[name]}, {value}" if name in answer_headers else value
                raw = response.read(MAX_BODY_BYTES)
        except ValueError as exc:  # includes UnicodeEncodeError: a header that is not Latin-1
            raise NotSent(f"{type(exc).__name__}: {str(exc)[:120]}") from None
        except ConnectTimeout:
            raise ConnectionFailed("ConnectTimeout") from None
        except TimeoutError:
            raise AnswerTimeout() from None
        except (OSError, ssl.SSLError, http.client.HTTPException) as exc:
            raise ConnectionFailed(type(exc).__name__) from None
        return Answer(response.status, answer_headers, _decode(raw, _encoding(answer_headers.get("Content-Type"))))
