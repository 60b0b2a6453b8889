"""A webhook receiver as a user would write one in a minute: ``http.server.ThreadingHTTPServer``
exactly as the standard library ships it (no tuning: its listen backlog is 5), answering 200.

It records each request's ``X-Delivery-Id`` and the most requests it was handling at once: a
request counts from its arrival until just before its answer is written, an interval inside the
sender's own time in flight, so ``most`` never overstates the sender's concurrency.
"""
from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class PlainReceiver:
    """``delay``: seconds each request takes before it is answered."""

    def __init__(self, delay: float = 0.0):
        self.delivery_ids: list[str] = []
        self.most = 0
        self._handling = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):  # noqa: N802
                receiver._enter(self.headers.get("X-Delivery-Id", ""))
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if delay:
                    time.sleep(delay)
                receiver._leave()
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _enter(self, delivery_id: str) -> None:
        with self._lock:
            self.delivery_ids.append(delivery_id)
            self._handling += 1
            self.most = max(self.most, self._handling)

    def _leave(self) -> None:
        with self._lock:
            self._handling -= 1

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
