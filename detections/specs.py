"""Uploaded OpenAPI specs: parsing, validation, storage, and linking endpoints to them.

Contract of an upload: a JSON or YAML file of at most 5 MB holding a valid OpenAPI 3.x document
(checked with ``openapi-spec-validator``), with only local ``$ref``s (``#/...``: the service never
fetches a URL or reads a file a document points at) and at least one absolute server URL (its host
names are the hosts the spec describes). Anything else is a validation error that stores nothing.

Budget of an upload (README "Security model"): YAML is read by libyaml (PyYAML's C loader: ~4×
faster than the pure-Python one, a fraction of its memory), its events counted first; a document of
more than ``MAX_SPEC_NODES`` values (YAML aliases expanded) is refused with a ZOD ``custom`` issue
naming that budget before the validator (~50 µs a value) sees it: an upload costs at most a few
seconds of CPU and a few hundred MB, whatever the file.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import PurePath

import yaml
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.errors import ConflictError, NotFoundError, PayloadTooLarge, ZodError
from core.safejson import NUL, has_nul, json_objects
from core.userregex import scope

from .models import OpenApiSpec
from .openapi.compiled import spec_hosts_and_base_paths
from .openapi.link import endpoints_link_specs
from .specregex import pattern_problems, spec_validator_class

logger = logging.getLogger(__name__)

MAX_SPEC_BYTES = 5 * 1024 * 1024
SPEC_TOO_LARGE = "Spec file is larger than 5 MB."
# Values of the parsed document (objects, arrays, scalars, keys), counted with YAML aliases expanded:
# anchors can make a small file expand enormously ("billion laughs"), and validation costs ~50 µs a
# value. Real specs are far below this (a 1 MB spec has ~40,000).
MAX_SPEC_NODES = 100_000
SPEC_BUDGET = (f"The document has more than {MAX_SPEC_NODES:,} values (complexity budget of an uploaded spec; "
               "YAML aliases count as often as they are used).")
# YAML events (libyaml's parser) read before the document is built: a file past this many is over the
# budget whatever its aliases.
MAX_YAML_EVENTS = 3 * MAX_SPEC_NODES
# Nesting of YAML collections read (real specs nest a few tens of levels at most).
MAX_YAML_DEPTH = 200
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The document as stored (JSON, aliases expanded) may not be much larger than the largest upload:
# a 400-byte file of nested aliases must not become megabytes in the database.
MAX_EXPANDED_BYTES = 2 * MAX_SPEC_BYTES
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
GENERATED_SUFFIX = "-generated"  # detections.openapi.generate.service names generated specs so


class SpecNotFound(NotFoundError):
    body = "Spec does not exist."


@dataclass(frozen=True)
class ParsedSpec:
    spec: dict
    text: str
    extension: str
    version: str
    hosts: list[str]


def _invalid(message: str, path: list | None = None) -> ZodError:
    return ZodError([{"code": "custom", "path": path if path is not None else ["file"], "message": message}])


def _count_nodes(document) -> None:
    budget = MAX_SPEC_NODES
    stack = [document]
    while stack:
        node = stack.pop()
        budget -= 1
        if budget < 0:
            raise _invalid(SPEC_BUDGET)
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _yaml_load(text: str):
    """The YAML document, with libyaml; a ZOD 400 once its events pass ``MAX_YAML_EVENTS`` (the budget) or
    its collections nest deeper than ``MAX_YAML_DEPTH``: libyaml's parser walks the events without
    recursion, but the C loader builds the document recursively, and a deep enough one would overflow
    the C stack (a crash, where the Python loader raised RecursionError)."""
    depth = 0
    for count, event in enumerate(yaml.parse(text, Loader=_YAML_LOADER), 1):
        if count > MAX_YAML_EVENTS:
            raise _invalid(SPEC_BUDGET)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise _invalid("The document is nested too deeply.")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - the safe loader (C or Python)


def _external_ref(document) -> str | None:
    for node in json_objects(document):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return ref
    return None


def spec_parse(*, raw: bytes) -> ParsedSpec:
    """Parse and validate an uploaded file; raise a ZOD 400 (path ``file``) or 413 on failure."""
    if len(raw) > MAX_SPEC_BYTES:
        raise PayloadTooLarge(SPEC_TOO_LARGE)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _invalid("The file is not UTF-8 text.") from None
    try:
        document, extension = json.loads(text), OpenApiSpec.Extension.JSON
    except (ValueError, RecursionError):
        try:
            document, extension = _yaml_load(text), OpenApiSpec.Extension.YAML
        except (yaml.YAMLError, RecursionError):
            raise _invalid("The file is neither valid JSON nor valid YAML.") from None
    if not isinstance(document, dict):
        raise _invalid("The file does not hold an OpenAPI document (expected an object at the top level).")
    _count_nodes(document)
    try:
        # JSON-compatible: YAML's integer keys (responses: {200: ...}) become strings, dates text.
        expanded = json.dumps(document, default=str)
        if len(expanded) > MAX_EXPANDED_BYTES:
            raise _invalid("The document is too large once YAML aliases are expanded.")
        document = json.loads(expanded)
    except (ValueError, TypeError, RecursionError):
        raise _invalid("The document cannot be represented as JSON.") from None
    if NUL in text or has_nul(document):  # PostgreSQL cannot store it (text and jsonb)
        raise _invalid("The document contains a NUL character.")
    version = document.get("openapi")
    if not isinstance(version, str) or not re.match(r"^3\.\d+(\.\d+)?", version):
        found = f"swagger {document['swagger']}" if "swagger" in document else "no 'openapi' version field"
        raise _invalid(f"Only OpenAPI 3.x documents are supported (found {found}).")
    ref = _external_ref(document)
    if ref is not None:
        raise _invalid(f"Only local references (#/...) are supported; found '{ref[:200]}'.")
    for where, pattern, problem in pattern_problems(document):
        raise _invalid(f"Invalid regular expression at {where[:300]}: '{pattern[:200]}' ({problem[:200]}; "
                       "neither RE2 nor the regex module can compile it).")
    openapi_validate(document)
    hosts = sorted(spec_hosts_and_base_paths(document))
    if not hosts:
        raise _invalid("The document must list at least one absolute server URL (servers[].url) "
                       "naming the host it describes.")
    return ParsedSpec(document, text, extension, version, hosts)


def openapi_validate(document: dict) -> None:
    """openapi-spec-validator, its checks of ``default`` values on bounded regex engines (specregex)."""
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation.exceptions import OpenAPIValidationError, ValidatorDetectError

    try:
        with scope("OpenAPI spec upload"):  # names the check in user-regex timeout log lines
            validate(document, cls=spec_validator_class(document))
    except ValidatorDetectError:
        raise _invalid("Unsupported OpenAPI version.") from None
    except OpenAPIValidationError as exc:
        where = "/".join(str(p) for p in getattr(exc, "absolute_path", []) or [])
        message = str(getattr(exc, "message", exc)).splitlines()[0][:500]
        raise _invalid(f"Invalid OpenAPI document{f' at {where}' if where else ''}: {message}") from None
    except RecursionError:
        raise _invalid("The document is nested too deeply.") from None
    except Exception as exc:  # the validator chokes on some malformed constructs
        logger.info("spec validation failed: %s", type(exc).__name__)
        raise _invalid(f"Invalid OpenAPI document: {type(exc).__name__}.") from None
    finally:
        validator_cache_clear()


def validator_cache_clear() -> None:
    """Empty openapi-spec-validator's cache of validation results.

    Its ``SpecValidator.iter_errors`` (0.9.0) is an unbounded ``lru_cache`` keyed by the validator
    object, and that object holds the whole document and its resolved paths. Without this, every
    document ever validated stayed in memory: each uploaded spec in the web, and each generated
    spec in the worker (~1 MB per host's build, bench/README.md "Worker memory")."""
    from openapi_spec_validator.validation.validators import SpecValidator

    cached = getattr(SpecValidator.iter_errors, "__wrapped__", None)
    if hasattr(cached, "cache_clear"):
        cached.cache_clear()


def spec_name_from_filename(filename: str | None) -> str:
    """The spec's name: the file name without its extension, reduced to ``[A-Za-z0-9._-]``."""
    stem = PurePath(filename or "").name
    for suffix in (".json", ".yaml", ".yml"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.")[:128]
    if not stem or not NAME_RE.match(stem) or stem == "new":  # "new" would shadow POST /spec/new
        raise _invalid("Cannot derive a spec name from the file name; name the file like 'petstore.yaml'.")
    if stem.lower().endswith(GENERATED_SUFFIX):
        raise _invalid(f"Spec names ending in '{GENERATED_SUFFIX}' are kept for specs generated from traffic; "
                       "rename the file (e.g. 'petstore-v2.json').")
    return stem


def spec_get(*, name: str, document: bool = True) -> OpenApiSpec:
    """The spec named ``name`` (404 when unknown); without its parsed ``document`` when the caller
    only shows the text (GET /spec/{name}: a generated spec's document is megabytes of jsonb)."""
    # A name no spec can have (e.g. with a NUL, which PostgreSQL refuses in a query) is simply unknown.
    rows = OpenApiSpec.objects if document else OpenApiSpec.objects.defer("spec")
    spec = rows.filter(name=name).first() if NAME_RE.fullmatch(name) else None
    if spec is None:
        raise SpecNotFound()
    return spec


def spec_create(*, name: str, raw: bytes) -> OpenApiSpec:
    """Store a new spec and link the endpoints it documents; 409 when the name is taken."""
    parsed = spec_parse(raw=raw)
    try:
        with transaction.atomic():
            spec = OpenApiSpec.objects.create(
                name=name, text=parsed.text, spec=parsed.spec, extension=parsed.extension,
                openapi_version=parsed.version, hosts=parsed.hosts,
            )
            endpoints_link_specs(hosts=parsed.hosts)
    except IntegrityError:
        raise ConflictError(f"A spec named '{name}' already exists.") from None
    logger.info("spec %s stored for %d host(s)", spec.pk, len(parsed.hosts))
    return spec


def generated_conflict(spec: OpenApiSpec, action: str) -> ConflictError:
    return ConflictError(f"Spec '{spec.name}' is generated from the traffic of {spec.hosts[0] if spec.hosts else 'a host'} "
                         f"and cannot be {action}; it is rebuilt as traffic changes (upload your own spec under "
                         "another name).")


def spec_uploaded_get(*, name: str, action: str) -> OpenApiSpec:
    """An uploaded spec: 404 when unknown, 409 when the name is a generated spec's."""
    spec = spec_get(name=name)
    if spec.is_auto_generated:
        raise generated_conflict(spec, action)
    return spec


def spec_replace(*, name: str, raw: bytes) -> OpenApiSpec:
    """Replace the document of an existing spec; relinks the endpoints of old and new hosts."""
    parsed = spec_parse(raw=raw)
    with transaction.atomic():
        spec = OpenApiSpec.objects.select_for_update().filter(name=name).first() if NAME_RE.fullmatch(name) else None
        if spec is None:
            raise SpecNotFound()
        if spec.is_auto_generated:
            raise generated_conflict(spec, "replaced")
        old_hosts = list(spec.hosts)
        spec.text, spec.spec, spec.extension = parsed.text, parsed.spec, parsed.extension
        spec.openapi_version, spec.hosts, spec.updated_at = parsed.version, parsed.hosts, timezone.now()
        spec.save()
        endpoints_link_specs(hosts=[*old_hosts, *parsed.hosts])
    return spec


def spec_delete(*, name: str) -> None:
    """Delete a spec; its endpoints lose (or change) their ``openapiSpecName``."""
    with transaction.atomic():
        spec = spec_uploaded_get(name=name, action="deleted")
        hosts = list(spec.hosts)
        spec.delete()
        endpoints_link_specs(hosts=hosts)


def specs_list():
    """Uploaded and generated specs, by name."""
    return OpenApiSpec.objects.defer("text", "spec").order_by("name")



def spec_drift_report(*, name: str) -> dict:
    """GET /spec/{name}/drift: the drift report of an uploaded spec (``openapi.drift``); 409 for a generated one."""
    from .openapi.drift import spec_drift

    return spec_drift(spec_uploaded_get(name=name, action="compared for drift"))
