"""The global testing environment: read, replace, clear; and its resolved form for the runner.

Wire shape (SPEC "Global testing environment"): an object with ``baseUrl``,
``authToken``, ``testUserId``, ``timeout`` (ms), ``retries``, ``headers`` and any
extra string keys (custom ``{{placeholders}}``), or ``[]`` when none is set.
Only the keys that were set are shown. ``authToken`` is encrypted at rest.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from django.db import transaction

from ..crypto import InvalidToken, secret_decrypt, secret_encrypt
from ..models import GLOBAL_ENV_KEY, TestingEnvironment

logger = logging.getLogger(__name__)

# Runner defaults for keys the environment leaves unset.
DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_RETRIES = 2

BUILTIN_KEYS = ("baseUrl", "authToken", "testUserId", "timeout", "retries", "headers", "login", "identities",
                "objectIds", "cookie", "exclude", "allowDestructive")
# Stored together, encrypted (DECISIONS §8): they hold tokens, cookies and login bodies (passwords);
# objectIds (the primary identity's own objects, in the shape of an identity's) goes with them.
IDENTITY_KEYS = ("login", "identities", "objectIds", "cookie")


class AuthTokenUnreadable(Exception):
    """The stored authToken cannot be decrypted with the configured FIELD_ENCRYPTION_KEY."""


@dataclass(frozen=True)
class RunEnvironment:
    """The environment as the runner uses it: defaults applied, token decrypted.

    ``values`` maps placeholder names (``baseUrl``, ``authToken``, ``testUserId``
    and the extra keys) to strings; a name absent from it is unresolvable.
    """

    base_url: str
    values: dict[str, str]
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    retries: int = DEFAULT_RETRIES
    headers: dict[str, str] = field(default_factory=dict)
    login: dict | None = None  # the primary identity's login recipe
    identities: tuple[dict, ...] = ()  # further test users, as set (wire keys)
    cookie: dict | None = None  # the primary identity's credential cookie ({name, value?})


def _global_row() -> TestingEnvironment | None:
    return TestingEnvironment.objects.filter(key=GLOBAL_ENV_KEY).first()


def global_env_read() -> dict | list:
    """The global environment in its wire shape, or ``[]`` when none is configured.

    A stored token that no configured key can decrypt is left out (and logged,
    without its value) rather than failing the read.
    """
    row = _global_row()
    if row is None:
        return []
    return _wire(row)


def _wire(row: TestingEnvironment) -> dict:
    body: dict = {"baseUrl": row.base_url}
    if row.auth_token_encrypted:
        try:
            body["authToken"] = secret_decrypt(row.auth_token_encrypted)
        except InvalidToken:
            logger.warning("Testing environment %s: authToken cannot be decrypted with the configured key", row.pk)
    if row.test_user_id is not None:
        body["testUserId"] = row.test_user_id
    if row.timeout_ms is not None:
        body["timeout"] = row.timeout_ms
    if row.retries is not None:
        body["retries"] = row.retries
    if row.headers is not None:
        body["headers"] = dict(row.headers)
    if row.exclude is not None:
        body["exclude"] = list(row.exclude)
    if row.allow_destructive is not None:
        body["allowDestructive"] = list(row.allow_destructive)
    try:
        body.update(identities_stored(row))
    except AuthTokenUnreadable:
        logger.warning("Testing environment %s: identities cannot be decrypted with the configured key", row.pk)
    for name, value in sorted((row.extra or {}).items()):
        body.setdefault(name, value)
    return body


def identities_stored(row: TestingEnvironment) -> dict:
    """``{"login": …, "identities": […]}`` (the keys that were set) decrypted from the row."""
    if not row.identities_encrypted:
        return {}
    try:
        return json.loads(secret_decrypt(row.identities_encrypted))
    except InvalidToken as exc:
        raise AuthTokenUnreadable(
            "The stored identities cannot be decrypted with FIELD_ENCRYPTION_KEY; set the environment again."
        ) from exc


@dataclass(frozen=True)
class GenerationEnvironment:
    """What test generation reads of the global environment (no secret): the primary's ``testUserId``
    and own ``objectIds``, the further identities that can authenticate as
    :class:`~testgen.templates._base.IdentityView`, and the run scope (``exclude``, ``allowDestructive``)."""

    test_user_id: str | None = None
    identities: tuple = ()
    object_ids: dict = field(default_factory=dict)
    exclude: tuple = ()
    allow_destructive: tuple = ()


def identity_views() -> GenerationEnvironment:
    """The global environment as test generation sees it (:class:`GenerationEnvironment`). Nothing
    when no environment is set; no identity when they cannot be decrypted (logged)."""
    from ..ownership import password_key
    from ..templates._base import IdentityView

    row = _global_row()
    if row is None:
        return GenerationEnvironment()
    try:
        decrypted = identities_stored(row)
    except AuthTokenUnreadable:
        logger.warning("Testing environment %s: identities cannot be decrypted with the configured key", row.pk)
        decrypted = {}
    stored = decrypted.get("identities") or []
    views = tuple(
        IdentityView(name=item["name"], user_id=item.get("userId"), object_ids=dict(item.get("objectIds") or {}),
                     has_password=password_key((item.get("login") or {}).get("body")) is not None,
                     has_login=bool(item.get("login")))
        for item in stored if item.get("authToken") or item.get("login") or (item.get("cookie") or {}).get("value"))
    return GenerationEnvironment(row.test_user_id, views, dict(decrypted.get("objectIds") or {}),
                                 tuple(row.exclude or ()), tuple(row.allow_destructive or ()))


def _identities_encrypted(values: dict) -> str:
    kept = {key: values[key] for key in IDENTITY_KEYS if values.get(key) is not None}
    return secret_encrypt(json.dumps(kept)) if kept else ""


def global_env_set(*, values: dict) -> dict:
    """Replace the global environment with validated wire values; return its wire shape.

    ``values`` comes from ``GlobalEnvSerializer`` (wire keys; ``baseUrl`` required,
    extra keys already checked to be strings). Keys not given are unset. The token
    is encrypted before it reaches the database. Atomic: a failure changes nothing.
    """
    token = values.get("authToken")
    with transaction.atomic():
        row, _ = TestingEnvironment.objects.select_for_update().get_or_create(
            key=GLOBAL_ENV_KEY, defaults={"base_url": values["baseUrl"]}
        )
        row.base_url = values["baseUrl"]
        row.auth_token_encrypted = secret_encrypt(token) if token else ""
        row.test_user_id = values.get("testUserId")
        row.timeout_ms = values.get("timeout")
        row.retries = values.get("retries")
        row.headers = values.get("headers")
        row.identities_encrypted = _identities_encrypted(values)
        row.exclude = values.get("exclude")
        row.allow_destructive = values.get("allowDestructive")
        row.extra = {k: v for k, v in values.items() if k not in BUILTIN_KEYS}
        row.full_clean()
        row.save()
    logger.info("Testing environment %s replaced (%d extra keys, %d identities)", row.pk, len(row.extra),
                len(values.get("identities") or []))
    return _wire(row)


def global_env_clear() -> bool:
    """Remove the global environment; True when there was one."""
    deleted, _ = TestingEnvironment.objects.filter(key=GLOBAL_ENV_KEY).delete()
    return bool(deleted)


def run_environment_load(*, overrides: dict[str, str] | None = None) -> RunEnvironment | None:
    """The global environment resolved for a run (``None`` when none is configured).

    ``overrides`` replace or add placeholder values for this run only (``baseUrl``
    included). Raises :class:`AuthTokenUnreadable` when a token is stored but cannot
    be decrypted: running with a silently missing token would make every
    authenticated test meaningless.
    """
    row = _global_row()
    overrides = dict(overrides or {})
    if row is None:
        if "baseUrl" not in overrides:
            return None
        return RunEnvironment(base_url=overrides["baseUrl"].rstrip("/"), values=overrides)
    values: dict[str, str] = {k: v for k, v in (row.extra or {}).items() if isinstance(v, str)}
    values["baseUrl"] = row.base_url
    if row.auth_token_encrypted:
        try:
            values["authToken"] = secret_decrypt(row.auth_token_encrypted)
        except InvalidToken as exc:
            raise AuthTokenUnreadable(
                "The stored authToken cannot be decrypted with FIELD_ENCRYPTION_KEY; set the environment again."
            ) from exc
    if row.test_user_id is not None:
        values["testUserId"] = row.test_user_id
    identities = identities_stored(row)
    values.update({f"objectIds.{k}": v for k, v in (identities.get("objectIds") or {}).items()})
    values.update(overrides)
    values["baseUrl"] = values["baseUrl"].rstrip("/")
    return RunEnvironment(
        login=identities.get("login"),
        identities=tuple(identities.get("identities") or ()),
        cookie=identities.get("cookie"),
        base_url=values["baseUrl"],
        values=values,
        timeout_ms=row.timeout_ms if row.timeout_ms is not None else DEFAULT_TIMEOUT_MS,
        retries=row.retries if row.retries is not None else DEFAULT_RETRIES,
        headers=dict(row.headers or {}),
    )
