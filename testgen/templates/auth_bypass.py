"""AUTH_BYPASS: an authenticated endpoint must refuse requests without valid credentials.

Requests (the endpoint's example request each time): without the credential
header, with it empty, with a malformed token, with an unsigned JWT
(``alg: none``, Authorization header only) and with the test user's token
tampered (one character appended; skipped when no authToken is configured).
Every answer must be 401 or 403.
"""
from __future__ import annotations

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

# {"alg":"none","typ":"JWT"} . {"sub":"apiscope"} . (no signature)
UNSIGNED_JWT = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhcGlzY29wZSJ9."
REFUSED = [401, 403]


@register
class AuthBypass(SecurityTemplate, name="AUTH_BYPASS", priority=20, title="Authentication bypass"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.is_authenticated

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        header = profile.credential_header
        bearer = header == "Authorization"
        requests = [
            build_request(profile, f"Without the {header} header", headers={}, omitHeaders=[header]),
            build_request(profile, f"With an empty {header} header", headers={header: ""}),
            build_request(profile, "With a malformed token",
                          headers={header: "Bearer apiscope-malformed-token" if bearer else "apiscope-malformed-token"}),
        ]
        if bearer:
            requests.append(build_request(profile, "With an unsigned JWT (alg: none)",
                                          headers={header: f"Bearer {UNSIGNED_JWT}"}))
        requests.append(build_request(profile, "With the test user's token tampered (one character appended)",
                                      headers={header: "{{authToken}}x"}, optional=True))
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path} requires authentication: requests without valid "
                f"credentials in {header} must be refused with 401 or 403."
            ),
            requests=requests,
            assertions=[assertion("status", "in", REFUSED, description="Every request without valid credentials is refused")],
        )
