"""AUTH_BYPASS: an authenticated endpoint must refuse requests without valid credentials.

Requests (the endpoint's example request each time): without the credential
header, with it empty, with a malformed token, with an unsigned JWT
(``alg: none``, Authorization header only) and with the test user's token
tampered (one character appended; skipped when no authToken is configured).
Every answer must be 401 or 403.

On ``Authorization`` endpoints (bearer tokens) it adds JWT attacks built at run
time from the test user's own token (``jwtAttack``, see ``testgen/jwt.py``):
``alg: none``, the signature stripped, the claims signed with another key, and,
when a secret of the bundled weak-secret list signs the token (found offline),
a token forged with that secret and an expired one re-signed with it. A variant
that cannot be made (no JWT, no weak secret) is skipped, never a finding.
"""
from __future__ import annotations

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

# {"alg":"none","typ":"JWT"} . {"sub":"apiscope"} . (no signature)
UNSIGNED_JWT = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhcGlzY29wZSJ9."
REFUSED = [401, 403]
JWT_ATTACKS = (
    ("none", "The API refuses the test user's JWT with alg 'none' and no signature"),
    ("stripped", "The API refuses the test user's JWT with its signature removed"),
    ("otherKey", "The API refuses the test user's claims signed with another key"),
    ("weakSecret", "The API refuses a token forged with a weak HMAC secret"),
    ("expired", "The API refuses an expired token"),
)


def jwt_attacks(profile: EndpointProfile, first_index: int) -> tuple[list[dict], list[dict]]:
    """Requests carrying forged variants of ``{{authToken}}`` and one assertion per attack."""
    header = profile.credential_header
    requests, assertions = [], []
    for offset, (attack, proved) in enumerate(JWT_ATTACKS):
        requests.append(build_request(profile, f"JWT attack '{attack}'", headers={header: "{{authToken}}"},
                                      optional=True, jwtAttack=attack, jwtHeader=header))
        assertions.append(assertion("status", "in", REFUSED, request=first_index + offset, description=proved))
    return requests, assertions


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
        assertions = [assertion("status", "in", REFUSED, description="Every request without valid credentials is refused")]
        if bearer:
            jwt_requests, jwt_assertions = jwt_attacks(profile, len(requests))
            requests += jwt_requests
            assertions = jwt_assertions + assertions
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path} requires authentication: requests without valid "
                f"credentials in {header} must be refused with 401 or 403."
            ),
            requests=requests,
            assertions=assertions,
        )
