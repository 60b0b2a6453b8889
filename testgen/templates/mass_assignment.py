"""MASS_ASSIGNMENT: privileged fields added to a write must be rejected or ignored.

The endpoint's observed JSON body is sent with privileged fields added
(``isAdmin``, ``is_admin``, ``admin``, ``role``, ``id``, ``ownerId``, ``owner_id``,
``userId``, ``balance``; fields the body already carries are left alone: they are
legitimate inputs). When the inventory has a GET endpoint reading the written
object (the same path for PUT/PATCH; ``<collection>/{param}`` for POST, with the
id taken from the write's answer) it is read back, and the injected values must
not show there; without one, they must not show in the write's answer. A
rejected write (4xx) passes. For PUT/PATCH the object must still be readable
at its path afterwards (an overwritten ``id`` would move it). On a user path of an
authenticated endpoint (``/users/{param1}``) the test user's own object
(``{{testUserId}}``) is written: elevating oneself is the attack.
"""
from __future__ import annotations

from collections import Counter

from ..profile import EndpointProfile
from ._base import GenerationContext, SecurityTemplate, assertion, build_request, register

# Field, value an attacker would want applied. Values are what makes each field privileged.
PRIVILEGED_FIELDS = (
    ("isAdmin", True),
    ("is_admin", True),
    ("admin", True),
    ("role", "admin"),
    ("id", 987654321),
    ("ownerId", 987654321),
    ("owner_id", 987654321),
    ("userId", 987654321),
    ("balance", 1000000),
)
WRAPPERS = ("data", "result", "item", "user", "account", "object")


def response_prefix(profile: EndpointProfile) -> str:
    """Where the object sits in the answer: ``""`` or e.g. ``"data."`` when the response
    fields show the body's keys wrapped under one key."""
    keys = set(profile.body or {})
    prefixes: Counter[str] = Counter()
    for data_path in profile.response_fields:
        head, _, leaf = data_path.rpartition(".")
        if leaf in keys and "[" not in head:
            prefixes[f"{head}." if head else ""] += 1
    if prefixes:
        return prefixes.most_common(1)[0][0]
    return ""


def id_field(profile: EndpointProfile, prefix: str) -> str:
    for name in ("id", "uuid", "_id"):
        if f"{prefix}{name}" in profile.response_fields:
            return f"{prefix}{name}"
    return f"{prefix}id"


@register
class MassAssignment(SecurityTemplate, name="MASS_ASSIGNMENT", priority=30, title="Mass assignment"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.method in ("POST", "PUT", "PATCH") and profile.has_json_object_body

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        present = {k.lower() for k in profile.body}
        injected = {k: v for k, v in PRIVILEGED_FIELDS if k.lower() not in present}
        body = {**profile.body, **injected}
        prefix = response_prefix(profile)
        # The test user elevating their own object is the scenario: write to {{testUserId}}
        # on a user path of an authenticated endpoint.
        own = list(profile.segments)
        user_position = profile.user_path_position() if profile.is_authenticated else None
        if user_position is not None:
            own[user_position] = "{{testUserId}}"
        requests = [build_request(profile, "The observed write with privileged fields added: "
                                  + ", ".join(injected), segments=own, body=body)]
        assertions: list[dict] = []
        checked = 0
        if profile.item_read_path:
            if profile.method == "POST":
                segments = [*own, f"{{{{responses[0].body.{id_field(profile, prefix)}}}}}"]
            else:
                segments = own
            requests.append(build_request(profile, "Read the object back", method="GET", segments=segments, body=None))
            checked = 1
            if profile.method in ("PUT", "PATCH"):
                assertions.append(assertion(
                    "status", "lessThan", 400, request=1,
                    description="The object is still readable at its path (its id was not overwritten)",
                ))
        for name, value in injected.items():
            assertions.append(assertion(
                "body", "notEquals", value, field=f"{prefix}{name}", request=checked,
                description=f"'{name}' was not applied",
            ))
        where = "when the object is read back" if checked else "in the answer"
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: privileged fields added to the body must be rejected "
                f"or ignored; their values must not show {where}."
            ),
            requests=requests,
            assertions=assertions,
        )
