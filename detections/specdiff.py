"""The "Open API Spec Diff" rule: traffic compared with the OpenAPI specs uploaded for its host.

Three kinds of difference are reported, one alert sentence per difference (DECISIONS §6):

* an endpoint no spec of the host documents;
* a response status its operation does not document (neither the code, its ``2XX`` range nor ``default``);
* a JSON response body that does not validate against its documented schema
  (``openapi-schema-validator``: OAS 3.0 read-mode rules for 3.0 documents, JSON Schema 2020-12
  dialects for 3.1+; ``$ref`` resolved inside the document).

Paths are matched by this module: each spec's absolute ``servers`` URLs give its hosts and base
paths; the request path minus the base path is matched against the path templates, most literal
segments first. Host names, paths and template regexes come from ``inventory.patterns``. Descriptions name the endpoint's path pattern, never concrete values, so one
difference raises one alert however many traces show it.
"""
from __future__ import annotations

import json
import logging
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from core.enums import AlertType
from core.logsafe import withheld
from core.userregex import scope
from inventory.patterns.normalize import host_normalize, template_normalize
from inventory.patterns.regex import pattern_regex, pattern_shape
from inventory.patterns.segments import PARAM, segment_is_parameter

from .models import OpenApiSpec
from .services import AlertCandidate
from .specregex import additional_keys, bounded_format_checker, bounded_validator_class, uses_pattern_properties

logger = logging.getLogger(__name__)

SPEC_URN = "urn:apiscope:openapi-spec"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace", "query")
MAX_BODY_FINDINGS = 3  # schema differences reported per trace
_PARAM = "\x00"  # stands for a {paramN} segment of an endpoint pattern: matches a template parameter only
_REDACTED = "[REDACTED]"


# --- compiling a spec ----------------------------------------------------------------------

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
        route = self.route_for(host=host, path=path)
        if route is None:
            return None
        operation, pointer = _deref(self.spec, route.path_item, route.pointer)
        operation = operation.get(method.lower()) if isinstance(operation, dict) else None
        if not isinstance(operation, dict):
            return None
        return route, operation, [*pointer, method.lower()]

    def documents_pattern(self, *, host: str, pattern: str, method: str) -> bool:
        """Whether an endpoint pattern (``/users/{param1}``) is documented: its parameter segments
        must be template parameters in the spec; its literal segments may be either."""
        probe = "/".join(_PARAM if segment_is_parameter(seg) else seg for seg in pattern.split("/"))
        return self.operation(host=host, path=probe, method=method) is not None

    def validator(self, pointer: list):
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
    from urllib.parse import urlsplit

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


def _deref(spec: dict, obj: Any, pointer: list, hops: int = 0) -> tuple[Any, list]:
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
    """Compiled specs naming each host (keys: normalised host names), by name. One small query (no
    spec bodies) plus one per spec changed since this process last compiled it."""
    keys = {host_normalize(h) for h in hosts}
    rows = [r for r in OpenApiSpec.objects.only("id", "name", "hosts", "updated_at")
            if keys.intersection(r.hosts or [])]
    by_host: dict[str, list[CompiledSpec]] = {}
    for row in rows:
        with _CACHE_LOCK:
            cached = _CACHE.get(row.pk)
        if cached is None or cached[0] != row.updated_at:
            full = OpenApiSpec.objects.filter(pk=row.pk).first()
            if full is None:
                continue
            cached = (full.updated_at, spec_compile(full))
            with _CACHE_LOCK:
                _CACHE[row.pk] = cached
                while len(_CACHE) > _CACHE_SIZE:
                    _CACHE.popitem(last=False)
        with _CACHE_LOCK:
            if row.pk in _CACHE:
                _CACHE.move_to_end(row.pk)
        for key in keys.intersection(row.hosts or []):
            by_host.setdefault(key, []).append(cached[1])
    return by_host


def specs_for_host(host: str) -> list[CompiledSpec]:
    """The compiled specs whose servers name ``host``, by name."""
    return specs_for_hosts([host]).get(host_normalize(host), [])


# --- endpoints ↔ specs ---------------------------------------------------------------------

def endpoint_spec_name(*, host: str, pattern: str, method: str, specs: list[CompiledSpec]) -> str | None:
    """The name of the first spec (by name) documenting the endpoint, or None."""
    for spec in specs:
        if spec.documents_pattern(host=host, pattern=pattern, method=method):
            return spec.name
    return None


def endpoints_link_specs(*, hosts) -> int:
    """Recompute ``openapiSpecName`` of every endpoint of ``hosts``; returns how many changed."""
    from inventory.counts import inventory_changed
    from inventory.models import Endpoint

    changes: dict = {}
    for host in set(hosts):
        specs = specs_for_host(host)
        for endpoint_id, path, method, current in Endpoint.objects.filter(host__name=host).values_list(
            "uuid", "path", "method", "openapi_spec_name"
        ):
            name = endpoint_spec_name(host=host, pattern=path, method=method, specs=specs)
            if name != current:
                changes.setdefault(name, []).append(endpoint_id)
    for name, endpoint_ids in changes.items():
        Endpoint.objects.filter(uuid__in=endpoint_ids).update(openapi_spec_name=name)
    if changes:
        inventory_changed()  # searchQuery matches openapiSpecName
    return sum(len(ids) for ids in changes.values())


# --- the rule ------------------------------------------------------------------------------

def _headers_get(headers, name: str) -> str | None:
    """A header of ``[{name, value}]``, ``[(name, value)]`` or a dict, case-insensitively."""
    if isinstance(headers, dict):
        items = headers.items()
    else:
        items = (
            (h.get("name"), h.get("value")) if isinstance(h, dict) else tuple(h)[:2]
            for h in headers or [] if isinstance(h, (dict, tuple, list))
        )
    for key, value in items:
        if isinstance(key, str) and key.lower() == name:
            return str(value) if value is not None else None
    return None


def _first_attr(obj, *names, default=None):
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return value
    return default


@dataclass(frozen=True)
class _Seen:
    """What the rule reads of an endpoint and one of its traces, whatever objects they came from."""

    endpoint_id: Any
    host: str
    method: str
    pattern: str
    path: str
    status: int
    headers: Any
    body: Any


def _seen(endpoint, trace) -> _Seen:
    host = endpoint.host if isinstance(endpoint.host, str) else endpoint.host.name
    return _Seen(
        endpoint_id=endpoint.uuid, host=host, method=str(endpoint.method).upper(), pattern=endpoint.path,
        path=trace.path,
        status=int(_first_attr(trace, "response_status", "status")),
        headers=_first_attr(trace, "response_headers", "resp_headers", default=[]),
        body=_first_attr(trace, "response_body", "resp_body", default=""),
    )


def _response_for(operation: dict, status: int) -> tuple[str, Any] | None:
    responses = operation.get("responses")
    if not isinstance(responses, dict):
        return None
    keys = {str(k).upper(): k for k in responses}
    for candidate in (str(status), f"{str(status)[0]}XX", "DEFAULT"):
        if candidate in keys:
            return keys[candidate], responses[keys[candidate]]
    return None


def _media_for(content: dict, content_type: str | None) -> str | None:
    if not isinstance(content, dict) or not content:
        return None
    normal = {str(k).split(";", 1)[0].strip().lower(): k for k in content}
    if not content_type:
        return next(iter(content)) if len(content) == 1 else normal.get("application/json")
    wanted = content_type.split(";", 1)[0].strip().lower()
    major = wanted.split("/", 1)[0]
    for candidate in (wanted, f"{major}/*", "*/*"):
        if candidate in normal:
            return normal[candidate]
    return None


def _is_json_media(media: str, content_type: str | None) -> bool:
    for value in (content_type, media):
        if value:
            kind = value.split(";", 1)[0].strip().lower()
            if kind == "application/json" or kind.endswith("+json"):
                return True
            if kind not in ("*/*", "application/*"):
                return False
    return True


def _field_label(path) -> str:
    label = ""
    for token in path:
        if isinstance(token, int):
            label += "[]"
        else:
            label += ("." if label else "") + str(token)
    return label


_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")


def _problem(error) -> str | None:
    """A sentence fragment for one schema error, built from the schema, never from the data."""
    keyword, expected, instance = error.validator, error.validator_value, error.instance
    if isinstance(instance, str) and instance == _REDACTED:
        return None  # a value the pipeline redacted: its real type is unknown
    if keyword == "type":
        if instance is None:
            return "is null but not nullable"
        shown = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return f"is not of type {shown}"
    if keyword == "required":
        missing = [p for p in expected if isinstance(instance, dict) and p not in instance]
        return f"is missing required property '{missing[0]}'" if missing else "is missing a required property"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        schema = error.schema if isinstance(error.schema, dict) else {}
        extra = sorted(k for k in additional_keys(instance if isinstance(instance, dict) else {}, schema)
                       if isinstance(k, str))
        named = [k for k in extra if _SAFE_NAME.match(k)]
        return f"has undocumented property '{named[0]}'" if named else "has an undocumented property"
    if keyword in ("enum", "const"):
        return "is not one of the documented values"
    if keyword == "format":
        return f"does not match format '{expected}'"
    if keyword == "pattern":
        return "does not match the documented pattern"
    if keyword in ("oneOf", "anyOf"):
        return "does not match any documented alternative"
    if keyword == "nullable":
        return "is null but not nullable"
    return f"violates '{keyword}'"


def spec_diff_batch(pairs) -> list[AlertCandidate]:
    """Open API Spec Diff candidates for a batch of analysed traces.

    ``pairs``: iterable of ``(endpoint, trace)``.
      * endpoint: ``uuid``, ``method``, ``path`` (the pattern, ``/users/{param1}``) and ``host``
        (an object with ``name``, or the host name) — an ``inventory.Endpoint`` or the ingest
        pipeline's endpoint row;
      * trace: ``path`` (the concrete request path), the status as ``response_status`` or
        ``status``, the response headers as ``response_headers`` or ``resp_headers``
        (``[{name, value}]``, ``[(name, value)]`` or a dict) and the body as ``response_body`` or
        ``resp_body`` (str) — an ``ApiTrace`` (saved or not) or the pipeline's ``Trace``.
    Pass values before redaction when you have them; ``"[REDACTED]"`` values are tolerated (never
    reported) and an empty body (v2 agents) skips the schema check.

    Side effect: endpoints of hosts with specs get ``openapi_spec_name`` = the first spec (by name)
    documenting them, or NULL (one UPDATE per distinct new value, only for rows that change).
    Queries: one for the spec list, one per spec changed since this process compiled it, and when
    a host has specs one to read the endpoints' current names. Feed the result to ``alerts_raise``
    in the analysis transaction (it de-duplicates). Never raises for odd input: a spec construct
    or body it cannot evaluate yields no alert.
    """
    return _spec_diff(pairs)[0]


def _spec_diff(pairs) -> tuple[list[AlertCandidate], dict]:
    from inventory.counts import inventory_changed
    from inventory.models import Endpoint

    seen = [_seen(endpoint, trace) for endpoint, trace in pairs]
    if not seen:
        return [], {}
    specs_by_host = specs_for_hosts({s.host for s in seen})
    seen = [s for s in seen if specs_by_host.get(host_normalize(s.host))]
    if not seen:
        return [], {}
    links = {}
    for item in seen:
        if item.endpoint_id not in links:
            links[item.endpoint_id] = endpoint_spec_name(
                host=item.host, pattern=item.pattern, method=item.method,
                specs=specs_by_host[host_normalize(item.host)],
            )
    current = dict(Endpoint.objects.filter(uuid__in=links).values_list("uuid", "openapi_spec_name"))
    changes: dict = {}
    for endpoint_id, name in links.items():
        if endpoint_id in current and current[endpoint_id] != name:
            changes.setdefault(name, []).append(endpoint_id)
    for name, endpoint_ids in changes.items():
        Endpoint.objects.filter(uuid__in=endpoint_ids).update(openapi_spec_name=name)
    if changes:
        inventory_changed()  # searchQuery matches openapiSpecName
    candidates: list[AlertCandidate] = []
    for item in seen:
        try:
            candidates.extend(_differences(item, specs_by_host[host_normalize(item.host)]))
        except Exception as exc:  # a spec construct we cannot evaluate must not break trace analysis
            logger.warning("spec diff skipped for endpoint %s", item.endpoint_id, exc_info=withheld(exc))
    return candidates, links


def spec_diff_candidates(*, endpoint, trace) -> list[AlertCandidate]:
    """:func:`spec_diff_batch` for one trace; also updates ``endpoint.openapi_spec_name`` on the object."""
    candidates, links = _spec_diff([(endpoint, trace)])
    if endpoint.uuid in links and hasattr(endpoint, "openapi_spec_name"):
        endpoint.openapi_spec_name = links[endpoint.uuid]
    return candidates


def _differences(item: _Seen, specs: list[CompiledSpec]) -> list[AlertCandidate]:
    where = f"{item.method} {item.pattern} on {item.host}"
    found = spec = None
    for spec in specs:
        found = spec.operation(host=item.host, path=item.path, method=item.method)
        if found:
            break
    if found is None:
        names = ", ".join(f"'{s.name}'" for s in specs)
        noun = "OpenAPI spec" if len(specs) == 1 else "OpenAPI specs"
        return [AlertCandidate(item.endpoint_id, AlertType.OPENAPI_SPEC_DIFF,
                               f"Endpoint {where} is not documented in {noun} {names}.",
                               {"kind": "undocumented_endpoint", "specs": [s.name for s in specs]})]
    route, operation, pointer = found
    response = _response_for(operation, item.status)
    if response is None:
        return [AlertCandidate(item.endpoint_id, AlertType.OPENAPI_SPEC_DIFF,
                               f"Response status {item.status} of {where} is not documented in OpenAPI spec '{spec.name}'.",
                               {"kind": "undocumented_status", "spec": spec.name, "template": route.template,
                                "statusCode": item.status})]
    return _body_candidates(item=item, spec=spec, route=route, where=where, response=response, pointer=pointer)


def _body_candidates(*, item: _Seen, spec: CompiledSpec, route: Route, where: str,
                     response: tuple, pointer: list) -> list[AlertCandidate]:
    status, body = item.status, item.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if body is None or not str(body).strip():
        return []
    key, response_obj = response
    response_obj, response_pointer = _deref(spec.spec, response_obj, [*pointer, "responses", key])
    if not isinstance(response_obj, dict):
        return []
    content = response_obj.get("content")
    content_type = _headers_get(item.headers, "content-type")
    media = _media_for(content, content_type)
    if media is None or not _is_json_media(media, content_type):
        return []
    media_obj = content[media]
    if not isinstance(media_obj, dict) or "schema" not in media_obj:
        return []
    context = {"kind": "schema_mismatch", "spec": spec.name, "template": route.template, "statusCode": status}
    try:
        document = json.loads(body) if isinstance(body, str) else body
    except (ValueError, RecursionError):
        return [AlertCandidate(item.endpoint_id, AlertType.OPENAPI_SPEC_DIFF,
                               f"Response body of {where} (status {status}) is not valid JSON, "
                               f"unlike its schema in OpenAPI spec '{spec.name}'.", context)]
    validator = spec.validator([*response_pointer, "content", media, "schema"])
    findings: dict[tuple, str] = {}
    try:
        with scope(f"OpenAPI spec {spec.id}"):  # names the spec in user-regex timeout log lines
            for error in validator.iter_errors(document):
                problem = _problem(error)
                if problem is None:
                    continue
                label = _field_label(error.absolute_path)
                findings.setdefault((label, problem), label)
                if len(findings) >= 50:
                    break
    except RecursionError:
        return []
    candidates = []
    for label, problem in sorted(findings)[:MAX_BODY_FINDINGS]:
        subject = f"field '{label}'" if label else "the body"
        candidates.append(AlertCandidate(
            item.endpoint_id, AlertType.OPENAPI_SPEC_DIFF,
            f"Response body of {where} (status {status}) does not match OpenAPI spec '{spec.name}': "
            f"{subject} {problem}.",
            {**context, "field": label},
        ))
    return candidates
