"""RATE_LIMIT: a burst of requests to a credential or write endpoint must be limited.

The endpoint's example request (with the test user's token when authenticated)
is sent ``TESTGEN_RATE_LIMIT_BURST`` times in a row, stopping at the first 429.
Passes when an answer in the burst is 429 Too Many Requests, or otherwise when
the burst was slowed down: its last answer took more than one second.
"""
from __future__ import annotations

import re

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

CREDENTIAL_PATH = re.compile(
    r"(^|[/_.-])(log-?in|sign-?in|log-?on|auth|oauth2?|token|tokens|session|sessions|password|passwd|"
    r"reset|forgot|otp|mfa|2fa|verify|verification|sign-?up|register|registration)([/_.-]|$)",
    re.I,
)
SLOWED_MS = 1000


def is_credential_path(path: str) -> bool:
    return bool(CREDENTIAL_PATH.search(path))


@register
class RateLimit(SecurityTemplate, name="RATE_LIMIT", priority=60, title="Rate limiting"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.method == "POST" or is_credential_path(profile.path)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        burst = context.rate_limit_burst
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: a burst of {burst} requests must be answered "
                f"429 Too Many Requests at some point, or slowed down (last answer over {SLOWED_MS} ms)."
            ),
            requests=[build_request(profile, f"The example request, {burst} times in a row",
                                    repeat=burst, stopWhenStatus=[429])],
            assertions=[assertion(
                "status", "equals", 429, request=0, aggregate="any",
                description="The burst is answered 429 at some point",
                otherwise=assertion("duration", "greaterThan", SLOWED_MS, request=0, aggregate="last",
                                    description="The burst is slowed down"),
            )],
        )
