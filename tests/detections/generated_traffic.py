"""Varied traffic of one host for the generated-spec tests: JSON bodies, arrays, nulls, several
statuses, bearer and API-key authentication, a GraphQL endpoint, and real sensitive values (e-mails,
card numbers, tokens) that must never reach a generated spec."""
from __future__ import annotations

import json

from tests.inventory.ingest_support import raw_trace

HOST = "shop.example.com"
BEARER = {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"}
# Three users' tokens: a value reaches a generated spec's enum only when seen from three users (§10).
BEARERS = [BEARER, {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJlLXR3bw"},
           {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIzIn0.c2lnbmF0dXJlLXRocmVl"}]
API_KEY = {"X-API-Key": "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}
# Values that must not appear anywhere in a generated spec.
SECRETS = ("ada@example.com", "grace@example.org", "4111111111111111", "5555555555554444",
           "eyJhbGciOiJIUzI1NiJ9", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "tok_9f8e7d6c5b4a39281706",
           "078-05-1120")
USERS = [
    {"id": 1, "uuid": "6f1c2a5e-8d3b-4c7a-9e10-2b3c4d5e6f70", "email": "ada@example.com", "status": "active",
     "score": 4.5, "nickname": None, "createdAt": "2026-01-31T12:00:00Z", "tags": ["admin", "beta"],
     "address": {"city": "London", "zip": "N1 9GU"}},
    {"id": 2, "uuid": "7a2d3b6f-9e4c-4d8b-8f21-3c4d5e6f7081", "email": "grace@example.org", "status": "inactive",
     "score": 3, "nickname": "amazing", "createdAt": "2026-02-01T08:30:00Z", "tags": [],
     "address": {"city": "Arlington"}},
]


def _user(n: int) -> dict:
    user = dict(USERS[n % 2])
    user["id"] = n
    return user


def varied_traces(host: str = HOST) -> list[dict]:
    traces = []
    for n in range(1, 7):  # GET /users/{id}: bearer, 200 and a 404
        traces.append(raw_trace(host=host, path=f"/api/users/{n}", headers=BEARERS[n % 3], response_body=_user(n),
                                query=[("expand", "address" if n % 2 else "tags")]))
    traces.append(raw_trace(host=host, path="/api/users/99", headers=BEARER, status=404,
                            response_body={"error": "not found", "code": 404}))
    for n in range(2):  # GET /users: an array of users, a request id header
        traces.append(raw_trace(host=host, path="/api/users", headers={**BEARER, "X-Request-Id": f"req-{n}"},
                                query=[("page", str(n + 1)), ("limit", "20")],
                                response_body=[_user(1), _user(2)]))
    for n, card in enumerate(("4111111111111111", "5555555555554444")):  # POST /payments: API key, 201 and 422
        traces.append(raw_trace(
            host=host, path="/api/payments", method="POST", headers={**API_KEY, "Content-Type": "application/json"},
            body=json.dumps({"amount": 12.5 + n, "currency": "EUR", "card": card, "note": None}),
            status=201, response_body={"id": f"pay_{n}", "status": "pending", "amount": 12.5 + n,
                                       "token": "tok_9f8e7d6c5b4a39281706", "ssn": "078-05-1120"},
        ))
    traces.append(raw_trace(host=host, path="/api/payments", method="POST",
                            headers={**API_KEY, "Content-Type": "application/json"},
                            body=json.dumps({"amount": -1}), status=422,
                            response_body={"errors": [{"field": "amount", "message": "must be positive"}]}))
    for n in range(2):  # POST /graphql
        traces.append(raw_trace(
            host=host, path="/graphql", method="POST", headers={**BEARER, "Content-Type": "application/json"},
            body=json.dumps({"query": "query Me($id: ID!) { user(id: $id) { id email } }", "variables": {"id": n}}),
            response_body={"data": {"user": {"id": str(n), "email": USERS[n]["email"]}}},
        ))
    traces.append(raw_trace(host=host, path="/health", response_body="OK",
                            response_headers={"Content-Type": "text/plain"}))
    return traces
