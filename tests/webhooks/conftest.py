"""A real HTTP receiver on 127.0.0.1 and a real Celery worker on Redis for the delivery tests."""
from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import redis
from django.conf import settings

from tests.support.processes import start_worker


class ListeningServer(ThreadingHTTPServer):
    """A threading HTTP server with a real server's listen backlog (socketserver's default is 5):
    the concurrent POSTs of a fan-out must all get in, as they would at any web server."""

    request_queue_size = 128



@dataclass
class Received:
    at: float  # time.monotonic() when the request arrived
    path: str
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


@dataclass
class Route:
    """One receiver URL: a script of answers (status, seconds to wait before answering), then ``then``."""

    script: list
    then: tuple = (200, 0.0)
    requests: list = field(default_factory=list)

    def next_answer(self) -> tuple:
        return self.script.pop(0) if self.script else self.then


class Receiver:
    """A threaded HTTP server recording every POST, answering from per-route scripts."""

    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                arrived = time.monotonic()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    route = receiver.routes.get(self.path)
                    if route is None:
                        status, delay = 404, 0.0
                    else:
                        route.requests.append(Received(arrived, self.path, dict(self.headers.items()), body))
                        status, delay = route.next_answer()
                if delay:
                    time.sleep(delay)
                answer = f'{{"answer": {status}}}'.encode()
                try:
                    self.send_response(status)
                    if 300 <= status < 400:
                        self.send_header("Location", f"http://127.0.0.1:{receiver.port}/elsewhere")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass  # the client gave up (timeout test)

        self.server = ListeningServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def route(self, *answers, then=(200, 0.0)) -> tuple[str, Route]:
        """A fresh URL; ``answers`` are statuses or (status, delay) pairs used in order."""
        path = f"/hook/{uuid.uuid4().hex}"
        script = [a if isinstance(a, tuple) else (a, 0.0) for a in answers]
        route = Route(script=script, then=then)
        with self.lock:
            self.routes[path] = route
        return f"http://127.0.0.1:{self.port}{path}", route

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, django_db_blocker):
    """``celery -A config worker`` as the Procfile's ``webhooks`` worker runs it (threads pool) on the
    pytest database and Redis, consuming a queue of its own, so stray messages of other runs never
    reach it. Tests using it need ``transactional_db``: the worker only sees committed rows."""
    queue = f"webhooks-test-{uuid.uuid4().hex[:10]}"
    worker = start_worker(queue, pool="threads", concurrency=8, WEBHOOK_QUEUE=queue)
    try:
        previous = settings.WEBHOOK_QUEUE
        settings.WEBHOOK_QUEUE = queue
        yield worker
        settings.WEBHOOK_QUEUE = previous
    finally:
        worker.stop()
        redis.Redis.from_url(settings.REDIS_URL).delete(queue)
