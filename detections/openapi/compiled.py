"""Stored specs compiled for matching traffic, cached per process and looked up by host.

Paths are matched here: each spec's absolute ``servers`` URLs give its hosts and base paths; the
request path minus the base path is matched against the path templates, most literal segments
first. Host names, paths and template regexes come from ``inventory.patterns``. Schema validators
are ``openapi-schema-validator``'s (OAS 3.0 read-mode rules for 3.0 documents, JSON Schema 2020-12
dialects for 3.1+; ``$ref`` resolved inside the document), their regex keywords on bounded engines
(``detections.specregex``).
"""
from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from inventory.patterns.normalize import host_normalize, template_normalize
from inventory.patterns.regex import pattern_regex, pattern_shape
from inventory.patterns.segments import PARAM, segment_is_parameter

from ..models import OpenApiSpec
from ..specregex import bounded_format_checker, bounded_validator_class, uses_pattern_properties

SPEC_URN = "urn:apiscope:openapi-spec"
_PARAM = "\x00"  # stands for a {paramN} segment of an endpoint pattern: matches a template parameter only


@dataclass
class Route:
    template: str
    regex: re.Pattern
    literal_segments: int
    literal_chars: int
    path_item: dict
    pointer: list  # JSON pointer tokens of the path item


@dataclass
class CompiledSpec:
    """A spec ready for matching: hosts → base paths, path templates by specificity, validators."""

    id: int
    name: str
    version: str
    spec: dict
    base_paths: dict[str, list[str]]
    routes: list[Route]
    _validators: dict = field(default_factory=dict)
    _pattern_properties: bool | None = None  # uses patternProperties anywhere (specregex)

    def route_for(self, *, host: str, path: str) -> Route | None:
        """The most specific path template matching ``path`` on ``host`` (base path stripped)."""
        path = template_normalize(path)
        for base in self.base_paths.get(host_normalize(host), ()):
            if base and not (path == base or path.startswith(base + "/")):
                continue
            rest = path[len(base):] or "/"
            for route in self.routes:
                if route.regex.fullmatch(rest):
                    return route
        return None

    def operation(self, *, host: str, path: str, method: str) -> tuple[Route, dict, list] | None:
        """(route, operation object, its pointer tokens) documenting ``method path`` on ``host``, or None."""
        route = self.route_for(host=host, path=path)
        if route is None:
            return None
        operation, pointer = deref(self.spec, route.path_item, route.pointer)
        operation = operation.get(method.lower()) if isinstance(operation, dict) else None
        if not isinstance(operation, dict):
            return None
        return route, operation, [*pointer, method.lower()]

    def pattern_operation(self, *, host: str, pattern: str, method: str) -> tuple[Route, dict, list] | None:
        """The operation documenting an endpoint pattern (``/users/{param1}``): its parameter segments
        must be template parameters in the spec; its literal segments may be either."""
        probe = "/".join(_PARAM if segment_is_parameter(seg) else seg for seg in pattern.split("/"))
        return self.operation(host=host, path=probe, method=method)

    def documents_pattern(self, *, host: str, pattern: str, method: str) -> bool:
        return self.pattern_operation(host=host, pattern=pattern, method=method) is not None

    def validator(self, pointer: list):
        """The (memoised) validator of the schema at ``pointer``."""
        key = tuple(pointer)
        if key not in self._validators:
            if self._pattern_properties is None:
                self._pattern_properties = uses_pattern_properties(self.spec)
            self._validators[key] = _make_validator(self.spec, self.version, pointer,
                                                    skip_unevaluated=self._pattern_properties)
        return self._validators[key]


def _template_regex(template: str) -> tuple[re.Pattern, int, int]:
    """A path template's regex (the endpoints' one spelling), literal segments and literal characters."""
    template = template_normalize(template)
    literal_chars = sum(len(piece) for piece in PARAM.split(template)) - template.count("/")
    return re.compile(pattern_regex(template)), pattern_shape(template)[1], literal_chars


def spec_server_urls(spec: dict) -> list[str]:
    """The document's server URLs with variables substituted (default, then each enum value)."""
    urls: list[str] = []
    for server in spec.get("servers") or []:
        if not isinstance(server, dict) or not isinstance(server.get("url"), str):
            continue
        candidates = [server["url"]]
        for name, variable in (server.get("variables") or {}).items():
            if not isinstance(variable, dict):
                continue
            values = [str(variable.get("default", ""))] + [str(v) for v in variable.get("enum") or []]
            values = list(dict.fromkeys(values))[:10]
            candidates = [c.replace("{" + name + "}", v) for c in candidates for v in values][:50]
        urls.extend(candidates)
    return list(dict.fromkeys(urls))


def spec_hosts_and_base_paths(spec: dict) -> dict[str, list[str]]:
    """Host name → base paths (longest first) from the absolute server URLs. Relative server URLs
    add their base path to every host."""
    by_host: dict[str, set[str]] = {}
    relative: set[str] = set()
    for url in spec_server_urls(spec):
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        base = template_normalize(parts.path) if parts.path not in ("", "/") else ""
        if parts.hostname:
            by_host.setdefault(parts.hostname.lower(), set()).add(base)
        else:
            relative.add(base)
    return {host: sorted(bases | relative, key=len, reverse=True) for host, bases in by_host.items()}


def _pointer_escape(token: Any) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def deref(spec: dict, obj: Any, pointer: list, hops: int = 0) -> tuple[Any, list]:
    """Follow local ``$ref``s; returns the object and its pointer tokens."""
    while isinstance(obj, dict) and isinstance(obj.get("$ref"), str) and hops < 32:
        ref = obj["$ref"]
        if not ref.startswith("#/"):
            return None, pointer
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/")]
        target: Any = spec
        for token in tokens:
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                return None, pointer
        obj, pointer, hops = target, tokens, hops + 1
    return obj, pointer


def _make_validator(spec: dict, version: str, pointer: list, *, skip_unevaluated: bool):
    """A validator of the schema at ``pointer``, its regex keywords on bounded engines (specregex)."""
    from openapi_schema_validator import (
        OAS30ReadValidator,
        OAS31Validator,
        OAS32Validator,
        oas30_format_checker,
        oas31_format_checker,
        oas32_format_checker,
    )
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4, DRAFT202012

    if version.startswith("3.0"):
        cls, checker, dialect = OAS30ReadValidator, oas30_format_checker, DRAFT4
    elif version.startswith("3.1"):
        cls, checker, dialect = OAS31Validator, oas31_format_checker, DRAFT202012
    else:
        cls, checker, dialect = OAS32Validator, oas32_format_checker, DRAFT202012
    # OpenAPI's own formats (int32, byte, ...) plus JSON Schema's (email, date-time, uuid, ipv4, ...).
    combined = bounded_format_checker(checker)
    cls = bounded_validator_class(cls, skip_unevaluated=skip_unevaluated)
    registry = Registry().with_resource(SPEC_URN, Resource.from_contents(spec, default_specification=dialect))
    ref = SPEC_URN + "#" + quote("/" + "/".join(_pointer_escape(t) for t in pointer), safe="/~")
    return cls({"$ref": ref}, registry=registry, format_checker=combined)


def spec_compile(row: OpenApiSpec) -> CompiledSpec:
    """Compile a stored spec (``row.spec`` loaded)."""
    spec = row.spec
    routes = []
    for template, item in (spec.get("paths") or {}).items():
        if not isinstance(template, str) or not isinstance(item, dict):
            continue
        regex, literal_segments, literal_chars = _template_regex(template)
        routes.append(Route(template, regex, literal_segments, literal_chars, item, ["paths", template]))
    routes.sort(key=lambda r: (-r.literal_segments, -r.literal_chars, r.template))
    return CompiledSpec(row.pk, row.name, row.openapi_version, spec, spec_hosts_and_base_paths(spec), routes)


# Compiled specs of this process, keyed by id and checked against updated_at on every use.
_CACHE: OrderedDict[int, tuple[Any, CompiledSpec]] = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = threading.Lock()


def specs_for_hosts(hosts) -> dict[str, list[CompiledSpec]]:
    """Uploaded compiled specs naming each host (keys: normalised host names; hosts without a spec are
    absent), by name. One small query (no spec bodies) plus one per spec changed since this process
    last compiled it."""
    keys = {host_normalize(h) for h in hosts}
    if not keys:
        return {}
    # Generated specs describe the traffic itself: never compared with it, never linked (DECISIONS §10).
    rows = [r for r in OpenApiSpec.objects.filter(is_auto_generated=False).only("id", "name", "hosts", "updated_at")
            if keys.intersection(r.hosts or [])]
    by_host: dict[str, list[CompiledSpec]] = {}
    for row in rows:
        compiled = _compiled(row)
        if compiled is None:
            continue
        for key in keys.intersection(row.hosts or []):
            by_host.setdefault(key, []).append(compiled)
    return by_host


def _compiled(row: OpenApiSpec) -> CompiledSpec | None:
    """The cached compilation of ``row`` if it is current, else a fresh one (None: the row is gone)."""
    with _CACHE_LOCK:
        cached = _CACHE.get(row.pk)
    if cached is None or cached[0] != row.updated_at:
        full = OpenApiSpec.objects.filter(pk=row.pk).first()
        if full is None:
            return None
        cached = (full.updated_at, spec_compile(full))
        with _CACHE_LOCK:
            _CACHE[row.pk] = cached
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    with _CACHE_LOCK:
        if row.pk in _CACHE:
            _CACHE.move_to_end(row.pk)
    return cached[1]


def specs_for_host(host: str) -> list[CompiledSpec]:
    """The compiled specs whose servers name ``host``, by name."""
    return specs_for_hosts([host]).get(host_normalize(host), [])
