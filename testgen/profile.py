"""What traffic taught us about an endpoint, in the form test templates consume.

An :class:`EndpointProfile` gathers, for one endpoint: its path parameters with
example values (from observed concrete paths), query parameters and request-body
fields with their types (data fields) and example values (recent traces), an
example body with redacted values replaced by plausible synthetic ones, the
header that carried credentials, and the response fields. Profiles are built
in bulk (:func:`profiles_load`): a fixed number of queries whatever the number
of endpoints, so generating tests for a whole host stays cheap.

Every string a profile holds that came from traffic (path segments, observed paths,
query values, body values) is :func:`~testgen.placeholders.literal`: it resolves to
itself, so nothing an API's users send can become a ``{{placeholder}}`` in a test.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F, Window
from django.db.models.functions import RowNumber

from classification.models import DataField
from core.enums import DataSection
from core.jsontypes import json_type
from inventory.ingest import credentials as _credentials
from inventory.ingest.credentials import AUTH_SCHEMES
from inventory.models import ApiTrace, Endpoint, ObservedPath
from inventory.patterns.segments import path_segments, segment_is_parameter

from .examples import (
    REDACTED,
    body_from_fields,
    body_parse,
    field_type_for,
    redacted_replaced,
    scalar_leaves,
    synthetic_value,
)
from .ownership import is_user_position, login_body_without_real_user, owner_named, user_position
from .hostfacts import HostFacts
from .placeholders import literal, literal_values
from .scope import destructive_reason

# Newest observed paths and traces read per endpoint.
OBSERVED_PATHS_PER_ENDPOINT = 20
TRACES_PER_ENDPOINT = 5
# Header names that carry credentials, in the order we prefer them (a credential cookie comes last:
# only cookies the inventory counts as credentials, DECISIONS §4).
CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key", "apikey", "x-auth-token", "x-access-token", "cookie")
# Newest answer text kept per trace (what a state-resetting endpoint says of itself, testgen/scope.py).
ANSWER_CHARS = 2000
# Classes of values that say nothing of a user on their own (an answer carrying them is not private).
NOT_PRIVATE_CLASSES = frozenset({"ip_address", "mac_address"})
CANONICAL_HEADER = {
    "authorization": "Authorization",
    "x-api-key": "X-API-Key",
    "api-key": "Api-Key",
    "apikey": "ApiKey",
    "x-auth-token": "X-Auth-Token",
    "x-access-token": "X-Access-Token",
    "cookie": "Cookie",
}
_INTEGER = re.compile(r"^-?\d+$")
_NUMBER = re.compile(r"^-?\d+\.\d+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass
class Input:
    """One value a request carries that a test may change.

    ``location`` is ``path``, ``query`` or ``body``; ``name`` is ``paramN`` for a
    path parameter, the parameter name for a query, the dotted path for a body
    field (``items[0].name``). ``key`` addresses it: the segment index for a path
    parameter, the name for a query parameter, a tuple of keys/indices for a body field.
    """

    location: str
    name: str
    data_type: str
    example: Any
    key: Any

    @property
    def is_string(self) -> bool:
        return self.data_type == "string"

    @property
    def looks_numeric(self) -> bool:
        return self.data_type in ("integer", "number") or bool(_INTEGER.match(str(self.example)))


@dataclass
class EndpointProfile:
    """An endpoint as test templates see it (see module docstring)."""

    uuid: str
    host: str
    method: str
    path: str
    is_authenticated: bool
    credential_header: str = "Authorization"
    credential_scheme: str = ""  # "Bearer" when traffic showed "Bearer [REDACTED]"; "" when none was seen
    segments: list[str] = field(default_factory=list)  # example concrete path, split, values unencoded
    path_inputs: list[Input] = field(default_factory=list)
    query_inputs: list[Input] = field(default_factory=list)
    body_inputs: list[Input] = field(default_factory=list)
    query: dict[str, str] = field(default_factory=dict)  # example query string
    body: Any = None  # example body: dict/list (JSON), dict (form) or str
    body_format: str | None = None  # "json", "form", "text"
    observed_paths: list[str] = field(default_factory=list)  # concrete, newest first
    response_fields: dict[str, str] = field(default_factory=dict)  # RESPONSE_BODY dataPath -> dataType (2xx)
    response_classes: dict[str, list[str]] = field(default_factory=dict)  # 2xx RESPONSE_BODY dataPath -> classes
    credential_cookies: list[str] = field(default_factory=list)  # names of credential cookies traffic carried
    answers: list[str] = field(default_factory=list)  # the loaded traces' answers (excerpts), newest first
    anonymous_2xx: bool = False  # a loaded trace without credentials was answered 2xx
    item_read_path: str | None = None  # GET pattern reading what this write changes/creates
    host_reads: HostReads | None = None  # the host's GET patterns (shared by the host's profiles)
    # (concrete path segments, query, owner) of traces whose answer named the object's owner
    trace_owners: list[tuple[list[str], dict[str, str], tuple[str, str]]] = field(default_factory=list)
    implicit_user: Input | None = None  # a literal user name in the path (/users/v1/carol/password)
    facts: HostFacts | None = field(default=None, repr=False)  # the host's other endpoints, loaded on use
    write_slots: list | None = None  # objects a write names (own_writes.py), found on first use
    not_own: dict[str, str] = field(default_factory=dict)  # slot placeholder -> why a write naming it is not sent
    own_user_id: bool = False  # a request names the test user's numeric id, read from its own user (own_writes.py)

    @property
    def inputs(self) -> list[Input]:
        return [*self.path_inputs, *self.query_inputs, *self.body_inputs]

    @property
    def destructive(self) -> str | None:
        """Why the endpoint resets or bulk-deletes shared state (testgen/scope.py), or None."""
        return destructive_reason(self.path, self.method, self.answers, self.query)

    def private_paths(self) -> list[str]:
        """Data paths of the 2xx answer that hold sensitive values (classified, beyond addresses)."""
        return [path for path, classes in self.response_classes.items()
                if any(c not in NOT_PRIVATE_CLASSES for c in classes)]

    @property
    def has_json_object_body(self) -> bool:
        return self.body_format == "json" and isinstance(self.body, dict)

    def user_path_position(self) -> int | None:
        """The segment index of a path parameter naming a user (``/users/{param1}``,
        ``/users/v1/{param1}``, ``/api/v2/accounts/{param1}``), if any."""
        return user_position(path_segments(self.path))

    def owner_of(self, position: int | str, value: str) -> tuple[str, str] | None:
        """``(answer field, owner)`` traffic showed for the object ``value`` at a path position (int)
        or query name (str), or None."""
        for segments, query, owner in self.trace_owners:
            seen = query.get(position) if isinstance(position, str) else (
                segments[position] if position < len(segments) else None)
            if seen is not None and literal(seen) == value:
                return owner
        return None

    def read_path_for(self, position: int) -> str | None:
        """The GET pattern reading the object named at path ``position``: the pattern's prefix
        ending there (``PUT /users/v1/{param1}/email`` → ``/users/v1/{param1}``), or None."""
        if self.host_reads is None:
            return None
        prefix = "/" + "/".join(path_segments(self.path)[:position + 1])
        return prefix if prefix in self.host_reads.patterns else None

    def observed_values(self, position: int) -> list[str]:
        """Distinct concrete values seen at a path segment position, newest first."""
        values: list[str] = []
        size = len(path_segments(self.path))
        for concrete in self.observed_paths:
            parts = path_segments(concrete)
            if len(parts) == size and parts[position] not in values:
                values.append(parts[position])
        return values

    def observed_path_for(self, position: int, value: str) -> list[str] | None:
        """The segments of an observed path whose segment ``position`` is ``value``."""
        size = len(path_segments(self.path))
        for concrete in self.observed_paths:
            parts = path_segments(concrete)
            if len(parts) == size and parts[position] == value:
                return parts
        return None


@dataclass
class HostReads:
    """A host's GET patterns: all of them, the item pattern under each collection, the pattern
    reading one user (``/users/v1/{param1}``) and the user names seen in its paths."""

    patterns: set[str] = field(default_factory=set)
    items: dict[tuple, str] = field(default_factory=dict)
    user_read_path: str | None = None
    user_names: set[str] = field(default_factory=set)
    scoped: tuple | None = None  # the exclude patterns already taken out (services/generation.py)


def _segment_type(values: list[str]) -> str:
    if values and all(_INTEGER.match(v) for v in values):
        return "integer"
    return "string"


# --- loading ------------------------------------------------------------------------

def _rows_per_endpoint(queryset, order, limit: int, columns: tuple[str, ...]):
    return (
        queryset.annotate(row_number=Window(RowNumber(), partition_by=[F("endpoint_id")], order_by=order))
        .filter(row_number__lte=limit)
        .values_list("endpoint_id", *columns)
    )


def profiles_load(*, endpoints: list[Endpoint], host_id: int | None = None) -> dict[Any, EndpointProfile]:
    """Profiles of the given endpoints, keyed by endpoint uuid, in a fixed number of queries.

    ``host_id``: all endpoints belong to that host (lets the queries filter by host
    rather than by a long id list). Endpoints must have ``host`` loaded (select_related).
    """
    if not endpoints:
        return {}
    ids = [e.uuid for e in endpoints]
    scope = {"endpoint__host_id": host_id} if host_id is not None else {"endpoint_id__in": ids}

    fields: dict[Any, list[tuple]] = {}
    for row in DataField.objects.filter(**scope).values_list(
        "endpoint_id", "data_section", "data_path", "data_type", "content_type", "status_code", "data_classes"
    ):
        fields.setdefault(row[0], []).append(row[1:])

    observed: dict[Any, list[str]] = {}
    for endpoint_id, path in _rows_per_endpoint(
        ObservedPath.objects.filter(**scope), [F("last_seen").desc(), F("id").desc()], OBSERVED_PATHS_PER_ENDPOINT, ("path",)
    ):
        observed.setdefault(endpoint_id, []).append(path)

    traces: dict[Any, list[tuple]] = {}
    for row in _rows_per_endpoint(
        ApiTrace.objects.filter(**scope),
        [F("created_at").desc()],
        TRACES_PER_ENDPOINT,
        ("path", "request_parameters", "request_headers", "request_body", "response_body", "response_status",
         "meta__apiscopeCredentialCookies"),
    ):
        traces.setdefault(row[0], []).append(row[1:])

    host_ids = {e.host_id for e in endpoints}
    reads = _host_reads(host_ids)
    profiles = {
        e.uuid: _profile(e, fields.get(e.uuid, []), observed.get(e.uuid, []), traces.get(e.uuid, []),
                         reads.setdefault(e.host_id, HostReads()))
        for e in endpoints
    }
    facts = {h: HostFacts(h, profiles) for h in host_ids}
    for e in endpoints:
        profiles[e.uuid].facts = facts[e.host_id]
    return profiles


def _host_reads(host_ids: set[int]) -> dict[int, HostReads]:
    """Each host's GET patterns (to find the read of what a write touches: the patterns themselves,
    and the item pattern under each collection, /users -> /users/{param1}), its user read pattern
    and the user names seen in that pattern's paths. Two queries."""
    reads: dict[int, HostReads] = {}
    literal_reads: list[tuple[Any, int, list[str]]] = []
    for uuid, h, p in Endpoint.objects.filter(host_id__in=host_ids, method="GET").order_by("path").values_list(
            "uuid", "host_id", "path"):
        host = reads.setdefault(h, HostReads())
        if path_segments(p) and not segment_is_parameter(path_segments(p)[-1]):
            literal_reads.append((uuid, h, path_segments(p)))
        if destructive_reason(p, "GET"):  # never a read-back (testgen/scope.py)
            continue
        host.patterns.add(p)
        parts = path_segments(p)
        if parts and segment_is_parameter(parts[-1]):
            host.items.setdefault(tuple(parts[:-1]), p)
            if is_user_position(parts, len(parts) - 1) and sum(map(segment_is_parameter, parts)) == 1 and (
                    host.user_read_path is None or len(parts) < len(path_segments(host.user_read_path))):
                host.user_read_path = p
    users = {h: r.user_read_path for h, r in reads.items() if r.user_read_path}
    if users:
        for _, host_id, pattern, concrete in _rows_per_endpoint(
            ObservedPath.objects.filter(endpoint__host_id__in=list(users), endpoint__path__in=set(users.values()),
                                        endpoint__method="GET"),
            [F("last_seen").desc(), F("id").desc()], OBSERVED_PATHS_PER_ENDPOINT,
            ("endpoint__host_id", "endpoint__path", "path"),
        ):
            parts = path_segments(concrete)
            if users.get(host_id) == pattern and len(parts) == len(path_segments(pattern)):
                reads[host_id].user_names.add(parts[-1])
        # A literal read of the user read's shape (``GET /users/v1/maria`` beside ``/users/v1/{param1}``, a
        # route the inventory kept apart) is a user's when its own answer names it under a user key.
        candidates = {uuid: (h, parts[-1]) for uuid, h, parts in literal_reads if h in users
                      and len(parts) == len(path_segments(users[h])) and parts[:-1] == path_segments(users[h])[:-1]}
        if candidates:
            for endpoint_id, body in _rows_per_endpoint(ApiTrace.objects.filter(endpoint_id__in=list(candidates)),
                                                        [F("created_at").desc()], 1, ("response_body",)):
                h, name = candidates[endpoint_id]
                if name in _user_values(body):
                    reads[h].user_names.add(name)
    return reads


def _user_values(text: str) -> set[str]:
    """The values of an answer's user keys (``username``, ``login``, ``email``… in any spelling) at the top
    level or under one object (``{"user": {...}}``, ``{"data": {...}}``)."""
    from .ownership import USER_KEYS, compact_key

    if not text or not text.lstrip().startswith("{"):
        return set()
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return set()
    nodes = [value] + [v for v in value.values() if isinstance(v, dict)] if isinstance(value, dict) else []
    return {str(v) for node in nodes for k, v in node.items()
            if isinstance(v, (str, int)) and not isinstance(v, bool) and compact_key(k) in USER_KEYS | {"email"}}


def profile_load(*, endpoint: Endpoint) -> EndpointProfile:
    """The profile of one endpoint (see :func:`profiles_load`)."""
    return profiles_load(endpoints=[endpoint])[endpoint.uuid]


def _credential_scheme(traces, name: str) -> str:
    """The scheme word kept by redaction (``Bearer [REDACTED]``) in the first trace carrying header ``name``."""
    for trace in traces:
        for header in trace[2] or []:
            if isinstance(header, dict) and str(header.get("name", "")).lower() == name:
                word, sep, rest = str(header.get("value", "")).partition(" ")
                return word if sep and rest.strip() and word.lower() in AUTH_SCHEMES else ""
    return ""


def _header(headers: Any, name: str) -> str:
    for item in headers or []:
        if isinstance(item, dict) and str(item.get("name", "")).lower() == name:
            return str(item.get("value", ""))
    return ""


def credential_cookie_names(value: str, known: Any = ()) -> list[str] | None:
    """The names of the credential cookies a stored Cookie header shows (DECISIONS §4, the inventory's
    rule: consent, language, theme and analytics cookies are no credential; ``known``: names ingestion
    found to be credentials by their values before redacting them), or None when the header keeps no
    names (stored whole as ``[REDACTED]``: then it is taken for a credential)."""
    if not value.strip():
        return []
    names = _credentials.cookie_header_credentials(value)
    if names is None:
        return None
    pairs = _credentials.cookie_pairs(value) or []
    return list(dict.fromkeys([*names, *(n for n, _ in pairs if n in set(known or ()))]))


def _known_cookies(names: Any) -> list[str]:
    """Credential cookies ingestion recognised by value shape before redaction (the trace's meta keeps
    them under ``apiscopeCredentialCookies``; only that key is read)."""
    return [str(n) for n in names] if isinstance(names, list) else []


def _carries_credentials(headers: Any, known: Any = ()) -> bool:
    """Whether a stored request carried credentials: an authenticating header, or a credential cookie."""
    for item in headers or []:
        if not isinstance(item, dict):
            continue
        name = str(item.get("name", "")).lower()
        if name == "cookie":
            names = credential_cookie_names(str(item.get("value", "")), known)
            if names is None or names:
                return True
        elif _credentials.is_auth_header(name):
            return True
    return False


def _profile(endpoint: Endpoint, fields: list[tuple], observed: list[str], traces: list[tuple],
             reads: HostReads) -> EndpointProfile:
    pattern = path_segments(endpoint.path)
    concrete_paths = list(dict.fromkeys([*observed, *(t[0] for t in traces)]))
    profile = EndpointProfile(
        uuid=str(endpoint.uuid),
        host=endpoint.host.name,
        method=endpoint.method,
        path=endpoint.path,
        is_authenticated=endpoint.is_authenticated,
        observed_paths=["/".join(map(literal, p.split("/"))) for p in concrete_paths
                        if len(path_segments(p)) == len(pattern)],
    )

    # Credentials: the first credential header (in preference order) seen in any loaded trace; the Cookie
    # header only when it carried a credential cookie (names kept by redaction, or the whole value redacted).
    seen_headers = {str(h.get("name", "")).lower() for t in traces for h in (t[2] or []) if isinstance(h, dict)}
    cookies: list[str] = []
    cookie_credential = False
    for trace in traces:
        value = _header(trace[2], "cookie")
        names = credential_cookie_names(value, _known_cookies(trace[6])) if value else []
        cookie_credential = cookie_credential or names is None or bool(names)
        cookies += [n for n in names or [] if n not in cookies]
    profile.credential_cookies = cookies
    for name in CREDENTIAL_HEADERS:
        if name in seen_headers and (name != "cookie" or cookie_credential):
            profile.credential_header = CANONICAL_HEADER[name]
            profile.credential_scheme = _credential_scheme(traces, name)
            break
    else:  # another header the inventory redacted as a credential (``Authorization-Token``, ``X-Session``)
        spelled = {str(h.get("name", "")).lower(): str(h.get("name", "")) for t in traces for h in (t[2] or [])
                   if isinstance(h, dict) and REDACTED in str(h.get("value", ""))}
        other = next((spelled[n] for n in sorted(spelled) if _credentials.is_credential_header(n)
                      and n not in ("set-cookie", "cookie")), None)
        if other:
            profile.credential_header = other
            profile.credential_scheme = _credential_scheme(traces, other.lower())
    profile.answers = [str(t[4] or "")[:ANSWER_CHARS] for t in traces]
    profile.anonymous_2xx = any(200 <= (t[5] or 0) < 300 and not _carries_credentials(t[2], _known_cookies(t[6]))
                                for t in traces)

    # Path parameters: example values from the newest observed path.
    example = profile.observed_paths[0] if profile.observed_paths else None
    example_parts = path_segments(example) if example else []
    segments = []
    for position, segment in enumerate(pattern):
        if segment_is_parameter(segment):
            values = profile.observed_values(position) if example else []
            segments.append(example_parts[position] if example_parts else "1")
            profile.path_inputs.append(Input(
                location="path", name=segment.strip("{}"), data_type=_segment_type(values or ["1"]),
                example=segments[-1], key=position,
            ))
        else:
            segments.append(literal(segment))
    profile.segments = segments

    # Field types from data fields.
    query_types: dict[str, str] = {}
    body_types: dict[str, str] = {}
    body_content_type = ""
    for section, data_path, data_type, content_type, status_code, classes in fields:
        if section == DataSection.REQUEST_QUERY:
            query_types[data_path] = data_type
        elif section == DataSection.REQUEST_BODY:
            body_types[data_path] = data_type
            body_content_type = body_content_type or content_type
        elif section == DataSection.RESPONSE_BODY and 200 <= status_code < 300:
            profile.response_fields.setdefault(data_path, data_type)
            if classes:
                profile.response_classes.setdefault(data_path, [])
                profile.response_classes[data_path] += [c for c in classes if c not in profile.response_classes[data_path]]

    # Query: names from data fields and traces, values from the newest trace carrying them.
    query: dict[str, str] = {}
    for trace in traces:
        for item in trace[1] or []:
            if isinstance(item, dict) and "name" in item:
                query.setdefault(str(item["name"]), str(item.get("value", "")))
    for name, data_type in query_types.items():
        query.setdefault(name, str(synthetic_value(name, data_type)))
    profile.query = {
        name: literal(value if REDACTED not in value else str(synthetic_value(name, query_types.get(name, "string"))))
        for name, value in query.items()
    }
    # A credential flow's query names no user seen in traffic either (GET /otp?phone=…).
    profile.query = {k: str(v) for k, v in login_body_without_real_user(endpoint.path, profile.query,
                                                                                   endpoint.method).items()}
    profile.query_inputs = [
        Input(location="query", name=name, key=name, example=value,
              data_type=query_types.get(name) or ("integer" if _INTEGER.match(value) else "string"))
        for name, value in profile.query.items()
    ]

    # Body: the newest parseable body of a trace answered 2xx (a failed request's body may be the reason
    # it failed), else of any trace, else one rebuilt from the data fields.
    if endpoint.method in ("POST", "PUT", "PATCH", "DELETE"):
        for trace in sorted(traces, key=lambda t: not 200 <= (t[5] or 0) < 300):
            body, fmt = body_parse(trace[3], _header(trace[2], "content-type") or body_content_type)
            if fmt:
                profile.body, profile.body_format = literal_values(redacted_replaced(body)), fmt
                break
        profile.body = login_body_without_real_user(endpoint.path, profile.body, endpoint.method)
        if profile.body_format is None and body_types:
            if "x-www-form-urlencoded" in body_content_type:
                profile.body = {p: str(synthetic_value(p, t)) for p, t in body_types.items()}
                profile.body_format = "form"
            else:
                profile.body, profile.body_format = body_from_fields(list(body_types.items())), "json"
        if profile.body_format in ("json", "form"):
            for key, name, value in scalar_leaves(profile.body):
                data_type = field_type_for(name, body_types) or json_type(value)
                if data_type in ("object", "array"):
                    continue
                profile.body_inputs.append(Input(location="body", name=name, data_type=data_type,
                                                 example=value, key=key))

    profile.item_read_path = _item_read_path(endpoint, pattern, reads)
    profile.host_reads = reads
    profile.trace_owners = [(path_segments(t[0]), {str(q.get("name")): str(q.get("value", "")) for q in t[1] or []
                                                   if isinstance(q, dict)}, owner)
                            for t in traces if (owner := owner_named(t[4] or ""))]
    profile.implicit_user = _implicit_user(profile, pattern, reads)
    _own_user_in_writes(profile)
    return profile


def _own_user_in_writes(profile: EndpointProfile) -> None:
    """Non-destructive (DECISIONS §8): a write's example request names the test user's own object
    (``{{testUserId}}``) where traffic named a user (``/users/v1/carol/password``), so no template
    writes to a user seen in traffic. BOLA names the other test identity's object itself."""
    if profile.method not in ("POST", "PUT", "PATCH", "DELETE"):
        return
    position = profile.user_path_position()
    if position is None and profile.implicit_user is not None:
        position = profile.implicit_user.key
    if position is None:
        return
    profile.segments[position] = "{{testUserId}}"
    for item in profile.path_inputs:
        if item.key == position:
            item.example = "{{testUserId}}"


def _implicit_user(profile: EndpointProfile, pattern: list[str], reads: HostReads) -> Input | None:
    """A literal path segment that is a user name seen in the host's user read paths, after a user
    collection (``/users/v1/carol/password`` when ``/users/v1/{param1}`` was read as carol): the path
    stayed literal because only one user used it."""
    if profile.user_path_position() is not None:
        return None
    for position, segment in enumerate(pattern):
        if segment_is_parameter(segment) or not is_user_position(pattern, position):
            continue
        # A user name seen in the host's user reads, or (a write) a name with digits where the host reads
        # users by parameter (``DELETE /users/v1/spammer9`` beside ``GET /users/v1/{param1}``).
        named = segment in reads.user_names or (
            endpoint_writes(profile) and any(ch.isdigit() for ch in segment) and reads.user_read_path is not None
            and len(path_segments(reads.user_read_path)) == position + 1)
        if named:
            return Input(location="path", name="username", data_type="string", example=literal(segment), key=position)
    return None


def endpoint_writes(profile: EndpointProfile) -> bool:
    return profile.method in ("POST", "PUT", "PATCH", "DELETE")


def _item_read_path(endpoint: Endpoint, pattern: list[str], reads: HostReads) -> str | None:
    """The GET pattern that reads the object a write touches: the same path for PUT/PATCH,
    the collection path plus one parameter for POST (``/users`` → ``/users/{param1}``)."""
    patterns, items = reads.patterns, reads.items
    if endpoint.method in ("PUT", "PATCH"):
        return endpoint.path if endpoint.path in patterns else None
    if endpoint.method == "POST":
        return items.get(tuple(pattern))
    return None
