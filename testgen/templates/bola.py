"""BOLA and BFLA: the test identity must reach neither other users' objects nor other roles' functions.

Two real users (DECISIONS §8 identities): the **test identity** (the primary: ``authToken``,
``testUserId``) attacks; the **other identity** (the first of ``identities`` that can authenticate,
e.g. ``bob``) owns the objects attacked and reads them back. The object tested is named, in this
order of preference, by a path parameter after a user collection (``/users/{param1}``, also with
versions or namespaces in between: ``/users/v1/{param1}``, ``/api/v2/accounts/{param1}``), a
literal user name seen in the host's user paths (``/users/v1/carol/password``), a user-like query
parameter, the last path parameter, an id-like query parameter, or (writes) a body field naming a
user (``PUT /profile {"username": …}``).

Object ids are per resource type and per identity, never one global id: a user position takes the
identity's ``userId`` (or, for a numeric position when the user id is a name, the ``id`` of the
identity's own user as its owner reads it); another type takes ``objectIds.<type>``
(``objectIds.book`` for ``/books/v1/{id}``), or an object traffic showed the identity owning (an
answer naming it in ``owner``, ``userId``, ``username``…). An object whose owner traffic did not
show is never taken for someone else's, and one owned by the test identity is skipped at run time.

* **Reads**: the test identity's own object must be readable (precondition; user positions); the
  other identity's object (which its owner must be able to read: precondition) and up to three
  objects traffic showed other users owning must be answered 401, 403 or 404.
* **Writes** go only to the other identity's object (never to users seen in traffic; DECISIONS §8):
  its owner reads it, the test identity writes it with recognisable values, its owner reads it
  again. A refused write (4xx) passes; a write that changed nothing of the owner passes; a value of
  the test's in the owner's read-back fails. A new password is checked by the owner logging in with
  it (``loginAs``), and put back afterwards. A DELETE fails when the owner's object is gone. Without
  a read-back, a 2xx write cannot be decided (see ``UNDECIDED``).
* **Functions meant for another role** (BFLA: admin, staff, internal paths; role and permission
  changes) called with the test identity's token, on the other identity's object, must be refused (4xx).
"""
from __future__ import annotations

from dataclasses import dataclass

from inventory.patterns.segments import path_segments

from ..ownership import (ID_QUERY, USER_FIELD, USER_QUERY, admin_function, object_id_key, query_resource,
                         resource_name)
from ..placeholders import literal
from ..profile import EndpointProfile, Input
from ._base import GenerationContext, IdentityView, SecurityTemplate, assertion, build_request, register
from ._bola_writes import Plan, attack, function_checks, write_checks

READS = ("GET", "HEAD", "OPTIONS")
DENIED = [401, 403, 404]
MAX_OTHERS = 3
# The identity placeholders name when the environment has no second identity (the requests that
# need it are then skipped, and the test says so).
NO_IDENTITY = "other"


@dataclass
class Target:
    """The input naming the object, whether it names a user, and the object's resource type."""

    item: Input
    user_like: bool
    resource: str | None

    @property
    def label(self) -> str:
        kind = {"path": "path parameter", "query": "query parameter", "body": "body field"}[self.item.location]
        return f"{kind} '{self.item.name}'"


def target_of(profile: EndpointProfile) -> Target | None:
    """The input a BOLA test changes (see the module docstring), or None."""
    position = profile.user_path_position()
    for item in profile.path_inputs:
        if item.key == position:
            return Target(item, True, "user")
    if profile.implicit_user is not None:
        return Target(profile.implicit_user, True, "user")
    for item in profile.query_inputs:
        if USER_QUERY.match(item.name):
            return Target(item, True, "user")
    if profile.path_inputs:
        item = profile.path_inputs[-1]
        return Target(item, False, resource_name(path_segments(profile.path), item.key))
    for item in profile.query_inputs:
        if ID_QUERY.search(item.name):
            return Target(item, False, query_resource(item.name))
    if profile.method not in READS:
        for item in profile.body_inputs:
            if len(item.key) == 1 and USER_FIELD.match(item.name):
                return Target(item, True, "user")
    return None


def read_request(profile: EndpointProfile, pattern: str, position: int, value: str, identity: str | None,
                 description: str) -> dict:
    """GET ``pattern`` naming ``value`` at ``position``, with ``identity``'s credential (None: the test identity's)."""
    parts = path_segments(pattern)
    if parts == path_segments(profile.path)[:len(parts)]:
        segments = list(profile.segments[:len(parts)])
    else:
        segments = [literal(s) for s in parts]
    segments[position] = value
    return build_request(profile, description, segments=segments, method="GET", query={}, body=None,
                         identity=identity)


def user_read(profile: EndpointProfile) -> str | None:
    return profile.host_reads.user_read_path if profile.host_reads else None


def own_value(plan: Plan, profile: EndpointProfile, target: Target, who: IdentityView | None,
              context: GenerationContext) -> tuple[str | None, int | None]:
    """The value naming ``who``'s own object at the target (None: the test identity), and the index of
    the request by which its owner reads it (a precondition), when there is one. ``(None, None)``
    when ``who``'s object of this type is not known."""
    name = who.name if who else None
    whose = f"{name}'s" if name else "The test identity's"
    if target.user_like:
        user_id = f"{{{{identities.{name}.userId}}}}" if name else "{{testUserId}}"
        known = who.user_id if who else context.test_user_id
        pattern = user_read(profile)
        numeric_slot = target.item.data_type in ("integer", "number")
        if pattern is None or (pattern == profile.path and profile.method in READS and name is None):
            return user_id, None
        index = plan.add(read_request(profile, pattern, len(path_segments(pattern)) - 1, user_id, name,
                                      f"{whose} own user, read by its owner"))
        plan.check(assertion("status", "lessThan", 400, request=index, precondition=True,
                             description=f"{whose} own user can be read by its owner (sanity check)"))
        if numeric_slot and known is not None and not str(known).isdigit():
            return f"{{{{responses[{index}].body.id}}}}", index
        return user_id, index
    if who is None:
        return None, None
    key = object_id_key(who.object_ids, target.resource)
    value = f"{{{{identities.{name}.objectIds.{key}}}}}" if key else None
    if value is None and who.user_id is not None:
        position = target.item.key if target.item.location == "path" else target.item.name
        value = next((v for v in seen_values(profile, target)
                      if (profile.owner_of(position, v) or ("", None))[1] == who.user_id), None)
    if value is None:
        return None, None
    pattern = profile.path if profile.method in READS else (
        profile.read_path_for(target.item.key) if target.item.location == "path" else None)
    if pattern is None:
        return value, None
    if pattern == profile.path and target.item.location != "path":
        request = attack(profile, target, value, f"{whose} own object, read by its owner", identity=name)
    else:
        request = read_request(profile, pattern, target.item.key, value, name, f"{whose} own object, read by its owner")
    index = plan.add(request)
    plan.check(assertion("status", "lessThan", 400, request=index, precondition=True,
                         description=f"{whose} own object can be read by its owner (sanity check)"))
    return value, index


def seen_values(profile: EndpointProfile, target: Target) -> list[str]:
    item = target.item
    values = profile.observed_values(item.key) if item.location == "path" else (
        [item.example] if isinstance(item.example, str) and item.example else [])
    return [v for v in values if v and not v.startswith("{{")]


@register
class Bola(SecurityTemplate, name="BOLA", priority=10, title="Broken object level authorization"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.is_authenticated and (
            target_of(profile) is not None or admin_function(path_segments(profile.path), profile.method) is not None)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        target = target_of(profile)
        other = context.identities[0] if context.identities else None
        function = admin_function(path_segments(profile.path), profile.method)
        plan = Plan()
        if function:
            function_checks(plan, profile, target, function,
                            lambda: self._other_value(plan, profile, target, other, context))
            about = f"called with the test identity's token, {function} must be refused (BFLA)"
        elif profile.method in READS:
            self._reads(plan, profile, target, other, context)
            about = f"with the test identity's token, other users' objects (by {target.label}) must be refused " \
                    "with 401, 403 or 404"
        else:
            value, read_index = self._other_value(plan, profile, target, other, context)
            write_checks(plan, profile, target, other, value, read_index,
                         NO_IDENTITY if other is None else other.name)
            about = f"the test identity must not change another identity's object (by {target.label}); " \
                    "the effect is read back as its owner"
        return self.test_config(profile, description=f"{profile.method} {profile.path}: {about}.",
                                requests=plan.requests, assertions=plan.assertions)

    @staticmethod
    def _other_value(plan: Plan, profile: EndpointProfile, target: Target | None, other: IdentityView | None,
                     context: GenerationContext) -> tuple[str | None, int | None]:
        """The other identity's object at the target and its owner's read; a placeholder of the missing
        identity (or object id) when unknown, so the request is skipped saying what to configure."""
        if target is None:
            return None, None
        value, index = own_value(plan, profile, target, other, context) if other else (None, None)
        if value is None:
            name = other.name if other else NO_IDENTITY
            value = f"{{{{identities.{name}.userId}}}}" if target.user_like else \
                f"{{{{identities.{name}.objectIds.{target.resource or 'object'}}}}}"
        return value, index

    @staticmethod
    def _own_numeric_id(plan: Plan, profile: EndpointProfile, target: Target, context: GenerationContext) -> str | None:
        """When traffic named owners by numeric id but ``testUserId`` is (or may be) a name: the test
        identity's own numeric id, as its user read answers it, so its own objects are not taken for
        someone else's. None when not needed or there is no user read."""
        if target.user_like or (context.test_user_id or "").isdigit() or not user_read(profile):
            return None
        position = target.item.key if target.item.location == "path" else target.item.name
        if not any((profile.owner_of(position, v) or ("", ""))[1].isdigit() for v in seen_values(profile, target)):
            return None
        pattern = user_read(profile)
        index = plan.add(read_request(profile, pattern, len(path_segments(pattern)) - 1, "{{testUserId}}", None,
                                      "The test identity's own user (its numeric id)"))
        plan.check(assertion("status", "lessThan", 400, request=index, precondition=True,
                             description="The test identity can read its own user (sanity check)"))
        return f"{{{{responses[{index}].body.id}}}}"

    def _reads(self, plan: Plan, profile: EndpointProfile, target: Target, other: IdentityView | None,
               context: GenerationContext) -> None:
        own = "{{testUserId}}"
        if target.user_like:
            own, _ = own_value(plan, profile, target, None, context)
            index = plan.add(attack(profile, target, own, "The test identity's own object, with its token"))
            plan.check(assertion("status", "lessThan", 400, request=index, precondition=True,
                                 description="The test identity can read its own object (sanity check)"))
        tried: set[str] = set()
        if other is not None:
            value, _ = own_value(plan, profile, target, other, context)
            if value is not None:
                tried.add(literal(other.user_id or "") if target.user_like else value)
                index = plan.add(attack(profile, target, value,
                                        f"{other.name}'s object ({target.label} = {value}) with the test identity's token"))
                plan.check(assertion("status", "in", DENIED, request=index,
                                     description=f"Another identity's ({other.name}) object is not served to the "
                                                 "test identity"))
        position = target.item.key if target.item.location == "path" else target.item.name
        own_id = self._own_numeric_id(plan, profile, target, context)
        others = 0
        for value in seen_values(profile, target):
            if value in tried or others >= MAX_OTHERS:
                continue
            field, owner = ("", value) if target.user_like else (profile.owner_of(position, value) or ("", None))
            if owner is None or owner == context.test_user_id:  # nobody known to own it, or the test identity
                continue
            others += 1
            # Skipped at run time when it is the test identity's own: by its user id, and by its numeric id
            # when the slot is numeric and testUserId a name (read from its own user first).
            pairs = [[own, value if target.user_like else literal(owner)],
                     *([[own_id, literal(owner)]] if own_id else [])]
            index = plan.add(attack(profile, target, value,
                                    f"An object of another user seen in traffic ({target.label} = {value}, owner "
                                    f"{owner}) with the test identity's token",
                                    skipIfEquals=pairs[0] if len(pairs) == 1 else pairs))
            # Ids are reused (a fresh test deployment, an object an earlier test created): an answer
            # naming another owner than traffic showed is not that user's object.
            plan.check(assertion("status", "in", DENIED, request=index,
                                 otherwise=assertion("body", "notEquals", literal(owner), field) if field else None,
                                 description="Another user's object is not served to the test identity"))
        if not any(a.get("request") is not None and not a.get("precondition") for a in plan.assertions):
            # No other user's object is known: the request names the id to configure and is optional,
            # so the test is INCONCLUSIVE saying what is missing (it cannot decide; DECISIONS §8).
            value, _ = self._other_value(plan, profile, target, None, context)
            name = other.name if other else NO_IDENTITY
            value = value.replace(f"identities.{NO_IDENTITY}.", f"identities.{name}.")
            index = plan.add({**attack(profile, target, value, f"{name}'s object ({target.label} = {value}) with "
                                       "the test identity's token"), "optional": True})
            plan.check(assertion("status", "in", DENIED, request=index, inconclusive=True,
                                 description=f"Another identity's ({name}) object is not served to the test identity"))
