"""Whose object a request names, and which functions belong to another role (BOLA/BFLA, issue #15).

Pure helpers over path segments, field names and JSON answers, shared by the profile (what traffic
showed) and the BOLA template:

* user paths: a parameter (or a literal user name) after a user collection, with version or
  namespace segments in between (``/users/v1/{username}``, ``/api/v2/accounts/{id}``);
* resource types: the collection naming a parameter (``/books/v1/{id}`` → ``book``), matched to an
  identity's ``objectIds`` keys in singular or plural;
* owners named in answers (``owner``, ``ownerId``, ``userId``, ``username``, ``createdBy``…);
* functions meant for another role: admin/staff/internal paths and role or permission changes;
* password-like fields (a login body's, a write's).
"""
from __future__ import annotations

import json
import re
from typing import Any

from inventory.patterns.segments import segment_is_parameter

# Collections whose item names a user.
USER_COLLECTIONS = {"user", "users", "account", "accounts", "customer", "customers", "member", "members",
                    "profile", "profiles", "person", "people", "owner", "owners"}
# Segments between a collection and its item that are no resource: versions and namespaces.
NAMESPACE_SEGMENT = re.compile(r"^(v\d+(\.\d+)*|api|apis|rest|latest|current|beta|alpha)$", re.I)
# Answer fields naming the object's owner (top level, or under "data").
OWNER_KEYS = ("owner", "ownerId", "owner_id", "userId", "user_id", "username", "user", "createdBy",
              "created_by", "author", "authorId", "author_id", "customerId", "customer_id", "accountId",
              "account_id")
# Body fields naming the user a write is about (PUT /profile {"username": "bob", ...}).
USER_FIELD = re.compile(r"^(user(name)?|user[_-]?id|login|account[_-]?id|customer[_-]?id|member[_-]?id|"
                        r"owner|owner[_-]?id)$", re.I)
# Query parameters naming a user, and naming an object by id (BOLA's targets; writes' own objects).
USER_QUERY = re.compile(r"^(user|account|customer|member|profile|owner|person)[_-]?(id|uuid|name)?$", re.I)
ID_QUERY = re.compile(r"(^(id|uid|uuid|guid)$)|([_-](id|uuid)$)|([a-z0-9](Id|ID|Uuid)$)")
ID_SUFFIX = re.compile(r"([_-]?(id|uuid|guid)|(Id|ID|Uuid))$")
PASSWORD_FIELD = re.compile(r"^(new[_-]?)?(password|passwd|pass|pwd)$", re.I)
# Path segments of functions meant for another role.
ADMIN_SEGMENTS = {"admin", "admins", "administrator", "administration", "staff", "internal", "manage",
                  "management", "moderator", "moderation", "superuser", "sudo", "backoffice", "ops"}
# A write whose last literal segment is one of these changes what a user may do.
ROLE_FUNCTIONS = {"role", "roles", "permission", "permissions", "privilege", "privileges", "promote", "demote",
                  "grant", "revoke", "ban", "unban", "suspend", "activate", "deactivate", "approve", "verify-user"}
WRITES = ("POST", "PUT", "PATCH", "DELETE")
# Paths submitting credentials (a login), and the user they name in tests instead of one seen in traffic.
LOGIN_PATH = re.compile(r"(^|/)(login|log-in|signin|sign-in|sign_in|session|sessions|token|oauth|authenticate|auth)"
                        r"(/|$)", re.I)
NO_SUCH_USER = "apiscope-no-such-user"


def collection_before(segments: list[str], position: int) -> str | None:
    """The literal segment naming the item at ``position`` (lower case): the nearest one before it
    that is not a version or namespace; None when a parameter comes first or there is none."""
    for index in range(position - 1, -1, -1):
        segment = segments[index]
        if segment_is_parameter(segment):
            return None
        if not NAMESPACE_SEGMENT.match(segment):
            return segment.lower()
    return None


def is_user_position(segments: list[str], position: int) -> bool:
    return position > 0 and collection_before(segments, position) in USER_COLLECTIONS


def user_position(segments: list[str]) -> int | None:
    """The index of the first parameter naming a user (``/users/v1/{param1}`` → 2), if any."""
    for position, segment in enumerate(segments):
        if segment_is_parameter(segment) and is_user_position(segments, position):
            return position
    return None


def singular(word: str) -> str:
    word = word.lower()
    if word == "people":
        return "person"
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def resource_name(segments: list[str], position: int) -> str | None:
    """The resource type of the item at ``position`` (``books`` → ``book``), or None."""
    collection = collection_before(segments, position)
    return singular(collection) if collection else None


def object_id_key(object_ids: dict[str, str], resource: str | None) -> str | None:
    """The key of ``object_ids`` for this resource type (case and plural ignored), or None."""
    if not resource:
        return None
    for key in object_ids:
        if singular(key) == resource:
            return key
    return None


def query_resource(name: str) -> str | None:
    """The resource type an id-like query parameter names (``bookId`` → ``book``; ``id`` → None)."""
    return singular(ID_SUFFIX.sub("", name)) or None


def compact_key(name: str) -> str:
    """A key as compared across spellings: lower case, without ``-``, ``_``, ``.`` and spaces
    (``UserId``, ``user_id``, ``user-id`` and ``userid`` are one key)."""
    return re.sub(r"[-_.\s]", "", str(name)).lower()


_OWNER_COMPACT = {compact_key(k): i for i, k in enumerate(OWNER_KEYS)}


def owner_named(answer_text: str) -> tuple[str, str] | None:
    """``(field, owner)`` of the owner an answer names (a scalar under one of ``OWNER_KEYS`` in any
    spelling — ``UserId``, ``user_id``, ``OwnerID`` — at the top level or under ``data``; ``field`` is
    its dotted path as the answer spells it), or None. The first of ``OWNER_KEYS`` present wins."""
    if not answer_text or not answer_text.lstrip().startswith("{"):
        return None
    try:
        value: Any = json.loads(answer_text)
    except (ValueError, RecursionError):
        return None
    for prefix, node in (("", value), ("data.", value.get("data") if isinstance(value, dict) else None)):
        if isinstance(node, dict):
            found = []
            for key, owner in node.items():
                rank = _OWNER_COMPACT.get(compact_key(key))
                if rank is not None and isinstance(owner, (str, int)) and not isinstance(owner, bool) and str(owner) \
                        and "[REDACTED]" not in str(owner):
                    found.append((rank, key, str(owner)))
            if found:
                _, key, owner = min(found)
                return prefix + str(key), owner
    return None


def admin_function(segments: list[str], method: str) -> str | None:
    """Why the endpoint looks like a function meant for another role (for the test's description), or None."""
    literal = [s.lower() for s in segments if not segment_is_parameter(s)]
    admin = next((s for s in literal if s in ADMIN_SEGMENTS), None)
    if admin:
        return f"an administrative path ('{admin}')"
    if method in WRITES and literal and literal[-1] in ROLE_FUNCTIONS:
        return f"a role or permission change ('{literal[-1]}')"
    return None


def password_key(body: Any) -> str | None:
    """The first top-level key of a JSON object body that holds a password, or None."""
    if isinstance(body, dict):
        for key, value in body.items():
            if PASSWORD_FIELD.match(str(key)) and isinstance(value, str):
                return key
    return None


def login_body_without_real_user(path: str, body: Any) -> Any:
    """A login body (a credential path, a password field) with the fields naming the user set to a
    user that does not exist (an email for mail fields), so no test tries an observed user's login
    (repeated failures could lock that user out); any other body as it is."""
    if not LOGIN_PATH.search(path) or password_key(body) is None:
        return body
    return {key: (f"{NO_SUCH_USER}@example.invalid" if "mail" in str(key).lower() else NO_SUCH_USER)
            if isinstance(value, str) and (USER_FIELD.match(str(key)) or re.fullmatch(r"e?-?mail", str(key), re.I))
            else value for key, value in body.items()}
