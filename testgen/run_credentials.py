"""The runner's credential steps: an identity's login sent as a test request (``loginAs``), a JWT
attack variant put in the credential header (``jwtAttack``), one auth scheme word, and the refresh of
an identity's credential after a 401 to its own request (DECISIONS §8)."""
from __future__ import annotations

import re
from typing import Any

from requests.structures import CaseInsensitiveDict

from inventory.ingest.credentials import AUTH_SCHEMES

from . import jwt
from .identities import IdentitySet, LoginFailed, UnknownIdentity
from .placeholders import Resolver, Unresolved

DOUBLED_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9-]*) (?=\1 )", re.IGNORECASE)


def login_as(request: dict, resolver: Resolver, identities: IdentitySet) -> tuple | str:
    """The login request (method, url, headers, data) of the identity ``loginAs`` names, its password
    replaced by ``loginPassword`` when given (the identity's token is left as it is); or why it is
    skipped (the identity or its login recipe is missing, or the login cannot be built)."""
    try:
        identity = identities.identity(str(request["loginAs"]))
    except UnknownIdentity:
        return f"identity {request['loginAs']} is not configured"
    if not identity.login:
        return f"identity {identity.name} has no login recipe"
    try:
        password = None if request.get("loginPassword") is None else str(resolver.resolve(request["loginPassword"]))
        return identities.login_request(identity, password=password)
    except (LoginFailed, Unresolved) as exc:
        return f"cannot log in identity {identity.name}: {exc}"


def forge_jwt(request: dict, headers: CaseInsensitiveDict, record: Any, words: tuple[str, ...] = ()) -> bool:
    """Replace the credential header's token by the ``jwtAttack`` variant (testgen/jwt.py); False
    (and the request skipped) when that variant cannot be made. ``words``: the target's host and
    app words, tried as secrets besides the bundled list and the numbers."""
    header = str(request.get("jwtHeader") or "Authorization")
    forged = jwt.forge(str(request["jwtAttack"]), headers.get(header, ""), words=words)
    if forged.value is None:
        record.skipped = forged.description
        return False
    headers[header] = forged.value
    record.description = f"{record.description}: {forged.description}"
    return True


def one_scheme(value: str) -> str:
    """``Bearer Bearer x`` → ``Bearer x`` (a known auth scheme written twice); anything else as it is."""
    match = DOUBLED_SCHEME.match(value)
    return value[match.end():] if match and match.group(1).lower() in AUTH_SCHEMES else value


def refresh_credential(identities: IdentitySet, headers: CaseInsensitiveDict, resolver: Resolver) -> bool:
    """After a 401 to an identity's own request (its current credential in its header): log it in
    again and put the new credential in ``headers`` and the placeholder values. False when the
    request was nobody's own (a tampered or missing credential) or the login failed."""
    owner = identities.owner_of(headers)
    if owner is None:
        return False
    try:
        identities.refresh(owner)
    except LoginFailed:
        return False
    identities.send_as(owner, headers)
    resolver.values.update(identities.values())
    return True
