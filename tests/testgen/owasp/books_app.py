"""A small users-and-books JSON API with switchable OWASP API Top 10 flaws, served on 127.0.0.1.

Not shaped after apiscope's templates: it follows the route and auth style common to practice APIs
and public write-ups (versioned ``/users/v1/...`` paths keyed by username, HS256 bearer JWTs,
sqlite3). ``BooksApp(flaws={...})`` switches flaws on one by one; ``BooksApp()`` is the fixed twin.

Routes (``Authorization: Bearer <jwt>`` unless said otherwise):

* ``POST /users/v1/register`` (no auth) ``{username, password, email}`` -> 201.
  ``mass_assignment``: an ``admin`` field in the body is stored (the caller becomes admin).
* ``POST /users/v1/login`` (no auth) ``{username, password}`` -> ``{auth_token}``.
  ``enumeration``: an unknown user and a wrong password get different answers (404 / 401).
  ``unthrottled_login``: no limit; fixed: 429 after ``LOGIN_FAILURES_ALLOWED`` failed attempts for
  one username (known or not) within ``WINDOW_S``.
* Registration and password changes are throttled in every twin: ``ROUTE_LIMIT`` per ``WINDOW_S``
  (a well-built API limits its credential flows; these limits are not flaws under test).
* ``GET /users/v1``: all users. ``data_exposure``: each entry carries the stored password.
* ``GET /users/v1/{username}``: the caller's own user with its numeric ``id`` (admins: any). ``sqli``: the username is
  concatenated into the SQL text and database errors are answered.
* ``PUT /users/v1/{username}/password`` ``{password}``: ``bola_password``: any user's password is
  changed; fixed: only the caller's own (403 otherwise).
* ``PUT /users/v1/{id}/email`` ``{email}`` (numeric user id): ``bola_email``: any user's email is
  changed; fixed: only the caller's own (403 otherwise).
* ``PUT /users/v1/{username}/role`` ``{role}`` (``reader``, ``librarian``, or ``admin``: the administrator flag): an admin function.
  ``bfla_role``: the route checks the token but not the caller's role, so any user can make anyone
  (themselves included) an admin; fixed: admins only (403).
* ``PUT /account/v1/profile`` ``{username, bio}``: the caller's profile. ``bola_body``: the profile
  changed is the one the body names (the client is trusted); fixed: a body naming another user is
  refused (403).
* ``GET /account/v1/me``: the caller's account ``{username, email, role, bio}``; roles are ``reader`` and
  ``librarian`` (a CHECK constraint: any other value is a database error, answered 500). Librarians
  read every book. ``PATCH /account/v1/me`` ``{bio}``: ``mass_assignment_role``: a ``role`` in the
  body is stored too (the caller becomes a librarian); fixed: only ``bio`` and ``email``.
* ``POST /newsletter/v1/subscriptions`` (no auth) ``{email}`` -> 202 ``{"status": "success"}``, no id, and
  nothing reads a subscription back. ``mass_assignment_unreadable``: a ``premium``/``isAdmin`` flag in the
  body is stored with it (invisible from outside). Throttled in every twin like registration.
* ``GET /books/v1``: titles. ``POST /books/v1`` ``{title, secret}`` -> 201 the book.
* ``GET /books/v1/{id}``: a book with its secret. ``bola_read``: anyone's; fixed: the owner's only (404).
* ``PUT /books/v1/{id}`` ``{title, secret}`` -> 200 the book. ``bola_book_write``: anyone's book is
  changed; fixed: the owner's only (404). Book 3 is carol's (seeded; carol registers in traffic).
* JWT: ``weak_jwt_secret``: signed with a dictionary word; ``jwt_alg_none``: unsigned tokens
  (``alg: none``) are accepted.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
import time

FLAWS = ("sqli", "bola_password", "bola_email", "bola_read", "mass_assignment", "data_exposure", "enumeration",
         "unthrottled_login", "weak_jwt_secret", "jwt_alg_none", "bfla_role", "bola_body", "mass_assignment_role",
         "mass_assignment_unreadable", "bola_book_write")
ROLES = ("reader", "librarian")  # the account's role column (a CHECK constraint)
ADMIN_ROLE = "admin"  # the role route's third value: sets the administrator flag
WEAK_SECRET = "secret"
LOGIN_FAILURES_ALLOWED = 5
ROUTE_LIMIT = 5
WINDOW_S = 30.0
TOKEN_LIFETIME_S = 3600
SEED_USERS = [("alice", "Alice-pw-1", "alice@books.test", "reader"), ("bob", "Bob-pw-2", "bob@books.test", "librarian")]
SEED_ADMIN = ("root", "Root-pw-0", "root@books.test")
SEED_BOOKS = [("alice", "Alice's diary", "alice-secret-42"), ("bob", "Bob's ledger", "bob-secret-77"),
              ("carol", "Carol's poems", "carol-secret-8")]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Jwt:
    """HS256 tokens; ``accept_none`` lets unsigned ones in (the flaw)."""

    def __init__(self, secret: str, *, accept_none: bool):
        self.secret = secret.encode()
        self.accept_none = accept_none

    def _sign(self, signing_input: str) -> str:
        return _b64(hmac.new(self.secret, signing_input.encode(), hashlib.sha256).digest())

    def issue(self, username: str) -> str:
        head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = _b64(json.dumps({"sub": username, "exp": int(time.time()) + TOKEN_LIFETIME_S}).encode())
        return f"{head}.{body}.{self._sign(f'{head}.{body}')}"

    def subject(self, token: str) -> str | None:
        """The token's user name when it is valid, else None."""
        parts = token.split(".")
        if len(parts) != 3:
            return None
        try:
            header, claims = json.loads(_unb64(parts[0])), json.loads(_unb64(parts[1]))
        except ValueError:
            return None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            return None
        alg = str(header.get("alg", "")).lower()
        if alg == "none":
            if not self.accept_none:
                return None
        elif alg != "hs256" or not hmac.compare_digest(parts[2], self._sign(f"{parts[0]}.{parts[1]}")):
            return None
        if not isinstance(claims.get("exp"), int) or claims["exp"] < time.time():
            return None
        return claims.get("sub") if isinstance(claims.get("sub"), str) else None


class BooksApp:
    def __init__(self, flaws=()):
        unknown = set(flaws) - set(FLAWS)
        if unknown:
            raise ValueError(f"unknown flaws {sorted(unknown)}")
        self.flaws = frozenset(flaws)
        self.jwt = Jwt(WEAK_SECRET if "weak_jwt_secret" in self.flaws else secrets.token_hex(32),
                       accept_none="jwt_alg_none" in self.flaws)
        self.lock = threading.Lock()
        self.attempts: dict[str, list[float]] = {}
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT UNIQUE, password TEXT, email TEXT, "
                        "admin INTEGER, role TEXT NOT NULL DEFAULT 'reader' CHECK (role IN ('reader', 'librarian')), "
                        "bio TEXT NOT NULL DEFAULT '')")
        self.db.execute("CREATE TABLE subscriptions (email TEXT, premium INTEGER)")
        self.db.execute("CREATE TABLE books (id INTEGER PRIMARY KEY, owner TEXT, title TEXT, secret TEXT)")
        self.db.executemany("INSERT INTO users (username, password, email, admin, role) VALUES (?, ?, ?, 0, ?)",
                            SEED_USERS)
        self.db.execute("INSERT INTO users (username, password, email, admin, role) VALUES (?, ?, ?, 1, 'librarian')",
                        SEED_ADMIN)
        self.db.executemany("INSERT INTO books (owner, title, secret) VALUES (?, ?, ?)", SEED_BOOKS)

    def _throttled(self, key: str, limit: int, *, count: bool = True) -> bool:
        """Whether ``key`` already had ``limit`` events within the window; ``count`` records one more."""
        now = time.monotonic()
        with self.lock:
            recent = [t for t in self.attempts.get(key, []) if now - t < WINDOW_S]
            if count:
                recent.append(now)
            self.attempts[key] = recent
            return len(recent) > limit if count else len(recent) >= limit

    def token_for(self, username: str) -> str:
        return self.jwt.issue(username)

    # --- plumbing ----------------------------------------------------------------------
    def __call__(self, environ, start_response):
        try:
            status, value = self.route(environ)
        except sqlite3.Error as exc:
            detail = f"sqlite3.{type(exc).__name__}: {exc}" if "sqli" in self.flaws else "internal error"
            status, value = 500, {"status": "fail", "message": detail}
        payload = b"" if value is None else json.dumps(value).encode()
        headers = [("Content-Length", str(len(payload)))]
        if value is not None:
            headers.append(("Content-Type", "application/json"))
        start_response(f"{status} X", headers)
        return [payload]

    @staticmethod
    def _body(environ) -> dict:
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            value = json.loads(environ["wsgi.input"].read(length) or b"{}") if length else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _caller(self, environ) -> tuple[str, bool] | None:
        """(username, admin) of a valid bearer token of an existing user, else None."""
        header = environ.get("HTTP_AUTHORIZATION", "")
        if not header.startswith("Bearer "):
            return None
        name = self.jwt.subject(header[7:].strip())
        with self.lock:
            row = self.db.execute("SELECT username, admin, id FROM users WHERE username = ?", (name,)).fetchone()
        return (row[0], bool(row[1]), row[2]) if row else None

    def route(self, environ):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if path == "/users/v1/register" and method == "POST":
            return self.register(environ)
        if path == "/users/v1/login" and method == "POST":
            return self.login(environ)
        if path == "/newsletter/v1/subscriptions" and method == "POST":
            return self.subscribe(environ)
        caller = self._caller(environ)
        if caller is None:
            return 401, {"status": "fail", "message": "Invalid token. Please log in again."}
        if path == "/users/v1" and method == "GET":
            return self.users_list()
        if (m := re.fullmatch(r"/users/v1/([^/]+)", path)) and method == "GET":
            return self.user_read(caller, m.group(1))
        if (m := re.fullmatch(r"/users/v1/([^/]+)/password", path)) and method == "PUT":
            return self.password_change(environ, caller, m.group(1))
        if (m := re.fullmatch(r"/users/v1/([^/]+)/email", path)) and method == "PUT":
            return self.email_change(environ, caller, m.group(1))
        if (m := re.fullmatch(r"/users/v1/([^/]+)/role", path)) and method == "PUT":
            return self.role_change(environ, caller, m.group(1))
        if path == "/account/v1/profile" and method == "PUT":
            return self.profile_change(environ, caller)
        if path == "/account/v1/me" and method == "GET":
            return self.account_read(caller)
        if path == "/account/v1/me" and method == "PATCH":
            return self.account_update(environ, caller)
        if path == "/books/v1" and method == "GET":
            return self.books_list()
        if path == "/books/v1" and method == "POST":
            return self.book_create(environ, caller)
        if (m := re.fullmatch(r"/books/v1/([^/]+)", path)) and method == "GET":
            return self.book_read(caller, m.group(1))
        if (m := re.fullmatch(r"/books/v1/([^/]+)", path)) and method == "PUT":
            return self.book_update(environ, caller, m.group(1))
        return 404, {"status": "fail", "message": "Not found"}

    # --- users -------------------------------------------------------------------------
    def register(self, environ):
        if self._throttled("register", ROUTE_LIMIT):
            return 429, {"status": "fail", "message": "Too many requests"}
        body = self._body(environ)
        fields = [body.get(k) for k in ("username", "password", "email")]
        if not all(isinstance(v, str) and v for v in fields):
            return 400, {"status": "fail", "message": "username, password and email are required"}
        admin = bool(body.get("admin")) if "mass_assignment" in self.flaws else False
        with self.lock:
            if self.db.execute("SELECT 1 FROM users WHERE username = ?", (fields[0],)).fetchone():
                return 400, {"status": "fail", "message": "User already exists"}
            self.db.execute("INSERT INTO users (username, password, email, admin) VALUES (?, ?, ?, ?)",
                            (*fields, int(admin)))
        return 201, {"status": "success", "message": "Successfully registered", "username": fields[0]}

    def login(self, environ):
        body = self._body(environ)
        failures = f"login:{body.get('username')}"
        if "unthrottled_login" not in self.flaws and self._throttled(failures, LOGIN_FAILURES_ALLOWED, count=False):
            return 429, {"status": "fail", "message": "Too many failed attempts, try again later"}
        with self.lock:
            row = self.db.execute("SELECT password FROM users WHERE username = ?",
                                  (str(body.get("username")),)).fetchone()
        if row is not None and hmac.compare_digest(row[0], str(body.get("password"))):
            return 200, {"status": "success", "auth_token": self.token_for(str(body["username"]))}
        self._throttled(failures, LOGIN_FAILURES_ALLOWED)
        if "enumeration" in self.flaws:
            if row is None:
                return 404, {"status": "fail", "message": "Username does not exist"}
            return 401, {"status": "fail", "message": "Password is not correct for the given username."}
        return 401, {"status": "fail", "message": "Username or password is incorrect."}

    def users_list(self):
        with self.lock:
            rows = self.db.execute("SELECT username, email, password FROM users ORDER BY username").fetchall()
        exposed = "data_exposure" in self.flaws
        return 200, {"users": [{"username": u, "email": e, **({"password": p} if exposed else {})}
                               for u, e, p in rows]}

    def user_read(self, caller, username: str):
        with self.lock:
            if "sqli" in self.flaws:
                row = self.db.execute("SELECT username, email, admin, id, role, bio FROM users WHERE username = '"
                                      + username + "'").fetchone()
            else:
                row = self.db.execute("SELECT username, email, admin, id, role, bio FROM users WHERE username = ?",
                                      (username,)).fetchone()
        if row is None or (row[0] != caller[0] and not caller[1]):
            return 404, {"status": "fail", "message": "User not found"}
        return 200, {"id": row[3], "username": row[0], "email": row[1], "admin": bool(row[2]), "role": row[4],
                     "bio": row[5]}

    def account_read(self, caller):
        with self.lock:
            row = self.db.execute("SELECT username, email, role, bio FROM users WHERE username = ?",
                                  (caller[0],)).fetchone()
        return 200, {"username": row[0], "email": row[1], "role": row[2], "bio": row[3]}

    def account_update(self, environ, caller):
        body = self._body(environ)
        allowed = ("bio", "email", "role") if "mass_assignment_role" in self.flaws else ("bio", "email")
        changes = {k: body[k] for k in allowed if isinstance(body.get(k), str)}
        with self.lock:
            for column, value in changes.items():  # an unknown role breaks the CHECK constraint: a 500
                self.db.execute(f"UPDATE users SET {column} = ? WHERE username = ?", (value, caller[0]))
        return self.account_read(caller)

    def subscribe(self, environ):
        if self._throttled("subscribe", ROUTE_LIMIT):
            return 429, {"status": "fail", "message": "Too many requests"}
        body = self._body(environ)
        if not isinstance(body.get("email"), str) or "@" not in body["email"]:
            return 400, {"status": "fail", "message": "a valid email is required"}
        flagged = "mass_assignment_unreadable" in self.flaws and bool(body.get("premium") or body.get("isAdmin"))
        with self.lock:
            self.db.execute("INSERT INTO subscriptions (email, premium) VALUES (?, ?)", (body["email"], int(flagged)))
        return 202, {"status": "success"}

    def password_change(self, environ, caller, username: str):
        if self._throttled(f"password:{caller[0]}", ROUTE_LIMIT):
            return 429, {"status": "fail", "message": "Too many requests"}
        if username != caller[0] and "bola_password" not in self.flaws:
            return 403, {"status": "fail", "message": "You can only change your own password"}
        password = self._body(environ).get("password")
        if not isinstance(password, str) or not password:
            return 400, {"status": "fail", "message": "password is required"}
        with self.lock:
            changed = self.db.execute("UPDATE users SET password = ? WHERE username = ?",
                                      (password, username)).rowcount
        return (204, None) if changed else (404, {"status": "fail", "message": "User not found"})

    def email_change(self, environ, caller, raw_id: str):
        if not raw_id.isdigit():
            return 404, {"status": "fail", "message": "User not found"}
        if int(raw_id) != caller[2] and "bola_email" not in self.flaws:
            return 403, {"status": "fail", "message": "You can only change your own email"}
        email = self._body(environ).get("email")
        if not isinstance(email, str) or "@" not in email:
            return 400, {"status": "fail", "message": "a valid email is required"}
        with self.lock:
            changed = self.db.execute("UPDATE users SET email = ? WHERE id = ?", (email, int(raw_id))).rowcount
        return (204, None) if changed else (404, {"status": "fail", "message": "User not found"})

    def role_change(self, environ, caller, username: str):
        if not caller[1] and "bfla_role" not in self.flaws:
            return 403, {"status": "fail", "message": "Only administrators can change roles"}
        role = self._body(environ).get("role")
        if role not in (*ROLES, ADMIN_ROLE):
            return 400, {"status": "fail", "message": f"role must be one of {', '.join((*ROLES, ADMIN_ROLE))}"}
        with self.lock:
            if role == ADMIN_ROLE:
                changed = self.db.execute("UPDATE users SET admin = 1 WHERE username = ?", (username,)).rowcount
            else:
                changed = self.db.execute("UPDATE users SET role = ?, admin = 0 WHERE username = ?",
                                          (role, username)).rowcount
        return (204, None) if changed else (404, {"status": "fail", "message": "User not found"})

    def profile_change(self, environ, caller):
        body = self._body(environ)
        username, bio = body.get("username", caller[0]), body.get("bio")
        if not isinstance(username, str) or not isinstance(bio, str):
            return 400, {"status": "fail", "message": "username and bio must be strings"}
        if username != caller[0] and "bola_body" not in self.flaws:
            return 403, {"status": "fail", "message": "You can only change your own profile"}
        with self.lock:
            changed = self.db.execute("UPDATE users SET bio = ? WHERE username = ?", (bio, username)).rowcount
        return (204, None) if changed else (404, {"status": "fail", "message": "User not found"})

    # --- books -------------------------------------------------------------------------
    def books_list(self):
        with self.lock:
            rows = self.db.execute("SELECT id, title FROM books ORDER BY id").fetchall()
        return 200, {"books": [{"id": i, "title": t} for i, t in rows]}

    def book_create(self, environ, caller):
        body = self._body(environ)
        title, secret = body.get("title"), body.get("secret")
        if not isinstance(title, str) or not isinstance(secret, str) or not title:
            return 400, {"status": "fail", "message": "title and secret are required"}
        with self.lock:
            book_id = self.db.execute("INSERT INTO books (owner, title, secret) VALUES (?, ?, ?)",
                                      (caller[0], title, secret)).lastrowid
        return 201, {"id": book_id, "title": title, "owner": caller[0]}

    def _librarian(self, caller) -> bool:
        with self.lock:
            row = self.db.execute("SELECT role FROM users WHERE username = ?", (caller[0],)).fetchone()
        return bool(row) and row[0] == "librarian"

    def book_read(self, caller, raw_id: str):
        with self.lock:
            row = self.db.execute("SELECT id, owner, title, secret FROM books WHERE id = ?",
                                  (raw_id,)).fetchone() if raw_id.isdigit() else None
        if row is None or (row[1] != caller[0] and "bola_read" not in self.flaws and not self._librarian(caller)):
            return 404, {"status": "fail", "message": "Book not found"}
        return 200, {"id": row[0], "owner": row[1], "title": row[2], "secret": row[3]}

    def book_update(self, environ, caller, raw_id: str):
        body = self._body(environ)
        with self.lock:
            row = self.db.execute("SELECT owner FROM books WHERE id = ?", (raw_id,)).fetchone() \
                if raw_id.isdigit() else None
        if row is None or (row[0] != caller[0] and "bola_book_write" not in self.flaws):
            return 404, {"status": "fail", "message": "Book not found"}
        title, secret = body.get("title"), body.get("secret")
        if not isinstance(title, str) or not isinstance(secret, str) or not title:
            return 400, {"status": "fail", "message": "title and secret are required"}
        with self.lock:
            self.db.execute("UPDATE books SET title = ?, secret = ? WHERE id = ?", (title, secret, int(raw_id)))
        return self.book_read(caller, raw_id) if row[0] == caller[0] else (200, {"id": int(raw_id), "title": title})
