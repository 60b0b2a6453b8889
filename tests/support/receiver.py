"""The test suite's one HTTP receiver: a real threaded server on 127.0.0.1 (webhook receiver, test
target, an internal service that must never be reached).

It records every request (``requests``: method, path, headers, body, arrival time) and every byte
each connection carried (``raw()``), counts accepted connections (``connections``: zero means
nothing at all reached it), and answers what the test programs:

- ``Receiver(answer=Answer(302, location=...))``: one answer to every request, any method;
- ``Receiver(answer=callable)``: ``callable(received) -> Answer``, decided per request;
- ``receiver.route(500, (200, 1.0), then=(200, 0.0))``: a fresh URL of its own with a script of
  answers (status, or status and seconds to wait), then ``then``; other paths get ``answer``;
- ``drop_first=n``: the first ``n`` connections are closed without reading or answering.

Every answer closes its connection (one request per connection, so ``connections`` counts requests
that got in). ``wait_for_requests(n)``, on the receiver (any path) or on one route, waits until
``n`` requests have arrived and returns them.
"""
from __future__ import annotations

import io
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

from tests.support.processes import wait_for


@dataclass
class Answer:
    """What the receiver answers: a status, after ``delay`` seconds, with ``body`` (and a Location)."""

    status: int = 200
    delay: float = 0.0
    body: bytes = b'{"ok": true}'
    location: str | None = None
    content_type: str = "application/json"


@dataclass
class Received:
    """One request as it arrived."""

    at: float  # time.monotonic() on arrival
    method: str
    path: str
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def delivery_id(self) -> str:
        """The webhook delivery this request is an attempt of (``X-Delivery-Id``)."""
        return self.headers["X-Delivery-Id"]

    @property
    def attempt(self) -> int:
        """The attempt number a webhook delivery request carries (``X-Delivery-Attempt``)."""
        return int(self.headers["X-Delivery-Attempt"])


@dataclass
class Route:
    """One URL of its own: a script of answers used in order, then ``then``; its requests."""

    script: list[Answer]
    then: Answer
    requests: list[Received] = field(default_factory=list)

    def next_answer(self) -> Answer:
        return self.script.pop(0) if self.script else self.then

    def wait_for_requests(self, count: int, timeout: float = 30.0, message=None) -> list[Received]:
        """Wait until at least ``count`` requests reached this route; return them all."""
        return _arrived(self.requests, count, timeout, message)


def _arrived(requests: list[Received], count: int, timeout: float, message) -> list[Received]:
    """Wait until ``requests`` holds ``count`` requests or more (failing with ``message()``, or a
    count of what did arrive); a copy of the list."""
    wait_for(lambda: len(requests) >= count, timeout=timeout,
             message=message or (lambda: f"{len(requests)} of {count} requests arrived within {timeout} s"))
    return list(requests)


class _TeeReader(io.RawIOBase):
    """The connection's input, every byte read also appended to ``sink``."""

    def __init__(self, source, sink: bytearray):
        self.source, self.sink = source, sink

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.source.read1(len(buffer)) if hasattr(self.source, "read1") else self.source.read(len(buffer))
        buffer[: len(data)] = data
        self.sink.extend(data)
        return len(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True


class Receiver:
    """A threaded HTTP server recording every request and answering what the test programs
    (module docstring). ``host`` is the address it listens on; ``close()`` stops it.

    ``backlog``: the listen backlog. 128 by default, a real web server's: the concurrent POSTs of a
    fan-out must all get in. ``backlog=5`` is ``ThreadingHTTPServer`` as the standard library ships
    it, a receiver as a user writes one in a minute. ``most``: the most requests it was handling at
    once (from the end of a request's headers until just before its answer is written, an interval
    inside the sender's own time in flight, so ``most`` never overstates the sender's concurrency).
    """

    def __init__(self, answer: Answer | Callable[[Received], Answer] | None = None, *,
                 host: str = "127.0.0.1", drop_first: int = 0, backlog: int = 128):
        self.answer = answer or Answer()
        self.drop_first = drop_first
        self.routes: dict[str, Route] = {}
        self.requests: list[Received] = []
        self.connections = 0
        self.most = 0
        self._handling = 0
        self._chunks: list[bytearray] = []
        self.lock = threading.Lock()
        self.server = _Server((host, 0), _handler_class(self), bind_and_activate=False)
        self.server.request_queue_size = backlog
        self.server.server_bind()
        self.server.server_activate()
        self.host, self.port = host, self.server.server_address[1]
        self.url = f"http://{host}:{self.port}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def route(self, *answers, then=(200, 0.0)) -> tuple[str, Route]:
        """A fresh URL; ``answers`` are statuses or (status, delay) pairs used in order, then ``then``."""
        path = f"/hook/{uuid.uuid4().hex}"
        route = Route(script=[self._route_answer(a) for a in answers], then=self._route_answer(then))
        with self.lock:
            self.routes[path] = route
        return f"{self.url}{path}", route

    def _route_answer(self, answer) -> Answer:
        """A route's answer: its status echoed in the body; 3xx point at ``/elsewhere`` here."""
        status, delay = answer if isinstance(answer, tuple) else (answer, 0.0)
        location = f"{self.url}/elsewhere" if 300 <= status < 400 else None
        return Answer(status, delay, f'{{"answer": {status}}}'.encode(), location)

    def raw(self) -> bytes:
        """Every byte every connection carried so far (request lines, headers, bodies)."""
        with self.lock:
            return b"".join(bytes(chunk) for chunk in self._chunks)

    def paths(self) -> list[str]:
        with self.lock:
            return [request.path for request in self.requests]

    def by_delivery(self) -> dict[str, list[Received]]:
        """The requests grouped by webhook delivery (``X-Delivery-Id``), in arrival order."""
        with self.lock:
            grouped: dict[str, list[Received]] = {}
            for request in self.requests:
                grouped.setdefault(request.delivery_id, []).append(request)
            return grouped

    def wait_for_requests(self, count: int, timeout: float = 30.0, message=None) -> list[Received]:
        """Wait until at least ``count`` requests have arrived (any path); return them all."""
        return _arrived(self.requests, count, timeout, message)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- called by the handler, one connection at a time

    def _connected(self) -> tuple[bool, bytearray]:
        """Count a new connection; (whether to drop it, the buffer its bytes go to)."""
        with self.lock:
            self.connections += 1
            chunk = bytearray()
            self._chunks.append(chunk)
            return self.connections <= self.drop_first, chunk

    def _handling_changed(self, change: int) -> None:
        with self.lock:
            self._handling += change
            self.most = max(self.most, self._handling)

    def _received(self, request: Received) -> Answer:
        """Record ``request`` and decide its answer."""
        with self.lock:
            self.requests.append(request)
            route = self.routes.get(request.path)
            if route is not None:
                route.requests.append(request)
                return route.next_answer()
        return self.answer(request) if callable(self.answer) else self.answer


def _handler_class(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 5  # a client that never finishes its request does not hold a thread forever

        def log_message(self, *args):  # quiet
            pass

        def setup(self):
            super().setup()
            self.dropped, sink = receiver._connected()
            self.rfile = io.BufferedReader(_TeeReader(self.rfile, sink))

        def handle(self):
            if not self.dropped:  # a dropped connection is closed without a word
                self.handle_one_request()

        def __getattr__(self, name: str):
            if name.startswith("do_"):  # every method, whatever its name
                return self._answer
            raise AttributeError(name)

        def _answer(self):
            arrived = time.monotonic()
            receiver._handling_changed(+1)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            answer = receiver._received(Received(arrived, self.command, self.path, dict(self.headers.items()), body))
            if answer.delay:
                time.sleep(answer.delay)
            receiver._handling_changed(-1)
            try:
                self.send_response(answer.status)
                if answer.location:
                    self.send_header("Location", answer.location)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(answer.body)
            except OSError:
                pass  # the client gave up (timeouts)
            self.close_connection = True

    return Handler
