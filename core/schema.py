"""drf-spectacular extensions: the raw-key ``Authorization`` scheme and the answers every route shares.

It also gives response timestamps the wire pattern of DECISIONS §1 (milliseconds and ``Z``), and
adds the OpenAPI links of ``LINKS``.

Every route can answer a few things that have nothing to do with the route itself
(DECISIONS §2–3): ``401 "Client unauthorized"`` without a valid key, ``403 "Forbidden."`` for a
key whose scope does not allow the operation (from its ``x-allowed-scopes``), a ZOD ``400`` for
bad input, ``413`` for an oversized body and ``415`` for a body that is not in a
media type the route parses; and the web server's own limits, answered by gunicorn before the
application sees the request (``text/html``): ``414`` for a request line over
``SERVER_MAX_REQUEST_LINE`` bytes, ``431`` for more than ``SERVER_MAX_HEADERS`` header fields or one
over ``SERVER_MAX_HEADER_BYTES``. :func:`postprocess_common_responses` adds them to each
operation (or gives a body schema to those a view documented by description only),
so the published schema is precise without every view repeating them.
"""
from __future__ import annotations

import copy

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from .models import Scope


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "core.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": (
                "The raw API key, with no scheme word (`Authorization: <API_KEY>`). Every key has one scope: "
                "`ingest` (agents: `GET /verify`, `GET /agent-config`, the `log-request` POSTs), `read` (every "
                "GET, secrets masked) or `admin` (everything). Each operation names the scope it needs in "
                "`x-required-scope` and the scopes that may call it in `x-allowed-scopes`; any other key gets "
                '`403 "Forbidden."`.'
            ),
        }


ZOD_ERROR_SCHEMA = {
    "type": "object",
    "description": "Validation failure (zod-style issues).",
    "required": ["type", "message", "err"],
    "properties": {
        "type": {"type": "string", "enum": ["ZOD"]},
        "message": {"type": "string", "enum": ["Invalid parameters"]},
        "err": {
            "type": "object",
            "required": ["name", "issues"],
            "properties": {
                "name": {"type": "string", "enum": ["ZodError"]},
                "issues": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["code", "path", "message"],
                        "properties": {
                            "code": {"type": "string"},
                            "path": {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
                            "message": {"type": "string"},
                        },
                        "additionalProperties": True,
                    },
                },
            },
        },
    },
}

PAYLOAD_TOO_LARGE = "Payload too large."
# DECISIONS §1: every timestamp on the wire is UTC with milliseconds and Z.
TIMESTAMP_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
_JSON = "application/json"


def _string_response(description: str, *values: str, pattern: str | None = None) -> dict:
    schema: dict = {"type": "string"}
    if values:
        schema["enum"] = list(values)
    if pattern:
        schema["pattern"] = pattern
    return {"description": description, "content": {_JSON: {"schema": schema}}}


def _zod_response(description: str = "Validation failure (zod-style issues).") -> dict:
    return {"description": description, "content": {_JSON: {"schema": {"$ref": "#/components/schemas/ZodErrorBody"}}}}


def _fill(responses: dict, code: str, default: dict) -> None:
    """Add ``default`` as the ``code`` answer, or give it a body when the view described it in words only."""
    current = responses.get(code)
    if current is None:
        responses[code] = copy.deepcopy(default)
    elif not current.get("content"):
        filled = copy.deepcopy(default)
        filled["description"] = current.get("description") or default["description"]
        responses[code] = filled


def _widen_string_enum(response: dict, value: str) -> None:
    """Let a documented JSON-string answer also be ``value`` (e.g. the framework's own 413 text)."""
    schema = response.get("content", {}).get(_JSON, {}).get("schema", {})
    if schema.get("type") == "string" and "enum" in schema and value not in schema["enum"]:
        schema["enum"].append(value)


def _is_authenticated(operation: dict, default_security: list | None) -> bool:
    security = operation.get("security", default_security)
    return bool(security) and all(requirement for requirement in security)


def _timestamps_precise(node) -> None:
    """Give every ``date-time`` string of a response shape the wire pattern (inputs stay lenient)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") == "string" and item.get("format") == "date-time":
                item.setdefault("pattern", TIMESTAMP_PATTERN)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


_ENDPOINT_ROUTES = ("endpoint_detail", "endpoint_usage", "endpoint_suggested_paths", "endpoint_set_authenticated",
                    "endpoint_set_full_trace_capture", "endpoint_update_paths", "endpoint_graphql_schema_upload",
                    "endpoint_graphql_schema_delete", "endpoint_delete")
# OpenAPI links: how an answer's values feed other operations (clients and Schemathesis' stateful
# tests follow them). Links between operations sharing an id name in their path are inferred by
# tools; these are the ones they cannot guess. (source operationId, status) -> {target: parameters}.
LINKS: dict[tuple[str, str], dict[str, dict[str, str]]] = {
    ("endpoint_list", "200"): {
        **{target: {"endpoint_id": "$response.body#/0/uuid"} for target in _ENDPOINT_ROUTES},
        "gen_test_endpoint": {"query.endpoint": "$response.body#/0/path", "query.host": "$response.body#/0/host",
                              "query.method": "$response.body#/0/method"},
    },
    ("host_list", "200"): {"gen_test_endpoints": {"query.host": "$response.body#/0/host"}},
    ("spec_create", "201"): {target: {"name": "$response.body#/name"}
                             for target in ("spec_read", "spec_replace", "spec_delete")},
    ("specs_list", "200"): {"spec_read": {"name": "$response.body#/0/name"}},
}


def _link_name(operation_id: str) -> str:
    return "".join(part.capitalize() for part in operation_id.split("_"))


def _add_links(operations: dict[str, dict]) -> None:
    for (source, status), targets in LINKS.items():
        response = operations.get(source, {}).get("responses", {}).get(status)
        if response is None:
            continue
        links = response.setdefault("links", {})
        for target, parameters in targets.items():
            if target in operations:
                links[_link_name(target)] = {"operationId": target, "parameters": dict(parameters)}


# gunicorn's defaults (--limit-request-line, --limit-request-fields, --limit-request-field_size).
SERVER_MAX_REQUEST_LINE = 4094
SERVER_MAX_HEADERS = 100
SERVER_MAX_HEADER_BYTES = 8190


def _server_response(description: str) -> dict:
    return {"description": description, "content": {"text/html": {"schema": {"type": "string"}}}}


SERVER_LIMITS = {
    "414": _server_response(f"The request line (method, path and query) is over {SERVER_MAX_REQUEST_LINE:,} bytes: "
                            "refused by the web server (gunicorn) before the application reads it."),
    "431": _server_response(f"More than {SERVER_MAX_HEADERS} header fields, or one over {SERVER_MAX_HEADER_BYTES:,} "
                            "bytes: refused by the web server (gunicorn) before the application reads it."),
}


def postprocess_common_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: document the answers every route shares (see module docstring)."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault("ZodErrorBody", copy.deepcopy(ZOD_ERROR_SCHEMA))
    # COMPONENT_SPLIT_REQUEST: request shapes are the "...Request" components; the others are answers.
    for name, component in components.items():
        if not name.endswith("Request"):
            _timestamps_precise(component)
    default_security = result.get("security")
    unauthorized = _string_response("Missing or unknown API key.", "Client unauthorized")
    every_scope = set(Scope.values)
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in {"get", "put", "post", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            if _is_authenticated(operation, default_security):
                _fill(responses, "401", unauthorized)
            allowed = operation.get("x-allowed-scopes")
            if allowed is not None and set(allowed) != every_scope:
                _fill(responses, "403", _string_response(
                    f"The API key's scope does not allow this operation (allowed: {', '.join(allowed)}).",
                    "Forbidden."))
            if operation.get("requestBody"):
                _fill(responses, "400", _zod_response("Malformed or invalid body (zod-style issues)."))
                _fill(responses, "413", _string_response("The request body is over the size limit.", PAYLOAD_TOO_LARGE))
                _widen_string_enum(responses["413"], PAYLOAD_TOO_LARGE)
                _fill(responses, "415", _string_response(
                    "The body is not in a media type this route reads (see the request body's content types).",
                    pattern=r"^Unsupported media type: ",
                ))
            elif "400" in responses:
                _fill(responses, "400", _zod_response())
            for code, answer in SERVER_LIMITS.items():
                responses.setdefault(code, copy.deepcopy(answer))
            if "503" in responses:
                _fill(responses, "503", _string_response("Service busy: retry after the `Retry-After` seconds."))
                responses["503"].setdefault("headers", {})["Retry-After"] = {
                    "description": "Seconds to wait before retrying.",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 1},
                }
            if "X-Total-Count" in operation.get("description", "") and "200" in responses:
                responses["200"].setdefault("headers", {})["X-Total-Count"] = {
                    "description": "Number of matches before paging.",
                    "required": True,
                    "schema": {"type": "integer", "minimum": 0},
                }
            operation["responses"] = dict(sorted(responses.items()))
    _add_links({
        operation["operationId"]: operation
        for path_item in result.get("paths", {}).values()
        for method, operation in path_item.items()
        if method in {"get", "put", "post", "patch", "delete"} and "operationId" in operation
    })
    return result
