"""The regexes of uploaded OpenAPI specs, evaluated on the bounded engines of ``core.userregex``.

jsonschema and openapi-schema-validator run a schema's ``pattern`` and ``patternProperties``
(also inside ``additionalProperties`` and ``unevaluatedProperties``) with Python's backtracking
``re``: one ``^(a+)+$`` in an uploaded spec and a long response value would stall the analysis
worker, or the upload itself (openapi-spec-validator checks ``default`` values against their
schema). Here those keywords are replaced, in every validator class the service builds:

* ``pattern``: a value the pattern does not match is a difference; an undecided search (timed
  out, suspended) is not.
* ``patternProperties``: a key's value is checked against the sub-schema of every pattern that
  surely matches the key.
* ``additionalProperties``: a key is additional when no ``properties`` entry names it and no
  pattern surely leaves it out (undecided counts as matched, so never a false difference).
* ``unevaluatedProperties``: jsonschema's own evaluation, except in documents that use
  ``patternProperties`` at all, where the keyword is skipped (counted: ``count_skip``).
* ``format: regex`` (is the value a regex?): compiled with the bounded engines, on capped input.

Upload checks every schema ``pattern`` and ``patternProperties`` key with :func:`pattern_problems`
(neither engine compiles it: a 400 naming it).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterator

from jsonschema import FormatChecker
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend

from core.safejson import json_objects
from core.userregex import count_skip, user_regex_compiles, user_regex_problem, user_regex_search

# Keys whose values are data (examples, defaults, enumerations) or vendor extensions, not schemas.
_DATA_KEYS = frozenset({"example", "examples", "default", "enum", "const"})
# Keys whose values map names (property names, component names, status codes...) to objects:
# under them a key is a name, never a keyword.
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
                        "schemas", "responses", "parameters", "requestBodies", "headers", "securitySchemes",
                        "links", "callbacks", "pathItems", "paths", "content", "encoding", "webhooks",
                        "variables", "mapping"})


# --- keywords --------------------------------------------------------------------------------

def _pattern(validator, pattern: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and isinstance(pattern, str):
        if user_regex_search(pattern, instance) is False:
            yield ValidationError("does not match the documented pattern")


def _pattern_properties(validator, patterns: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if user_regex_search(pattern, key) is True:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def additional_keys(instance: dict, schema: dict) -> list[str]:
    """Keys of ``instance`` that ``schema``'s ``properties`` do not name and no ``patternProperties``
    pattern may match (a search left undecided counts as a match: never a false difference)."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    patterns = [p for p in (schema.get("patternProperties") or {}) if isinstance(p, str)] \
        if isinstance(schema.get("patternProperties"), dict) else []
    return [
        key for key in instance
        if key not in properties and not any(user_regex_search(p, key) is not False for p in patterns)
    ]


def _additional_properties(validator, extra: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    keys = additional_keys(instance, schema)
    if not keys:
        return
    if validator.is_type(extra, "object"):
        for key in keys:
            yield from validator.descend(instance[key], extra, path=key)
    elif extra is False:
        yield ValidationError("Additional properties are not allowed")


def _unevaluated_properties_skipped(validator, value: Any, instance: Any, schema: dict) -> Iterator[ValidationError]:
    count_skip()
    yield from ()


def _regex_format(instance: object) -> bool:
    return not isinstance(instance, str) or user_regex_compiles(instance)


# --- validator classes -----------------------------------------------------------------------

@lru_cache(maxsize=None)
def bounded_validator_class(base: type, *, skip_unevaluated: bool) -> type:
    """``base`` (a jsonschema / openapi-schema-validator class) with the regex keywords bounded.

    ``skip_unevaluated``: the document uses ``patternProperties``, whose keys jsonschema's
    ``unevaluatedProperties`` would match with ``re``: skip that keyword.
    """
    keywords = {"pattern": _pattern, "additionalProperties": _additional_properties}
    if "patternProperties" in base.VALIDATORS:
        keywords["patternProperties"] = _pattern_properties
    if skip_unevaluated and "unevaluatedProperties" in base.VALIDATORS:
        keywords["unevaluatedProperties"] = _unevaluated_properties_skipped
    return extend(base, validators=keywords)


def bounded_format_checker(*checkers: FormatChecker) -> FormatChecker:
    """JSON Schema's formats plus ``checkers``' (OpenAPI's ``int32``, ``byte``...), ``regex`` bounded."""
    combined = FormatChecker()
    for checker in checkers:
        combined.checkers.update(checker.checkers)
    combined.checkers["regex"] = (_regex_format, ())
    return combined


def uses_pattern_properties(document: Any) -> bool:
    """Whether any object of the document has a ``patternProperties`` object."""
    return any(isinstance(node.get("patternProperties"), dict) for node in json_objects(document))


def spec_validator_class(document: dict) -> type:
    """openapi-spec-validator's class for the document's version, checking ``default`` values
    with bounded validators. Raises openapi-spec-validator's ``ValidatorDetectError``."""
    from openapi_spec_validator.shortcuts import get_validator_cls

    return _bounded_spec_validator(get_validator_cls(document), uses_pattern_properties(document))


@lru_cache(maxsize=None)
def _bounded_spec_validator(cls: type, skip_unevaluated: bool) -> type:
    value_validator = cls.keyword_validators.get("default")
    if value_validator is None:
        return cls
    bounded_value = type(f"Bounded{value_validator.__name__}", (value_validator,), {
        "value_validator_cls": bounded_validator_class(value_validator.value_validator_cls,
                                                       skip_unevaluated=skip_unevaluated),
        "value_validator_format_checker": bounded_format_checker(value_validator.value_validator_format_checker),
    })
    return type(f"Bounded{cls.__name__}", (cls,), {"keyword_validators": {**cls.keyword_validators,
                                                                          "default": bounded_value}})


# --- upload check ----------------------------------------------------------------------------

def pattern_problems(document: Any, limit: int = 1) -> list[tuple[str, str, str]]:
    """Schema regexes of the document that neither bounded engine compiles, as (location, pattern,
    reason), at most ``limit``. Searched: string ``pattern`` keywords and ``patternProperties``
    keys; not searched: examples, defaults, enumerations and ``x-`` extensions (data, not schemas)."""
    found: list[tuple[str, str, str]] = []
    stack: list[tuple[Any, tuple, bool]] = [(document, (), False)]
    while stack and len(found) < limit:
        node, where, names = stack.pop()
        if isinstance(node, list):
            stack.extend((item, (*where, index), False) for index, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            key = str(key)
            if not names and (key in _DATA_KEYS or key.startswith("x-")):
                continue
            at = (*where, key)
            if not names and key == "pattern" and isinstance(value, str):
                _check(value, at, found)
            elif not names and key == "patternProperties" and isinstance(value, dict):
                for pattern in value:
                    _check(str(pattern), (*at, pattern), found)
            stack.append((value, at, not names and key in _NAME_MAPS))
    return found[:limit]


def _check(pattern: str, where: tuple, found: list) -> None:
    problem = user_regex_problem(pattern)
    if problem is not None:
        found.append(("/".join(str(t) for t in where), pattern, problem))
