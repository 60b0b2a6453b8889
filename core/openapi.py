"""OpenAPI pieces shared by every app's routes (real shapes, no bare ``{}``)."""
from collections.abc import Callable

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse, extend_schema

from .schema import ZOD_ERROR_SCHEMA
from .scopes import Scope, allowed_scopes, required_scope, requires_scope


def json_string(*values: str, description: str = "") -> OpenApiResponse:
    """A response whose body is one of these JSON strings."""
    return OpenApiResponse(response={"type": "string", "enum": list(values)}, description=description)


# The validation 400 body (the same schema the shared-answers hook in core/schema.py documents).
ZOD_SCHEMA = {key: value for key, value in ZOD_ERROR_SCHEMA.items() if key != "description"}

SUCCESS = json_string("Success", description='The JSON string "Success".')
VALIDATION = OpenApiResponse(response=ZOD_SCHEMA, description="Validation failure (zod-style issues).")
UNAUTHORIZED = json_string("Client unauthorized", description="Missing or unknown API key.")
ENDPOINT_NOT_FOUND = json_string("Endpoint does not exist.", description="Unknown or malformed endpoint id.")
FIELD_NOT_FOUND = json_string("Data field does not exist.", description="Unknown or malformed data field id.")
CONFLICT = OpenApiResponse(response={"type": "string"}, description="Conflict: a JSON string saying why.")
TOTAL_COUNT_NOTE = "The `X-Total-Count` response header carries the number of matches before paging."


def operation(scope: Scope, operation_id: str, **schema) -> Callable:
    """Declare one API operation on its view handler: the least scope it needs (``requires_scope``,
    read by the permission class and by :class:`ScopedAutoSchema`) and its OpenAPI description
    (``schema``: drf-spectacular's ``extend_schema`` arguments: summary, parameters, request,
    responses, description, tags)."""
    scoped, described = requires_scope(scope), extend_schema(operation_id=operation_id, **schema)
    return lambda handler: scoped(described(handler))


class ScopedAutoSchema(AutoSchema):
    """Documents the scope each operation needs (``core.scopes``): ``x-required-scope`` (the least
    scope), ``x-allowed-scopes`` (every scope that may call it) and a sentence in the description.
    ``core.schema.postprocess_common_responses`` adds the ``403 "Forbidden."`` answer from them."""

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        needed = required_scope(self.view, method) if operation is not None else None
        if needed is None:  # public routes (health) declare none
            return operation
        allowed = allowed_scopes(needed, method)
        operation["x-required-scope"] = needed.value
        operation["x-allowed-scopes"] = allowed
        note = f"**Scope:** `{needed.value}` (keys of scope {', '.join(f'`{s}`' for s in allowed)})."
        operation["description"] = f"{operation['description']}\n\n{note}" if operation.get("description") else note
        return operation


class DeleteBodyAutoSchema(ScopedAutoSchema):
    """Documents a JSON body on DELETE (SPEC's DELETE /endpoints and /hosts take one); drf-spectacular
    only documents bodies of POST, PUT and PATCH by default."""

    def _get_request_body(self, direction="request"):
        if self.method != "DELETE":
            return super()._get_request_body(direction)
        method = self.method
        self.method = "POST"
        try:
            return super()._get_request_body(direction)
        finally:
            self.method = method
