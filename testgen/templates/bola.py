"""BOLA and BFLA: the test identity must reach neither other users' objects nor other roles' functions.

Two real users (DECISIONS §8 identities): the **test identity** (the primary: ``authToken``,
``testUserId``) attacks; the **other identity** (the first of ``identities`` that can authenticate,
e.g. ``bob``) owns the objects attacked and reads them back. The object tested is named, in this
order of preference, by a path parameter after a user collection (``/users/{param1}``, also with
versions or namespaces in between: ``/users/v1/{param1}``, ``/api/v2/accounts/{param1}``), a
literal user name seen in the host's user paths (``/users/v1/carol/password``), a user-like query
parameter, the last path parameter, an id-like query parameter, or (writes) a body field naming a
user in any spelling (``PUT /profile {"username": …}``, ``{"UserId": …}``).

Object ids are per resource type and per identity, never one global id: a user position takes the
identity's ``userId`` (or, for a numeric position when the user id is a name, the ``id`` of the
identity's own user as its owner reads it); another type takes ``objectIds.<type>``
(``objectIds.book`` for ``/books/v1/{id}``), or an object traffic showed the identity owning (an
answer naming it under ``owner``, ``UserId``, ``user_id``, ``username``… in any spelling). An object
whose owner traffic did not show is never taken for someone else's, and one owned by the test
identity is skipped at run time. A test missing the other identity or its object sends nothing and is
INCONCLUSIVE, naming the key to configure.

A finding is a proof (DECISIONS §8): refusals count in any form (``testgen/verdicts.py``).

* **Reads**: the test identity's own object must be readable (precondition; user positions); the
  other identity's object (which its owner must be able to read: precondition) and up to three
  objects traffic showed other users owning must be refused. An answer is a leak only when it is the
  object: like the owner's own read of it (same endpoint), or naming the owner traffic showed.
* **Writes** go only to the other identity's objects (every object of the path is the other
  identity's when known; never users seen in traffic). Its owner reads the object's **views** before
  and after the write — the object's GET, its parents' GETs, the collection listing it, the self routes
  for a user named in the body (``_readback.py``) — and the test fails on any change (a value written,
  an item removed, a state moved), unless the write was refused. A new password is checked by the
  owner logging in with it: only a login that returns the owner's credential proves it; the password
  is then put back by the owner itself, with the credential that login gave. A 2xx write no view
  or login can judge is INCONCLUSIVE.
* **Functions meant for another role** (BFLA): admin, staff, internal paths; role and permission
  changes in any spelling (``/users/{id}/role``, ``/users/update_role``, a write to a user whose body
  sets ``role``, ``isAdmin``, ``is_staff``, ``permissions``…), called as traffic showed them with the
  test identity's token, on the other identity's object; and changes of **shared catalogue objects**
  no customer owns (``DELETE /products/{id}``: traffic shows no owner for them), called on the
  disposable object the environment names (``objectIds.<type>``). They must be refused, or leave the
  views read back unchanged; a read of another role's function that is served is a finding.
"""
from __future__ import annotations

from dataclasses import dataclass

from inventory.patterns.segments import path_segments, segment_is_parameter

from ..ownership import (ID_QUERY, USER_FIELD, USER_QUERY, admin_function, compact_key, object_id_key, owner_compact_keys,
                         query_resource, resource_name)
from ..placeholders import literal
from ..profile import EndpointProfile, Input
from ._base import (GenerationContext, IdentityView, SecurityTemplate, accepted, assertion, build_request, refused,
                    register)
from ._bola_writes import Plan, attack, function_checks, write_checks
from ._readback import is_self_path

READS = ("GET", "HEAD", "OPTIONS")
MAX_OTHERS = 3
# The identity placeholders name when the environment has no second identity (the requests that
# need it are then not sent, and the test says what to configure).
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
            if len(item.key) == 1 and (USER_FIELD.match(item.name) or compact_key(item.name) in
                                       {"userid", "username", "user", "owner", "ownerid", "login"}):
                return Target(item, True, "user")
    return None


def read_request(profile: EndpointProfile, pattern: str, position: int, value: str, identity: str | None,
                 description: str, base: list[str] | None = None) -> dict:
    """GET ``pattern`` naming ``value`` at ``position``, with ``identity``'s credential (None: the test
    identity's); ``base``: the values of the endpoint's other path positions (the identity's objects)."""
    parts = path_segments(pattern)
    if parts == path_segments(profile.path)[:len(parts)]:
        segments = list((base or profile.segments)[:len(parts)])
    else:
        segments = [literal(s) for s in parts]
    segments[position] = value
    return build_request(profile, description, segments=segments, method="GET", query={}, body=None,
                         identity=identity)


def user_read(profile: EndpointProfile) -> str | None:
    return profile.host_reads.user_read_path if profile.host_reads else None


def other_segments(profile: EndpointProfile, target: Target | None, who: IdentityView | None) -> list[str]:
    """The endpoint's path with ``who``'s objects at the positions other than the target's
    (``/articles/{bob's}/comments/{…}``): a nested object is reached through its own parents. Where
    ``who``'s object is not known, a read keeps the value traffic showed; a write names the
    ``objectIds`` entry to configure instead (sent only when it is), never a parent traffic showed
    for someone else or one of the test identity's under which ``who``'s object is not."""
    segments = list(profile.segments)
    if who is None:
        return segments
    pattern = path_segments(profile.path)
    for item in profile.path_inputs:
        if (target is not None and target.item.location == "path" and item.key == target.item.key) \
                or item.key == profile.user_path_position():
            continue
        resource = resource_name(pattern, item.key)
        mine = object_of(profile, target, who, resource, item.key) if target else None
        if mine is None and target is not None and profile.method not in READS:
            mine = f"{{{{identities.{who.name}.objectIds.{resource or 'object'}}}}}"
        if mine is not None:
            segments[item.key] = mine
    return segments


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
        if who is not None and who.user_id is None:
            return None, None
        pattern = user_read(profile)
        numeric_slot = target.item.data_type in ("integer", "number")
        if pattern is None or (pattern == profile.path and profile.method in READS and name is None):
            return user_id, None
        index = plan.add(read_request(profile, pattern, len(path_segments(pattern)) - 1, user_id, name,
                                      f"{whose} own user, read by its owner"))
        plan.check(accepted(index, f"{whose} own user can be read by its owner (sanity check)", precondition=True))
        if numeric_slot and known is not None and not str(known).isdigit():
            return f"{{{{responses[{index}].body.id}}}}", index
        return user_id, index
    if who is None:
        return None, None
    value = object_of(profile, target, who)
    if value is None:
        return None, None
    pattern = profile.path if profile.method in READS else (
        profile.read_path_for(target.item.key) if target.item.location == "path" else None)
    if pattern is None:
        return value, None
    base = other_segments(profile, target, who)
    if pattern == profile.path and target.item.location != "path":
        request = attack(profile, target, value, f"{whose} own object, read by its owner", identity=name, base=base)
    else:
        request = read_request(profile, pattern, target.item.key, value, name, f"{whose} own object, read by its owner",
                               base=base)
    index = plan.add(request)
    plan.check(accepted(index, f"{whose} own object can be read by its owner (sanity check)", precondition=True))
    return value, index


def object_of(profile: EndpointProfile, target: Target, who: IdentityView, resource: str | None = None,
              position: int | None = None) -> str | None:
    """``who``'s object of the target's resource type (or ``resource`` at path ``position``): its
    configured ``objectIds`` entry, else one traffic showed it owning; None when unknown."""
    resource = target.resource if resource is None else resource
    key = object_id_key(who.object_ids, resource)
    if key:
        return f"{{{{identities.{who.name}.objectIds.{key}}}}}"
    if who.user_id is None:
        return None
    item_key = (target.item.key if target.item.location == "path" else target.item.name) if position is None \
        else position
    values = seen_values(profile, target) if position is None else profile.observed_values(position)
    return next((v for v in values if (profile.owner_of(item_key, v) or ("", None))[1] == who.user_id), None)


def seen_values(profile: EndpointProfile, target: Target) -> list[str]:
    item = target.item
    values = profile.observed_values(item.key) if item.location == "path" else (
        [item.example] if isinstance(item.example, str) and item.example else [])
    return [v for v in values if v and not v.startswith("{{")]


def shared_catalogue(profile: EndpointProfile, target: Target | None, other: IdentityView | None) -> str | None:
    """The resource of a shared catalogue object a write changes (``DELETE /products/{id}``: traffic
    shows no owner for it, neither in this endpoint's answers nor in the GET reading it), or None."""
    if target is None or target.user_like or target.item.location != "path" or profile.method not in (
            "PUT", "PATCH", "DELETE") or is_self_path(profile.path):
        return None
    if other is not None and object_id_key(other.object_ids, target.resource):
        return None  # the operator named the other identity's own object of this type
    reader = profile.read_path_for(target.item.key)
    read = profile.facts.reads.get(reader) if profile.facts is not None and reader else None
    owners = owner_compact_keys()
    for source in (profile, read):
        if source is None:
            continue
        if source.trace_owners or any(compact_key(p.rsplit(".", 1)[-1]) in owners for p in source.response_fields):
            return None
    if read is None and not profile.response_fields:
        return None  # nothing shows what the object is
    return target.resource or "object"


@register
class Bola(SecurityTemplate, name="BOLA", priority=10, title="Broken object level authorization"):
    def applies(self, profile: EndpointProfile) -> bool:
        return profile.is_authenticated and (
            target_of(profile) is not None or admin_function(path_segments(profile.path), profile.method,
                                                             profile.body) is not None)

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        target = target_of(profile)
        other = context.identities[0] if context.identities else None
        function = admin_function(path_segments(profile.path), profile.method, profile.body)
        catalogue = None if function else shared_catalogue(profile, target, other)
        plan = Plan()
        if function:
            function_checks(plan, profile, target, function, other,
                            lambda: self._other_values(plan, profile, target, other, context))
            about = f"called with the test identity's token, {function} must be refused (BFLA)"
        elif catalogue:
            function_checks(plan, profile, target, f"a change of a shared catalogue object ({catalogue}) no "
                            "customer owns", None, None)
            about = (f"the test identity must not change or delete a shared {catalogue} no customer owns (BFLA; on "
                     f"objectIds.{catalogue}, a disposable one the operator names); read back before and after")
        elif profile.method in READS:
            self._reads(plan, profile, target, other, context)
            about = f"with the test identity's token, other users' objects (by {target.label}) must be refused"
        else:
            segments, value, read_index = self._other_values(plan, profile, target, other, context)
            write_checks(plan, profile, target, other, value, read_index,
                         NO_IDENTITY if other is None else other.name, segments)
            about = f"the test identity must not change another identity's object (by {target.label}); " \
                    "the effect is read back as its owner"
        return self.test_config(profile, description=f"{profile.method} {profile.path}: {about}.",
                                requests=plan.requests, assertions=plan.assertions)

    @staticmethod
    def _other_values(plan: Plan, profile: EndpointProfile, target: Target | None, other: IdentityView | None,
                      context: GenerationContext) -> tuple[list[str], str | None, int | None]:
        """The write's path segments naming the other identity's objects (the target, and every other
        object of the path whose owner is known), the target's value, and its owner's read. A value
        that is not known is the placeholder naming what to configure (the requests needing it are
        then not sent)."""
        segments = other_segments(profile, target, other)
        if target is None:
            return segments, None, None
        value, index = own_value(plan, profile, target, other, context) if other else (None, None)
        name = other.name if other else NO_IDENTITY
        if value is None:
            value = f"{{{{identities.{name}.userId}}}}" if target.user_like else \
                f"{{{{identities.{name}.objectIds.{target.resource or 'object'}}}}}"
        if target.item.location == "path":
            segments[target.item.key] = value
        return segments, value, index

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
        plan.check(accepted(index, "The test identity can read its own user (sanity check)", precondition=True))
        return f"{{{{responses[{index}].body.id}}}}"

    def _reads(self, plan: Plan, profile: EndpointProfile, target: Target, other: IdentityView | None,
               context: GenerationContext) -> None:
        own = "{{testUserId}}"
        if target.user_like:
            own, _ = own_value(plan, profile, target, None, context)
            index = plan.add(attack(profile, target, own, "The test identity's own object, with its token"))
            plan.check(accepted(index, "The test identity can read its own object (sanity check)", precondition=True))
        tried: set[str] = set()
        if other is not None:
            value, owner_read = own_value(plan, profile, target, other, context)
            if value is not None:
                tried.add(literal(other.user_id or "") if target.user_like else value)
                base = other_segments(profile, target, other)
                index = plan.add(attack(profile, target, value,
                                        f"{other.name}'s object ({target.label} = {value}) with the test identity's token",
                                        base=base))
                # The same object without credentials: an object served to anyone is public, not another's.
                header = profile.credential_header
                anonymous = plan.add(attack(profile, target, value, f"{other.name}'s object without credentials "
                                            "(is it public?)", headers={}, omitHeaders=[header], base=base))
                public = assertion("body", "equals", f"{{{{responses[{index}].body}}}}", request=anonymous,
                                   compare="similar", description="it is served alike without credentials (a public "
                                                                  "object)")
                same_endpoint = owner_read is not None and plan.requests[owner_read].get("url", "").split("?")[0] == \
                    plan.requests[index].get("url", "").split("?")[0]
                plan.check(refused(index, f"Another identity's ({other.name}) object is not served to the test identity",
                                   otherwise=assertion(
                                       "body", "notEquals", f"{{{{responses[{owner_read}].body}}}}", request=index,
                                       compare="similar", description=f"the answer is not {other.name}'s object as "
                                                                      f"{other.name} reads it", otherwise=public)
                                   if same_endpoint else public))
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
            skip = pairs[0] if len(pairs) == 1 else pairs
            index = plan.add(attack(profile, target, value,
                                    f"An object of another user seen in traffic ({target.label} = {value}, owner "
                                    f"{owner}) with the test identity's token", skipIfEquals=skip))
            # Served alike without credentials, it is public (a profile anyone reads), not another's.
            anonymous = plan.add(attack(profile, target, value, f"The same object without credentials (is it "
                                        "public?)", headers={}, omitHeaders=[profile.credential_header],
                                        skipIfEquals=skip))
            public = assertion("body", "equals", f"{{{{responses[{index}].body}}}}", request=anonymous,
                               compare="similar", description="it is served alike without credentials (a public "
                                                              "object)")
            # Ids are reused (a fresh test deployment, an object an earlier test created): an answer
            # naming another owner than traffic showed is not that user's object.
            plan.check(refused(index, "Another user's object is not served to the test identity",
                               otherwise=assertion("body", "notEquals", literal(owner), field, otherwise=public)
                               if field else public))
        if not any(a.get("request") is not None and not a.get("precondition") for a in plan.assertions):
            # No other user's object is known: the request names the id to configure and is optional,
            # so the test is INCONCLUSIVE saying what is missing (it cannot decide; DECISIONS §8).
            name = other.name if other else NO_IDENTITY
            value = f"{{{{identities.{name}.userId}}}}" if target.user_like else \
                f"{{{{identities.{name}.objectIds.{target.resource or 'object'}}}}}"
            index = plan.add({**attack(profile, target, value, f"{name}'s object ({target.label} = {value}) with "
                                       "the test identity's token"), "optional": True})
            plan.check(refused(index, f"Another identity's ({name}) object is not served to the test identity",
                               inconclusive=True))


__all__ = ["Bola", "Target", "target_of", "segment_is_parameter"]
