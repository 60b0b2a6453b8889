"""RATE_LIMIT: a burst of requests to a credential or write endpoint must be limited.

The endpoint's example request (with the test user's token when authenticated)
is sent ``TESTGEN_RATE_LIMIT_BURST`` times in a row, stopping at the first 429.
Passes when an answer in the burst is 429 Too Many Requests, or otherwise when
the burst was slowed down: its last answer took more than one second.

Non-destructive (issue #15 item 6): on a credential path the burst never targets a user seen in
traffic nor reuses observed credentials — body and query fields naming a user (``username``,
``email``, ``login``…) carry a user that does not exist, and password-like fields a value that is
no one's password. A burst against a real user could lock that user out.
"""
from __future__ import annotations

import re

from inventory.ingest.credentials import is_credential_name

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

CREDENTIAL_PATH = re.compile(
    r"(^|[/_.-])(log-?in|sign-?in|log-?on|auth|oauth2?|token|tokens|session|sessions|password|passwd|"
    r"reset|forgot|otp|mfa|2fa|verify|verification|sign-?up|register|registration)([/_.-]|$)",
    re.I,
)
SLOWED_MS = 1000
# Field names (lower case, without - _ .) that name the user an attempt is for.
USER_FIELD = re.compile(r"^(user(name|id)?|login|loginid|e?mail(address)?|phone(number)?|account|handle|"
                        r"nick(name)?|identifier|principal)$")
NO_SUCH_USER = "apiscope-no-such-user"
NO_SUCH_EMAIL = "apiscope-no-such-user@example.invalid"
NOT_A_PASSWORD = "apiscope-not-a-password"


def _compact(name: str) -> str:
    return re.sub(r"[-_.\s]", "", name).lower()


def _no_real_user(values: dict) -> dict:
    """``values`` with user-naming fields set to a user that does not exist and credentials to a dummy."""
    out = {}
    for name, value in values.items():
        compact = _compact(str(name))
        if USER_FIELD.match(compact) and isinstance(value, (str, int)):
            out[name] = NO_SUCH_EMAIL if "mail" in compact else NO_SUCH_USER
        elif is_credential_name(str(name)) and isinstance(value, (str, int)):
            out[name] = NOT_A_PASSWORD
        else:
            out[name] = value
    return out


def is_credential_path(path: str) -> bool:
    return bool(CREDENTIAL_PATH.search(path))


@register
class RateLimit(SecurityTemplate, name="RATE_LIMIT", priority=60, title="Rate limiting"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.method == "POST" or is_credential_path(profile.path)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        burst = context.rate_limit_burst
        parts = {}
        if is_credential_path(profile.path):
            if isinstance(profile.body, dict):
                parts["body"] = _no_real_user(profile.body)
            if profile.query:
                parts["query"] = {k: str(v) for k, v in _no_real_user(profile.query).items()}
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: a burst of {burst} requests must be answered "
                f"429 Too Many Requests at some point, or slowed down (last answer over {SLOWED_MS} ms)."
            ),
            requests=[build_request(profile, f"The example request, {burst} times in a row",
                                    repeat=burst, stopWhenStatus=[429], **parts)],
            assertions=[assertion(
                "status", "equals", 429, request=0, aggregate="any",
                description="The burst is answered 429 at some point",
                otherwise=assertion("duration", "greaterThan", SLOWED_MS, request=0, aggregate="last",
                                    description="The burst is slowed down"),
            )],
        )
