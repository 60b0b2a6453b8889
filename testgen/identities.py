"""Test identities at run time: the primary (SPEC's keys) and the environment's ``identities``.

An :class:`IdentitySet` is made per run. :meth:`IdentitySet.login_all` fetches a token for every
identity with a ``login`` recipe before the first test (DECISIONS §8); the runner calls
:meth:`IdentitySet.refresh` when an identity's own request is answered 401, then retries it once.

What templates and tests use:

* placeholders — ``{{authToken}}`` (the primary's credential, ready for its header),
  ``{{testUserId}}``, ``{{objectIds.RESOURCE}}`` (the primary's own objects, from the environment's
  values), and per identity ``{{identities.NAME.authToken}}`` (credential with its
  scheme), ``{{identities.NAME.token}}`` (bare token), ``{{identities.NAME.userId}}``,
  ``{{identities.NAME.objectIds.RESOURCE}}``, ``{{identities.NAME.password}}`` (the password-like
  field of its login body, for BOLA to restore a password it proved another identity could change);
* a request's ``identity`` (extension): ``"identity": "bob"`` sends bob's credential in bob's header;
* code — ``identity_set.identity("bob")`` returns the :class:`Identity` (``credential()``,
  ``header``, ``user_id``, ``object_ids``).

Tokens and login bodies are never logged: only identity names and status codes are.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from requests.structures import CaseInsensitiveDict

from .client import AnswerTimeout, ConnectionFailed, NotSent, TestClient
from .ownership import password_key
from .placeholders import MISSING, Resolver, Unresolved, json_path_get
from .services.environment import RunEnvironment

logger = logging.getLogger(__name__)

PRIMARY = "primary"
DEFAULT_HEADER = "Authorization"
DEFAULT_SCHEME = "Bearer"


class LoginFailed(Exception):
    """An identity could not log in (the message names the identity and why, never a secret)."""


class UnknownIdentity(KeyError):
    pass


@dataclass
class Identity:
    name: str
    token: str | None = None
    user_id: str | None = None
    object_ids: dict[str, str] = field(default_factory=dict)
    login: dict | None = None
    header: str = DEFAULT_HEADER
    scheme: str = DEFAULT_SCHEME
    # A token set by the operator is sent as written (it may carry its scheme already).
    token_is_credential: bool = False

    def credential(self) -> str | None:
        """The header value: ``<scheme> <token>`` for a fetched token; a configured one as written."""
        if not self.token:
            return None
        if self.token_is_credential or not self.scheme:
            return self.token
        return f"{self.scheme} {self.token}"

    def placeholder_values(self) -> dict[str, str]:
        prefix = f"identities.{self.name}."
        values = {f"{prefix}objectIds.{k}": v for k, v in self.object_ids.items()}
        if self.token:
            values[f"{prefix}authToken"] = self.credential()
            values[f"{prefix}token"] = self.token
        if self.user_id is not None:
            values[f"{prefix}userId"] = self.user_id
        body = (self.login or {}).get("body")
        if password_key(body):  # BOLA puts it back after proving another identity could change it
            values[f"{prefix}password"] = body[password_key(body)]
        return values


def _identity(name: str, token: str | None, user_id: str | None, object_ids: dict | None,
              login: dict | None) -> Identity:
    login = login or None
    return Identity(name=name, token=token or None, user_id=user_id, object_ids=dict(object_ids or {}),
                    login=login, header=(login or {}).get("header") or DEFAULT_HEADER,
                    scheme=(login or {}).get("scheme", DEFAULT_SCHEME), token_is_credential=bool(token))


class IdentitySet:
    """The identities of one run (see the module docstring)."""

    def __init__(self, environment: RunEnvironment, client: TestClient, environ: Mapping[str, str] | None = None):
        self.environment = environment
        self.client = client
        self.environ = environ or {}
        values = environment.values
        self._by_name: dict[str, Identity] = {
            PRIMARY: _identity(PRIMARY, values.get("authToken"), values.get("testUserId"), None, environment.login)}
        for item in environment.identities:
            self._by_name[item["name"]] = _identity(item["name"], item.get("authToken"), item.get("userId"),
                                                    item.get("objectIds"), item.get("login"))

    # --- lookup ------------------------------------------------------------------------
    def identity(self, name: str) -> Identity:
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownIdentity(name) from None

    @property
    def names(self) -> list[str]:
        return list(self._by_name)

    def all(self) -> list[Identity]:
        return list(self._by_name.values())

    def values(self) -> dict[str, str]:
        """Placeholder values of every identity (``authToken`` is the primary's credential)."""
        out: dict[str, str] = {}
        for identity in self._by_name.values():
            if identity.name == PRIMARY:
                if identity.token:
                    out["authToken"] = identity.credential()
            else:
                out.update(identity.placeholder_values())
        return out

    def owner_of(self, headers: CaseInsensitiveDict) -> Identity | None:
        """The identity with a login recipe whose current credential these headers carry."""
        for identity in self._by_name.values():
            if identity.login and identity.token and headers.get(identity.header) in (
                    identity.credential(), identity.token):
                return identity
        return None

    # --- logging in --------------------------------------------------------------------
    def login_all(self) -> None:
        """Log in every identity that has a login recipe. Raises :class:`LoginFailed`."""
        for identity in self._by_name.values():
            if identity.login:
                self.refresh(identity)

    def login_request(self, identity: Identity, *, password: str | None = None) -> tuple[str, str, CaseInsensitiveDict,
                                                                                     bytes | None]:
        """``(method, url, headers, body)`` of the identity's login; ``password`` replaces the
        password-like field of its body (BOLA checks whether a password another identity set works).
        Raises :class:`LoginFailed` when a placeholder of the recipe has no value."""
        recipe = identity.login or {}
        resolver = Resolver({k: v for k, v in self.environment.values.items() if k != "authToken"}, self.environ)
        try:
            url = str(resolver.resolve(recipe["url"]))
            headers = CaseInsensitiveDict({k: str(v) for k, v in resolver.resolve(recipe.get("headers") or {}).items()})
            body = resolver.resolve(recipe.get("body"))
        except Unresolved as exc:
            raise LoginFailed(f"login of identity {identity.name}: {exc} is not set") from None
        if password is not None and password_key(body):
            body = {**body, password_key(body): password}
        if url.startswith("/"):
            url = self.environment.base_url + url
        data = None
        if body is not None:
            data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        return recipe.get("method") or "POST", url, headers, data

    def refresh(self, identity: Identity) -> Identity:
        """Fetch a new token for ``identity`` with its login recipe. Raises :class:`LoginFailed`."""
        recipe = identity.login or {}
        method, url, headers, data = self.login_request(identity)
        try:
            answer = self.client.send(method=method, url=url, headers=headers, params=None,
                                      data=data, timeout_ms=self.environment.timeout_ms)
        except (NotSent, ConnectionFailed, AnswerTimeout) as exc:
            raise LoginFailed(f"login of identity {identity.name}: no answer ({type(exc).__name__})") from None
        if not 200 <= answer.status < 300:
            raise LoginFailed(f"login of identity {identity.name} was answered {answer.status}")
        try:
            token = json_path_get(json.loads(answer.text), recipe["tokenPath"])
        except (ValueError, RecursionError):
            token = MISSING
        if isinstance(token, bool) or not isinstance(token, (str, int)) or token == "":
            raise LoginFailed(f"login of identity {identity.name}: the answer has no token at "
                              f"{recipe['tokenPath']!r}")
        identity.token = str(token)
        identity.token_is_credential = False
        logger.info("Identity %s logged in", identity.name)
        return identity

