"""A small API with a login route issuing short-lived tokens, for the identities tests.

* ``POST /auth/login`` ``{"username", "password"}`` → ``{"data": {"token": …}}`` (401 on a wrong
  password). Each token is good for ``uses`` requests to protected routes, then answered 401 —
  so tokens expire in the middle of a run, deterministically.
* ``GET /me`` → ``{"user": name}`` with ``Authorization: Bearer <token>``; 401 otherwise
  (a bare token without its scheme is refused too).
* ``GET /notes/{id}`` → the note when the caller owns it, 403 otherwise.

``logins`` counts successful logins per user; ``auth_headers`` keeps every Authorization header seen.
"""
from __future__ import annotations

import itertools
import json
import threading

USERS = {"alice": "pw-alice-Secret1", "bob": "pw-bob-Secret2"}
NOTES = {"1": ("alice", "alice's note"), "2": ("bob", "bob's note")}


class LoginApp:
    def __init__(self, uses: int = 2):
        self.uses = uses
        self.lock = threading.Lock()
        self.counter = itertools.count(1)
        self.tokens: dict[str, list] = {}  # token -> [user, uses left]
        self.logins: dict[str, int] = {name: 0 for name in USERS}
        self.auth_headers: list[str] = []

    def __call__(self, environ, start_response):
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        if method == "POST" and path == "/auth/login":
            status, body = self._login(environ)
        elif method == "GET" and path == "/me":
            status, body = self._protected(environ, lambda user: (200, {"user": user}))
        elif method == "GET" and path.startswith("/notes/"):
            status, body = self._protected(environ, lambda user: self._note(user, path.rsplit("/", 1)[1]))
        else:
            status, body = 404, {"error": "not found"}
        payload = json.dumps(body).encode()
        start_response(f"{status} X", [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]

    def _login(self, environ):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        try:
            sent = json.loads(environ["wsgi.input"].read(length) or b"{}")
        except ValueError:
            return 400, {"error": "bad json"}
        user = sent.get("username") if isinstance(sent, dict) else None
        if user not in USERS or sent.get("password") != USERS[user]:
            return 401, {"error": "wrong credentials"}
        with self.lock:
            token = f"tk{next(self.counter)}-{user}"
            self.tokens[token] = [user, self.uses]
            self.logins[user] += 1
        return 200, {"data": {"token": token, "expiresIn": self.uses}}

    def _protected(self, environ, answer):
        header = environ.get("HTTP_AUTHORIZATION", "")
        with self.lock:
            self.auth_headers.append(header)
            scheme, _, token = header.partition(" ")
            entry = self.tokens.get(token) if scheme == "Bearer" else None
            if entry is None or entry[1] <= 0:
                return 401, {"error": "token missing or expired"}
            entry[1] -= 1
        return answer(entry[0])

    @staticmethod
    def _note(user: str, note_id: str):
        if note_id not in NOTES:
            return 404, {"error": "no such note"}
        owner, text = NOTES[note_id]
        return (200, {"id": note_id, "text": text}) if owner == user else (403, {"error": "not yours"})
