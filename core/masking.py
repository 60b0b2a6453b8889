"""Secrets masked for ``read`` keys (DECISIONS §2); ``admin`` keys see the answers in clear.

One mask, the product's: ``"[REDACTED]"`` (stored traces use it too). What counts as a credential
is decided by ingestion's rules (``inventory.ingest.credentials``: header names, field and
parameter names, credential-looking substrings of free text), so the API masks what the
inventory redacts.

* :func:`secrets_masked` — a JSON value (the global testing environment, identities, login
  recipes…) with credential-named fields, credential headers, login bodies, URL credentials and
  credential-looking text masked;
* :func:`url_masked` — a URL with its userinfo, credential query/fragment parameters and opaque
  token-like path segments (``/services/T0/B0/<token>`` of chat webhooks) masked; :func:`query_masked`
  — a query string's credential parameters (the access log's request lines);
* :func:`evidence_masked` — what a test run recorded from the target's answers: masked whole;
* :func:`field_masked` — the value of one field of such a JSON value, masked as :func:`secrets_masked`
  masks it there: what the console's pages call for each field they show (``console.masking``), so
  a page and the API answer mask with one rule (a ``headers`` field by the header rule, a
  credential-named field whole, a URL as a URL);
* :class:`MaskedForReadKeys` — a serializer mixin applying them unless the request's key is admin.

The functions build new values and never change their input.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import re

from inventory.ingest.credentials import (
    REDACTED,
    is_credential_header,
    is_credential_name,
    is_credential_param,
    scrub_text,
)
from inventory.patterns.segments import segment_is_value

from .scopes import sees_secrets

MASK = REDACTED
# Named like credentials but holding none: where a login recipe finds the token in the answer.
_NOT_SECRET_NAMES = frozenset({"tokenpath"})
# A path segment at least this long that ingestion would call a value (an id, a token) is masked.
_PATH_TOKEN_LENGTH = 16
# A shorter path segment is masked when it looks like a secret: at least this long, letters and digits
# only, alternating between them at least _SECRET_SWITCHES times (``s3cr3tPassw0rd1``, ``a1b2c3d4e5``).
# Words, numeric ids and ``v2``/``report2024q1``-style names stay.
_SECRET_SEGMENT_LENGTH = 10
_SECRET_SWITCHES = 4
_LETTER_DIGIT_SWITCH = re.compile(r"(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
# A URL of any scheme (postgres://, amqp://, redis://…): its userinfo is masked.
_URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://")
_EMPTY = (None, "", [], {})


def _is_secret_name(name: str, rule=is_credential_name) -> bool:
    """``rule(name)`` (ingestion's credential rule), except for ``_NOT_SECRET_NAMES``."""
    return rule(name) and name.lower().replace("-", "").replace("_", "") not in _NOT_SECRET_NAMES


def query_masked(text: str) -> str:
    """A query string with the values of credential parameters masked (``url_masked``'s rule for the
    query): ``a=1&api_key=k`` → ``a=1&api_key=[REDACTED]``. For log lines (``core/accesslog.py``)."""
    return _params_masked(text)


def _params_masked(text: str) -> str:
    """``a=1&token=x;hmac=y`` → ``a=1&token=[REDACTED];hmac=[REDACTED]``: values of the parameters
    ingestion redacts (``credentials.is_credential_param``), ``&`` and ``;`` separated."""
    pieces = re.split(r"([&;])", text)
    for index in range(0, len(pieces), 2):
        name, sep, value = pieces[index].partition("=")
        plain = unquote_plus(name)
        if sep and value and _is_secret_name(plain, is_credential_param):
            pieces[index] = f"{name}={MASK}"
    return "".join(pieces)


def _secret_segment(segment: str) -> bool:
    """A path segment masked as a token: long and value-like (see ``_PATH_TOKEN_LENGTH``), or
    shorter but mixing letters and digits like a password (see ``_SECRET_SEGMENT_LENGTH``)."""
    if len(segment) < _SECRET_SEGMENT_LENGTH:
        return False
    plain = unquote_plus(segment)
    if len(segment) >= _PATH_TOKEN_LENGTH and segment_is_value(plain):
        return True
    return plain.isascii() and plain.isalnum() and len(_LETTER_DIGIT_SWITCH.findall(plain)) >= _SECRET_SWITCHES


def _path_masked(path: str) -> str:
    return "/".join(MASK if _secret_segment(segment) else segment for segment in path.split("/"))


def url_masked(url: str) -> str:
    """The URL with its credentials masked: ``https://user:pass@host/p?token=t`` →
    ``https://[REDACTED]@host/p?token=[REDACTED]``. Anything else is kept as written; a value
    that does not parse as a URL is masked whole (fail closed)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    masked = (parts.scheme, netloc, _path_masked(parts.path), _params_masked(parts.query),
              _params_masked(parts.fragment))
    if masked == tuple(parts):
        return url
    return urlunsplit(masked)


def _looks_like_url(text: str) -> bool:
    return _URL_START.match(text) is not None


def _text_masked(text: str) -> str:
    if _looks_like_url(text):
        text = url_masked(text)
    return scrub_text(text)[0]


def _header_masked(name: object, value: Any) -> Any:
    return MASK if is_credential_header(str(name)) and value not in _EMPTY else secrets_masked(value)


def _headers_masked(headers: Any) -> Any:
    """Header maps (``{name: value}``) and lists (``[{name, value}]``): credential headers masked."""
    if isinstance(headers, dict):
        return {name: _header_masked(name, value) for name, value in headers.items()}
    if isinstance(headers, list):
        return [{**item, "value": _header_masked(item.get("name", ""), item["value"])}
                if isinstance(item, dict) and "value" in item else secrets_masked(item) for item in headers]
    return secrets_masked(headers)


def secrets_masked(value: Any) -> Any:
    """A copy of a JSON value with its secrets masked (see the module docstring).

    Masked: the value of any field named like a credential (``authToken``, ``password``,
    ``apiKey``… in objects at any depth, e.g. each identity of ``identities``), credential headers
    in a ``headers`` field, the ``body`` of a ``login`` recipe, credentials in URLs and
    credential-looking substrings of strings (``Bearer …``, JWTs, ``password=…``, known key
    formats). Empty values stay empty, so a reader still sees which keys are unset.
    """
    if isinstance(value, dict):
        out = {}
        for name, item in value.items():
            if _is_secret_name(str(name)) and item not in _EMPTY:
                out[name] = MASK
            elif name == "headers":
                out[name] = _headers_masked(item)
            elif name == "login" and isinstance(item, dict):
                out[name] = {k: MASK if k == "body" and v not in _EMPTY else v
                             for k, v in secrets_masked(item).items()}
            else:
                out[name] = secrets_masked(item)
        return out
    if isinstance(value, list):
        return [secrets_masked(item) for item in value]
    if isinstance(value, str):
        return _text_masked(value)
    return value


def field_masked(name: str, value: Any) -> Any:
    """``value`` masked as the field ``name`` of an object is masked by :func:`secrets_masked`
    (``field_masked("headers", {"X-Internal-Key": "k"})`` masks by the header rule)."""
    return secrets_masked({name: value})[name]


def evidence_masked(text: str) -> str:
    """What a test recorded from the target's answers and the values it sent: excerpts of bodies
    and headers, resolved environment values, error texts quoting URLs. Masked whole for ``read``
    keys ("" stays "", so a reader still sees that there was nothing to explain)."""
    return MASK if text else text


class MaskedForReadKeys:
    """Serializer mixin: the representation goes through :meth:`masked` unless the context's
    ``request`` came with an admin key. No request in the context means masked (fail closed), so
    views pass ``context={"request": request}``."""

    def to_representation(self, instance):
        data = super().to_representation(instance)
        request = self.context.get("request")
        return data if request is not None and sees_secrets(request) else self.masked(data)

    def masked(self, data: dict) -> dict:
        return secrets_masked(data)
