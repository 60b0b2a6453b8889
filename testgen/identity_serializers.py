"""The ``identities`` and ``login`` keys of the global testing environment (DECISIONS §8).

``login``: how a credential is fetched — ``{method, url, headers?, body?, form?, tokenPath?, header?,
scheme?, cookie?}``. ``url`` is absolute (``http(s)://…``, vetted like any test target when used) or a
path starting with ``/``, taken relative to ``baseUrl``. ``form: true`` sends the body form-encoded
(OAuth2 password grant, HTML login forms). ``tokenPath`` is a dotted path into the JSON answer
(``data.token``, ``tokens[0]``); ``header`` (default ``Authorization``) and ``scheme`` (default
``Bearer``; ``""`` for none) say how the token is sent. ``cookie: {name}``: the session cookie the
answer sets (``Set-Cookie``), sent back as a cookie. At least one of ``tokenPath`` and ``cookie``.

``identities``: further test users — ``[{name, authToken?, cookie?, userId?, objectIds?, login?}]``;
``cookie: {name, value?}`` is a credential cookie (its value configured, or set by the login). The
top-level ``objectIds`` and ``cookie`` give the primary identity's in the same shapes.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.enums import HttpMethod

MAX_IDENTITIES = 20
MAX_OBJECT_IDS = 50
MAX_LOGIN_BODY_CHARS = 16_384
LOGIN_METHODS = ["POST", "PUT", "GET", "PATCH"]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
_SCHEME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{0,64}$")
_COOKIE_VALUE = re.compile(r"^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]{1,8192}$")  # RFC 6265 cookie-octets
MAX_SCOPE_PATTERNS = 200
# The primary identity is SPEC's keys; its name cannot be taken by another.
RESERVED_IDENTITY_NAMES = {"primary"}


class _Text(serializers.CharField):
    """A string and only a string (zod's ``z.string()``)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class _Bool(serializers.BooleanField):
    """``true`` or ``false`` and nothing else (zod's ``z.boolean()``; DRF's field takes "yes" or 1 too)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


def _no_line_breaks(value: str) -> str:
    if "\r" in value or "\n" in value:
        raise serializers.ValidationError("No line breaks allowed.")
    return value


class CookieSerializer(serializers.Serializer):
    """A credential cookie: its ``name`` and, for an identity without a login, its ``value``."""

    name = _Text(max_length=256)
    value = _Text(max_length=8192, required=False)

    def validate_name(self, value: str) -> str:
        if not _HEADER_NAME.match(value):
            raise serializers.ValidationError(f"Invalid cookie name: {value!r}.")
        return value

    def validate_value(self, value: str) -> str:
        if not _COOKIE_VALUE.match(value):
            raise serializers.ValidationError("A cookie value: no spaces, quotes, commas, semicolons or backslashes.")
        return value


class LoginCookieSerializer(CookieSerializer):
    """The cookie a login answer sets (its value comes from the answer)."""

    value = None


class LoginSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=LOGIN_METHODS, default="POST")
    url = _Text(max_length=2048)
    headers = serializers.DictField(child=_Text(max_length=8192, allow_blank=True), required=False)
    body = serializers.JSONField(required=False)
    form = _Bool(required=False)
    tokenPath = _Text(max_length=255, required=False)
    header = _Text(max_length=256, required=False)
    scheme = _Text(max_length=64, required=False, allow_blank=True)
    cookie = LoginCookieSerializer(required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("method"), str):
            data = {**data, "method": data["method"].upper()}
        return super().to_internal_value(data)

    def validate(self, attrs):
        if not attrs.get("tokenPath") and not attrs.get("cookie"):
            raise serializers.ValidationError({"tokenPath": serializers.ErrorDetail(
                "A login delivers a token (tokenPath) or a cookie (cookie.name), or both.", code="required")})
        if attrs.get("form") and not isinstance(attrs.get("body"), dict):
            raise serializers.ValidationError({"body": serializers.ErrorDetail(
                "A form login needs a JSON object body (its fields are sent form-encoded).", code="invalid")})
        return attrs

    def validate_url(self, value: str) -> str:
        _no_line_breaks(value)
        if value.startswith("/") and not value.startswith("//"):
            return value
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises on a malformed port
        except ValueError as exc:
            raise serializers.ValidationError("Enter a valid URL.") from exc
        if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in value):
            raise serializers.ValidationError("An http(s) URL, or a path starting with / (relative to baseUrl).")
        return value

    def validate_headers(self, value: dict) -> dict:
        if len(value) > 50:
            raise serializers.ValidationError("At most 50 headers.")
        for name, header_value in value.items():
            if not _HEADER_NAME.match(name):
                raise serializers.ValidationError(f"Invalid header name: {name!r}.")
            _no_line_breaks(header_value)
        return value

    def validate_body(self, value):
        if not isinstance(value, (dict, list, str)):
            raise serializers.ValidationError("A JSON object, array or string.")
        if len(str(value)) > MAX_LOGIN_BODY_CHARS:
            raise serializers.ValidationError(f"At most {MAX_LOGIN_BODY_CHARS} characters.")
        return value

    def validate_tokenPath(self, value: str) -> str:  # noqa: N802 - wire name
        if not value.strip() or any(c.isspace() for c in value):
            raise serializers.ValidationError("A dotted path into the JSON answer, e.g. data.token.")
        return value

    def validate_header(self, value: str) -> str:
        if not _HEADER_NAME.match(value):
            raise serializers.ValidationError(f"Invalid header name: {value!r}.")
        return value

    def validate_scheme(self, value: str) -> str:
        if not _SCHEME.match(value):
            raise serializers.ValidationError("A single word such as Bearer, or empty.")
        return value


class ObjectIdsField(serializers.DictField):
    """An ``objectIds`` object (an identity's, or the primary's at the top level): resource name -> id."""

    def __init__(self, **kwargs):
        super().__init__(child=_Text(max_length=255), **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if len(value) > MAX_OBJECT_IDS:
            raise serializers.ValidationError(f"At most {MAX_OBJECT_IDS} object ids.")
        for name in value:
            if not _NAME.match(name):
                raise serializers.ValidationError(f"Invalid resource name: {name!r}.")
        return value


class IdentitySerializer(serializers.Serializer):
    name = _Text(max_length=64)
    authToken = _Text(max_length=8192, required=False, allow_blank=True)
    cookie = CookieSerializer(required=False)
    userId = _Text(max_length=255, required=False)
    objectIds = ObjectIdsField(required=False)
    login = LoginSerializer(required=False)

    def validate_name(self, value: str) -> str:
        if not _NAME.match(value) or value.lower() in RESERVED_IDENTITY_NAMES:
            raise serializers.ValidationError(
                "A letter or _, then letters, digits, - or _ (at most 64); 'primary' is reserved.")
        return value

    def validate(self, attrs):
        if attrs.get("authToken") == "":
            attrs.pop("authToken")
        return attrs


@extend_schema_field({"type": "array", "minItems": 1,
                      "items": {"type": "string", "pattern": "^(" + "|".join(HttpMethod.values) + ")$"}})
class _Methods(serializers.ListField):
    """HTTP methods (documented as a pattern: an enum here would give the shared method enum a second name)."""

    def __init__(self, **kwargs):
        super().__init__(child=serializers.ChoiceField(choices=list(HttpMethod.values)), allow_empty=False,
                         max_length=len(HttpMethod.values), **kwargs)


class ScopePatternSerializer(serializers.Serializer):
    """An ``exclude`` / ``allowDestructive`` item: an endpoint path pattern and, optionally, methods."""

    path = _Text(max_length=2048)
    methods = _Methods(required=False)

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("methods"), list):
            data = {**data, "methods": [m.upper() if isinstance(m, str) else m for m in data["methods"]]}
        return super().to_internal_value(data)

    def validate_path(self, value: str) -> str:
        _no_line_breaks(value)
        if not value.startswith("/") or any(c.isspace() for c in value) or "?" in value or "#" in value:
            raise serializers.ValidationError("A path pattern starting with / (segments may be {name}, * or a last **).")
        segments = [s for s in value.split("/") if s]
        if "**" in segments[:-1]:
            raise serializers.ValidationError("** may only be the last segment.")
        return value


class ScopePatternsField(serializers.ListField):
    """``exclude`` / ``allowDestructive``: at most ``MAX_SCOPE_PATTERNS`` items."""

    def __init__(self, **kwargs):
        super().__init__(child=ScopePatternSerializer(), max_length=MAX_SCOPE_PATTERNS, **kwargs)


class IdentitiesField(serializers.ListField):
    """The ``identities`` list: at most ``MAX_IDENTITIES``, names unique."""

    def __init__(self, **kwargs):
        super().__init__(child=IdentitySerializer(), max_length=MAX_IDENTITIES, **kwargs)

    def to_internal_value(self, data):
        values = super().to_internal_value(data)
        names = [v["name"].lower() for v in values]
        if len(set(names)) != len(names):
            raise serializers.ValidationError("Identity names must be unique.")
        return values
