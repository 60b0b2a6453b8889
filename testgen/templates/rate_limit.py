"""RATE_LIMIT: a burst of requests to a credential endpoint must be limited.

Applies to credential paths (login, token, password, reset, otp, signup…) and to any POST
(DECISIONS §8). The endpoint's example request (with the test user's token when authenticated)
is sent ``TESTGEN_RATE_LIMIT_BURST`` times in a row, stopping at the first 429.

* Credential path: passes when an answer in the burst is 429 Too Many Requests, or otherwise
  when the burst was slowed down (its last answer took more than one second). An unthrottled
  login is a brute-force door (OWASP API2/API4).
* Any other POST (creating a comment, a book): no throttling is no finding — many well-built APIs
  let a user create objects in a burst, and flagging them all would bury the real findings (issue
  #15: false findings on fixed twins). The burst must still not break the API: it fails on a
  500/502/504 answer.

Non-destructive (DECISIONS §8): on a credential path the burst never targets a user seen in
traffic nor reuses observed credentials — body and query fields naming a user (``username``,
``email``, ``login``…) carry a user that does not exist, and password-like fields a value that is
no one's password. A burst against a real user could lock that user out. A registration burst
registers a fresh user of its own (``{{uniqueName}}``, the profile's registration body), never the
non-existent user of the login bursts: no burst ever logs in as an account a burst created.

What a pass proves is said in the result (``passedMessage``): on a credential flow that the burst was
throttled; on another write only that it survived the burst and that no throttling was seen.
"""
from __future__ import annotations

import re

from inventory.ingest.credentials import is_credential_name

from ..own_writes import credential_change
from ..ownership import is_registration
from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, accepted, assertion, build_request, register


CREDENTIAL_PATH = re.compile(
    r"(^|[/_.-])(log-?in|sign-?in|log-?on|auth|oauth2?|token|tokens|session|sessions|password|passwd|"
    r"reset|forgot|otp|mfa|2fa|verify|verification|sign-?up|register|registration)([/_.-]|$)",
    re.I,
)
SLOWED_MS = 1000
# Answers of an API failing under a burst of writes (503 is load shedding, as good as a 429).
SERVER_FAILURES = [500, 502, 504]
# Field names (lower case, without - _ .) that name the user an attempt is for.
USER_FIELD = re.compile(r"^(user(name|id)?|login|loginid|e?mail(address)?|phone(number)?|account|handle|"
                        r"nick(name)?|identifier|principal)$")
NO_SUCH_USER = "apiscope-no-such-user"
NO_SUCH_EMAIL = "apiscope-no-such-user@example.invalid"
NOT_A_PASSWORD = "apiscope-not-a-password"


def compact_name(name: str) -> str:
    """A field name compared with ``USER_FIELD``: lower case, without ``- _ .`` and spaces."""
    return re.sub(r"[-_.\s]", "", name).lower()


def no_real_user(values: dict) -> dict:
    """``values`` with user-naming fields set to a user that does not exist and credentials to a dummy."""
    out = {}
    for name, value in values.items():
        compact = compact_name(str(name))
        if USER_FIELD.match(compact) and isinstance(value, (str, int)):
            out[name] = NO_SUCH_EMAIL if "mail" in compact else NO_SUCH_USER
        elif is_credential_name(str(name)) and isinstance(value, (str, int)):
            out[name] = NOT_A_PASSWORD
        else:
            out[name] = value
    return out


def is_credential_path(path: str) -> bool:
    return bool(CREDENTIAL_PATH.search(path))


def _per_repeat(value):
    """A registration body whose fresh user names change with every request of the burst
    (``{{uniqueName}}r{{repeat}}``): each request registers a user of its own."""
    if isinstance(value, dict):
        return {k: _per_repeat(v) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("{{uniqueName}}"):
        return value.replace("{{uniqueName}}", "{{uniqueName}}r{{repeat}}", 1)
    return value


def _renamed(value, suffix: str):
    """A body whose test-made names (``{{uniqueName}}``) get ``suffix``: each request creates its own object."""
    if isinstance(value, dict):
        return {k: _renamed(v, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, suffix) for v in value]
    if isinstance(value, str):
        return value.replace("{{uniqueName}}", "{{uniqueName}}" + suffix)
    return value


@register
class RateLimit(SecurityTemplate, name="RATE_LIMIT", priority=60, title="Rate limiting"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.method == "POST" or is_credential_path(profile.path)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        burst = context.rate_limit_burst
        if not is_credential_path(profile.path):
            return self._plain_write(profile, burst)
        if credential_change(profile):
            return self.test_config(
                profile, description=f"{profile.method} {profile.path}: a credential change of an existing user; "
                                     "a burst would change the test identity's own password and is not sent.",
                requests=[build_request(profile, f"The example request, {burst} times in a row (not sent)",
                                        repeat=burst, skip="a burst of credential changes would change the test "
                                                           "identity's password (tests write credentials only to "
                                                           "users that do not exist); not sent")],
                assertions=[assertion("status", "equals", 429, request=0, inconclusive=True,
                                      description="The burst was sent")])
        parts = {}
        if is_registration(profile.method, profile.path, profile.body):
            parts["body"] = _per_repeat(profile.body)  # fresh users of this test, one per request
            parts["query"] = {k: str(v) for k, v in _per_repeat(profile.query).items()} or None
        else:
            if isinstance(profile.body, dict):
                parts["body"] = no_real_user(profile.body)
            if profile.query:
                parts["query"] = {k: str(v) for k, v in no_real_user(profile.query).items()}
        throttled = assertion(
            "status", "equals", 429, request=1, aggregate="any",
            description="The burst is answered 429 at some point",
            otherwise=assertion("duration", "greaterThan", SLOWED_MS, request=1, aggregate="last",
                                description="The burst is slowed down",
                                otherwise=assertion("status", "notEquals", "{{responses[0].status}}", request=1,
                                                    aggregate="any",
                                                    description="The burst is answered otherwise than the single "
                                                                "request at some point (a throttle in another form)")))
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: a burst of {burst} requests must be throttled at some point: "
                f"answered 429, slowed down (last answer over {SLOWED_MS} ms), or answered otherwise than the same "
                "request sent once (a throttle in another form: 500, 403, a lockout)."
            ),
            passed=f"The credential flow was throttled within a burst of {burst} requests (429, slowed down, or "
                   "answered otherwise than a single request).",
            requests=[build_request(profile, "The example request, once (the control)", **parts),
                      build_request(profile, f"The example request, {burst} times in a row",
                                    repeat=burst, stopWhenStatus=[429], **parts)],
            assertions=[throttled],
        )

    def _plain_write(self, profile: EndpointProfile, burst: int) -> dict:
        """A write that is no credential flow (``POST /comments``): no limit on it is no finding (an
        API may well let a user create objects in a burst), but the burst must not break the API. The
        request is sent twice on its own first: a burst proves something only when the request can be
        repeated (a unique title, a single-use coupon fail the second time on their own)."""
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: a burst of {burst} requests must not make the API fail "
                f"(no {', '.join(map(str, SERVER_FAILURES))} answer); being throttled (429) or not is no finding "
                "on a write that is not a credential flow. The request is sent twice alone first: one that fails "
                "on its own proves nothing."
            ),
            passed=f"Survived a burst of {burst} requests, no throttling seen (not a finding on a write that is "
                   "no credential flow).",
            requests=[build_request(profile, "The example request, once (the control)", body=_renamed(profile.body, "a")),
                      build_request(profile, "The example request, once more (it can be repeated)",
                                    body=_renamed(profile.body, "b"), onlyIfAccepted=0),
                      build_request(profile, f"The example request, {burst} times in a row",
                                    body=_renamed(profile.body, "r{{repeat}}"), repeat=burst, stopWhenStatus=[429],
                                    onlyIfAccepted=1)],
            assertions=[accepted(0, "The example request alone is accepted", inconclusive=True),
                        accepted(1, "The example request is accepted a second time (else it fails on its own)",
                                 inconclusive=True),
                        assertion("status", "notIn", SERVER_FAILURES, request=2,
                                  description="The API survives the burst (no server failure)")],
        )
