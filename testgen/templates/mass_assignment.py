"""MASS_ASSIGNMENT: properties the caller may not set, added to a write, must be rejected or ignored.

What is injected (``_mass_values``): properties a GET of the written object shows and whose name
grants something (role, admin/verified flags, plan, balance), with values the API uses (seen in its
traffic or its uploaded spec's ``enum``s), plus generic guesses (``isAdmin``, ``role: "admin"``…)
for names neither grounded nor already in the body (those are legitimate inputs). **One property per
write** (DECISIONS §8): a generic guess the API chokes on (``id: 987654321`` answered 500) cannot hide
a role value it accepts. The write without any added property is sent first (the control): when it is
refused on its own (a unique title reused, a coupon already spent), nothing else is sent and the test
is INCONCLUSIVE.

Where it writes (non-destructive, DECISIONS §8): a POST creates a new object; a body with a user
name or email and a password (registration, login) gets a fresh user (``{{uniqueName}}``,
a synthetic password), never an observed user's credentials. PUT/PATCH write only to the test
user's own object (``{{testUserId}}`` on a user path, the test identity's own objects elsewhere in the
path — ``own_writes.py`` — or a self path like ``/me``); any other target (an object of no known
owner, a name seen in traffic, a credential change) is not sent, and the test is INCONCLUSIVE saying why.

How the effect is proved: the object is read back through every inventory GET that reads it (at
most :data:`MAX_READS`): the same path (PUT/PATCH, read before the write too), its parent object
(``/users/{p}`` for ``/users/{p}/email``), the answer's ``Location``, the item under the collection
by the id in the answer or by a natural key sent (the user name that was registered), and self paths
(``/me``). After a registration the fresh user logs in through the login route seen in traffic and
reads with its own token. A value showing in a read-back, or in the write's own 2xx answer, is a
finding; a rejected write (refused in any form but a 5xx) passes; a write answered 5xx, and a
read-back that cannot be made (no GET, no id, 404, the login failed), are INCONCLUSIVE, as is a
property that already held the value before the write. Each registration (the control and every
write) registers a user of its own (``{{uniqueName}}`` with a suffix).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from inventory.patterns.segments import path_segments, segment_is_parameter

from ..hostfacts import LOGIN_PATH, PASSWORD_FIELD, USER_FIELD
from ..ownership import admin_function, is_credential_flow
from ..placeholders import literal
from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, accepted, assertion, build_request, path_url, refused, register
from ._mass_values import PRIVILEGED_FIELDS, Injection, injections
from ._readback import is_self_path

__all__ = ["PRIVILEGED_FIELDS", "MassAssignment"]
MAX_READS = 4
MAX_INJECTIONS = 10
SELF_SEGMENTS = {"me", "self", "current", "profile", "account", "whoami", "my"}
NATURAL_KEYS = ("username", "user_name", "login", "handle", "slug", "email", "name", "code", "key")
FRESH_NAME = "{{uniqueName}}"
FRESH_EMAIL = "{{uniqueName}}@example.com"
FRESH_PASSWORD = "Apiscope-Test-Passw0rd!"
SENT_WHEN_NOT_REJECTED = "^[1235]"


@dataclass(frozen=True)
class PlannedRead:
    """One read-back: the GET endpoint's profile, where (path segments, or a URL placeholder such as
    the write's Location), and whose token reads it (``fresh``: the registered user's; ``test``)."""

    read: Any
    where: tuple | str
    token: str


def envelope(body: dict) -> tuple[str | None, dict]:
    """``(key, object)`` of a body that wraps the object under one key (``{"user": {"bio": …}}``, as
    RealWorld-style APIs do), else ``(None, body)``: properties are injected into the object."""
    if len(body) == 1:
        key, inner = next(iter(body.items()))
        if isinstance(inner, dict) and inner:
            return str(key), inner
    return None, body


def response_prefix(profile: EndpointProfile, keys: set | None = None) -> str:
    """Where the object sits in the answer: ``""`` or e.g. ``"data."`` when the response
    fields show the body's keys (``keys``, default the example body's) wrapped under one key."""
    keys = set(profile.body or {}) if keys is None else keys
    prefixes: Counter[str] = Counter()
    for data_path in profile.response_fields:
        head, _, leaf = data_path.rpartition(".")
        if leaf in keys and "[" not in head:
            prefixes[f"{head}." if head else ""] += 1
    if prefixes:
        return prefixes.most_common(1)[0][0]
    return ""


def id_field(profile: EndpointProfile, prefix: str) -> str | None:
    for name in ("id", "uuid", "_id"):
        if f"{prefix}{name}" in profile.response_fields:
            return f"{prefix}{name}"
    return None


def _fresh_body(body: dict, suffix: str = "") -> tuple[dict, dict[str, str]]:
    """A body whose user name / email / password are a fresh test user's (``suffix`` tells the writes of
    one test apart: each registers its own user); (body, {field: value sent})."""
    fresh: dict[str, str] = {}
    if not (any(USER_FIELD.match(str(k)) for k in body) and any(PASSWORD_FIELD.match(str(k)) for k in body)):
        return dict(body), fresh
    out = dict(body)
    for key in body:
        if USER_FIELD.match(str(key)):
            fresh[key] = f"{{{{uniqueName}}}}{suffix}@example.com" if "mail" in str(key).lower() else \
                f"{{{{uniqueName}}}}{suffix}"
        elif PASSWORD_FIELD.match(str(key)):
            fresh[key] = FRESH_PASSWORD
    out.update(fresh)
    return out, fresh


def _is_self_path(path: str) -> bool:
    return is_self_path(path)


def _write_target(profile: EndpointProfile, body: dict) -> tuple[list[str], str | None, bool]:
    """(segments written to, why the write is not sent or None, whether the object is the test user's own)."""
    own = list(profile.segments)  # the user position already names the test user (own_writes.py)
    user_position = profile.user_path_position() if profile.is_authenticated else None
    if profile.not_own:  # an object of no known owner in the path or query (own_writes.py)
        return own, next(iter(profile.not_own.values())), False
    if profile.method == "POST":
        return own, None, user_position is not None
    if any(PASSWORD_FIELD.match(str(k)) for k in body) or "password" in profile.path.lower():
        return own, "a credential change is not sent (it would lock the test identity out)", False
    named = _names_an_observed_object(profile)
    if named:
        return own, f"{profile.method} {profile.path} names '{named}', seen in traffic as another user's; not written", False
    # The test user's own user (self paths read it back) unless the path names another own object (a book).
    return own, None, not profile.write_slots


def _names_an_observed_object(profile: EndpointProfile) -> str | None:
    """A literal segment of the path that traffic shows as a user name, id or email (``/users/v1/carol``)."""
    facts = profile.facts
    if facts is None or profile.path_inputs:
        return None
    known = {str(v) for name in (*NATURAL_KEYS, "id") for v in facts.values(name)}
    return next((s for s in profile.segments if s in known and s.lower() not in SELF_SEGMENTS), None)


def _natural_key(profile: EndpointProfile, body: dict, read, position: int) -> str | None:
    """The body field whose values name the object in ``read``'s path: values seen there overlap, or
    the field is a user name / slug / email."""
    strings = [k for k, v in body.items() if isinstance(v, str)]
    seen_in_path = set(read.observed_values(position))
    facts = profile.facts
    for key in strings:
        if facts is not None and seen_in_path & {str(v) for v in facts.values(str(key))}:
            return key
    return next((k for k in strings if str(k).lower() in NATURAL_KEYS[:6]), None)


@register
class MassAssignment(SecurityTemplate, name="MASS_ASSIGNMENT", priority=30, title="Mass assignment"):
    def applies(self, profile: EndpointProfile) -> bool:
        """A JSON object write that is no credential flow (a login or reset assigns nothing: its example
        names a user that does not exist, so it is refused whatever is added) and no function meant for
        another role (BOLA's BFLA test calls those: a customer's call is refused whatever is added)."""
        return profile.method in ("POST", "PUT", "PATCH") and profile.has_json_object_body \
            and not is_credential_flow(profile.path) \
            and admin_function(path_segments(profile.path), profile.method, None) is None

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        facts = profile.facts
        reads_by_path = facts.reads if facts is not None else {}
        wrapper, example = envelope(profile.body)

        def wrap(inner: dict) -> dict:
            return {wrapper: inner} if wrapper else inner

        body, fresh = _fresh_body(example, "c")
        segments, not_sent, own = _write_target(profile, body)
        planned = [] if not_sent else self._reads(profile, body, fresh, segments, own, reads_by_path, 0)
        found = injections(body, list({p.read.path: p.read for p in planned}.values()), facts)[:MAX_INJECTIONS]
        if not_sent:  # another's object, a credential change: nothing is sent, the test says why
            return self.test_config(
                profile, description=f"{profile.method} {profile.path}: properties the caller may not set must be "
                                     f"rejected or ignored; this write is not sent ({not_sent}).",
                requests=[build_request(profile, "The write (not sent)", segments=segments, body=wrap(body),
                                        skip=not_sent)],
                assertions=[refused(0, "The write was refused, or the object was read back", inconclusive=True)])
        requests: list[dict] = []
        before = None
        if profile.method in ("PUT", "PATCH") and planned:
            before = 0
            requests.append(self._read_request(planned[0], "Read the object before the writes"))
        control = len(requests)
        requests.append(build_request(profile, "The write as traffic showed it, without added properties (the control)",
                                      segments=segments, body=wrap(body), skip=not_sent))
        assertions = [accepted(control, "The write without added properties is accepted (else the body fails on its "
                                        "own and nothing can be concluded)", inconclusive=True)]
        prefix = response_prefix(profile, set(example))
        for number, item in enumerate(found):
            write_body, fresh_k = _fresh_body(example, str(number))
            write_body = {**(write_body if fresh_k else body), item.name: item.value}
            write = len(requests)
            origin = " (seen in traffic)" if item.source == "traffic" else " (from the spec)" if item.source == "spec" else ""
            requests.append(build_request(
                profile, f"The write with a property the caller may not set: {item.name}={json.dumps(item.value)}{origin}",
                segments=segments, body=wrap(write_body), skip=not_sent, onlyIfAccepted=control))
            mine = self._reads(profile, write_body, fresh_k, segments, own, reads_by_path, write) if planned else []
            login = None
            if fresh_k and facts is not None and facts.login and any(p.token == "fresh" for p in mine):
                login = len(requests)
                requests.append(self._login_request(facts.login, fresh_k, write))
            reads = []
            for read in mine:
                reads.append(len(requests))
                requests.append(self._read_request(read, "Read the object back", write=write, login=login))
            assertions += self._assertions(prefix, item, mine, write=write, before=before, first=planned[0] if
                                           planned else None, reads=reads)
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: properties the caller may not set ("
                + ", ".join(i.name for i in found) + "), one per write, must be rejected or ignored: read back "
                "through " + (", ".join(dict.fromkeys(f"GET {p.read.path}" for p in planned)) or "no GET of the inventory")
                + "; a write answered 5xx, or a read-back that cannot be made, is inconclusive."
            ),
            requests=requests,
            assertions=assertions,
        )

    # --- read-back plan ----------------------------------------------------------------
    def _reads(self, profile, body, fresh, segments, own, reads_by_path, write: int) -> list[PlannedRead]:
        """The read-backs (see the module docstring) of the write at index ``write``, at most :data:`MAX_READS`."""
        token = "fresh" if fresh and profile.facts is not None and profile.facts.login else "test"
        pattern = path_segments(profile.path)
        planned: list[PlannedRead] = []

        def add(read, where) -> None:
            if read is not None and all(p.read.path != read.path or p.where != where for p in planned):
                planned.append(PlannedRead(read, where, token))

        if profile.method in ("PUT", "PATCH"):
            add(reads_by_path.get(profile.path), tuple(segments))
            for k in range(len(pattern) - 1, 0, -1):
                parent = "/" + "/".join(pattern[:k])
                if segment_is_parameter(pattern[k - 1]) and parent in reads_by_path:
                    add(reads_by_path[parent], tuple(segments[:k]))
        else:
            prefix = response_prefix(profile, set(body))
            collections = [pattern] + ([pattern[:-1]] if pattern and not segment_is_parameter(pattern[-1]) else [])
            for collection in collections:
                position = len(collection)
                for path in profile.facts.items_under(collection) if profile.facts is not None else ():
                    read = reads_by_path[path]
                    identifier = id_field(profile, prefix)
                    if identifier:
                        add(read, tuple([*segments[:position], f"{{{{responses[{write}].body.{identifier}}}}}"]))
                    key = _natural_key(profile, body, read, position)
                    if key is not None:
                        add(read, tuple([*segments[:position], fresh.get(key, body[key])]))
                    add(read, f"{{{{responses[{write}].headers.Location}}}}")  # the item GET most likely reads it
        if own or token == "fresh":
            for path, read in reads_by_path.items():
                if not read.path_inputs and _is_self_path(path):
                    add(read, tuple(read.segments))
        return planned[:MAX_READS]

    def _read_request(self, planned, description, *, write=None, login=None) -> dict:
        """A GET of the planned read; with the fresh user's token (from the login's answer) or the test user's."""
        read, where = planned.read, planned.where
        headers = None
        if planned.token == "fresh" and login is not None and read.is_authenticated:
            scheme = read.credential_scheme or ("Bearer" if read.credential_header == "Authorization" else "")
            token = f"{{{{responses[{login}].body.{read.facts.login.token_path}}}}}"
            headers = {read.credential_header: f"{scheme} {token}" if scheme else token}
        extensions = {"onlyIfStatus": {"request": write, "matches": SENT_WHEN_NOT_REJECTED}} if write is not None else {}
        if isinstance(where, str):  # the write's Location header (a path is taken relative to baseUrl)
            request = build_request(read, f"{description} at the write's Location", method="GET", body=None,
                                    query={}, headers=headers, **extensions)
            request["url"] = where
            return request
        return build_request(read, f"{description} (GET {read.path})", method="GET", segments=list(where),
                             body=None, query={}, headers=headers, **extensions)

    def _login_request(self, login, fresh: dict, write: int) -> dict:
        email = next((v for k, v in fresh.items() if "mail" in str(k).lower()), None)
        name = next((v for k, v in fresh.items() if USER_FIELD.match(str(k)) and "mail" not in str(k).lower()), None)
        user = (email or name) if "mail" in login.user_field.lower() else (name or email)
        body = login.body_for(user, FRESH_PASSWORD)
        content_type = "application/x-www-form-urlencoded" if login.form else "application/json"
        return {"description": "Log in as the user the write registered", "method": "POST",
                "url": path_url([literal(s) for s in path_segments(login.path)]),
                "headers": {"Content-Type": content_type}, "body": body,
                "onlyIfStatus": {"request": write, "matches": SENT_WHEN_NOT_REJECTED}}

    # --- checks ------------------------------------------------------------------------
    def _assertions(self, prefix: str, item: Injection, planned, *, write: int, before: int | None, first,
                    reads: list[int]) -> list[dict]:
        """The checks of one injected property: its write decided (not a 5xx; refused, or read back), the
        value shown neither in the write's answer nor in a read-back (unless it held it before)."""
        name = f"'{item.name}'"
        decided = refused(write, f"The write with {name} was refused, or the object was read back" if reads else
                          f"The write with {name} was refused; no GET of the inventory reads the object back",
                          inconclusive=True, otherwise=assertion(
                              "status", "matches", "^2\\d\\d$", request=reads, aggregate="any",
                              description="a read-back answered 2xx") if reads else None)
        out = [assertion("status", "matches", "^[1-4]", request=write, inconclusive=True,
                         description=f"The write with {name} was not answered 5xx (a server error proves nothing)"),
               decided,
               assertion("body", "notEquals", item.value, field=f"{prefix}{item.name}", request=write,
                         description=f"{name} does not show {json.dumps(item.value)} in the write's own answer",
                         otherwise=assertion("status", "matches", "^[^2]", request=write,
                                             description="the write was not 2xx"))]
        for index, read in zip(reads, [p.read for p in planned], strict=True):
            data_path = item.visible.get(read.path)
            if data_path is None:
                continue
            check = assertion("body", "notEquals", item.value, field=data_path, request=index,
                              description=f"{name} was not set to {json.dumps(item.value)} (GET {read.path})")
            if before is not None and first is not None and first.read.path == read.path:
                check["otherwise"] = assertion("body", "equals", item.value, field=data_path, request=before,
                                               description="it held that value before the write")
            out.append(check)
        if before is not None and first is not None and item.visible.get(first.read.path):
            out.append(assertion(
                "body", "notEquals", item.value, field=item.visible[first.read.path], request=before,
                inconclusive=True, description=f"{name} did not hold {json.dumps(item.value)} before the writes"))
        if before is not None and reads:
            out.append(assertion(
                "status", "lessThan", 400, request=reads[0],
                description=f"The object is still readable at its path after the write with {name} (its id was not "
                            "overwritten)",
                otherwise=assertion("status", "matches", "^[^2]", request=before,
                                    description="it was not readable before either")))
        return out
