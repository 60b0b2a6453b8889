"""A small shop API with deliberate vulnerabilities, and its fixed twin, served on 127.0.0.1.

Written for the test suite: generated security tests must fail against the
vulnerable variant and pass against the fixed one. Plain WSGI (wsgiref, one
thread per request) over a real sqlite3 database, so SQL injection is real.

Routes (``Authorization: Bearer <token>``; alice=1 ``tok-alice``, bob=2, carol=3):

* ``GET /api/users/{id}``: a user. Vulnerable: a missing header is refused but any
  value is accepted (as alice); no ownership check; the id is formatted into the
  SQL and database errors are answered. Fixed: valid token, own id only (403),
  parameterised query.
* ``PATCH /api/users/{id}``: update. Vulnerable: every known column in the body is
  written (``isAdmin``, ``role``, ``balance``, ``id``...). Fixed: ``name``/``email`` only.
* ``GET /api/search?q=``: HTML search page, no authentication. Vulnerable: ``q`` in a
  LIKE by string formatting (and a MySQL-like ``SLEEP()`` exists), reflected
  unescaped, errors answered. Fixed: parameterised, escaped.
* ``POST /api/comments`` / ``GET /api/comments/{id}``: JSON. Vulnerable: the body
  is stored as given and echoed raw. Fixed: ``text`` only, owner from the token,
  ``<>&`` written as ``\\u003c`` etc.
* ``POST /api/login``: Vulnerable: unlimited attempts. Fixed: 429 after 5 attempts.
  ``throttled``: the 6th attempt on is answered after ``THROTTLE_DELAY_S``.

``blind=True`` hides database errors (generic 500) in the vulnerable variant.
"""
from __future__ import annotations

import html
import json
import re
import sqlite3
import threading
import time
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

THROTTLE_DELAY_S = 1.1
LOGIN_LIMIT = 5
USERS = [
    (1, "alice", "alice@example.com", "user", 0, 10, "tok-alice", "pw-alice"),
    (2, "bob", "bob@example.com", "user", 0, 20, "tok-bob", "pw-bob"),
    (3, "carol", "carol@example.com", "user", 0, 30, "tok-carol", "pw-carol"),
]
COLUMNS = {"id": "id", "name": "name", "email": "email", "role": "role", "isAdmin": "is_admin",
           "is_admin": "is_admin", "balance": "balance"}


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass

    def get_environ(self):
        environ = super().get_environ()
        environ["RAW_URI"] = self.path  # the request target as sent (PATH_INFO is percent-decoded)
        return environ


class ShopApp:
    def __init__(self, *, vulnerable: bool, blind: bool = False, throttled: bool = False):
        self.vulnerable = vulnerable
        self.blind = blind
        self.throttled = throttled
        self.lock = threading.Lock()
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.create_function("sleep", 1, self._sleep)  # MySQL's SLEEP(), for time-based injection
        self.db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, email TEXT, role TEXT, "
                        "is_admin INTEGER, balance INTEGER, token TEXT, password TEXT)")
        self.db.executemany("INSERT INTO users VALUES (?, ?, ?, ?, ?, ?, ?, ?)", USERS)
        self.comments: dict[int, dict] = {}
        self.login_attempts = 0
        self.requests_seen = 0

    @staticmethod
    def _sleep(seconds):
        time.sleep(float(seconds))
        return 0

    # --- plumbing --------------------------------------------------------------------
    def __call__(self, environ, start_response):
        self.requests_seen += 1
        try:
            status, body, content_type = self.route(environ)
        except sqlite3.Error as exc:
            detail = "Internal error" if (self.blind or not self.vulnerable) else f"sqlite3.{type(exc).__name__}: {exc}"
            status, body, content_type = 500, json.dumps({"error": detail}), "application/json"
        payload = body.encode("utf-8")
        start_response(f"{status} X", [("Content-Type", content_type), ("Content-Length", str(len(payload)))])
        return [payload]

    def _json(self, status: int, value) -> tuple[int, str, str]:
        text = json.dumps(value)
        if not self.vulnerable:
            text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        return status, text, "application/json"

    def _body(self, environ) -> dict:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length) if length else b""
        try:
            value = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _user(self, environ):
        """The authenticated user row, or None."""
        if "HTTP_AUTHORIZATION" not in environ:
            return None
        header = environ["HTTP_AUTHORIZATION"]
        token = header[7:] if header.startswith("Bearer ") else None
        with self.lock:
            row = self.db.execute("SELECT * FROM users WHERE token = ?", (token,)).fetchone() if token else None
            if row is None and self.vulnerable:  # any credential value gets in
                row = self.db.execute("SELECT * FROM users WHERE id = 1").fetchone()
        return row

    @staticmethod
    def _user_json(row) -> dict:
        return {"id": row[0], "name": row[1], "email": row[2], "role": row[3], "isAdmin": bool(row[4]),
                "balance": row[5]}

    # --- routes ----------------------------------------------------------------------
    def route(self, environ):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if (m := re.fullmatch(r"/api/users/([^/]+)", path)) and method == "GET":
            return self.user_read(environ, m.group(1))
        if (m := re.fullmatch(r"/api/users/([^/]+)", path)) and method == "PATCH":
            return self.user_update(environ, m.group(1))
        if path == "/api/search" and method == "GET":
            return self.search(environ)
        if path == "/api/comments" and method == "POST":
            return self.comment_create(environ)
        if (m := re.fullmatch(r"/api/comments/([^/]+)", path)) and method == "GET":
            return self.comment_read(environ, m.group(1))
        if path == "/api/login" and method == "POST":
            return self.login(environ)
        return self._json(404, {"error": "not found"})

    def user_read(self, environ, raw_id: str):
        user = self._user(environ)
        if user is None:
            return self._json(401, {"error": "unauthorized"})
        if self.vulnerable:
            with self.lock:
                row = self.db.execute(f"SELECT * FROM users WHERE id = {raw_id}").fetchone()
        else:
            if not raw_id.isdigit():
                return self._json(404, {"error": "not found"})
            if int(raw_id) != user[0]:
                return self._json(403, {"error": "forbidden"})
            with self.lock:
                row = self.db.execute("SELECT * FROM users WHERE id = ?", (int(raw_id),)).fetchone()
        if row is None:
            return self._json(404, {"error": "not found"})
        return self._json(200, self._user_json(row))

    def user_update(self, environ, raw_id: str):
        user = self._user(environ)
        if user is None:
            return self._json(401, {"error": "unauthorized"})
        if not raw_id.isdigit() or (not self.vulnerable and int(raw_id) != user[0]):
            return self._json(403, {"error": "forbidden"})
        body = self._body(environ)
        allowed = COLUMNS if self.vulnerable else {"name": "name", "email": "email"}
        changes = {allowed[k]: v for k, v in body.items() if k in allowed}
        with self.lock:
            for column, value in changes.items():
                self.db.execute(f"UPDATE users SET {column} = ? WHERE id = ?", (value, int(raw_id)))
            new_id = changes.get("id", int(raw_id))
            row = self.db.execute("SELECT * FROM users WHERE id = ?", (new_id,)).fetchone()
        return self._json(200, self._user_json(row))

    def search(self, environ):
        from urllib.parse import parse_qs

        q = parse_qs(environ.get("QUERY_STRING", "")).get("q", [""])[0]
        with self.lock:
            if self.vulnerable:
                rows = self.db.execute(f"SELECT name FROM users WHERE name LIKE '%{q}%'").fetchall()
            else:
                rows = self.db.execute("SELECT name FROM users WHERE name LIKE ?", (f"%{q}%",)).fetchall()
        shown = q if self.vulnerable else html.escape(q)
        items = "".join(f"<li>{html.escape(r[0])}</li>" for r in rows)
        return 200, f"<html><body><p>Results for {shown}</p><ul>{items}</ul></body></html>", "text/html"

    def comment_create(self, environ):
        user = self._user(environ)
        if user is None:
            return self._json(401, {"error": "unauthorized"})
        body = self._body(environ)
        with self.lock:
            comment_id = len(self.comments) + 1
            if self.vulnerable:
                comment = {"id": comment_id, "ownerId": user[0], **body}
            else:
                comment = {"id": comment_id, "ownerId": user[0], "text": str(body.get("text", ""))}
            self.comments[int(comment["id"]) if str(comment["id"]).isdigit() else comment_id] = comment
        return self._json(201, comment)

    def comment_read(self, environ, raw_id: str):
        if self._user(environ) is None:
            return self._json(401, {"error": "unauthorized"})
        comment = self.comments.get(int(raw_id)) if raw_id.isdigit() else None
        if comment is None:
            return self._json(404, {"error": "not found"})
        return self._json(200, comment)

    def login(self, environ):
        with self.lock:
            self.login_attempts += 1
            attempts = self.login_attempts
        if not self.vulnerable and attempts > LOGIN_LIMIT:
            if self.throttled:
                time.sleep(THROTTLE_DELAY_S)
            else:
                return self._json(429, {"error": "too many attempts"})
        body = self._body(environ)
        with self.lock:
            row = self.db.execute("SELECT token FROM users WHERE name = ? AND password = ?",
                                  (str(body.get("username")), str(body.get("password")))).fetchone()
        if row is None:
            return self._json(401, {"error": "invalid credentials"})
        return self._json(200, {"token": row[0]})


class RunningTarget:
    """A ShopApp served on 127.0.0.1 in a background thread (``base_url``; ``stop()``)."""

    def __init__(self, app):
        self.app = app
        self.server = make_server("127.0.0.1", 0, app, server_class=_Server, handler_class=_QuietHandler)
        self.base_url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class EchoApp:
    """Answers what it received, for runner tests.

    ``/slow?ms=N`` waits N ms; ``/status/N`` answers status N; ``/redirect`` answers 302;
    ``/cookie`` sets a cookie; ``POST /items`` answers ``{"id": 5}``; anything else echoes
    ``{method, path, query, headers (lower-case names), body}``.
    """

    def __init__(self):
        self.requests_seen = 0

    def __call__(self, environ, start_response):
        from urllib.parse import parse_qsl

        self.requests_seen += 1
        path = environ.get("PATH_INFO", "")
        query = dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length).decode() if length else ""
        status, headers, payload = 200, [("Content-Type", "application/json")], None
        if path == "/slow":
            time.sleep(int(query.get("ms", "0")) / 1000)
        elif path.startswith("/status/"):
            status = int(path.rsplit("/", 1)[1])
        elif path == "/redirect":
            status, headers = 302, [*headers, ("Location", "/elsewhere")]
        elif path == "/cookie":
            headers = [*headers, ("Set-Cookie", "session=abc; Path=/")]
        elif path == "/items" and environ["REQUEST_METHOD"] == "POST":
            status, payload = 201, {"id": 5}
        if payload is None:
            payload = {
                "method": environ["REQUEST_METHOD"], "path": path, "query": query, "body": body,
                "headers": {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
                | ({"content-type": environ["CONTENT_TYPE"]} if environ.get("CONTENT_TYPE") else {}),
            }
        data = json.dumps(payload).encode()
        start_response(f"{status} X", [*headers, ("Content-Length", str(len(data)))])
        return [data]
