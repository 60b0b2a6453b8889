"""What a host's traffic (and uploaded spec) shows beyond one endpoint, for templates that follow an
object across endpoints (MASS_ASSIGNMENT reads back what it wrote, logs in as a user it registered).

:class:`HostFacts` is shared by the profiles of one host in one generation call and loaded on first
use (a handful of queries per host, whatever the number of endpoints), so templates that never ask
cost nothing:

* ``reads``: the host's GET endpoints as :class:`~testgen.profile.EndpointProfile` (path pattern →
  profile: response fields, observed paths, credential header and scheme);
* ``login``: the host's login route, when traffic shows one (a POST to a login-like path whose body
  has a user name or email and a password, and whose answer carries a token);
* :meth:`values`: the scalar values seen for a field name in request and response bodies of recent
  traces (redacted ones left out), plus the ``enum`` values of that property in uploaded OpenAPI specs
  of the host, most common first.

Values seen in traffic are :func:`~testgen.placeholders.literal` like every other traffic value.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from inventory.patterns.segments import path_segments, segment_is_parameter

from .placeholders import literal

# Newest traces read per endpoint for values, and the largest body parsed.
TRACES_PER_ENDPOINT = 5
MAX_BODY_CHARS = 65_536
LOGIN_PATH = re.compile(r"(^|[/_-])(log-?in|sign-?in|auth(enticate)?|token|sessions?)$", re.IGNORECASE)
USER_FIELD = re.compile(r"^(user_?name|login|email|e_?mail|handle)$", re.IGNORECASE)
PASSWORD_FIELD = re.compile(r"^(pass(word|wd)?|pwd)$", re.IGNORECASE)
TOKEN_FIELD = re.compile(r"(^|_)(auth_?|access_?|id_?)?token$|^jwt$|accessToken$|authToken$|idToken$", re.IGNORECASE)


@dataclass(frozen=True)
class LoginRoute:
    """A login seen in traffic: where to POST which body fields, and where the token is in the answer."""

    path: str  # concrete path (no parameters)
    user_field: str  # body key of the user name / email (inside ``envelope`` when there is one)
    password_field: str
    token_path: str  # dotted path in the answer
    body: dict
    envelope: str | None = None  # the key the credentials are wrapped under ({"user": {"email", "password"}})
    form: bool = False  # sent form-encoded (an OAuth2 password grant, an HTML form)

    def body_for(self, user: str, password: str) -> dict:
        """The login body with ``user`` and ``password`` in their fields."""
        inner = dict(self.body[self.envelope]) if self.envelope else dict(self.body)
        inner.update({self.user_field: user, self.password_field: password})
        return {**self.body, self.envelope: inner} if self.envelope else inner


def leaf(data_path: str) -> str:
    """The last name of a data path (``users[].username`` → ``username``)."""
    return re.split(r"[.\[\]]+", data_path.rstrip("[]"))[-1] if data_path else ""


class HostFacts:
    """See the module docstring. ``host_id``: the host's row id; ``known``: profiles already built in
    this generation call (endpoint uuid -> profile), reused instead of loading them again."""

    def __init__(self, host_id: int, known: dict | None = None):
        self.host_id = host_id
        self.known = known if known is not None else {}
        self._reads: dict[str, Any] | None = None
        self._login: LoginRoute | None = None
        self._values: dict[str, Counter] | None = None
        self._items: dict[tuple, list[str]] = {}
        self._host_name = ""
        self.exclude: tuple = ()  # the environment's exclude patterns: never read back through those

    def _load(self) -> None:
        """The host's reads and login route, then the values seen per field (one query more)."""
        self._load_reads()
        if self._values is not None:
            return
        from django.db.models import F

        from inventory.models import ApiTrace

        from .profile import _rows_per_endpoint

        values: dict[str, Counter] = {}
        traces = _rows_per_endpoint(ApiTrace.objects.filter(endpoint__host_id=self.host_id),
                                    [F("created_at").desc()], TRACES_PER_ENDPOINT, ("request_body", "response_body"))
        for _, *bodies in traces:
            for text in bodies:
                for name, value in _scalars(_parsed(text)):
                    values.setdefault(name.lower(), Counter())[value] += 1
        for name, enum in _spec_enums(self._host_name):
            counter = values.setdefault(name.lower(), Counter())
            for value in enum:
                counter[value] += 0  # known to the API, not seen: after the seen ones
        self._values = values

    def _load_reads(self) -> None:
        from inventory.models import Endpoint

        from .profile import profiles_load

        if self._reads is not None:
            return
        endpoints = list(Endpoint.objects.filter(host_id=self.host_id, method__in=("GET", "POST"))
                         .select_related("host").order_by("path"))
        wanted = [e for e in endpoints if e.method == "GET" or LOGIN_PATH.search(e.path)]
        missing = [e for e in wanted if e.uuid not in self.known]
        profiles = {**{e.uuid: self.known[e.uuid] for e in wanted if e.uuid in self.known},
                    **profiles_load(endpoints=missing, host_id=self.host_id)}
        self._reads = {p.path: p for p in profiles.values() if p.method == "GET" and not p.destructive}
        for path in self._reads:
            parts = path_segments(path)
            if parts and segment_is_parameter(parts[-1]):
                self._items.setdefault(tuple(parts[:-1]), []).append(path)
        self._login = next((route for p in profiles.values() if p.method == "POST"
                            for route in [_login_route(p)] if route), None)
        self._host_name = endpoints[0].host.name if endpoints else ""

    @property
    def reads(self) -> dict[str, Any]:
        """The host's GET profiles by path pattern, excluded ones (the environment's ``exclude``) left out."""
        self._load_reads()
        if not self.exclude:
            return self._reads or {}
        from .scope import pattern_matches

        return {path: read for path, read in (self._reads or {}).items()
                if not any(pattern_matches(x, "GET", path) for x in self.exclude)}

    @property
    def login(self) -> LoginRoute | None:
        self._load_reads()
        return self._login

    def items_under(self, collection: list[str]) -> list[str]:
        """GET patterns ``<collection>/{param}`` (the item reads of a collection's path segments)."""
        reads = self.reads
        return [p for p in self._items.get(tuple(collection), []) if p in reads]

    def seen(self, name: str, value: Any) -> int:
        """How many times ``value`` was seen for field ``name`` in traffic (0: only in a spec, or never)."""
        self._load()
        return (self._values or {}).get(name.lower(), Counter()).get(value, 0)

    def values(self, name: str) -> list[Any]:
        """Distinct scalar values seen for field ``name`` (case-insensitive leaf name), most common first."""
        self._load()
        counter = (self._values or {}).get(name.lower(), Counter())
        return [v for v, _ in sorted(counter.items(), key=lambda item: -item[1])]


def _parsed(text: str) -> Any:
    if not text or len(text) > MAX_BODY_CHARS or text.lstrip()[:1] not in "{[":
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _scalars(value: Any, name: str = "", depth: int = 0):
    """(leaf name, value) of every scalar in a JSON value (strings literal; redacted ones left out)."""
    if depth > 32:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _scalars(v, str(k), depth + 1)
    elif isinstance(value, list):
        for v in value[:50]:
            yield from _scalars(v, name, depth + 1)
    elif name and (isinstance(value, (bool, int, float)) or (isinstance(value, str) and "[REDACTED]" not in value)):
        yield name, literal(value) if isinstance(value, str) else value


def _login_route(profile) -> LoginRoute | None:
    if not (isinstance(profile.body, dict) and profile.body_format in ("json", "form")
            and LOGIN_PATH.search(profile.path) and not profile.path_inputs):
        return None
    body, wrapper = profile.body, None
    if len(body) == 1 and isinstance(next(iter(body.values())), dict):  # {"user": {"email", "password"}}
        wrapper = str(next(iter(body)))
        body = body[wrapper]
    user = next((k for k in body if USER_FIELD.match(str(k))), None)
    password = next((k for k in body if PASSWORD_FIELD.match(str(k))), None)
    token = next((p for p, t in profile.response_fields.items() if t == "string" and TOKEN_FIELD.search(leaf(p))
                  and "[" not in p), None)
    if not (user and password and token):
        return None
    return LoginRoute(path=profile.path, user_field=user, password_field=password, token_path=token,
                      body=dict(profile.body), envelope=wrapper, form=profile.body_format == "form")


def _spec_enums(host: str):
    """(property name, enum values) of every property with an ``enum`` of scalars in the host's uploaded specs."""
    from detections.models import OpenApiSpec
    from inventory.patterns.normalize import host_normalize

    if not host:
        return
    key = host_normalize(host)  # hosts are matched in Python: JSON containment is not portable (SQLite)
    ids = [pk for pk, hosts in OpenApiSpec.objects.values_list("id", "hosts") if key in (hosts or [])]
    for spec in OpenApiSpec.objects.filter(id__in=ids).values_list("spec", flat=True) if ids else ():
        stack = [spec]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                for name, schema in (node.get("properties") or {}).items() if isinstance(node.get("properties"),
                                                                                         dict) else ():
                    enum = schema.get("enum") if isinstance(schema, dict) else None
                    if isinstance(enum, list):
                        yield name, [literal(v) if isinstance(v, str) else v for v in enum
                                     if isinstance(v, (str, int, float, bool))]
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
