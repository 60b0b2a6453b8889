"""Record a twin's traffic the way an agent sees it: a WSGI wrapper that keeps every exchange as a
raw trace (Metlo's pure-Python agent shape), and the ordinary session of two users that produces it."""
from __future__ import annotations

import http.client
import io
import json
from urllib.parse import parse_qsl

from tests.inventory.ingest_support import raw_trace

class Recorder:
    """Wraps a WSGI app; ``traces`` are the exchanges as raw traces of host ``host``."""

    def __init__(self, app, host: str):
        self.app, self.host, self.traces = app, host, []

    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""

        environ["wsgi.input"] = io.BytesIO(body)
        answer: dict = {}

        def capture(status, headers, exc_info=None):
            answer.update(status=int(status.split()[0]), headers=dict(headers))
            return start_response(status, headers, exc_info)

        chunks = list(self.app(environ, capture))
        headers = {k[5:].replace("_", "-").title(): v for k, v in environ.items() if k.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["Content-Type"] = environ["CONTENT_TYPE"]
        self.traces.append(raw_trace(
            host=self.host, path=environ.get("PATH_INFO", ""), method=environ["REQUEST_METHOD"],
            status=answer["status"], query=parse_qsl(environ.get("QUERY_STRING", "")), headers=headers,
            body=body.decode(), response_headers=answer["headers"], response_body=b"".join(chunks).decode()))
        return chunks

def call(base_url: str, method: str, path: str, *, token: str | None = None, body: dict | None = None):
    """One JSON request; (status, decoded body or None)."""
    host, port = base_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=5)
    headers = {"Accept": "application/json", "User-Agent": "books-client/1.0"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    return response.status, (json.loads(raw) if raw else None)

def user_session(base_url: str) -> None:
    """Ordinary use by two users (alice, bob), a newcomer (carol) and the administrator (root): what an
    agent would see."""
    status, _ = call(base_url, "POST", "/users/v1/register",
                     body={"username": "carol", "password": "Carol-pw-3", "email": "carol@books.test"})
    assert status == 201
    tokens = {}
    for name, password in (("alice", "Alice-pw-1"), ("bob", "Bob-pw-2"), ("carol", "Carol-pw-3")):
        status, answer = call(base_url, "POST", "/users/v1/login", body={"username": name, "password": password})
        assert status == 200, answer
        tokens[name] = answer["auth_token"]
    call(base_url, "POST", "/users/v1/login", body={"username": "alice", "password": "typo"})
    for name, token in tokens.items():
        status, me = call(base_url, "GET", f"/users/v1/{name}", token=token)
        assert status == 200, me
        assert call(base_url, "PUT", f"/users/v1/{me['id']}/email", token=token,
                    body={"email": f"{name}@mail.books.test"})[0] == 204
    assert call(base_url, "GET", "/users/v1", token=tokens["alice"])[0] == 200
    for name, token in tokens.items():
        status, account = call(base_url, "GET", "/account/v1/me", token=token)
        assert status == 200, account
    for name in ("alice", "carol"):
        assert call(base_url, "PATCH", "/account/v1/me", token=tokens[name], body={"bio": f"{name} reads a lot"})[0] == 200
    assert call(base_url, "POST", "/newsletter/v1/subscriptions", body={"email": "dave@mail.test"})[0] == 202
    assert call(base_url, "PUT", "/users/v1/carol/password", token=tokens["carol"],
                body={"password": "Carol-pw-4"})[0] == 204
    assert call(base_url, "POST", "/books/v1", token=tokens["carol"],
                body={"title": "Carol's notes", "secret": "carol-secret-9"})[0] == 201
    assert call(base_url, "PUT", "/books/v1/3", token=tokens["carol"],
                body={"title": "Carol's poems", "secret": "carol-secret-8b"})[0] == 200
    assert call(base_url, "GET", "/books/v1", token=tokens["bob"])[0] == 200
    for name, book in (("alice", 1), ("bob", 2), ("carol", 3)):
        assert call(base_url, "GET", f"/books/v1/{book}", token=tokens[name])[0] == 200
    for name, token in tokens.items():
        assert call(base_url, "PUT", "/account/v1/profile", token=token,
                    body={"username": name, "bio": f"{name} reads a lot"})[0] == 204
    # The administrator promotes carol: the role change is only ever seen with an admin's token.
    status, answer = call(base_url, "POST", "/users/v1/login", body={"username": "root", "password": "Root-pw-0"})
    assert status == 200, answer
    assert call(base_url, "PUT", "/users/v1/carol/role", token=answer["auth_token"], body={"role": "librarian"})[0] == 204
