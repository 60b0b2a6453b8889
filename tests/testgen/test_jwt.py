"""The JWT variants AUTH_BYPASS sends (testgen/jwt.py), checked by decoding them."""
from __future__ import annotations

import hashlib
import hmac

from testgen import jwt


def _token(secret: str, claims: dict | None = None, alg: str = "HS256") -> str:
    return jwt.encode({"alg": alg, "typ": "JWT"}, claims or {"sub": "alice", "exp": 2_000_000_000}, secret.encode())


def _verifies(token: str, secret: str) -> bool:
    signing_input, _, signature = token.rpartition(".")
    expected = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return hmac.compare_digest(expected, jwt.b64url_decode(signature))


def test_a_weak_secret_is_found_offline_and_a_strong_one_is_not():
    assert jwt.crack(_token("changeme")) == "changeme"
    assert jwt.crack(_token("k3Qp9-not-in-any-list-7f2a91c0")) is None
    assert len(jwt.weak_secrets()) >= 100


def test_the_weak_secret_forgery_changes_claims_and_verifies_with_the_secret():
    forged = jwt.forge("weakSecret", f"Bearer {_token('secret')}", now=1_000_000)
    assert forged.description.startswith("a token forged with the weak secret 'secret'")
    token = forged.value.removeprefix("Bearer ")
    claims = jwt.parse(token).claims
    assert (claims["sub"], claims[jwt.FORGED_CLAIM], claims["exp"]) == ("alice", True, 1_003_600)
    assert _verifies(token, "secret")


def test_expired_is_re_signed_only_with_a_found_secret():
    expired = jwt.forge("expired", f"Bearer {_token('secret')}", now=1_000_000)
    assert jwt.parse(expired.value[7:]).claims["exp"] == 996_400 and _verifies(expired.value[7:], "secret")
    assert jwt.forge("expired", f"Bearer {_token('k3Qp9-not-in-any-list-7f2a91c0')}").value is None


def test_none_stripped_and_other_key_variants():
    original = _token("k3Qp9-not-in-any-list-7f2a91c0")
    none = jwt.parse(jwt.forge("none", original).value)
    assert (none.alg, none.signature, none.claims["sub"]) == ("none", b"", "alice")
    stripped = jwt.forge("stripped", f"Bearer {original}").value
    assert stripped == "Bearer " + original.rpartition(".")[0] + "."
    other = jwt.forge("otherKey", f"Bearer {original}").value[7:]
    assert jwt.parse(other).claims == jwt.parse(original).claims and other != original


def test_a_token_that_is_not_a_jwt_makes_no_variant():
    for attack in jwt.ATTACKS:
        assert jwt.forge(attack, "Bearer tok-alice").value is None
