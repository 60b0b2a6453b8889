"""USER_ENUMERATION: a login or password-reset endpoint must answer alike for a user that does not
exist and for a real user with a wrong password (OWASP API2:2023, broken authentication).

An extension of DECISIONS §8's six templates, after them in the selection order (priority 80).

Applies to a POST/PUT/PATCH with a JSON or form object body naming a user (``username``, ``email``,
``login``…) on a credential path: a login (``login``, ``signin``, ``auth``, ``session``, ``token``…,
with a password-like field) or a password reset (``reset``, ``forgot``, ``recover``). Registration
is left out: telling a newcomer that a name is taken is what it is for.

Two requests, non-destructive (issue #15 item 6): the example body with the user field set to a
user that does not exist (and the password to no one's), then to the test user (``{{testUserId}}``:
for login endpoints, set it to the test user's login name) with the same wrong password. Never a
user seen in traffic. Passes when both get the same status and similar bodies (the user names
sent are left out of the comparison, see ``compare: similar``). A throttled answer (429/503) cannot
tell users apart: the test is then an ERROR, not a finding. Runs put these tests first
(``services.runs.tests_collect``), before other tests' failed logins can lock the test user out.
"""
from __future__ import annotations

import re

from inventory.ingest.credentials import is_credential_name

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register
from .rate_limit import USER_FIELD, compact_name, is_credential_path, no_real_user

LOGIN_PATH = re.compile(r"(^|[/_.-])(log-?in|sign-?in|log-?on|auth|authenticate|oauth2?|token|session|sessions)"
                        r"([/_.-]|$)", re.I)
RESET_PATH = re.compile(r"(^|[/_.-])(reset|forgot|forgotten|recover|recovery)([/_.-]|$)", re.I)
SIGNUP_PATH = re.compile(r"(^|[/_.-])(sign-?up|register|registration|join)([/_.-]|$)", re.I)
THROTTLED = [429, 503]
# Users that do not exist, other than RATE_LIMIT's (whose burst may have that name locked out).
UNKNOWN_USER = "apiscope-unknown-user"
UNKNOWN_EMAIL = "apiscope-unknown-user@example.invalid"


def _user_field(body: dict) -> str | None:
    return next((name for name, value in body.items()
                 if USER_FIELD.match(compact_name(str(name))) and isinstance(value, (str, int))), None)


@register
class UserEnumeration(SecurityTemplate, name="USER_ENUMERATION", priority=80, title="User enumeration"):
    runs_first = True

    def applies(self, profile: EndpointProfile) -> bool:
        if profile.method not in ("POST", "PUT", "PATCH") or not isinstance(profile.body, dict) \
                or profile.body_format not in ("json", "form") or _user_field(profile.body) is None:
            return False
        if SIGNUP_PATH.search(profile.path) or not is_credential_path(profile.path):
            return False
        has_password = any(is_credential_name(str(name)) for name in profile.body)
        return bool(RESET_PATH.search(profile.path) or (LOGIN_PATH.search(profile.path) and has_password))

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        field = _user_field(profile.body)
        unknown = UNKNOWN_EMAIL if "mail" in compact_name(field) else UNKNOWN_USER
        requests = [
            build_request(profile, f"'{field}' a user that does not exist", payload=unknown,
                          body={**no_real_user(profile.body), field: unknown}),
            build_request(profile, f"'{field}' the test user, with a wrong password", payload="{{testUserId}}",
                          body={**no_real_user(profile.body), field: "{{testUserId}}"}),
        ]
        not_throttled = [assertion("status", "notIn", THROTTLED, request=i, precondition=True,
                                   description=f"request {i} is not throttled (a throttled answer tells nothing)")
                         for i in (0, 1)]
        # A throttled answer proves nothing either way: the comparison then passes (the precondition says why).
        throttled = assertion("status", "in", THROTTLED, request=1, description="the wrong password was throttled",
                              otherwise=assertion("status", "in", THROTTLED, request=0,
                                                  description="the unknown user was throttled"))
        return self.test_config(
            profile,
            description=(f"{profile.method} {profile.path}: an unknown user and the test user with a wrong "
                         "password must get the same answer (status and body), so users cannot be enumerated."),
            requests=requests,
            assertions=[
                *not_throttled,
                assertion("status", "equals", "{{responses[0].status}}", request=1, otherwise=throttled,
                          description="An unknown user and a wrong password get the same status"),
                assertion("body", "equals", "{{responses[0].body}}", request=1, compare="similar",
                          otherwise=throttled, description="An unknown user and a wrong password get similar answers"),
            ],
        )
