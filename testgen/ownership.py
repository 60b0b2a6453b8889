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
# Credential flows (DECISIONS §8): a login, a password change or reset, a PIN, an OTP, a verification.
# They go only to users that do not exist (or, by a template's own choice, the test identity).
CREDENTIAL_FLOW_PATH = re.compile(
    r"(^|[/_.-])(log-?in|sign-?in|log-?on|auth|oauth2?|authenticate|token|tokens|session|sessions|password|passwd|"
    r"pass|pin|reset|forgot|forgotten|recover|recovery|otp|mfa|2fa|totp|verify|verification|confirm|"
    r"activate|unlock|magic-?link|credentials?)([/_.-]|$)", re.I)
# Registrations: they get a fresh user of the test's own ({{uniqueName}}), never an observed or shared name.
SIGNUP_PATH = re.compile(r"(^|[/_.-])(sign-?up|register|registration|join|enrol+|create-?account)([/_.-]|$)", re.I)
NO_SUCH_USER = "apiscope-no-such-user"
NO_SUCH_EMAIL = "apiscope-no-such-user@example.invalid"
FRESH_NAME = "{{uniqueName}}"
FRESH_EMAIL = "{{uniqueName}}@example.com"
# Keys (compact: lower case, no separators) naming a user in a write's body. An email is not among
# them: in an ordinary write it is a value written (``PUT /users/{id}/email``); it names the user only in
# a credential flow.
USER_KEYS = frozenset({"user", "username", "userid", "useruuid", "uid", "login", "loginid", "loginname",
                       "account", "accountid", "accountname", "customer", "customerid",
                       "member", "memberid", "owner", "ownerid", "handle", "nick", "nickname", "createdby",
                       "createdbyid", "author", "authorid", "principal", "sub", "profileid", "personid"})
# In a credential flow the user may also be named by an email or a phone number (a reset link, an OTP).
CREDENTIAL_USER_KEYS = USER_KEYS | {"email", "emailaddress", "mail", "phone", "phonenumber", "mobile",
                                    "mobilenumber", "msisdn", "identifier", "id"}
# Keys naming an object by id: "id", or ending in an id suffix (``bookId``, ``basket_id``, ``OrderID``).
ID_KEY = re.compile(r"^(?:(?P<plain>id|uuid|guid)|(?P<snake>.+)[_-](?:id|uuid|guid)|(?P<camel>.*[a-z0-9])(?:Id|ID|Uuid|UUID|Guid))$",
                    re.IGNORECASE)


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


# Body keys (compact) that set a user's role or privileges.
ROLE_KEYS = frozenset({"role", "roles", "rolename", "roleid", "isadmin", "admin", "isstaff", "staff", "issuperuser",
                       "superuser", "permission", "permissions", "privilege", "privileges", "group", "groups",
                       "usertype", "accounttype", "accesslevel", "level", "scope", "scopes", "authorities",
                       "authority", "ismoderator", "moderator", "isowner"})


def words_of(segment: str) -> list[str]:
    """The words of a path segment in any spelling (``update_role``, ``updateRole``, ``update-role``,
    ``UpdateRole`` → ``update``, ``role``), lower case."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", segment)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def admin_function(segments: list[str], method: str, body: Any = None) -> str | None:
    """Why the endpoint looks like a function meant for another role (for the test's description), or
    None: an administrative path segment (``admin``, ``staff``, ``internal``… as a word of any segment:
    ``admin-panel``, ``adminUsers``), a write whose last literal segment has a role word
    (``/users/{id}/role``, ``/users/update_role``, ``promote``), or a write to a user (a user path, or a
    body naming a user) whose body sets a role or privilege key (``role``, ``isAdmin``, ``is_staff``,
    ``permissions``… in any spelling)."""
    literal = [s for s in segments if not segment_is_parameter(s)]
    admin = next((s for s in literal if any(w in ADMIN_SEGMENTS for w in words_of(s))), None)
    if admin:
        return f"an administrative path ('{admin}')"
    if method not in WRITES:
        return None
    if literal and (literal[-1].lower() in ROLE_FUNCTIONS or any(w in ROLE_FUNCTIONS for w in words_of(literal[-1]))):
        return f"a role or permission change ('{literal[-1]}')"
    if isinstance(body, dict):
        role = next((k for k in body if compact_key(k) in ROLE_KEYS), None)
        names_user = user_position(segments) is not None or any(compact_key(k) in USER_KEYS for k in body) or \
            any(s.lower() in USER_COLLECTIONS for s in literal)
        if role is not None and names_user:
            return f"a role or permission change (body field '{role}')"
    return None


def owner_compact_keys() -> frozenset[str]:
    """The owner keys of answers, compact (``userid`` for ``UserId``, ``user_id``…)."""
    return frozenset(compact_key(k) for k in OWNER_KEYS)


def password_key(body: Any) -> str | None:
    """The first top-level key of a JSON object body that holds a password, or None."""
    if isinstance(body, dict):
        for key, value in body.items():
            if PASSWORD_FIELD.match(str(key)) and isinstance(value, str):
                return key
    return None


def is_signup(path: str) -> bool:
    return bool(SIGNUP_PATH.search(path))


def unwrapped(body: Any) -> tuple[Any, tuple]:
    """A body's fields under a one-key envelope (``{"user": {"email", "password"}}`` → the inner object and
    ``("user",)``), or the body itself and ``()``."""
    if isinstance(body, dict) and len(body) == 1 and isinstance(next(iter(body.values())), dict):
        key = next(iter(body))
        return body[key], (key,)
    return body, ()


def is_registration(method: str, path: str, body: Any) -> bool:
    """A registration: a sign-up path, or a POST to a user collection with a password beside a user name
    or an email (``POST /api/users {"user": {"username", "email", "password"}}``), enveloped or not."""
    if is_signup(path):
        return True
    inner, _ = unwrapped(body)
    return method == "POST" and isinstance(inner, dict) and password_key(inner) is not None \
        and any(compact_key(k) in USER_KEYS | {"email"} for k in inner) and not is_credential_flow(path) \
        and _names_users(path)


def is_credential_flow(path: str) -> bool:
    """A login, password change or reset, PIN, OTP or verification route (a registration is not)."""
    return bool(CREDENTIAL_FLOW_PATH.search(path)) and not is_signup(path)


def login_body_without_real_user(path: str, body: Any, method: str = "POST") -> Any:
    """The body of a credential flow or a registration with no user seen in traffic in it: in a login,
    reset, PIN, OTP or verification (any credential-flow path) the fields naming the user — ``username``,
    ``email``, ``phone``… in any spelling — name a user that does not exist (an email at
    ``example.invalid`` for mail fields), so no test tries an observed user's login or sends a reset or
    a code to a real user; in a registration they name a fresh user of the test (``{{uniqueName}}``),
    which no other test uses (a burst never logs in as a user a test registered). Any other body, and
    non-object bodies, as they are."""
    if not isinstance(body, dict):
        return body
    if len(body) == 1 and isinstance(next(iter(body.values())), dict):  # {"user": {"email", "password"}}
        key = next(iter(body))
        return {key: login_body_without_real_user(path, body[key], method)}
    if is_registration(method, path, body):
        return {key: (FRESH_EMAIL if "mail" in compact_key(key) else FRESH_NAME)
                if isinstance(value, str) and compact_key(key) in USER_KEYS | {"email", "emailaddress", "mail"}
                else value for key, value in body.items()}
    if not (is_credential_flow(path) or (LOGIN_PATH.search(path) and password_key(body) is not None)):
        return body
    return {key: (NO_SUCH_EMAIL if "mail" in compact_key(key) else NO_SUCH_USER)
            if isinstance(value, (str, int)) and not isinstance(value, bool)
            and compact_key(key) in CREDENTIAL_USER_KEYS - {"id"} else value
            for key, value in body.items()}


def _names_users(path: str) -> bool:
    """A path ending in a user collection (``POST /api/users`` with a password is a registration)."""
    segments = [s for s in path.strip("/").split("/") if s]
    return bool(segments) and not segment_is_parameter(segments[-1]) and segments[-1].lower() in USER_COLLECTIONS


def body_user_key(key: str) -> bool:
    """Whether a body key names a user (``username``, ``UserId``, ``user_id``, ``owner``, ``email``…)."""
    return compact_key(key) in USER_KEYS


def body_id_resource(key: str) -> str | None:
    """The resource an id-like body key names (``bookId`` → ``book``, ``basket_id`` → ``basket``; ``id``
    → ``""``: the written object itself), or None when the key names no object by id."""
    if compact_key(key) in USER_KEYS:
        return None
    match = ID_KEY.match(str(key))
    if not match:
        return None
    if match.group("plain"):
        return ""
    name = match.group("snake") or match.group("camel") or ""
    if match.group("camel") is not None and not re.search(r"(Id|ID|Uuid|UUID|Guid)$", str(key)):
        return None  # "paid", "valid": a word ending in "id", not an id suffix
    return singular(compact_key(name)) or ""
