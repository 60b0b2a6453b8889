"""JSON rendering with orjson (the DRF default renderer's output, several times faster).

Same JSON values as ``rest_framework.renderers.JSONRenderer`` with the project's settings
(compact, UTF-8, strict): timestamps in responses are already strings (serializers and
``inventory.api.render``); UUIDs, dates, enums and dataclasses are encoded natively; lazy
strings, Decimals and whatever else DRF's encoder knows go through its ``default``. When
orjson refuses a value (an integer beyond 64 bits) or an indented rendering is asked for,
DRF's renderer does the work.
"""
from __future__ import annotations

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_UTC_Z
_default = JSONEncoder().default


class Prerendered:
    """An answer already rendered by :class:`ORJSONRenderer` (``body``): sent as it is, not re-serialised.

    Cached answers (``inventory.counts.cached_answer``) travel through DRF's ``Response`` this way.
    """

    __slots__ = ("body",)

    def __init__(self, body: bytes):
        self.body = body


class ORJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        indent = self.get_indent(accepted_media_type, renderer_context or {}) is not None
        if isinstance(data, Prerendered):
            if not indent:
                return data.body
            data = orjson.loads(data.body)
        if indent:
            # DRF's encoder does not know ``orjson.Fragment`` (ready JSON inside an answer).
            data = orjson.loads(orjson.dumps(data, default=_default, option=_OPTIONS))
            return super().render(data, accepted_media_type, renderer_context)
        try:
            body = orjson.dumps(data, default=_default, option=_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError
            return super().render(data, accepted_media_type, renderer_context)
        # As DRF does: U+2028/U+2029 escaped, so the JSON is also valid JavaScript.
        if b"\xe2\x80\xa8" in body or b"\xe2\x80\xa9" in body:
            body = body.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return body
