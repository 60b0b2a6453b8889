"""Deterministic, realistic demo traffic (``manage.py seed_demo`` and the test suite).

Five hosts of a small shop: a public HTTPS API, a public GraphQL API, an
internal orders service called by the API, an internal payments service called
by the orders service (so the hosts graph has edges), and a partner's legacy
export served over plain HTTP with Basic authentication. The traffic carries the
kinds of data and mistakes the product is there to find: e-mails, phone
numbers, card numbers, SSNs, tokens in query strings, sensitive path
parameters, unauthenticated endpoints returning personal data. All values are
fictitious (test card numbers, example.com addresses).
"""
from __future__ import annotations

import base64
import json
import random
import uuid
from collections.abc import Iterator

SHOP = ("https://api.shop-demo.com", "93.184.216.34")
GRAPH = ("https://graphql.shop-demo.com", "93.184.216.35")
ORDERS = ("http://orders.internal.svc", "10.20.0.7")
PAYMENTS = ("http://payments.internal.svc", "10.20.0.9")
LEGACY = ("http://legacy.partner-demo.net", "151.101.1.69")

FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar",
         "peggy", "rupert", "sybil", "trent", "victor", "walter"]
LAST = ["smith", "jones", "garcia", "miller", "davis", "lopez", "wilson", "moore", "taylor", "thomas"]
STREETS = ["Market Street", "Mission Street", "Valencia Street", "Howard Street", "Folsom Street"]
CITIES = [("San Francisco", "CA", "94103"), ("Oakland", "CA", "94612"), ("Portland", "OR", "97205")]
CARDS = ["4111111111111111", "5555555555554444", "378282246310005", "4012888888881881", "6011111111111117"]
PRODUCTS = ["Espresso Machine", "Grinder", "Milk Frother", "Pour Over Kit", "Kettle", "Scale", "Tamper"]
AGENTS = ["Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Safari/605.1.15",
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/124.0 Safari/537.36", "shop-ios/3.2.1 (iPhone)"]


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).rstrip(b"=").decode()


class _Faker:
    def __init__(self, rng: random.Random):
        self.r = rng

    def person(self) -> dict:
        first, last = self.r.choice(FIRST), self.r.choice(LAST)
        city, state, zip_code = self.r.choice(CITIES)
        return {
            "id": self.r.randint(1000, 99999),
            "name": f"{first.title()} {last.title()}",
            "email": f"{first}.{last}{self.r.randint(1, 99)}@example.com",
            "phone": f"+1415{self.r.randint(200, 999)}{self.r.randint(1000, 9999)}",
            "date_of_birth": f"{self.r.randint(1950, 2003)}-{self.r.randint(1, 12):02d}-{self.r.randint(1, 28):02d}",
            "address": f"{self.r.randint(10, 2999)} {self.r.choice(STREETS)}, {city}, {state} {zip_code}",
        }

    def ssn(self) -> str:
        area = self.r.choice([self.r.randint(100, 665), self.r.randint(667, 899)])
        return f"{area:03d}-{self.r.randint(10, 99):02d}-{self.r.randint(1000, 9999):04d}"

    def jwt(self, subject: int) -> str:
        header = _b64({"alg": "HS256", "typ": "JWT"})
        payload = _b64({"sub": str(subject), "iat": 1767225600, "scope": "shop"})
        signature = base64.urlsafe_b64encode(self.r.randbytes(32)).rstrip(b"=").decode()
        return f"{header}.{payload}.{signature}"

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128), version=4))

    def client_ip(self) -> str:
        """An internet client (global unicast address)."""
        return f"{self.r.choice([81, 88, 92, 109, 176])}.{self.r.randint(1, 254)}.{self.r.randint(1, 254)}.{self.r.randint(1, 254)}"


def _trace(base, method, path, *, status=200, query=(), headers=None, body=None, response=None,
           response_type="application/json", source="10.0.0.10") -> dict:
    host, destination = base
    request_headers = {"Accept": "application/json", **(headers or {})}
    if body is not None and not isinstance(body, str):
        body = json.dumps(body)
        request_headers.setdefault("Content-Type", "application/json")
    if response is not None and not isinstance(response, str):
        response = json.dumps(response)
    return {
        "request": {
            "url": {"host": host, "path": path, "parameters": [{"name": k, "value": v} for k, v in query]},
            "headers": [{"name": k, "value": v} for k, v in request_headers.items()],
            "body": body or "",
            "method": method,
        },
        "response": {
            "status": status,
            "headers": [{"name": "Content-Type", "value": response_type}, {"name": "X-Request-Id", "value": "r"}],
            "body": response or "",
        },
        "meta": {
            "environment": "production", "incoming": True, "source": source, "sourcePort": "49152",
            "destination": destination, "destinationPort": "443" if host.startswith("https") else "80",
            "metloSource": "demo",
        },
    }


def demo_traces(count: int, *, seed: int = 7) -> Iterator[dict]:
    """``count`` raw traces; the same ``seed`` always gives the same traffic."""
    rng = random.Random(seed)
    fake = _Faker(rng)

    def shop_auth(person):
        return {"Authorization": f"Bearer {fake.jwt(person['id'])}", "User-Agent": rng.choice(AGENTS)}

    def product():
        return {"id": rng.randint(1, 500), "name": rng.choice(PRODUCTS), "price": round(rng.uniform(5, 900), 2),
                "in_stock": rng.random() > 0.2, "tags": rng.sample(["new", "sale", "bundle", "gift"], 2)}

    def scenario():
        p = fake.person()
        kind = rng.random()
        ip = fake.client_ip()
        if kind < 0.16:
            return _trace(SHOP, "GET", "/api/v1/products", source=ip,
                          query=[("page", str(rng.randint(1, 20))), ("category", rng.choice(["coffee", "tea"]))],
                          response={"items": [product() for _ in range(3)], "total": 1200})
        if kind < 0.28:
            return _trace(SHOP, "GET", f"/api/v1/products/{rng.randint(1, 500)}", source=ip, response=product())
        if kind < 0.34:
            ok = rng.random() > 0.15
            return _trace(SHOP, "POST", "/api/v1/login", source=ip, status=200 if ok else 401,
                          body={"email": p["email"], "password": f"pw-{rng.getrandbits(40):x}"},
                          response={"access_token": fake.jwt(p["id"]), "token_type": "Bearer",
                                    "user": {"id": p["id"], "email": p["email"]}} if ok else {"error": "invalid"})
        if kind < 0.44:
            return _trace(SHOP, "GET", "/api/v1/users/me", source=ip, headers=shop_auth(p), response=p)
        if kind < 0.52:
            return _trace(SHOP, "GET", f"/api/v1/users/{p['id']}", source=ip, headers=shop_auth(p),
                          response={"id": p["id"], "name": p["name"], "email": p["email"]})
        if kind < 0.58:
            card = rng.choice(CARDS)
            return _trace(SHOP, "POST", "/api/v1/checkout", source=ip, headers=shop_auth(p),
                          body={"cart_id": fake.uuid(), "payment": {"card_number": card, "exp": "12/29", "cvv": "123"},
                                "shipping": {"name": p["name"], "address": p["address"], "phone": p["phone"]}},
                          response={"order_id": fake.uuid(), "status": "confirmed", "card_last4": card[-4:]})
        if kind < 0.64:
            return _trace(SHOP, "GET", f"/api/v1/orders/{fake.uuid()}", source=ip, headers=shop_auth(p),
                          response={"status": rng.choice(["shipped", "pending"]), "items": [product()],
                                    "ship_to": {"address": p["address"]}})
        if kind < 0.68:
            term = p["email"] if rng.random() < 0.5 else rng.choice(PRODUCTS)
            return _trace(SHOP, "GET", "/api/v1/search", source=ip, headers=shop_auth(p), query=[("q", term)],
                          response={"results": [product()]})
        if kind < 0.71:
            return _trace(SHOP, "GET", f"/api/v1/customers/{p['email']}/orders", source=ip, headers=shop_auth(p),
                          response={"orders": [{"id": fake.uuid(), "total": 42.5}]})
        if kind < 0.73:
            return _trace(SHOP, "GET", f"/api/v1/{rng.choice(['old-cart', 'admin', 'wp-login.php'])}", source=ip,
                          status=404, response={"error": "not found"})
        if kind < 0.80:
            return _trace(ORDERS, "GET", f"/orders/{rng.randint(10000, 99999)}", source=SHOP[1],
                          response={"customer": {"email": p["email"], "phone": p["phone"]},
                                    "client_ip": f"203.0.113.{rng.randint(1, 254)}", "total": 99.0})
        if kind < 0.85:
            return _trace(ORDERS, "POST", "/orders", source=SHOP[1],
                          body={"customer_id": p["id"], "items": [{"sku": f"SKU-{rng.randint(100, 999)}",
                                                                    "qty": rng.randint(1, 3)}]},
                          response={"id": rng.randint(10000, 99999), "state": "created"}, status=201)
        if kind < 0.90:
            return _trace(PAYMENTS, "POST", "/v2/charges", source=ORDERS[1],
                          headers={"X-Api-Key": "sk_live_" + "".join(rng.choices("abcdef0123456789", k=24))},
                          body={"amount": rng.randint(500, 90000), "currency": "usd", "card_number": rng.choice(CARDS)},
                          response={"id": "ch_" + "".join(rng.choices("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", k=24)),
                                    "paid": True})
        if kind < 0.93:
            return _trace(PAYMENTS, "GET", "/v2/charges/ch_" + "".join(rng.choices("ABCDEFGHJKLMNPQR0123456789", k=24)),
                          source=ORDERS[1], headers={"X-Api-Key": "sk_live_" + "0" * 24},
                          response={"amount": 1999, "paid": True, "refunded": False})
        if kind < 0.95:
            rows = "\n".join(f"{fake.person()['email']},{fake.ssn()}" for _ in range(3))
            return _trace(LEGACY, "GET", "/export/customers.csv", source="198.51.100.23",
                          query=[("date", f"2026-01-{rng.randint(10, 28)}")],
                          headers={"Authorization": "Basic " + base64.b64encode(b"partner:export2026").decode()},
                          response="email,ssn\n" + rows, response_type="text/csv")
        if kind < 0.97:
            return _trace(LEGACY, "GET", f"/api/partners/{rng.randint(10, 99)}/contacts", source="198.51.100.23",
                          response={"contacts": [{"name": p["name"], "ssn": fake.ssn(), "passport_number": "X"
                                                  + str(rng.randint(10000000, 99999999))}]})
        query = "query User($id: ID!) { user(id: $id) { email phone orders { id total } } }"
        return _trace(GRAPH, "POST", "/graphql", source=ip, headers=shop_auth(p),
                      body={"query": query, "variables": {"id": str(p["id"])}},
                      response={"data": {"user": {"email": p["email"], "phone": p["phone"],
                                                  "orders": [{"id": fake.uuid(), "total": 12.5}]}}})

    for _ in range(count):
        yield scenario()
