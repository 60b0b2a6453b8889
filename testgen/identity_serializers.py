"""The ``identities`` and ``login`` keys of the global testing environment (DECISIONS §8).

``login``: how a token is fetched — ``{method, url, headers?, body?, tokenPath, header?, scheme?}``.
``url`` is absolute (``http(s)://…``, vetted like any test target when used) or a path starting
with ``/``, taken relative to ``baseUrl``. ``tokenPath`` is a dotted path into the JSON answer
(``data.token``, ``tokens[0]``). ``header`` (default ``Authorization``) and ``scheme`` (default
``Bearer``; ``""`` for none) say how the token is sent.

``identities``: further test users — ``[{name, authToken?, userId?, objectIds?, login?}]``; the
top-level ``objectIds`` gives the primary identity's own objects in the same shape.
"""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from rest_framework import serializers

MAX_IDENTITIES = 20
MAX_OBJECT_IDS = 50
MAX_LOGIN_BODY_CHARS = 16_384
LOGIN_METHODS = ["POST", "PUT", "GET", "PATCH"]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
_SCHEME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{0,64}$")
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


def _no_line_breaks(value: str) -> str:
    if "\r" in value or "\n" in value:
        raise serializers.ValidationError("No line breaks allowed.")
    return value


class LoginSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=LOGIN_METHODS, default="POST")
    url = _Text(max_length=2048)
    headers = serializers.DictField(child=_Text(max_length=8192, allow_blank=True), required=False)
    body = serializers.JSONField(required=False)
    tokenPath = _Text(max_length=255)
    header = _Text(max_length=256, required=False)
    scheme = _Text(max_length=64, required=False, allow_blank=True)

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("method"), str):
            data = {**data, "method": data["method"].upper()}
        return super().to_internal_value(data)

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
