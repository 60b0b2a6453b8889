"""Writes go to the test identity's own objects (DECISIONS §8: tests are non-destructive).

The profile (``profile.py``) already names the test user's own user in a write's user position
(``{{testUserId}}``). This module does the same, for every template at once, for the other objects a
write (POST, PUT, PATCH, DELETE) names in its path or query: a path parameter that is not the user
position (``PUT /books/v1/{param1}``) and an id-like query parameter (``DELETE /items?itemId=7``); a
user-like query parameter (``?userId=``) takes ``{{testUserId}}``. Each such slot takes, in order:

1. the primary identity's configured ``objectIds.<resource>`` (``{{objectIds.book}}``, resolved at
   run time from the global environment);
2. an object traffic showed the test user owning: a value seen in that slot, on this endpoint or on
   the GET reading the same object (``GET /books/v1/{param1}``), whose answer named ``testUserId``
   as its owner (``owner``, ``userId``, ``username``…);
3. else nothing: the slot holds ``{{objectIds.<resource>}}`` and every write request still naming it
   is not sent (request ``skip`` saying which id to configure); :func:`not_own_reason` finds it and
   ``SecurityTemplate.test_config`` adds an inconclusive check, so the test is INCONCLUSIVE.

A template that puts its own value in the slot (BOLA: the other identity's object; XSS: a payload
that is the whole id) sends its request; a value built on the slot's (an SQL-injection payload
``{{objectIds.book}}'``) keeps the placeholder and is not sent without an own object. Reads are
unchanged. Applied once per profile and context by ``test_generate`` (idempotent).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from inventory.patterns.segments import path_segments

from .ownership import ID_QUERY, USER_QUERY, WRITES, object_id_key, query_resource, resource_name
from .placeholders import literal

if TYPE_CHECKING:
    from .profile import EndpointProfile


@dataclass(frozen=True)
class ObjectSlot:
    """A place of a write's request naming an object: a path position (int) or query name (str), its
    resource type, and the (value, owner) pairs traffic showed there."""

    key: int | str
    name: str
    resource: str | None
    owned: tuple[tuple[str, str], ...]

    @property
    def label(self) -> str:
        return f"path parameter '{self.name}'" if isinstance(self.key, int) else f"query parameter '{self.name}'"


def placeholder_for(resource: str | None) -> str:
    return f"{{{{objectIds.{resource or 'object'}}}}}"


def object_slots(profile: EndpointProfile) -> list[ObjectSlot]:
    """The slots of a write naming an object other than the user (see the module docstring)."""
    pattern = path_segments(profile.path)
    user = profile.user_path_position()
    implicit = profile.implicit_user.key if profile.implicit_user is not None else None
    facts = profile.facts  # the host's reads, loaded only when a write has a GET reading its object
    slots = []
    for item in profile.path_inputs:
        if item.key in (user, implicit):
            continue
        reader = profile.read_path_for(item.key)
        read = facts.reads.get(reader) if facts is not None and reader else None
        values = list(dict.fromkeys([*profile.observed_values(item.key), *(read.observed_values(item.key) if read else [])]))
        owned = [(v, owner[1]) for v in values
                 if (owner := profile.owner_of(item.key, v) or (read.owner_of(item.key, v) if read else None))]
        slots.append(ObjectSlot(item.key, item.name, resource_name(pattern, item.key), tuple(owned)))
    for item in profile.query_inputs:
        if USER_QUERY.match(item.name) or not ID_QUERY.search(item.name):
            continue
        has_read = profile.host_reads is not None and profile.path in profile.host_reads.patterns
        read = facts.reads.get(profile.path) if facts is not None and has_read else None
        owned = [(literal(query[item.name]), owner) for source in (profile, read) if source is not None
                 for _, query, (_, owner) in source.trace_owners if query.get(item.name)]
        slots.append(ObjectSlot(item.name, item.name, query_resource(item.name), tuple(owned)))
    return slots


def own_objects_in_writes(profile: EndpointProfile, *, test_user_id: str | None, object_ids: dict[str, str]) -> None:
    """Name the test identity's own objects in a write's example request (see the module docstring);
    ``profile.not_own`` maps the placeholder of each slot with no own object to why it is not sent."""
    if profile.method not in WRITES:
        return
    if profile.write_slots is None:
        profile.write_slots = object_slots(profile)
    profile.not_own = {}
    for slot in profile.write_slots:
        key = object_id_key(object_ids, slot.resource)
        mine = next((v for v, owner in slot.owned if test_user_id is not None and owner == test_user_id), None)
        if key is not None:
            value = f"{{{{objectIds.{key}}}}}"
        elif mine is not None:
            value = mine
        else:
            value = placeholder_for(slot.resource)
            resource = slot.resource or "object"
            profile.not_own[value] = (
                f"{profile.method} {profile.path} names an object ({resource}, {slot.label}) that may not belong "
                f"to a test identity: set objectIds.{resource} in the testing environment to one of the test "
                "identity's own (or let traffic show the test user owning one); not sent")
        _set(profile, slot.key, value)
    for item in profile.query_inputs:
        if USER_QUERY.match(item.name):
            _set(profile, item.name, "{{testUserId}}")


def _set(profile: EndpointProfile, key: int | str, value: str) -> None:
    if isinstance(key, int):
        profile.segments[key] = value
        inputs = profile.path_inputs
    else:
        profile.query[key] = value
        inputs = profile.query_inputs
    for item in inputs:
        if item.key == key:
            item.example = value


def not_own_reason(profile: EndpointProfile, method: str, url: str, query: dict | None) -> str | None:
    """Why a write request is not sent: it still names an object of no known owner (the placeholder
    of a slot without an own object, also inside a value built on it), else None."""
    if method not in WRITES or not profile.not_own:
        return None
    texts = [url, *(str(v) for v in (query or {}).values())]
    return next((reason for placeholder, reason in profile.not_own.items() if any(placeholder in t for t in texts)),
                None)
