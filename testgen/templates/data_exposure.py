"""DATA_EXPOSURE: an answer must not show passwords or password hashes (OWASP API3:2023, broken
object property level authorization; "excessive data exposure" in the 2019 list).

An extension of DECISIONS §8's six templates, after them in the selection order (priority 70), so
SPEC's single-result generation routes pick it only where none of the six applies; runs without a
type include it on every endpoint it applies to.

Applies only where traffic shows its evidence (DECISIONS §8): a GET whose answers in traffic have a
key named like a password (``password``, ``passwd``, ``pwd``, ``passphrase``, with ``hashed``/
``encrypted`` prefixes or ``hash``/``digest``/``salt`` suffixes: ``password_hash``, ``hashedPassword``…),
or a field the inventory classes as ``password`` under an environment variable's name — secrets of an
environment dump (``POSTGRES_PASSWORD``, ``JWT_SECRET``, ``*_SECRET``); a field of the API's own objects
classed so (a book's ``secret``) is user content and left to the inventory's alerts. Sends the example request with the test
user's credentials and checks every answer: the value under each such key, at any depth of a JSON
body, must be empty or a mask (``""``, ``null``, ``********``, ``[REDACTED]``…). A password is never
the caller's to read — not another user's, not a hash of one, not even one's own — so one value
suffices. The finding names where it was (``users[1].password``), never the value.

Not flagged (user content, or the credential channel): a ``secret`` or ``token`` field (a book's
``secret``, a login's ``access_token``), keys merely mentioning passwords (``passwordUpdatedAt``,
``hasPassword``). A refused read (401/403/404) shows nothing and passes.
"""
from __future__ import annotations

import re

from ..hostfacts import leaf
from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

PASSWORD_KEY = (r"(hashed|encrypted|crypted|salted|plain(text)?)?[-_]?(password|passwd|passphrase|pwd)"
                r"([-_]?(hash|hashed|digest|salt|encrypted|crypted|plain(text)?))?")
MASKED_VALUE = r"^(|\*+|•+|x{3,}|null|none|hidden|redacted|\[redacted\]|\[filtered\]|<redacted>|\*\*\*redacted\*\*\*)$"
# The inventory's class of passwords and secrets under password/secret-like keys (DECISIONS §5).
SECRET_CLASSES = frozenset({"password"})
# An environment variable's name (``POSTGRES_PASSWORD``, ``JWT_SECRET``): a secret of the deployment in an
# answer. A field of the API's own objects classed the same way (a book's ``secret``) is user content.
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")


def exposed_keys(profile: EndpointProfile) -> list[str]:
    """The answer keys traffic shows holding passwords or secrets: password-like names, and the names
    of fields the inventory classes as passwords (``POSTGRES_PASSWORD``, ``JWT_SECRET``)."""
    keys = []
    for path in profile.response_fields:
        name = leaf(path)
        classed = bool(SECRET_CLASSES & set(profile.response_classes.get(path, ()))) and bool(ENV_NAME.match(name))
        if name and (classed or re.fullmatch(PASSWORD_KEY, name, re.IGNORECASE)) and name not in keys:
            keys.append(name)
    return keys


@register
class DataExposure(SecurityTemplate, name="DATA_EXPOSURE", priority=70,
                   title="Excessive data exposure (passwords in answers)"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.method == "GET" and bool(exposed_keys(profile))

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        classed = [re.escape(k) for k in exposed_keys(profile) if not re.fullmatch(PASSWORD_KEY, k, re.IGNORECASE)]
        keys = "|".join([f"(?:{PASSWORD_KEY})", *classed])
        return self.test_config(
            profile,
            description=(f"{profile.method} {profile.path}: no answer may show a password or password hash "
                         "(values under password-like keys must be empty or masked)."),
            requests=[build_request(profile, "The example request, as the test user")],
            assertions=[assertion("body", "matches", MASKED_VALUE, keys=keys, ignoreCase=True,
                                  description="No password or password hash in the answer")],
        )
