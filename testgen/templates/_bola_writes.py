"""BOLA's requests, writes and BFLA's functions (see ``bola.py``): the requests and checks of one test.

A write goes to the other identity's objects only (DECISIONS §8: tests write to objects they created
or that belong to the test identities). Its effect is judged as the owner sees it: the owner's views
of the object (``_readback.py``) read before and after must not differ — no value written, no item
removed, no state moved — and a password the test set must not give the owner a credential at login.
A write refused in any form (``verdicts.py``) passes; an accepted one nothing judges is INCONCLUSIVE.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from inventory.patterns.segments import path_segments, segment_is_parameter

from ..examples import body_with
from ..ownership import PASSWORD_FIELD, ROLE_KEYS, USER_FIELD, WRITES, body_user_key, compact_key, password_key
from ._base import IdentityView, assertion, build_request, refused
from ._readback import views

if TYPE_CHECKING:
    from ..profile import EndpointProfile
    from .bola import Target

REFUSED = "^4\\d\\d$"
# A check whose failure means "cannot decide", not "vulnerable": the test is INCONCLUSIVE (DECISIONS §8).
UNDECIDED = {"inconclusive": True}


class Plan:
    """The requests and assertions of a test being built."""

    def __init__(self):
        self.requests: list[dict] = []
        self.assertions: list[dict] = []

    def add(self, request: dict) -> int:
        self.requests.append(request)
        return len(self.requests) - 1

    def check(self, item: dict) -> None:
        self.assertions.append(item)


def attack(profile: EndpointProfile, target: Target, value: str, description: str, base: list[str] | None = None,
           **ext) -> dict:
    """The endpoint's example request naming ``value`` (on the concrete path it was seen on, if it was;
    ``base``: the path with an identity's objects at its other positions)."""
    item = target.item
    if item.location == "path":
        segments = list(base or profile.observed_path_for(item.key, value) or profile.segments)
        segments[item.key] = value
        return build_request(profile, description, segments=segments, **ext)
    if base is not None:
        ext["segments"] = list(base)
    if item.location == "query":
        return build_request(profile, description, query={**profile.query, item.name: value}, **ext)
    return build_request(profile, description, body=body_with(ext.pop("body", profile.body), item.key, value), **ext)


def markers(profile: EndpointProfile) -> tuple[str, str]:
    """(value marking what this test wrote, a new password): distinct per endpoint, stable."""
    tag = uuid.uuid5(uuid.NAMESPACE_URL, profile.uuid).hex[:10]
    return f"apiscope-bola-{tag}", f"Apiscope-{tag}-Pw9!"


def marked_body(profile: EndpointProfile, target_key, *, new_password_too: bool = True) -> tuple[object, list[str],
                                                                                                   str | None, str]:
    """The example body with the test's values: every string field (but the object's name, user
    names and passwords) set to a marker (an email for mail fields), a password field to a new
    password (unless ``new_password_too`` is false: the test identity's own object keeps its password).
    Returns (body, markers written, password key, new password)."""
    tag, new_password = markers(profile)
    body = profile.body
    written: list[str] = []
    for item in profile.body_inputs:
        last = str(item.key[-1]) if isinstance(item.key, tuple) and item.key else item.name
        if item.key == target_key or not item.is_string or PASSWORD_FIELD.match(last) or USER_FIELD.match(last) \
                or body_user_key(last) or (str(item.example).startswith("{{")
                                           and not str(item.example).startswith("{{uniqueName")):
            continue
        body = body_with(body, item.key, f"{tag}@example.test" if "mail" in last.lower() else tag)
        written = [tag]
    key = password_key(body)
    if key and new_password_too:
        body = {**body, key: new_password}
    return body, written, key, new_password


def _snapshots(plan: Plan, profile: EndpointProfile, segments: list[str], identity: str | None, *, user: bool,
               whose: str, user_value: str | None = None,
               item: str | list | None = None) -> list[tuple[int, str, dict, str | list | None]]:
    """The owner's views of the object (``_readback.views``), read before the write: (request index,
    read path, the request, to send again after the write, the value naming the object in a collection)."""
    taken = []
    kinds: dict = {}
    for read, values in views(profile, segments, user=user, user_value=user_value, kinds=kinds):
        request = build_request(read, f"{whose} view before the write (GET {read.path})", method="GET",
                                segments=list(values), query={}, body=None, identity=identity,
                                **({"optional": True} if _unknown(values) else {}))
        taken.append((plan.add(request), read.path, request, item if kinds.get(read.path) == "collection" else None))
    return taken


def _unknown(values) -> bool:
    """Whether a request names an identity's value that may not be configured (sent only when it is)."""
    return any("{{identities." in str(v) for v in values)


def _unchanged_checks(plan: Plan, taken: list[tuple[int, str, dict]], write: int, whose: str,
                      shared: dict | None = None) -> bool:
    """Read every view again after the write; each must be unchanged (status and body alike), unless the
    write was refused (or ``shared`` holds: the change is no proof). True when there was a view to judge by."""
    for before, path, request, item in taken:
        after = plan.add({**request, "description": f"{whose} view after the write (GET {path})"})
        plan.check(assertion("body", "equals", f"{{{{responses[{before}].body}}}}", request=after, compare="similar",
                             item=item, description=f"{whose} view GET {path} is unchanged by the test identity's "
                                                    "write" + (" where it lists the object" if item else ""),
                             otherwise=refused(write, "the write was refused", otherwise=shared)))
        plan.check(assertion("status", "equals", f"{{{{responses[{before}].status}}}}", request=after,
                             description=f"{whose} view GET {path} answers as before (the object is still there)",
                             otherwise=refused(write, "the write was refused", otherwise=shared)))
    return bool(taken)


def _shared_parent(plan: Plan, profile: EndpointProfile, target, value: str, segments: list[str],
                   name: str) -> dict | None:
    """For an addition to a collection under another's object (``POST /articles/{bob's}/comments``, a
    collection the inventory also reads): the test identity reads that object first. When it may
    (a shared or public object: an article anyone reads), adding to its collection is what the API
    offers everyone — a comment, a review, a follow — and the owner's changed view proves nothing.
    Returns the alternative to a changed view (None when the write is no such addition)."""
    if profile.method != "POST" or target.item.location != "path" or profile.host_reads is None \
            or profile.path not in profile.host_reads.patterns:
        return None
    after = path_segments(profile.path)[target.item.key + 1:]
    if not after or any(segment_is_parameter(part) for part in after):
        return None
    reader = profile.read_path_for(target.item.key)
    if reader is None:
        return None
    parts = path_segments(reader)
    own = list(segments[:len(parts)])
    own[target.item.key] = value
    index = plan.add(build_request(profile, f"{name}'s object read with the test identity's token (is it shared?)",
                                   method="GET", segments=own, query={}, body=None,
                                   **({"optional": True} if _unknown(own) else {})))
    return assertion("status", "exists", None, request=index, verdict="accepted",
                     description=f"{name}'s object is shared (the test identity reads it too): adding to its "
                                 "collection is open to every user, no proof")


def write_checks(plan: Plan, profile: EndpointProfile, target, other: IdentityView | None, value: str,
                 read_index: int | None, name: str, segments: list[str] | None = None) -> None:
    """The write to ``name``'s object ``value`` with the test identity's token, and its checks: the
    owner's views before and after, a password proved by the owner's login (and put back by the owner)."""
    segments = list(segments or profile.segments)
    body, written, password, new_password = marked_body(profile, target.item.key)
    if target.item.location == "body":
        body = body_with(body, target.item.key, value)
    elif target.item.location == "query":
        pass
    unknown = _unknown([*segments, value])
    whose = f"{name}'s"
    in_body = target.user_like and target.item.location != "path"
    # A collection lists the object by its id or by a natural key: for a user, its user name too.
    item = [value, f"{{{{identities.{name}.userId}}}}"] if target.user_like and other is not None \
        and other.user_id is not None and f"identities.{name}.userId" not in value else value
    taken = _snapshots(plan, profile, segments, name, user=in_body, whose=whose,
                       user_value=value if in_body else None, item=item) if other is not None else []
    query = {**profile.query, target.item.name: value} if target.item.location == "query" else None
    shared = _shared_parent(plan, profile, target, value, segments, name) if other is not None else None
    write = plan.add(build_request(profile, f"{name}'s object ({target.label} = {value}) written with the test "
                                   "identity's token", segments=segments, body=body, query=query,
                                   **({"optional": True} if unknown else {})))
    if unknown:
        plan.check(assertion("status", "matches", "^[1-5]", request=write, inconclusive=True,
                             description=f"The write to {name}'s object was sent (it needs the object configured)"))
    decided = False
    if password and other is not None and other.has_password:
        login = plan.add({"description": f"{name} logs in with the password the test identity set",
                          "loginAs": name, "loginPassword": new_password, "adoptCredential": True})
        plan.check(assertion("status", "exists", None, request=login, verdict="notLoggedIn",
                             otherwise=refused(write, f"the write to {name}'s password was refused"),
                             description=f"{name}'s password is not changed by the test identity "
                                         "(their login with the password it set gives no credential)"))
        # Put back by its owner, with the credential that login gave (never with the test identity's token:
        # an API that ignores the path would change the test identity's own password instead).
        plan.add({**build_request(profile, f"{name} puts their password back (only after that login worked)",
                                  segments=segments, body={**body, password: f"{{{{identities.{name}.password}}}}"},
                                  identity=name), "onlyIfLoggedIn": login})
        decided = True
    if _unchanged_checks(plan, taken, write, whose, shared):
        decided = True
    elif written and read_index is not None:
        back = plan.add({**plan.requests[read_index], "description": f"{name}'s object, read back by its owner"})
        plan.check(assertion("body", "notContains", written, request=back, otherwise=refused(write, "the write was refused"),
                             description=f"{name}'s object shows none of the values the test identity wrote"))
        decided = True
    if not decided:
        plan.check(refused(write, f"The write to {name}'s object is refused; without a read-back as its owner an "
                                  "accepted write cannot be decided", inconclusive=True))


def _role_variants(profile: EndpointProfile, body) -> list[tuple[str, object, dict] | None]:
    """The bodies a role change is sent with, so its effect shows whatever the owner's role was: the
    body traffic showed, then the role key set to another value the API uses (seen in traffic, or in
    the spec's ``enum``; a flag flipped). ``[None]`` when the body sets no role."""
    if not isinstance(body, dict):
        return [None]
    key = next((k for k in body if compact_key(k) in ROLE_KEYS), None)
    if key is None:
        return [None]
    current = body[key]
    if isinstance(current, bool):
        other = not current
    else:
        seen = profile.facts.values(str(key)) if profile.facts is not None else []
        other = next((v for v in seen if v != current and isinstance(v, type(current))), None)
    variants = [(str(key), current, body)]
    if other is not None:
        variants.append((str(key), other, {**body, key: other}))
    return variants


def function_checks(plan: Plan, profile: EndpointProfile, target, function: str, other: IdentityView | None,
                    other_values) -> None:
    """BFLA: the function called as observed (on the other identity's object when it names one, or on
    the disposable catalogue object the environment names when ``other_values`` is None) with the test
    identity's token; it must be refused, or leave the views read back unchanged. A read that is served
    is a finding; an accepted write no view judges is INCONCLUSIVE."""
    description = f"{function} called with the test identity's token"
    segments, value = list(profile.segments), None
    if target is not None and other_values is not None:
        segments, value, _ = other_values()
    owner = other.name if (other is not None and other_values is not None and target is not None) else None
    unknown = _unknown([*segments, value or ""])
    body = profile.body
    if target is not None and value is not None and target.item.location == "body":
        body = body_with(profile.body, target.item.key, value)
    query = {**profile.query, target.item.name: value} if target is not None and value is not None \
        and target.item.location == "query" else None
    taken = [] if profile.method not in WRITES else _snapshots(
        plan, profile, segments, owner, user=bool(target and target.user_like and target.item.location != "path"),
        whose=f"{owner}'s" if owner else "The test identity's",
        user_value=value if target is not None and target.user_like and target.item.location != "path" else None,
        item=value or (profile.segments[target.item.key] if target is not None and target.item.location == "path"
                       else None))
    first = None
    judged = False
    for variant in _role_variants(profile, body) if profile.method in WRITES else [None]:
        # Each call is read back on its own: one of the values differs from what the owner had.
        index = plan.add(build_request(profile, f"{description}" + (f", on another identity's object ({value})"
                                                                      if value else "")
                                       + (f" ({variant[0]}={variant[1]!r})" if variant else ""),
                                       segments=segments, body=(variant[2] if variant else body)
                                       if profile.method in WRITES else None, query=query,
                                       **({"optional": True} if unknown else {})))
        first = index if first is None else first
        if profile.method in WRITES:
            judged = _unchanged_checks(plan, taken, index, f"{owner}'s" if owner else "The") or judged
            if not judged:
                plan.check(refused(index, f"A function meant for another role ({function}) is refused to the test "
                                          "identity; an accepted call nothing reads back cannot be decided",
                                   inconclusive=True))
    if unknown:
        plan.check(assertion("status", "matches", "^[1-5]", request=first, inconclusive=True,
                             description="The function was called (it needs the other identity's object configured)"))
    if profile.method not in WRITES:
        plan.check(refused(first, f"A function meant for another role ({function}) is refused to the test identity"))
