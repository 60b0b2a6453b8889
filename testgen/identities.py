"""Test identities at run time: the primary (SPEC's keys) and the environment's ``identities``.

An :class:`IdentitySet` is made per run. :meth:`IdentitySet.login_all` fetches a token for every
identity with a ``login`` recipe before the first test (DECISIONS §8); the runner calls
:meth:`IdentitySet.refresh` when an identity's own request is answered 401, then retries it once.

What templates and tests use:

* credentials — a header (``Authorization: Bearer <token>``, or the recipe's ``header``/``scheme``), a
  cookie (``cookie: {name}`` on the identity or its login: the login answer's ``Set-Cookie`` of that
  name, or a configured ``value``), or both (DECISIONS §8); a login body is sent as JSON, or
  form-encoded with ``form: true`` (OAuth2 password grant, HTML login forms);
* placeholders — ``{{authToken}}`` (the primary's credential, ready for its header), ``{{authCookie}}``
  (the primary's cookie as ``name=value``; a configured ``authToken`` stands in for it when no cookie
  is configured, as before cookies were an identity's own key), ``{{identities.NAME.cookie}}``,
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
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

from requests.structures import CaseInsensitiveDict

from .client import AnswerTimeout, ConnectionFailed, NotSent, TestClient
from .ownership import password_key
from .placeholders import MISSING, Resolver, Unresolved, json_path_get
from .services.environment import RunEnvironment

logger = logging.getLogger(__name__)

PRIMARY = "primary"
DEFAULT_HEADER = "Authorization"
DEFAULT_SCHEME = "Bearer"


def set_cookie_value(headers: Mapping[str, str] | None, name: str) -> str | None:
    """The value of cookie ``name`` set by an answer's ``Set-Cookie`` (several headers arrive joined by
    ``, ``; a cookie value has no comma or semicolon), or None."""
    joined = (headers or {}).get("Set-Cookie") if headers is not None else None
    if not joined or not name:
        return None
    match = re.search(r"(?:^|,)\s*" + re.escape(name) + r"=([^;,]*)", joined)
    value = match.group(1).strip().strip('"') if match else None
    return value or None


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
    cookie_name: str | None = None  # the session cookie the identity is known by
    cookie_value: str | None = None  # configured, or set by its login's answer

    def credential(self) -> str | None:
        """The header value: ``<scheme> <token>`` for a fetched token; a configured one as written."""
        if not self.token:
            return None
        if self.token_is_credential or not self.scheme:
            return self.token
        return f"{self.scheme} {self.token}"

    def cookie(self) -> str | None:
        """The credential cookie as ``name=value``, or None."""
        return f"{self.cookie_name}={self.cookie_value}" if self.cookie_name and self.cookie_value else None

    @property
    def has_credential(self) -> bool:
        return bool(self.credential() or self.cookie())

    def placeholder_values(self) -> dict[str, str]:
        prefix = f"identities.{self.name}."
        values = {f"{prefix}objectIds.{k}": v for k, v in self.object_ids.items()}
        if self.cookie():
            values[f"{prefix}cookie"] = self.cookie()
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
              login: dict | None, cookie: dict | None = None) -> Identity:
    login = login or None
    cookie = cookie or {}
    return Identity(name=name, token=token or None, user_id=user_id, object_ids=dict(object_ids or {}),
                    login=login, header=(login or {}).get("header") or DEFAULT_HEADER,
                    scheme=(login or {}).get("scheme", DEFAULT_SCHEME), token_is_credential=bool(token),
                    cookie_name=((login or {}).get("cookie") or {}).get("name") or cookie.get("name"),
                    cookie_value=cookie.get("value") or None)


def login_credentials(recipe: dict, status: int, headers: Mapping[str, str] | None,
                      text: str) -> tuple[str | None, str | None, str | None]:
    """What a login answer delivered: ``(token, cookie value, problem)``. The proof of a login is its
    answer's credential, never its status (DECISIONS §8): a 200 saying ``{"status": "fail"}`` has no
    token. ``problem`` says what is missing (None when the recipe's credential is there)."""
    if not 200 <= status < 300:
        return None, None, f"answered {status}"
    token = cookie = None
    if recipe.get("tokenPath"):
        try:
            found = json_path_get(json.loads(text), recipe["tokenPath"])
        except (ValueError, RecursionError):
            found = MISSING
        if isinstance(found, bool) or not isinstance(found, (str, int)) or found == "":
            return None, None, f"the answer has no token at {recipe['tokenPath']!r}"
        token = str(found)
    name = (recipe.get("cookie") or {}).get("name")
    if name:
        cookie = set_cookie_value(headers, name)
        if cookie is None:
            return None, None, f"the answer sets no cookie {name!r}"
    return token, cookie, None


class IdentitySet:
    """The identities of one run (see the module docstring)."""

    def __init__(self, environment: RunEnvironment, client: TestClient, environ: Mapping[str, str] | None = None):
        self.environment = environment
        self.client = client
        self.environ = environ or {}
        values = environment.values
        self._by_name: dict[str, Identity] = {
            PRIMARY: _identity(PRIMARY, values.get("authToken"), values.get("testUserId"), None, environment.login,
                               environment.cookie)}
        for item in environment.identities:
            self._by_name[item["name"]] = _identity(item["name"], item.get("authToken"), item.get("userId"),
                                                    item.get("objectIds"), item.get("login"), item.get("cookie"))

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
                body = (identity.login or {}).get("body")
                if password_key(body):  # a credential change of its own writes its password back unchanged
                    out["ownPassword"] = body[password_key(body)]
                if identity.token:
                    out["authToken"] = identity.credential()
                if identity.cookie():
                    out["authCookie"] = identity.cookie()
                elif identity.token and identity.token_is_credential:
                    out["authCookie"] = identity.token  # authToken holding a Cookie header value (before cookies)
            else:
                out.update(identity.placeholder_values())
        return out

    def carries(self, identity: Identity, headers: CaseInsensitiveDict) -> bool:
        """Whether ``headers`` carry the identity's current credential (its header, or its cookie)."""
        if identity.token and headers.get(identity.header) in (identity.credential(), identity.token):
            return True
        return bool(identity.cookie() and identity.cookie() in cookie_pairs(headers.get("Cookie", "")))

    def owner_of(self, headers: CaseInsensitiveDict) -> Identity | None:
        """The identity with a login recipe whose current credential these headers carry."""
        for identity in self._by_name.values():
            if identity.login and self.carries(identity, headers):
                return identity
        return None

    def send_as(self, identity: Identity, headers: CaseInsensitiveDict) -> None:
        """Make ``headers`` carry ``identity``'s credential and no other identity's: every other
        identity's header credential and cookie is taken out first (a template writes the test
        identity's, ``{{authToken}}``/``{{authCookie}}``, and names another identity with ``identity``)."""
        for other in self._by_name.values():
            if other is identity:
                continue
            if other.token and headers.get(other.header) in (other.credential(), other.token):
                headers.pop(other.header)
            if other.cookie() or (other.token and other.token_is_credential):
                kept = [p for p in cookie_pairs(headers.get("Cookie", "")) if p not in (other.cookie(), other.token)]
                if "Cookie" in headers:
                    headers["Cookie"] = "; ".join(kept)
                    if not kept:
                        headers.pop("Cookie")
        if identity.credential():
            headers[identity.header] = identity.credential()
        if identity.cookie():
            pairs = [p for p in cookie_pairs(headers.get("Cookie", ""))
                     if p.partition("=")[0].strip() != identity.cookie_name]
            headers["Cookie"] = "; ".join([*pairs, identity.cookie()])

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
        if body is not None and recipe.get("form") and isinstance(body, dict):
            data = urlencode({k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        elif body is not None:
            data = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        return recipe.get("method") or "POST", url, headers, data

    def adopt(self, identity: Identity, token: str | None, cookie: str | None) -> None:
        """Take the credential a login of ``identity`` returned (``loginAs`` with ``adoptCredential``)."""
        if token is not None:
            identity.token = token
            identity.token_is_credential = False
        if cookie is not None:
            identity.cookie_value = cookie

    def refresh(self, identity: Identity) -> Identity:
        """Fetch a new credential for ``identity`` with its login recipe: the token at ``tokenPath``
        and/or the cookie its answer sets. Raises :class:`LoginFailed`."""
        recipe = identity.login or {}
        method, url, headers, data = self.login_request(identity)
        try:
            answer = self.client.send(method=method, url=url, headers=headers, params=None,
                                      data=data, timeout_ms=self.environment.timeout_ms)
        except (NotSent, ConnectionFailed, AnswerTimeout) as exc:
            raise LoginFailed(f"login of identity {identity.name}: no answer ({type(exc).__name__})") from None
        if not 200 <= answer.status < 300:
            raise LoginFailed(f"login of identity {identity.name} was answered {answer.status}")
        token, cookie, problem = login_credentials(recipe, answer.status, answer.headers, answer.text)
        if problem:
            raise LoginFailed(f"login of identity {identity.name}: {problem}")
        self.adopt(identity, token, cookie)
        logger.info("Identity %s logged in", identity.name)
        return identity


def cookie_pairs(header: str) -> list[str]:
    """The ``name=value`` pairs of a Cookie header."""
    return [p.strip() for p in (header or "").split(";") if p.strip()]

