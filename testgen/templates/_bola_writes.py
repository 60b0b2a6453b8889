"""BOLA's requests, writes and BFLA's functions (see ``bola.py``): the requests and checks of one test.

A write goes to the other identity's object only (DECISIONS §8: tests write to objects they created
or that belong to the test identities). Its effect is judged by the owner: the owner's read-back
must show none of the test's values, a password the test set must not let the owner log in, a
deleted object must still be there. A refused write (4xx) passes.
"""
from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from ..examples import body_with
from ..ownership import PASSWORD_FIELD, USER_FIELD, password_key
from ._base import IdentityView, assertion, build_request

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


def attack(profile: EndpointProfile, target: Target, value: str, description: str, **ext) -> dict:
    """The endpoint's example request naming ``value`` (on the concrete path it was seen on, if it was)."""
    item = target.item
    if item.location == "path":
        segments = list(profile.observed_path_for(item.key, value) or profile.segments)
        segments[item.key] = value
        return build_request(profile, description, segments=segments, **ext)
    if item.location == "query":
        return build_request(profile, description, query={**profile.query, item.name: value}, **ext)
    return build_request(profile, description, body=body_with(ext.pop("body", profile.body), item.key, value), **ext)


def markers(profile: EndpointProfile) -> tuple[str, str]:
    """(value marking what this test wrote, a new password): distinct per endpoint, stable."""
    tag = uuid.uuid5(uuid.NAMESPACE_URL, profile.uuid).hex[:10]
    return f"apiscope-bola-{tag}", f"Apiscope-{tag}-Pw9!"


def marked_body(profile: EndpointProfile, target_key) -> tuple[object, list[str], str | None, str]:
    """The example body with the test's values: every string field (but the object's name, user
    names and passwords) set to a marker (an email for mail fields), a password field to a new
    password. Returns (body, markers written, password key, new password)."""
    tag, new_password = markers(profile)
    body = profile.body
    written: list[str] = []
    for item in profile.body_inputs:
        last = str(item.key[-1]) if isinstance(item.key, tuple) and item.key else item.name
        if item.key == target_key or not item.is_string or PASSWORD_FIELD.match(last) or USER_FIELD.match(last):
            continue
        body = body_with(body, item.key, f"{tag}@example.test" if "mail" in last.lower() else tag)
        written = [tag]
    key = password_key(body)
    if key:
        body = {**body, key: new_password}
    return body, written, key, new_password


def write_checks(plan: Plan, profile: EndpointProfile, target, other: IdentityView | None, value: str,
                 read_index: int | None, name: str) -> None:
    """The write to ``name``'s object ``value`` with the test identity's token, and its checks."""
    body, written, password, new_password = marked_body(profile, target.item.key)
    write = attack(profile, target, value, f"{name}'s object ({target.label} = {value}) written with the test "
                   "identity's token", body=body)
    index = plan.add(write)
    refused = assertion("status", "matches", REFUSED, request=index,
                        description=f"The write to {name}'s object is refused (4xx)")
    decided = False
    if password and other is not None and other.has_password:
        login = plan.add({"description": f"{name} logs in with the password the test identity set",
                          "loginAs": name, "loginPassword": new_password})
        plan.check(assertion("status", "greaterThan", 299, request=login, otherwise=refused,
                             description=f"{name}'s password is not changed by the test identity "
                                         "(their login with the password it set fails)"))
        plan.add(attack(profile, target, value, f"{name}'s password put back (in case the write was made)",
                        body={**body, password: f"{{{{identities.{name}.password}}}}"}))
        decided = True
    if read_index is not None:
        back = plan.add({**plan.requests[read_index], "description": f"{name}'s object, read back by its owner"})
        if profile.method == "DELETE":
            plan.check(assertion("status", "lessThan", 400, request=back, otherwise=refused,
                                 description=f"{name}'s object is still there for its owner"))
            decided = True
        elif written:
            plan.check(assertion("body", "notContains", written, request=back, otherwise=refused,
                                 description=f"{name}'s object shows none of the values the test identity wrote"))
            decided = True
        elif not decided:
            plan.check(assertion("body", "equals", f"{{{{responses[{read_index}].body}}}}", request=back,
                                 otherwise=refused, description=f"{name}'s object is unchanged for its owner"))
            decided = True
    if not decided:
        plan.check({**refused, **UNDECIDED, "description": f"The write to {name}'s object is refused (4xx); "
                    "without a read-back as its owner a 2xx cannot be decided"})


def function_checks(plan: Plan, profile: EndpointProfile, target, function: str, other_value) -> None:
    """BFLA: the function called as observed (on the other identity's object when it names one)
    with the test identity's token; it must be refused."""
    description = f"{function} called with the test identity's token"
    if target is not None:
        value, _ = other_value()
        request = attack(profile, target, value, f"{description}, on another identity's object ({value})")
    else:
        request = build_request(profile, description)
    index = plan.add(request)
    plan.check(assertion("status", "matches", REFUSED, request=index,
                         description=f"A function meant for another role ({function}) is refused to the test "
                                     "identity (4xx)"))
