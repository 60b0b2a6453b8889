"""AUTH_BYPASS: an authenticated endpoint must not serve or act for a request without valid credentials.

A finding is a proof against a control (DECISIONS §8), never a status code alone:

* **forged credentials** — an empty credential, a malformed token, an unsigned JWT (``alg: none``,
  Authorization only), the test user's token tampered (skipped without one) and, on ``Authorization``
  endpoints, the JWT attacks made at run time from the test user's own token (``testgen/jwt.py``:
  ``alg: none``, the signature stripped, another key, a weak secret found offline, an expired token) —
  fail when one is **accepted where the request without credentials is refused**. When the request
  without credentials is accepted too, the endpoint is public for this purpose and a forged credential
  proves nothing;
* **a read without credentials** fails when its answer carries the sensitive or user-specific content
  of the test user's authenticated answer (the control, sent first): the values of the fields the
  inventory classified (emails, phone numbers…), or a value of the test user under a key naming the
  caller (``username``, ``email``…). A public read — the same non-sensitive answer with and without
  credentials, a catalogue, a "who am I" route answering an empty user — passes. A control that is
  itself refused leaves the test INCONCLUSIVE;
* **a write without credentials** fails when it takes effect, read back as the test user: the own
  object's views (its GET, its parent's) read before and after differ, or a created object can be read
  at the id the answer gave. An accepted write that nothing reads back is INCONCLUSIVE.

Refusals are judged in any form (``testgen/verdicts.py``: 3xx, 4xx including 400, 429, 5xx, or a 2xx
whose body says it failed). Writes go to the test identity's own objects (``own_writes.py``) and carry
recognisable values.
"""
from __future__ import annotations

from inventory.patterns.segments import path_segments, segment_is_parameter

from ..profile import EndpointProfile
from ._base import (GenerationContext, SecurityTemplate, accepted, assertion, auth_headers, build_request,
                    credential_placeholder, refused, register)
from ._bola_writes import marked_body
from ._readback import own_views

# {"alg":"none","typ":"JWT"} . {"sub":"apiscope"} . (no signature)
UNSIGNED_JWT = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhcGlzY29wZSJ9."
READS = ("GET", "HEAD", "OPTIONS")
JWT_ATTACKS = (
    ("none", "The API refuses the test user's JWT with alg 'none' and no signature"),
    ("stripped", "The API refuses the test user's JWT with its signature removed"),
    ("otherKey", "The API refuses the test user's claims signed with another key"),
    ("weakSecret", "The API refuses a token forged with a weak HMAC secret"),
    ("expired", "The API refuses an expired token"),
)


def jwt_attacks(profile: EndpointProfile, body=None) -> list[tuple[dict, str]]:
    """Requests carrying forged variants of ``{{authToken}}``, each with what its refusal proves."""
    header = profile.credential_header
    extra = {} if body is None else {"body": body}
    return [(build_request(profile, f"JWT attack '{attack}'", headers={header: "{{authToken}}"}, optional=True,
                           jwtAttack=attack, jwtHeader=header, **extra), proved)
            for attack, proved in JWT_ATTACKS]


def forged_requests(profile: EndpointProfile, body=None) -> list[tuple[dict, str]]:
    """(request, what its refusal proves) for every forged credential (see the module docstring)."""
    header = profile.credential_header
    extra = {} if body is None else {"body": body}
    cookie = header == "Cookie"
    name = profile.credential_cookies[0] if profile.credential_cookies else "session"
    bearer = header == "Authorization"
    malformed = f"{name}=apiscope-malformed-token" if cookie else (
        "Bearer apiscope-malformed-token" if bearer else "apiscope-malformed-token")
    requests = [
        (build_request(profile, f"With an empty {header} header", headers={header: ""}, **extra),
         "An empty credential is refused"),
        (build_request(profile, "With a malformed token", headers={header: malformed}, **extra),
         "A malformed credential is refused"),
    ]
    if bearer:
        requests.append((build_request(profile, "With an unsigned JWT (alg: none)",
                                       headers={header: f"Bearer {UNSIGNED_JWT}"}, **extra),
                         "An unsigned JWT is refused"))
    requests.append((build_request(profile, "With the test user's credential tampered (one character appended)",
                                   headers={header: credential_placeholder(profile) + "x"}, optional=True, **extra),
                     "The test user's credential, tampered, is refused"))
    if bearer:
        requests += jwt_attacks(profile, body)
    return requests


def public_route(profile: EndpointProfile) -> str | None:
    """The host's GET pattern that also matches this read's path and that traffic showed called without
    credentials (``GET /users/v1/{param1}`` for ``GET /users/v1/maria``, a route the inventory kept apart):
    the route is public by what traffic showed, so what an anonymous caller gets there proves nothing. None
    when there is none."""
    if profile.facts is None:
        return None
    parts = path_segments(profile.path)
    for path, read in profile.facts.reads.items():
        other = path_segments(path)
        if path != profile.path and not read.is_authenticated and len(other) == len(parts) and all(
                a == b or segment_is_parameter(a) for a, b in zip(other, parts, strict=True)):
            return path
    return None


@register
class AuthBypass(SecurityTemplate, name="AUTH_BYPASS", priority=20, title="Authentication bypass"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.is_authenticated

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        header = profile.credential_header
        if profile.method in READS:
            requests, assertions = self._read(profile)
        else:
            requests, assertions = self._write(profile)
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path} requires authentication: a forged or tampered credential in "
                f"{header} must not be accepted where no credential is refused, and without credentials the "
                + ("answer must not carry the test user's sensitive or user-specific content."
                   if profile.method in READS else "write must not take effect (read back as the test user).")
            ),
            requests=requests,
            assertions=assertions,
        )

    def _read(self, profile: EndpointProfile) -> tuple[list[dict], list[dict]]:
        header = profile.credential_header
        # A read naming its object in the path (``/articles/{slug}``) shows that object: the test user's
        # name in it (its author) is the object's content, not the caller's session, so only classified
        # sensitive values count there; a read naming none (``/me``, ``/orders``) is about the caller.
        names_object = any(segment_is_parameter(s) for s in path_segments(profile.path)) \
            or profile.implicit_user is not None  # a user's name kept literal (/users/v1/maria)
        requests = [
            build_request(profile, "The example request, with the test user's credentials (the control)"),
            build_request(profile, f"Without the {header} header", headers={}, omitHeaders=[header]),
        ]
        checks = [
            accepted(0, "The example request with the test user's credentials is accepted (else nothing can be "
                        "compared)", inconclusive=True),
        ]
        public = public_route(profile)
        if public is None:
            checks.append(refused(
                1, "Without credentials the answer carries none of the test user's sensitive or user-specific "
                   "content", otherwise=assertion(
                       "body", "notContains", "{{responses[0].body}}", request=1,
                       private={"paths": profile.private_paths(), "values": [] if names_object else ["{{testUserId}}"]},
                       description="the answer without credentials shows none of the authenticated answer's "
                                   "sensitive or user-specific values")))
        forged_checks = []
        for request, proved in forged_requests(profile):
            index = len(requests)
            requests.append(request)
            forged_checks.append(refused(index, proved, otherwise=accepted(
                1, "the request without credentials is accepted too (nothing to bypass)")))
        return requests, forged_checks + checks

    def _write(self, profile: EndpointProfile) -> tuple[list[dict], list[dict]]:
        header = profile.credential_header
        body, _, _, _ = marked_body(profile, None, new_password_too=False) if isinstance(profile.body, dict) \
            else (profile.body, [], None, "")
        extra = {} if body is None else {"body": body}
        requests: list[dict] = []
        checks: list[dict] = []
        views = own_views(profile)
        before = []
        for read, segments in views:
            before.append(len(requests))
            requests.append(build_request(read, f"The test user's own object before the write (GET {read.path})",
                                          method="GET", segments=list(segments), query={}, body=None,
                                          headers=auth_headers(read)))
        anonymous = len(requests)
        requests.append(build_request(profile, f"The write without the {header} header", headers={},
                                      omitHeaders=[header], **extra))
        for (read, segments), index in zip(views, before, strict=True):
            after = len(requests)
            requests.append(build_request(read, f"The test user's own object after the write (GET {read.path})",
                                          method="GET", segments=list(segments), query={}, body=None,
                                          headers=auth_headers(read)))
            check = assertion("body", "equals", f"{{{{responses[{index}].body}}}}", request=after, compare="similar",
                              description=f"the object is unchanged for the test user (GET {read.path})")
            checks.append(refused(anonymous, "A write without credentials does not take effect", otherwise=check))
        if not views:
            created = self._created(profile, anonymous)
            if created is not None:
                requests.append(created)
                checks.append(refused(anonymous, "A write without credentials does not take effect",
                                      otherwise=refused(len(requests) - 1, "the object it would have created "
                                                                           "cannot be read back")))
            checks.append(refused(anonymous, "A write without credentials is refused, or read back "
                                             "(nothing reads the object back: an accepted write cannot be decided)",
                                  inconclusive=True,
                                  otherwise=accepted(len(requests) - 1, "the object was read back")
                                  if created is not None else None))
        forged_checks = []
        for request, proved in forged_requests(profile, body):
            index = len(requests)
            requests.append(request)
            forged_checks.append(refused(index, proved, otherwise=accepted(
                anonymous, "the write without credentials is accepted too (nothing to bypass)")))
        return requests, forged_checks + checks

    @staticmethod
    def _created(profile: EndpointProfile, write: int) -> dict | None:
        """For a POST: a GET of the item the write's answer names (``id``), as the test user."""
        from inventory.patterns.segments import path_segments

        if profile.method != "POST" or profile.facts is None:
            return None
        pattern = path_segments(profile.path)
        items = profile.facts.items_under(pattern)
        identifier = next((name for name in ("id", "uuid", "_id") if name in profile.response_fields), None)
        if not items or identifier is None:
            return None
        read = profile.facts.reads[items[0]]
        return build_request(read, f"The object the write created, read back by the test user (GET {read.path})",
                             method="GET", segments=[*profile.segments, f"{{{{responses[{write}].body.{identifier}}}}}"],
                             query={}, body=None, headers=auth_headers(read), onlyIfAccepted=write)
