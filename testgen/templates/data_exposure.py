"""DATA_EXPOSURE: an answer must not show passwords or password hashes (OWASP API3:2023, broken
object property level authorization; "excessive data exposure" in the 2019 list).

An extension of DECISIONS §8's six templates, after them in the selection order (priority 70), so
SPEC's single-result generation routes pick it only where none of the six applies; runs without a
type include it on every endpoint it applies to.

Applies to every GET endpoint whose traffic showed a JSON answer with fields (reads: listings and
single objects; a health check answering nothing is left out). Sends the example request with
the test user's credentials and checks every answer: the value under each key named like a
password (``password``, ``passwd``, ``pwd``, ``passphrase``, with ``hashed``/``encrypted`` prefixes
or ``hash``/``digest``/``salt`` suffixes: ``password_hash``, ``hashedPassword``…), at any depth of
a JSON body, must be empty or a mask (``""``, ``null``, ``********``, ``[REDACTED]``…). A password
is never the caller's to read — not another user's, not a hash of one, not even one's own — so
one value suffices. The finding names where it was (``users[1].password``), never the value.

Not flagged (user content, or the credential channel): a ``secret`` or ``token`` field (a book's
``secret``, a login's ``access_token``), keys merely mentioning passwords (``passwordUpdatedAt``,
``hasPassword``). A refused read (401/403/404) shows nothing and passes.
"""
from __future__ import annotations

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

PASSWORD_KEY = (r"(hashed|encrypted|crypted|salted|plain(text)?)?[-_]?(password|passwd|passphrase|pwd)"
                r"([-_]?(hash|hashed|digest|salt|encrypted|crypted|plain(text)?))?")
MASKED_VALUE = r"^(|\*+|•+|x{3,}|null|none|hidden|redacted|\[redacted\]|\[filtered\]|<redacted>|\*\*\*redacted\*\*\*)$"


@register
class DataExposure(SecurityTemplate, name="DATA_EXPOSURE", priority=70,
                   title="Excessive data exposure (passwords in answers)"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.method == "GET" and bool(profile.response_fields)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        return self.test_config(
            profile,
            description=(f"{profile.method} {profile.path}: no answer may show a password or password hash "
                         "(values under password-like keys must be empty or masked)."),
            requests=[build_request(profile, "The example request, as the test user")],
            assertions=[assertion("body", "matches", MASKED_VALUE, keys=PASSWORD_KEY, ignoreCase=True,
                                  description="No password or password hash in the answer")],
        )
