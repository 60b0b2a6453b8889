"""Building blocks of security test templates: the base class, the registry, request and
assertion builders.

A template turns an :class:`~testgen.profile.EndpointProfile` into a TestConfig (SPEC
"TestConfig"), a plain JSON-able dict. The TestConfig extensions used here are
documented in ``docs/testgen.md``: per request ``method``, ``url``, ``omitHeaders``,
``repeat``, ``stopWhenStatus``, ``timeout``, ``payload``, ``optional``,
``skipIfEquals``; per assertion ``request``, ``aggregate``, ``compare``,
``ignoreCase``, ``otherwise``, ``description``.
"""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar
from urllib.parse import quote

from django.conf import settings

from inventory.patterns.segments import path_segments

from ..examples import body_with
from ..own_writes import OWN_PASSWORD, OWN_USER_ID, credential_change, not_own_reason
from ..placeholders import PLACEHOLDER, is_placeholder, literal, literal_text
from ..profile import EndpointProfile, Input

# uuid5 namespace of generated test ids: the same endpoint, template and version
# always give the same test id.
TEST_ID_NAMESPACE = uuid.UUID("5b0c7a4e-8f3a-4d2b-9a51-3e0f6c2d7b19")
# Characters left as they are in path segments (readability); the rest is percent-encoded.
_PATH_SAFE = "-._~@:+,;=!$'()*"
_UNSET = object()


@dataclass(frozen=True)
class IdentityView:
    """What generation may know of a further test identity (never its token or password): its
    name, user id and own object ids, and whether its login body names a password."""

    name: str
    user_id: str | None = None
    object_ids: dict[str, str] = field(default_factory=dict)
    has_password: bool = False
    has_login: bool = False


@dataclass(frozen=True)
class GenerationContext:
    """Knobs of the templates, from settings; the test identities of the global environment."""

    sqli_delay_seconds: int
    rate_limit_burst: int
    max_inputs: int
    test_user_id: str | None = None  # the primary identity's testUserId
    identities: tuple[IdentityView, ...] = ()  # further identities that can authenticate
    object_ids: dict[str, str] = field(default_factory=dict)  # the primary identity's own objectIds
    exclude: tuple = ()  # the environment's exclude patterns (testgen/scope.py)
    allow_destructive: tuple = ()  # its allowDestructive patterns

    @staticmethod
    def knobs() -> dict:
        """The settings part (``TESTGEN_*``): no query."""
        return {"sqli_delay_seconds": settings.TESTGEN_SQLI_DELAY_SECONDS,
                "rate_limit_burst": settings.TESTGEN_RATE_LIMIT_BURST, "max_inputs": settings.TESTGEN_MAX_INPUTS}

    @classmethod
    def from_settings(cls) -> GenerationContext:
        from ..services.environment import identity_views  # the services package imports the templates

        environment = identity_views()
        return cls(
            **cls.knobs(),
            test_user_id=environment.test_user_id,
            identities=environment.identities,
            object_ids=environment.object_ids,
            exclude=environment.exclude,
            allow_destructive=environment.allow_destructive,
        )


class SecurityTemplate:
    """A kind of security test. Subclass, give its identity (``name``, ``priority``, ``title``,
    ``version`` when not 1) in the class statement or as class attributes, implement
    :meth:`applies` and :meth:`generate`, decorate with :func:`register`::

        @register
        class Xss(SecurityTemplate, name="XSS", priority=50, title="Cross-site scripting"):
            ...

    ``priority`` orders automatic selection (lowest first); DECISIONS §8 fixes the
    order of the built-ins: BOLA 10, AUTH_BYPASS 20, MASS_ASSIGNMENT 30,
    SQL_INJECTION 40, XSS 50, RATE_LIMIT 60.
    """

    name: ClassVar[str]
    version: ClassVar[int] = 1
    priority: ClassVar[int]
    title: ClassVar[str]
    # Run before the other tests of a run (USER_ENUMERATION: other tests' failed logins could lock
    # the test user out before it compares answers).
    runs_first: ClassVar[bool] = False

    def __init_subclass__(cls, *, name: str | None = None, priority: int | None = None,
                          title: str | None = None, version: int | None = None, **kwargs) -> None:
        """Identity given in the class statement becomes the class attributes of the same names."""
        super().__init_subclass__(**kwargs)
        identity = {"name": name, "priority": priority, "title": title, "version": version}
        for attribute, value in identity.items():
            if value is not None:
                setattr(cls, attribute, value)

    def applies(self, profile: EndpointProfile) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:  # pragma: no cover
        raise NotImplementedError

    # --- helpers for subclasses -------------------------------------------------
    def test_config(self, profile: EndpointProfile, *, description: str, requests: list[dict],
                    assertions: list[dict], passed: str | None = None) -> dict:
        """A TestConfig with SPEC's fields first, then the identifying extensions. A write request not
        sent for want of an own object (own_writes.py) makes the test INCONCLUSIVE unless it finds something.
        ``passed``: what a pass proves, shown as the PASSED result's message (``passedMessage``)."""
        reasons = set(profile.not_own.values())
        unsent = next((i for i, r in enumerate(requests) if r.get("skip") in reasons), None)
        if unsent is not None:
            assertions = [*assertions, assertion(
                "status", "matches", "^[1-5]", request=unsent, inconclusive=True,
                description="Every write was sent to an object of the test identity's own")]
        if profile.own_user_id and OWN_USER_ID in json.dumps(requests):
            requests, assertions = _with_own_user_read(profile, requests, assertions)
        if credential_change(profile) and self.name != "BOLA":
            # Sent only when the test identity's password is known (its login recipe): it is written back unchanged.
            requests = [{**r, "optional": True} if OWN_PASSWORD in json.dumps(r.get("body")) else r for r in requests]
            sent = next((i for i, r in enumerate(requests) if OWN_PASSWORD in json.dumps(r.get("body"))), None)
            if sent is not None:
                assertions = [*assertions, assertion(
                    "status", "matches", "^[1-5]", request=sent, inconclusive=True,
                    description="The credential change was sent (it writes the test identity's own password back: "
                                "the primary identity needs a login recipe with its password)")]
        return {
            "id": str(uuid.uuid5(TEST_ID_NAMESPACE, f"{profile.uuid}:{self.name}:{self.version}")),
            "name": f"{self.title}: {profile.method} {profile.path}",
            "description": description,
            "endpoint": profile.path,
            "method": profile.method,
            "requests": requests,
            "assertions": assertions,
            "host": profile.host,
            "endpointId": profile.uuid,
            "templateName": self.name,
            "templateVersion": self.version,
            **({"passedMessage": passed} if passed else {}),
        }


_RESPONSE_INDEX = re.compile(r"(\{\{\s*responses\[)(\d+)(\])")
_INDEX_KEYS = ("request", "onlyIfAccepted", "onlyIfLoggedIn")


def _shifted(value: Any, by: int) -> Any:
    """A copy of requests or assertions with every request index moved by ``by`` (``{{responses[i]…}}``,
    ``request``, ``onlyIfAccepted``, ``onlyIfLoggedIn``, ``onlyIfStatus.request``)."""
    if isinstance(value, str):
        return _RESPONSE_INDEX.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + by}{m.group(3)}", value)
    if isinstance(value, list):
        return [_shifted(v, by) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _INDEX_KEYS and isinstance(item, int) and not isinstance(item, bool):
                out[key] = item + by
            elif key == "request" and isinstance(item, list):
                out[key] = [i + by for i in item]
            else:
                out[key] = _shifted(item, by)
        return out
    return value


def _with_own_user_read(profile: EndpointProfile, requests: list[dict], assertions: list[dict]):
    """The test identity's own user read first (``GET /users/{{testUserId}}``), its numeric id in the
    requests' user positions (``{{ownUserId}}``, own_writes.py)."""
    pattern = path_segments(profile.host_reads.user_read_path)
    read = {"description": "The test identity's own user (its numeric id)", "method": "GET",
            "url": path_url([*[literal(s) for s in pattern[:-1]], "{{testUserId}}"]),
            **({"headers": auth_headers(profile)} if profile.is_authenticated else {})}
    requests = [read, *json.loads(json.dumps(_shifted(requests, 1)).replace(OWN_USER_ID, "{{responses[0].body.id}}"))]
    assertions = [accepted(0, "The test identity can read its own user (its numeric id; sanity check)",
                           precondition=True), *_shifted(assertions, 1)]
    return requests, assertions


_REGISTRY: dict[str, dict[int, SecurityTemplate]] = {}


def register(cls: type[SecurityTemplate]) -> type[SecurityTemplate]:
    """Class decorator adding a template (one name may have several versions)."""
    versions = _REGISTRY.setdefault(cls.name, {})
    if cls.version in versions:
        raise RuntimeError(f"Template {cls.name} version {cls.version} is registered twice.")
    versions[cls.version] = cls()
    return cls


def registry() -> dict[str, dict[int, SecurityTemplate]]:
    return _REGISTRY


# --- requests ----------------------------------------------------------------------

@lru_cache(maxsize=4096)
def _segment(segment: str) -> str:
    """A path segment for a URL: placeholders (``{{testUserId}}``, also inside a payload built from
    it: ``{{testUserId}}'``) kept, the text around them percent-encoded as the text it stands for
    (escapes turned back into "{" first, so no brace is left in it)."""
    if is_placeholder(segment):
        return segment
    pieces, last = [], 0
    for match in PLACEHOLDER.finditer(segment):
        if match.group("name"):
            pieces += [quote(literal_text(segment[last:match.start()]), safe=_PATH_SAFE), match.group(0)]
            last = match.end()
    return "".join(pieces) + quote(literal_text(segment[last:]), safe=_PATH_SAFE)


def path_url(segments: list[str]) -> str:
    """``{{baseUrl}}`` followed by the segments: a segment that is exactly one placeholder (a
    template's ``{{testUserId}}``) as it is, any other percent-encoded as the text it stands for."""
    return "{{baseUrl}}/" + "/".join(_segment(str(s)) for s in segments)


def auth_headers(profile: EndpointProfile) -> dict[str, str]:
    """The test user's credentials, in the header the endpoint's traffic used, with the scheme it
    showed (``Bearer {{authToken}}``; the runner sends one scheme word when ``authToken`` carries it too),
    or as its credential cookie (``Cookie: {{authCookie}}``) when traffic carried a session cookie."""
    if not profile.is_authenticated:
        return {}
    if profile.credential_header == "Cookie":
        return {"Cookie": "{{authCookie}}"}
    scheme = f"{profile.credential_scheme} " if profile.credential_scheme else ""
    return {profile.credential_header: scheme + "{{authToken}}"}


def credential_placeholder(profile: EndpointProfile) -> str:
    """The placeholder of the test identity's credential in the endpoint's channel."""
    return "{{authCookie}}" if profile.credential_header == "Cookie" else "{{authToken}}"


def build_request(profile: EndpointProfile, description: str, *, segments: list[str] | None = None,
                  query: dict[str, str] | None = None, body: Any = _UNSET, headers: dict[str, str] | None = None,
                  method: str | None = None, **extensions: Any) -> dict:
    """A TestRequest: the endpoint's example request with the given parts replaced.

    ``headers=None`` sends the test user's credentials (authenticated endpoints);
    pass a dict to choose exactly. The example body is sent for methods with a body.
    """
    method = method or profile.method
    request: dict[str, Any] = {
        "description": description,
        "method": method,
        "url": path_url(profile.segments if segments is None else segments),
    }
    all_headers = dict(auth_headers(profile) if headers is None else headers)
    if body is _UNSET:
        body = profile.body if method in ("POST", "PUT", "PATCH", "DELETE") else None
    if body is not None and profile.body_format == "json":
        all_headers.setdefault("Content-Type", "application/json")
    elif body is not None and profile.body_format == "form":
        all_headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif body is not None:
        all_headers.setdefault("Content-Type", "text/plain")
    if all_headers:
        request["headers"] = all_headers
    query = profile.query if query is None else query
    if query:
        request["queryParams"] = {k: str(v) for k, v in query.items()}
    if body is not None:
        request["body"] = body
    request.update({k: v for k, v in extensions.items() if v is not None})
    if "skip" not in request and (reason := not_own_reason(profile, method, request["url"], request.get("queryParams"),
                                                          request.get("body"))):
        request["skip"] = reason  # a write naming no object of the test identity's own (own_writes.py)
    return request


def request_with_input(profile: EndpointProfile, description: str, item: Input, value: Any, **extensions: Any) -> dict:
    """The example request with one input replaced by ``value``."""
    if item.location == "path":
        segments = list(profile.segments)
        segments[item.key] = str(value)
        return build_request(profile, description, segments=segments, **extensions)
    if item.location == "query":
        return build_request(profile, description, query={**profile.query, item.name: str(value)}, **extensions)
    return build_request(profile, description, body=body_with(profile.body, item.key, value), **extensions)


def input_label(item: Input) -> str:
    return {"path": "path parameter", "query": "query parameter", "body": "body field"}[item.location] + f" '{item.name}'"


def inputs_named(inputs: list[Input]) -> str:
    """The inputs a test fuzzes, for its description: ``query:q, body:name``."""
    return ", ".join(f"{i.location}:{i.name}" for i in inputs)


# --- assertions --------------------------------------------------------------------

def assertion(type: str, condition: str, value: Any = None, field: str = "", **extensions: Any) -> dict:
    """An Assertion with SPEC's four fields always present, then the extensions given."""
    result = {"type": type, "field": field, "condition": condition, "value": value}
    result.update({k: v for k, v in extensions.items() if v is not None})
    return result


def distinct_names(requests: list[dict]) -> list[dict]:
    """The requests with ``{{uniqueName}}`` made distinct per request (``{{uniqueName}}q3``) in bodies and
    queries: each request that creates something (a registration, an object with a unique title) creates
    its own, so one does not fail because an earlier one of the test created the same."""
    def renamed(value: Any, suffix: str) -> Any:
        if isinstance(value, str):
            return value.replace("{{uniqueName}}", "{{uniqueName}}" + suffix)
        if isinstance(value, list):
            return [renamed(v, suffix) for v in value]
        if isinstance(value, dict):
            return {k: renamed(v, suffix) for k, v in value.items()}
        return value

    out = []
    for index, request in enumerate(requests):
        if "{{uniqueName}}" in json.dumps([request.get("body"), request.get("queryParams")]):
            request = {**request, **{key: renamed(request[key], f"q{index}") for key in ("body", "queryParams")
                                     if key in request}}
        out.append(request)
    return out


def refused(request: int | list[int], description: str, **extensions: Any) -> dict:
    """The answer to ``request`` is a refusal in any form (``testgen/verdicts.py``: 3xx, 4xx, 5xx, or a
    2xx whose body says it failed)."""
    return assertion("status", "exists", None, request=request, verdict="refused", description=description,
                     **extensions)


def accepted(request: int | list[int], description: str, **extensions: Any) -> dict:
    """The answer to ``request`` is no refusal in any form (the request did what it asked)."""
    return assertion("status", "exists", None, request=request, verdict="accepted", description=description,
                     **extensions)
