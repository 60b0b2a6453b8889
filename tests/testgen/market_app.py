"""A small marketplace API whose flaws are the patterns of issue #26, each switchable, served on 127.0.0.1.

Written after the way these patterns show up in public APIs (Express/Sequelize-style ``UserId`` owners,
VAmPI-style logins answering ``200 {"status": "fail"}``, cookie sessions, OAuth2 form logins, catalogue
routes clients call with a token), not after the templates. ``MarketApp(flaws={...})`` switches flaws on;
``MarketApp()`` is the fixed twin. Every request is recorded (``requests``: method, path, query, headers,
body) so tests can check what a run sent.

Users: alice (1, the test identity), bob (2, the second), carol (3, seen in traffic only) and root (4, an
administrator). ``Authorization: Bearer tok-<name>``, or a ``sid`` cookie from ``POST /api/session``, or an
``access_token`` from ``POST /oauth/token`` (form-encoded password grant).

* ``POST /api/login`` ``{username, password}`` → ``{"token"}``; a wrong password is ``200 {"status": "fail",
  "message": "Username or Password Incorrect!"}`` (as some real APIs answer).
* ``POST /api/session`` ``{username, password}`` → ``Set-Cookie: sid=…``. ``POST /oauth/token`` (form) →
  ``{"access_token", "token_type"}``.
* ``GET /api/products``: the public catalogue (any caller). ``GET /api/me``: the caller's profile; without
  credentials ``{"user": null}``. ``anon_me``: without credentials, alice's profile (a default session).
* ``GET /api/orders``: the caller's orders (email included). ``orders_anonymous``: without an
  ``Authorization`` header, alice's orders (a consent cookie is no credential either way).
* ``GET /api/orders/{id}``: an order (owner's only: refused with ``refusal``, 403 by default; 400, 500 and 429
  model the other refusal forms). ``bola_orders``: anyone's.
* ``PUT /api/users/{username}/password`` ``{password}``: the fixed twin changes the **caller's** own password
  whatever the path says (it trusts the token). ``bola_password``: the named user's.
* ``GET /api/users/{username}``: the caller's own profile (others: 403). ``PUT /api/profile`` ``{username, phone,
  bio}``: the caller's profile. ``profile_by_body``: the profile of the user the body names.
* ``PUT /api/users/update_role`` ``{username, role}``: administrators only. ``bfla_update_role``: anyone.
* ``GET /api/baskets/{id}`` → ``{"id", "UserId", "status", "items"}`` (Sequelize-style owner key): the owner's
  only (403). ``bola_basket_read``: anyone's. ``POST /api/baskets/{id}/checkout``: the owner's basket is ordered
  (items emptied). ``bola_checkout``: anyone's.
* ``GET /api/notes``: the caller's notes (the only view of a note). ``DELETE /api/notes/{id}`` (or
  ``DELETE /api/notes?noteId=``): the owner's (others: 404). ``bola_note_delete``: anyone's.
  ``PATCH /api/orders/{id}`` ``{note}``: the owner's order (``bola_orders``: anyone's).
* ``GET /api/wallet``: the ``sid`` cookie's wallet. ``wallet_any_sid``: any ``sid`` value is alice's session.
* ``POST /api/baskets/{id}/items`` ``{product, qty}``: adds to the owner's basket (others: 403);
  ``GET /api/baskets/{id}/items``: its items, owner only. ``bola_basket_add``: anyone's basket.
* ``GET /api/articles/{slug}`` and ``GET /api/articles/{slug}/comments``: public (anyone, no credentials
  needed), naming their authors. ``POST /api/articles/{slug}/comments`` ``{comment: {body}}``: any logged-in
  user comments on any article (by design). ``DELETE /api/articles/{slug}``: the author's (others: 403), its
  comments go with it; ``bola_article_delete``: anyone's. ``DELETE /api/articles/{slug}/comments/{id}``: the
  comment's author's, under its own article (others: 403, another article: 404); ``bola_comment_delete``:
  anyone's.
* ``POST /api/users`` ``{"user": {username, email, password}}``: a registration (anyone); a user name or
  email already taken is ``400``. ``register_role``: a ``role`` in the body is kept. ``GET /api/user``: the
  caller (``{"user": {username, email, role}}``).
* ``POST /api/products/{id}/favorite``: the caller favourites a product; ``DELETE`` the same path undoes
  it. Favouriting twice, or undoing a favourite that is not there, is ``400``.
* ``GET /api/profiles/{username}``: a public profile (anyone, no credentials needed), email included.
* ``GET /api/reset-db``: puts every record back as seeded (counted in ``resets``).
"""
from __future__ import annotations

import copy
import json
import secrets
import threading
from urllib.parse import parse_qsl

FLAWS = ("anon_me", "orders_anonymous", "bola_orders", "bola_password", "profile_by_body", "bfla_update_role",
         "bola_basket_read", "bola_checkout", "bola_note_delete", "wallet_any_sid", "bola_basket_add",
         "bola_article_delete", "bola_comment_delete", "register_role")
USERS = {
    "alice": {"id": 1, "password": "Alice-pw-1", "email": "alice@market.test", "phone": "+15550001", "bio": "",
              "role": "customer"},
    "bob": {"id": 2, "password": "Bob-pw-2", "email": "bob@market.test", "phone": "+15550002", "bio": "",
            "role": "customer"},
    "carol": {"id": 3, "password": "Carol-pw-3", "email": "carol@market.test", "phone": "+15550003",
              "bio": "carol's bio", "role": "customer"},
    "root": {"id": 4, "password": "Root-pw-4", "email": "root@market.test", "phone": "+15550004", "bio": "",
             "role": "admin"},
}
ORDERS = {10: "alice", 20: "bob", 30: "carol"}
BASKETS = {1: "alice", 2: "bob", 3: "carol"}
NOTES = {100: ("alice", "buy tea"), 200: ("bob", "call mum"), 300: ("carol", "carol's secret plan")}
ARTICLES = {"alice-tea": "alice", "bob-cups": "bob", "carol-pots": "carol"}
COMMENTS = {1: ("alice-tea", "alice", "first brew"), 2: ("bob-cups", "bob", "my cups"), 3: ("carol-pots", "carol", "my pots")}
PRODUCTS = [{"id": 1, "name": "Tea", "price": 3}, {"id": 2, "name": "Cup", "price": 7}]


class MarketApp:
    def __init__(self, flaws: set[str] | frozenset = frozenset(), *, refusal: int = 403):
        unknown = set(flaws) - set(FLAWS)
        if unknown:
            raise ValueError(f"unknown flaws {sorted(unknown)}")
        self.flaws = frozenset(flaws)
        self.refusal = refusal
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.resets = 0
        self.sessions: dict[str, str] = {}
        self._seed()

    def _seed(self) -> None:
        self.users = copy.deepcopy(USERS)
        self.tokens = {f"tok-{name}": name for name in USERS}
        self.baskets = {i: {"id": i, "UserId": USERS[owner]["id"], "status": "open",
                            "items": [{"product": 1, "qty": 2}]} for i, owner in BASKETS.items()}
        self.notes = dict(NOTES)
        self.order_notes: dict[int, str] = {}
        self.articles = dict(ARTICLES)
        self.favorites: set[tuple[str, int]] = set()
        self.comments = dict(COMMENTS)

    # --- plumbing ----------------------------------------------------------------------
    def __call__(self, environ, start_response):
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length).decode() if length else ""
        headers = {k[5:].replace("_", "-").lower(): v for k, v in environ.items() if k.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = environ["CONTENT_TYPE"]
        request = {"method": environ["REQUEST_METHOD"], "path": environ.get("PATH_INFO", ""),
                   "target": environ.get("RAW_URI", "").split("?")[0],  # percent-encoded, as sent
                   "query": dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True)),
                   "headers": headers, "body": raw}
        with self.lock:
            self.requests.append(request)
            status, answer, extra = self.route(request)
        payload = json.dumps(answer).encode() if answer is not None else b""
        start_response(f"{status} X", [("Content-Type", "application/json"), ("Content-Length", str(len(payload))),
                                       *extra])
        return [payload]

    @staticmethod
    def _body(request) -> dict:
        if "x-www-form-urlencoded" in request["headers"].get("content-type", "") or (
                request["body"] and not request["body"].lstrip().startswith("{")):
            return dict(parse_qsl(request["body"]))
        try:
            value = json.loads(request["body"] or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def _caller(self, request) -> str | None:
        """The user a request authenticates as: its bearer token, else its ``sid`` cookie."""
        header = request["headers"].get("authorization", "")
        if header.startswith("Bearer "):
            return self.tokens.get(header[7:])
        cookies = dict(p.strip().partition("=")[::2] for p in request["headers"].get("cookie", "").split(";") if "=" in p)
        sid = cookies.get("sid")
        if sid:
            if sid in self.sessions:
                return self.sessions[sid]
            if "wallet_any_sid" in self.flaws and request["path"] == "/api/wallet":
                return "alice"
        return None

    def _profile(self, name: str) -> dict:
        user = self.users[name]
        return {"username": name, "email": user["email"], "phone": user["phone"], "bio": user["bio"],
                "role": user["role"]}

    # --- routes ------------------------------------------------------------------------
    def route(self, request):  # noqa: C901 - one table of routes
        method, path = request["method"], request["path"]
        parts = [p for p in path.split("/") if p]
        body = self._body(request) if method in ("POST", "PUT", "PATCH", "DELETE") else {}
        caller = self._caller(request)
        if path == "/api/reset-db" and method == "GET":
            self.resets += 1
            self._seed()
            return 200, {"message": "Database populated."}, []
        if path == "/api/login" and method == "POST":
            user = self.users.get(str(body.get("username")))
            if user is None or user["password"] != body.get("password"):
                return 200, {"status": "fail", "message": "Username or Password Incorrect!"}, []
            return 200, {"token": f"tok-{body['username']}"}, []
        if path == "/api/session" and method == "POST":
            user = self.users.get(str(body.get("username")))
            if user is None or user["password"] != body.get("password"):
                return 401, {"error": "invalid credentials"}, []
            sid = secrets.token_hex(16)
            self.sessions[sid] = str(body["username"])
            return 200, {"status": "ok"}, [("Set-Cookie", f"sid={sid}; Path=/; HttpOnly; SameSite=Lax")]
        if path == "/oauth/token" and method == "POST":
            user = self.users.get(str(body.get("username")))
            if body.get("grant_type") != "password" or user is None or user["password"] != body.get("password"):
                return 400, {"error": "invalid_grant"}, []
            return 200, {"access_token": f"tok-{body['username']}", "token_type": "bearer"}, []
        if path == "/api/users" and method == "POST":
            fields = body.get("user") if isinstance(body.get("user"), dict) else {}
            name, email, password = (fields.get(k) for k in ("username", "email", "password"))
            if not all(isinstance(v, str) and v for v in (name, email, password)):
                return 422, {"errors": {"user": ["username, email and password are required"]}}, []
            if name in self.users or any(u["email"] == email for u in self.users.values()):
                return 400, {"errors": {"user": ["has already been taken"]}}, []
            role = fields.get("role") if "register_role" in self.flaws and isinstance(fields.get("role"), str) \
                else "customer"
            self.users[name] = {"id": len(self.users) + 1, "password": password, "email": email, "phone": "",
                                "bio": "", "role": role}
            self.tokens[f"tok-{name}"] = name
            return 201, {"user": {"username": name, "email": email, "token": f"tok-{name}"}}, []
        if path == "/api/products" and method == "GET":
            return 200, PRODUCTS, []
        if path == "/api/user" and method == "GET":
            if caller is None:
                return 401, {"error": "authentication required"}, []
            user = self.users[caller]
            return 200, {"user": {"username": caller, "email": user["email"], "role": user["role"]}}, []
        if path == "/api/me" and method == "GET":
            if caller is None:
                return 200, (self._profile("alice") if "anon_me" in self.flaws else {"user": None}), []
            return 200, self._profile(caller), []
        if path == "/api/orders" and method == "GET":
            if caller is None and "orders_anonymous" in self.flaws and "authorization" not in request["headers"]:
                caller = "alice"
            if caller is None:
                return 401, {"error": "authentication required"}, []
            return 200, [self._order(i) for i, owner in ORDERS.items() if owner == caller], []
        if len(parts) == 3 and parts[:2] == ["api", "profiles"] and method == "GET":
            if parts[2] not in self.users:
                return 404, {"error": "no such user"}, []
            return 200, {"username": parts[2], "email": self.users[parts[2]]["email"], "bio": self.users[parts[2]]["bio"]}, []
        if len(parts) in (3, 4) and parts[:2] == ["api", "articles"] and method == "GET":
            if parts[2] not in self.articles or (len(parts) == 4 and parts[3] != "comments"):
                return 404, {"error": "no such article"}, []
            if len(parts) == 3:
                return 200, self._article(parts[2]), []
            return 200, [{"id": i, "body": text, "author": {"username": author}}
                         for i, (slug, author, text) in sorted(self.comments.items()) if slug == parts[2]], []
        if caller is None and path != "/api/wallet":
            return 401, {"error": "authentication required"}, []
        if len(parts) == 4 and parts[:2] == ["api", "products"] and parts[3] == "favorite":
            product = int(parts[2]) if parts[2].isdigit() else None
            if product not in {p["id"] for p in PRODUCTS}:
                return 404, {"error": "no such product"}, []
            if (method == "POST") == ((caller, product) in self.favorites):
                return 400, {"error": "already favourited" if method == "POST" else "not favourited"}, []
            (self.favorites.add if method == "POST" else self.favorites.discard)((caller, product))
            return 200, {"product": product, "favorited": method == "POST"}, []
        if len(parts) >= 3 and parts[:2] == ["api", "articles"] and method in ("POST", "DELETE"):
            return self._articles(parts, method, body, caller)
        if len(parts) == 3 and parts[:2] == ["api", "orders"] and method == "GET":
            order = int(parts[2]) if parts[2].isdigit() and int(parts[2]) in ORDERS else None
            if order is None:
                return 404, {"error": "no such order"}, []
            if ORDERS[order] != caller and "bola_orders" not in self.flaws:
                return self.refusal, {"error": {400: "bad request", 500: "internal error: not permitted",
                                                429: "slow down"}.get(self.refusal, "forbidden")}, []
            return 200, self._order(order), []
        if len(parts) == 4 and parts[:2] == ["api", "users"] and parts[3] == "password" and method == "PUT":
            target = parts[2] if "bola_password" in self.flaws else caller
            if target not in self.users or not isinstance(body.get("password"), str):
                return 400, {"status": "fail", "message": "User Not Found"}, []
            self.users[target]["password"] = body["password"]
            return 204, None, []
        if path == "/api/users/update_role" and method == "PUT":
            if self.users[caller]["role"] != "admin" and "bfla_update_role" not in self.flaws:
                return 403, {"error": "administrators only"}, []
            target = self.users.get(str(body.get("username")))
            if target is None or body.get("role") not in ("customer", "admin", "support"):
                return 400, {"error": "bad request"}, []
            target["role"] = body["role"]
            return 200, {"status": "ok"}, []
        if len(parts) == 3 and parts[:2] == ["api", "users"] and method == "GET":
            if parts[2] != caller:
                return 403, {"error": "forbidden"}, []
            return 200, self._profile(caller), []
        if path == "/api/profile" and method == "PUT":
            target = str(body.get("username", caller)) if "profile_by_body" in self.flaws else caller
            if target not in self.users:
                return 404, {"error": "no such user"}, []
            for key in ("phone", "bio"):
                if isinstance(body.get(key), str):
                    self.users[target][key] = body[key]
            return 200, self._profile(target), []
        if len(parts) >= 3 and parts[:2] == ["api", "baskets"]:
            basket = self.baskets.get(int(parts[2])) if parts[2].isdigit() else None
            if basket is None:
                return 404, {"error": "no such basket"}, []
            mine = basket["UserId"] == self.users[caller]["id"]
            if len(parts) == 3 and method == "GET":
                if not mine and "bola_basket_read" not in self.flaws:
                    return 403, {"error": "not your basket"}, []
                return 200, basket, []
            if len(parts) == 4 and parts[3] == "items":
                if not mine and not (method == "POST" and "bola_basket_add" in self.flaws):
                    return 403, {"error": "not your basket"}, []
                if method == "GET":
                    return 200, basket["items"], []
                if method == "POST":
                    basket["items"].append({"product": body.get("product"), "qty": body.get("qty")})
                    return 201, {"basket": basket["id"], "items": len(basket["items"])}, []
            if len(parts) == 4 and parts[3] == "checkout" and method == "POST":
                if not mine and "bola_checkout" not in self.flaws:
                    return 403, {"error": "not your basket"}, []
                basket.update(status="ordered", items=[])
                return 200, {"status": "ordered", "basket": basket["id"]}, []
        if path == "/api/notes" and method == "GET":
            return 200, [{"id": i, "text": text} for i, (owner, text) in sorted(self.notes.items()) if owner == caller], []
        if path == "/api/notes" and method == "DELETE":  # one note, named in the query
            parts = ["api", "notes", request["query"].get("noteId", "")]
        if len(parts) == 3 and parts[:2] == ["api", "orders"] and method == "PATCH":
            order = int(parts[2]) if parts[2].isdigit() and int(parts[2]) in ORDERS else None
            if order is None or (ORDERS[order] != caller and "bola_orders" not in self.flaws):
                return 404, {"error": "no such order"}, []
            self.order_notes[order] = str(body.get("note", ""))
            return 200, {**self._order(order), "note": self.order_notes[order]}, []
        if len(parts) == 3 and parts[:2] == ["api", "notes"] and method == "DELETE":
            note = int(parts[2]) if parts[2].isdigit() else None
            if note not in self.notes or (self.notes[note][0] != caller and "bola_note_delete" not in self.flaws):
                return 404, {"error": "no such note"}, []
            del self.notes[note]
            return 204, None, []
        if path == "/api/wallet" and method == "GET":
            if caller is None:
                return 401, {"error": "log in first"}, []
            return 200, {"owner": caller, "email": self.users[caller]["email"], "balance": 40}, []
        return 404, {"error": "not found"}, []

    def _article(self, slug: str) -> dict:
        author = self.articles[slug]
        return {"slug": slug, "title": slug.replace("-", " "), "author": {"username": author, "bio": self.users[author]["bio"]}}

    def _articles(self, parts: list[str], method: str, body: dict, caller: str):
        slug = parts[2]
        if slug not in self.articles:
            return 404, {"error": "no such article"}, []
        if len(parts) == 3 and method == "DELETE":
            if self.articles[slug] != caller and "bola_article_delete" not in self.flaws:
                return 403, {"error": "not your article"}, []
            del self.articles[slug]
            self.comments = {i: c for i, c in self.comments.items() if c[0] != slug}
            return 204, None, []
        if len(parts) == 4 and parts[3] == "comments" and method == "POST":
            text = (body.get("comment") or {}).get("body") if isinstance(body.get("comment"), dict) else None
            if not isinstance(text, str) or not text:
                return 422, {"errors": {"body": ["can't be empty"]}}, []
            new = max(self.comments, default=0) + 1
            self.comments[new] = (slug, caller, text)
            return 201, {"comment": {"id": new, "body": text, "author": {"username": caller}}}, []
        if len(parts) == 5 and parts[3] == "comments" and method == "DELETE":
            comment = self.comments.get(int(parts[4])) if parts[4].isdigit() else None
            if comment is None or comment[0] != slug:
                return 404, {"error": "no such comment"}, []
            if comment[1] != caller and "bola_comment_delete" not in self.flaws:
                return 403, {"error": "not your comment"}, []
            del self.comments[int(parts[4])]
            return 204, None, []
        return 404, {"error": "not found"}, []

    def _order(self, order: int) -> dict:
        owner = ORDERS[order]
        return {"id": order, "owner": owner, "email": self.users[owner]["email"], "total": 12.5}
