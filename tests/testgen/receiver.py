"""A raw receiver on 127.0.0.1 for the runner's safety tests: it records every byte it is sent.

Tests assert on ``raw()`` (everything every connection carried, headers and bodies included) and
``connections`` (accepted connections: zero means nothing at all reached it). Each request is
answered ``status`` with a small JSON body (``location``: a Location header, for redirects).
"""
from __future__ import annotations

import socket
import socketserver
import threading


class RawReceiver:
    def __init__(self, *, status: int = 200, location: str | None = None):
        self.status = status
        self.location = location
        self.connections = 0
        self.chunks: list[bytes] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                with outer.lock:
                    outer.connections += 1
                self.request.settimeout(5)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = self.request.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value.strip() or 0)
                    while len(body) < length:
                        chunk = self.request.recv(65536)
                        if not chunk:
                            break
                        body += chunk
                        data += chunk
                except (TimeoutError, OSError):
                    pass
                with outer.lock:
                    outer.chunks.append(data)
                answer = b'{"ok": true}'
                extra = f"Location: {outer.location}\r\n".encode() if outer.location else b""
                try:
                    self.request.sendall(
                        f"HTTP/1.1 {outer.status} X\r\nContent-Type: application/json\r\n".encode() + extra
                        + f"Content-Length: {len(answer)}\r\nConnection: close\r\n\r\n".encode() + answer)
                except OSError:
                    pass

        class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
            daemon_threads = True
            allow_reuse_address = True
            address_family = socket.AF_INET

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def raw(self) -> bytes:
        with self.lock:
            return b"".join(self.chunks)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
