"""Small WSGI APIs modelling common real flaws, each with a fixed twin (served with RunningTarget).

Written after the way such flaws show up in real services, not after the templates:

* ``JwtApi``: ``GET /api/me`` behind ``Authorization: Bearer <HS256 JWT>``, checking the
  signature and ``exp`` by hand. Flaws: a guessable signing secret (``secret="secret"``),
  or a decoder that trusts the token's own ``alg`` and accepts ``none``.
* ``SearchPage``: ``GET /search?q=`` answering what was searched. ``mode``: ``"html"``
  reflects it unescaped in an HTML page (flaw), ``"json-as-html"`` answers JSON with a
  ``text/html`` content type (flaw), ``"json"`` answers ``application/json`` (fixed),
  ``"escaped"`` an HTML page escaping it (fixed).
* ``UserDirectory``: ``GET /api/v1/users/{username}`` and ``GET /api/v1/lookup?username=``
  over sqlite3. Vulnerable: the username concatenated into the SQL; the path route
  answers a generic 500 page on a database error, the lookup route a debug page quoting
  it. Fixed: parameterised; an unknown user gets an HTML 404 page echoing the name
  escaped as template engines do (``'`` as ``&#39;``). ``tarpit_s``: the fixed twin behind a
  filter that holds every input naming a SQL sleep function (``sleep``, ``waitfor``) for that
  long, whatever the delay asked, as some web application firewalls do.
* ``AccountApi``: accounts keyed by email, after OWASP API3/API2 write-ups. Vulnerable: the account
  row serialised whole (``GET /api/account`` shows ``passwordHash``, ``GET /api/team`` each member's
  ``auth.password_digest``), ``POST /api/password/forgot`` answers 404 "No account with that email"
  for unknown addresses, and ``POST /api/session`` says "Unknown email" or "Incorrect password"
  (both 401). Fixed: explicit fields (``hasPassword``, ``passwordChangedAt`` only), one 202 answer
  for every reset request, one 401 message for every failed login.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import sqlite3
import threading
import time
from urllib.parse import parse_qs


def _answer(start_response, status: int, body: str, content_type: str) -> list[bytes]:
    payload = body.encode("utf-8")
    start_response(f"{status} X", [("Content-Type", content_type), ("Content-Length", str(len(payload)))])
    return [payload]


def _query(environ, name: str) -> str:
    return parse_qs(environ.get("QUERY_STRING", "")).get(name, [""])[0]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class JwtApi:
    def __init__(self, *, secret: str, accept_none: bool = False):
        self.secret = secret.encode()
        self.accept_none = accept_none

    def issue(self, sub: str, lifetime_s: int = 3600) -> str:
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = _b64(json.dumps({"sub": sub, "exp": int(time.time()) + lifetime_s}).encode())
        signature = hmac.new(self.secret, f"{header}.{claims}".encode(), hashlib.sha256).digest()
        return f"{header}.{claims}.{_b64(signature)}"

    def claims(self, token: str) -> dict | None:
        try:
            header_part, claims_part, signature_part = token.split(".")
            header = json.loads(_unb64(header_part))
            claims = json.loads(_unb64(claims_part))
            signature = _unb64(signature_part)
        except ValueError:
            return None
        if str(header.get("alg", "")).lower() == "none":
            return claims if self.accept_none else None
        if header.get("alg") != "HS256":
            return None
        expected = hmac.new(self.secret, f"{header_part}.{claims_part}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, signature):
            return None
        if not isinstance(claims.get("exp"), int) or claims["exp"] < time.time():
            return None
        return claims

    def __call__(self, environ, start_response):
        if environ.get("PATH_INFO") != "/api/me":
            return _answer(start_response, 404, '{"error": "not found"}', "application/json")
        header = environ.get("HTTP_AUTHORIZATION", "")
        claims = self.claims(header[7:]) if header.startswith("Bearer ") else None
        if claims is None:
            return _answer(start_response, 401, '{"error": "invalid token"}', "application/json")
        return _answer(start_response, 200, json.dumps({"user": claims.get("sub"), "plan": "pro"}), "application/json")


class SearchPage:
    def __init__(self, *, mode: str):
        self.mode = mode

    def __call__(self, environ, start_response):
        q = _query(environ, "q")
        if self.mode == "html":
            return _answer(start_response, 200, f"<html><body><h1>You searched for {q}</h1></body></html>", "text/html")
        if self.mode == "escaped":
            shown = q.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            return _answer(start_response, 200, f"<html><body><h1>You searched for {shown}</h1></body></html>",
                           "text/html; charset=utf-8")
        body = json.dumps({"query": q, "results": []})
        return _answer(start_response, 200, body, "text/html" if self.mode == "json-as-html" else "application/json")


class UserDirectory:
    def __init__(self, *, vulnerable: bool, tarpit_s: float = 0.0):
        self.vulnerable = vulnerable
        self.tarpit_s = tarpit_s
        self.lock = threading.Lock()
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE TABLE accounts (username TEXT PRIMARY KEY, email TEXT, city TEXT)")
        self.db.executemany("INSERT INTO accounts VALUES (?, ?, ?)",
                            [("alice", "alice@example.com", "Lyon"), ("bob", "bob@example.com", "Oslo")])

    def find(self, username: str):
        with self.lock:
            if self.vulnerable:
                return self.db.execute(f"SELECT username, email, city FROM accounts WHERE username = '{username}'").fetchone()
            return self.db.execute("SELECT username, email, city FROM accounts WHERE username = ?", (username,)).fetchone()

    @staticmethod
    def not_found_page(username: str) -> str:
        shown = (username.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                 .replace('"', "&#34;").replace("'", "&#39;"))
        return f"<html><body><h1>Not found</h1><p>No account named {shown}.</p></body></html>"

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith("/api/v1/users/"):
            username, debug = path[len("/api/v1/users/"):], False
        elif path == "/api/v1/lookup":
            username, debug = _query(environ, "username"), True
        else:
            return _answer(start_response, 404, "<h1>Not found</h1>", "text/html")
        if self.tarpit_s and any(word in username.lower() for word in ("sleep", "waitfor")):
            time.sleep(self.tarpit_s)
        try:
            row = self.find(username)
        except sqlite3.Error as exc:
            page = f"<h1>Server error</h1><pre>sqlite3.{type(exc).__name__}: {exc}</pre>" if debug else \
                "<h1>Server Error (500)</h1>"
            return _answer(start_response, 500, page, "text/html")
        if row is None:
            return _answer(start_response, 404, self.not_found_page(username), "text/html; charset=utf-8")
        return _answer(start_response, 200, json.dumps({"username": row[0], "email": row[1], "city": row[2]}),
                       "application/json")


ACCOUNTS = {"alice@acme.test": (1, "Alice", "tok-alice", "Alice-pw-1"), "bob@acme.test": (2, "Bob", "tok-bob", "Bob-pw-2")}


class AccountApi:
    def __init__(self, *, vulnerable: bool):
        self.vulnerable = vulnerable

    def _row(self, email: str) -> dict:
        number, name, _, password = ACCOUNTS[email]
        digest = "$2b$12$" + hashlib.sha256(password.encode()).hexdigest()[:53]
        row = {"id": number, "name": name, "email": email, "createdAt": "2025-01-0%dT10:00:00Z" % number}
        if self.vulnerable:  # the ORM object as it is
            return {**row, "passwordHash": digest}
        return {**row, "hasPassword": True, "passwordChangedAt": "2025-02-01T09:00:00Z"}

    def __call__(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            body = json.loads(environ["wsgi.input"].read(length) or b"{}") if length else {}
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        status, answer = self.route(method, path, body, environ.get("HTTP_AUTHORIZATION", ""))
        return _answer(start_response, status, json.dumps(answer), "application/json")

    def route(self, method: str, path: str, body: dict, authorization: str):
        email = str(body.get("email", "")).lower()
        if method == "POST" and path == "/api/password/forgot":
            if self.vulnerable and email not in ACCOUNTS:
                return 404, {"error": "No account with that email."}
            if self.vulnerable:
                return 200, {"message": "Check your inbox!"}
            return 202, {"message": "If this email is registered, you will receive a reset link shortly."}
        if method == "POST" and path == "/api/session":
            account = ACCOUNTS.get(email)
            if account and body.get("password") == account[3]:
                return 200, {"token": account[2]}
            if self.vulnerable:
                return 401, {"error": "Unknown email." if account is None else "Incorrect password."}
            return 401, {"error": "Invalid email or password."}
        caller = next((e for e, a in ACCOUNTS.items() if authorization == f"Bearer {a[2]}"), None)
        if caller is None:
            return 401, {"error": "Authentication required."}
        if method == "GET" and path == "/api/account":
            return 200, self._row(caller)
        if method == "GET" and path == "/api/team":
            members = [{"id": r["id"], "name": r["name"], **({"auth": {"password_digest": r["passwordHash"]}}
                                                             if self.vulnerable else {})}
                       for r in (self._row(e) for e in ACCOUNTS)]
            return 200, {"team": "acme", "members": members}
        return 404, {"error": "Not found."}
