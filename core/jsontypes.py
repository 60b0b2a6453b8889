"""The name of a JSON value's type, in one place.

``json_type`` answers with DataField.dataType's vocabulary (DECISIONS §4):
``string | integer | number | boolean | object | array | null``. Ingestion
(``inventory/ingest/fields.py``), test generation (``testgen/profile.py``) and
zod's ``received`` (``core/zod.py``, which folds ``integer`` into ``number``)
all ask it.
"""

from __future__ import annotations

__all__ = ["json_type"]

# Parsed JSON (orjson, json) only ever holds these exact types, so one dict lookup
# answers every value ingestion sees; subclasses fall through to isinstance.
_EXACT = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    dict: "object",
    list: "array",
    type(None): "null",
}


def json_type(value: object, default: str = "string") -> str:
    """The JSON type name of ``value``; ``default`` for a value JSON has no type for.

    Guarantees: ``bool`` is ``boolean``, never ``integer``; an ``int`` is
    ``integer`` and a ``float`` is ``number`` even when integral (``1.0``);
    ``None`` is ``null``; a ``dict`` is ``object`` and a ``list`` is ``array``
    whatever they hold; subclasses of these types name their base's type.
    Anything else (a tuple, a set, an arbitrary object) gets ``default``.
    """
    kind = _EXACT.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, int):  # bool cannot be subclassed: the lookup above named it
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return default
