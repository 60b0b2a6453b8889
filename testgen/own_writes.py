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

The body of a write is held to the same rule (DECISIONS §8: any object named anywhere in a write, in
any key spelling): a key naming a user (``username``, ``UserId``, ``user_id``, ``owner``, ``email``…)
takes the test user (``{{testUserId}}`` when it is of the same kind — an email for mail keys, a
number for numeric values —, else ``objectIds.<key>``), and in a PUT, PATCH or DELETE a key naming an
object by id (``id``, ``bookId``, ``basket_id``) takes the own object (the path's own object for ``id``,
else ``objectIds.<resource>``); with none, the request is not sent and names the key to configure. A
POST's id references (``{"productId": 5}`` in a new order) are kept: creating an object does not write
the one it refers to. A new object's natural key (``title``, ``name``, ``slug``, ``code``…) gets the
test's unique suffix (``Tea-{{uniqueName}}``): replayed as traffic showed it, a unique one fails on its own. Credential flows and registrations name no user seen in traffic at all
(``ownership.login_body_without_real_user``).

A template that puts its own value in the slot (BOLA: the other identity's object; XSS: a payload
that is the whole id) sends its request; a value built on the slot's (an SQL-injection payload
``{{objectIds.book}}'``) keeps the placeholder and is not sent without an own object. Reads are
unchanged. Applied once per profile and context by ``test_generate`` (idempotent).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inventory.patterns.segments import path_segments

from .examples import body_with, scalar_leaves
from .ownership import (ID_QUERY, LOGIN_PATH, USER_QUERY, WRITES, body_id_resource, body_user_key, compact_key,
                        is_credential_flow, is_registration, object_id_key, password_key, query_resource, resource_name,
                        singular, unwrapped)
from .placeholders import literal

RESET_PATH = re.compile(r"(^|[/_.-])(reset|forgot|forgotten|recover|recovery)([/_.-]|$)", re.I)

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
    """The slots of a write (or read) naming an object other than the user (see the module docstring).
    A write's owners come from its traffic and from the GET reading the same object; a read's from its own."""
    pattern = path_segments(profile.path)
    user = profile.user_path_position()
    implicit = profile.implicit_user.key if profile.implicit_user is not None else None
    # The host's reads, loaded only when a write has a GET reading its object.
    facts = profile.facts if profile.method in WRITES else None
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


# The test identity's own numeric user id, read from its user before the test (``templates/_base.py``
# prepends that read): for a numeric user position when ``testUserId`` is a name.
OWN_USER_ID = "{{ownUserId}}"


def own_user_value(profile: EndpointProfile, position: int, test_user_id: str) -> str:
    """The test user in a user position: ``{{testUserId}}``, or its numeric id read from the host's user
    read (``{{ownUserId}}``) when the position takes numbers and ``testUserId`` is a name."""
    numeric = any(i.key == position and i.data_type in ("integer", "number") for i in profile.path_inputs)
    reads = profile.host_reads
    if numeric and not test_user_id.isdigit() and reads is not None and reads.user_read_path \
            and reads.user_read_path != profile.path:
        profile.own_user_id = True
        return OWN_USER_ID
    return "{{testUserId}}"


def own_objects_in_reads(profile: EndpointProfile, *, test_user_id: str | None, object_ids: dict[str, str]) -> None:
    """A read's example names the test identity's own objects where they are known — its user in a user
    position (``/users/{{testUserId}}``), configured ``objectIds``, objects traffic showed it owning — so
    a template's control request reads something the test identity may read; other ids stay as traffic
    showed them (a read changes nothing). BOLA names the other identity's objects itself."""
    if profile.method in WRITES:
        return
    position = profile.user_path_position()
    if position is None and profile.implicit_user is not None:
        position = profile.implicit_user.key
    if position is not None and test_user_id is not None:
        _set(profile, position, own_user_value(profile, position, test_user_id))
    if profile.write_slots is None:
        profile.write_slots = object_slots(profile)
    for slot in profile.write_slots:
        key = object_id_key(object_ids, slot.resource)
        mine = next((v for v, owner in slot.owned if test_user_id is not None and owner == test_user_id), None)
        if key is not None:
            _set(profile, slot.key, f"{{{{objectIds.{key}}}}}")
        elif mine is not None:
            _set(profile, slot.key, mine)


def own_objects_in_writes(profile: EndpointProfile, *, test_user_id: str | None, object_ids: dict[str, str]) -> None:
    """Name the test identity's own objects in a write's example request (see the module docstring);
    ``profile.not_own`` maps the placeholder of each slot with no own object to why it is not sent."""
    if profile.method not in WRITES:
        own_objects_in_reads(profile, test_user_id=test_user_id, object_ids=object_ids)
        return
    position = profile.user_path_position()
    if position is not None and test_user_id is not None:
        _set(profile, position, own_user_value(profile, position, test_user_id))
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
    _own_body(profile, test_user_id, object_ids)


# Keys (compact) of a new object's natural key: unique in many APIs, so a test makes them its own.
_NATURAL_KEY = re.compile(r"(title|name|slug|handle|label|subject|sku|code)$")
# A contact written in a body is the test's own, never a person's seen in traffic (no mail or text message
# reaches them): an address nobody reads, a number reserved for fiction.
OWN_EMAIL = "{{uniqueName}}@example.com"
OWN_PHONE = "+15555550100"
_EMAIL_KEYS = {"email", "emailaddress", "mail", "contactemail"}
_PHONE_KEYS = {"phone", "phonenumber", "mobile", "mobilenumber", "msisdn", "tel", "telephone", "cell", "cellphone"}


def _contact(key: str, value, test_user_id: str | None):
    """The value an email or phone field of a write takes (the test user's own email when that is its
    ``testUserId``, else a synthetic one), or None for other fields."""
    if not isinstance(value, str):
        return None
    compact = compact_key(key)
    if compact in _EMAIL_KEYS or (compact.endswith("email") and "@" in value):
        if value == "{{testUserId}}" or (test_user_id and value == literal(test_user_id)) or value.startswith("{{uniqueName"):
            return value
        return OWN_EMAIL
    if compact in _PHONE_KEYS:
        return OWN_PHONE
    return None


def _own_user(key: str, value, test_user_id: str | None, object_ids: dict[str, str]):
    """The test user in a body key naming a user (see the module docstring), or None."""
    configured = next((k for k in object_ids if compact_key(k) == compact_key(key)), None)
    if configured is not None:
        return f"{{{{objectIds.{configured}}}}}"
    if test_user_id is None:
        return None
    text = str(value)
    if text == literal(test_user_id) or text == "{{testUserId}}":
        return value
    if "mail" in compact_key(key) or "@" in text:
        return "{{testUserId}}" if "@" in test_user_id else None
    if isinstance(value, int) and not isinstance(value, bool):
        return int(test_user_id) if test_user_id.isdigit() else None
    if text.isdigit() != test_user_id.isdigit():
        return None
    return "{{testUserId}}"


def _numeric(value) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.isdigit())


def _reads_own_numeric_id(profile: EndpointProfile, test_user_id: str | None) -> bool:
    """Whether the test user's numeric id can be read from its own user: ``testUserId`` is a name and the
    host's user read answers an ``id``."""
    reads = profile.host_reads
    if test_user_id is None or test_user_id.isdigit() or reads is None or not reads.user_read_path:
        return False
    read = profile.facts.reads.get(reads.user_read_path) if profile.facts is not None else None
    return read is not None and "id" in read.response_fields


# The test identity's own password (the password field of its login recipe): a credential change of its
# own writes it back unchanged, so no test locks the test identity out.
OWN_PASSWORD = "{{ownPassword}}"


def credential_change(profile: EndpointProfile) -> str | None:
    """The password key of a write changing an existing user's credential (``PUT /users/{{testUserId}}/password``,
    ``PUT /me/password``: authenticated, a password field, no login, reset or registration), or None."""
    if profile.method not in ("PUT", "PATCH", "POST") or not profile.is_authenticated \
            or not isinstance(profile.body, dict) or is_registration(profile.method, profile.path, profile.body) \
            or LOGIN_PATH.search(profile.path) or RESET_PATH.search(profile.path):
        return None
    inner, _ = unwrapped(profile.body)
    return password_key(inner)


def _own_password(profile: EndpointProfile) -> None:
    """A credential change of the test identity's own (``{"password"}`` or ``{"user": {"password"}}``)
    writes its own password back (``{{ownPassword}}``, a request without it is not sent), and its password
    field is no input a template fuzzes."""
    key = credential_change(profile)
    if key is None:
        return
    _, envelope = unwrapped(profile.body)
    profile.body = body_with(profile.body, (*envelope, key), OWN_PASSWORD)
    profile.body_inputs = [i for i in profile.body_inputs if i.key != (*envelope, key)]


def _own_body(profile: EndpointProfile, test_user_id: str | None, object_ids: dict[str, str]) -> None:
    """Objects a write's body names (see the module docstring): the test identity's own, or the
    request is not sent (``profile.not_own``)."""
    _own_password(profile)
    if not isinstance(profile.body, dict) or profile.body_format not in ("json", "form") \
            or is_credential_flow(profile.path) or is_registration(profile.method, profile.path, profile.body):
        return
    pattern = path_segments(profile.path)
    for key_path, name, value in scalar_leaves(profile.body):
        if not key_path or any(isinstance(k, int) for k in key_path) or value is None or isinstance(value, bool):
            continue
        leaf = str(key_path[-1])
        if profile.method == "POST" and len(key_path) <= 2 and _NATURAL_KEY.search(compact_key(leaf)) \
                and isinstance(value, str) and value and "{{" not in value:
            # A new object's natural key (a title, a name, a slug) is made the test's own: replayed as traffic
            # showed it, a unique one fails on its own (the title exists) and the test cannot decide.
            mine = f"{value}-{{{{uniqueName}}}}"
            profile.body = body_with(profile.body, key_path, mine)
            for item in profile.body_inputs:
                if item.key == key_path:
                    item.example = mine
            continue
        contact = _contact(leaf, value, test_user_id)
        if contact is not None:
            if contact != value:
                profile.body = body_with(profile.body, key_path, contact)
                for item in profile.body_inputs:
                    if item.key == key_path:
                        item.example = contact
            continue
        if isinstance(value, str) and value.startswith("{{objectIds.") and value.endswith("}}") \
                and object_id_key(object_ids, value[12:-2]) is None and value[12:-2] not in object_ids:
            configure = value[2:-2]  # left by an earlier application: still not own
            what = f"an object or user (body field '{name}')"
            mine = None
        elif body_user_key(leaf):
            mine = _own_user(leaf, value, test_user_id, object_ids)
            if mine is None and _numeric(value) and _reads_own_numeric_id(profile, test_user_id):
                mine = OWN_USER_ID  # its numeric id, read from its own user first (templates/_base.py)
                profile.own_user_id = True
            what = f"a user (body field '{name}')"
            configure = f"objectIds.{leaf}"
        elif profile.method != "POST" and (resource := body_id_resource(leaf)) is not None:
            mine, what, configure = _own_object(profile, pattern, resource, object_ids)
            what = f"{what} (body field '{name}')"
        else:
            continue
        if mine is None:
            mine = f"{{{{{configure}}}}}"
            what = what if "(" in what else f"{what} (body field '{name}')"
            profile.not_own[mine] = (
                f"{profile.method} {profile.path} names {what} that may not belong to a test identity: set "
                f"{configure} in the testing environment to the test identity's own; not sent")
        if mine != value:
            profile.body = body_with(profile.body, key_path, mine)
            for item in profile.body_inputs:
                if item.key == key_path:
                    item.example = mine


def _own_object(profile: EndpointProfile, pattern: list[str], resource: str,
                object_ids: dict[str, str]) -> tuple[str | None, str, str]:
    """(the own object for an id-like body key, what it names, the key to configure). ``resource`` ""
    (``id``) is the written object: the path's own object when the path names it."""
    if resource == "":
        slots = [slot for slot in profile.write_slots or [] if isinstance(slot.key, int)]
        if slots:
            slot = slots[-1]
            return profile.segments[slot.key], f"the object ({slot.resource or 'object'})", \
                f"objectIds.{slot.resource or 'object'}"
        literal_segments = [p for p in pattern if not p.startswith("{")]
        resource = singular(literal_segments[-1]) if literal_segments else "object"
    key = object_id_key(object_ids, resource)
    return (f"{{{{objectIds.{key}}}}}" if key else None), f"an object ({resource})", f"objectIds.{resource}"


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


def not_own_reason(profile: EndpointProfile, method: str, url: str, query: dict | None, body=None) -> str | None:
    """Why a write request is not sent: it still names an object of no known owner (the placeholder
    of a slot without an own object, also inside a value built on it), else None."""
    if method not in WRITES or not profile.not_own:
        return None
    texts = [url, *(str(v) for v in (query or {}).values())]
    if body is not None:
        texts.append(body if isinstance(body, str) else json.dumps(body))
    return next((reason for placeholder, reason in profile.not_own.items() if any(placeholder in t for t in texts)),
                None)
