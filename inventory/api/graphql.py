"""GraphQL schema upload and removal on an endpoint (DECISIONS §4)."""
from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from core.errors import ApiError, EndpointNotFound, PayloadTooLarge, ZodError
from inventory.counts import inventory_changed
from inventory.models import Endpoint

from .lookup import endpoint_get, endpoint_key

logger = logging.getLogger(__name__)

GRAPHQL_SCHEMA_MAX_BYTES = 5 * 1024 * 1024
GRAPHQL_SCHEMA_TOO_LARGE = "GraphQL schema larger than 5 MB."
# Complexity budget of an uploaded schema: graphql-core parses ~5 µs and ~300 bytes of memory a
# token, so 200,000 tokens is about a second and 70 MB. Large public schemas (a 1.2 MB one with its
# descriptions) stay under it; descriptions are one token each.
GRAPHQL_SCHEMA_MAX_TOKENS = 200_000
GRAPHQL_SCHEMA_BUDGET = (f"The schema has more than {GRAPHQL_SCHEMA_MAX_TOKENS:,} tokens "
                         "(complexity budget of an uploaded GraphQL schema).")
# Error messages quoted in a 400 (a schema can make thousands of errors).
MAX_MESSAGE = 1000


def graphql_schema_check(*, schema_text: str) -> None:
    """Raise ``ZodError`` (issue at ``["file"]``) unless ``schema_text`` is a valid GraphQL SDL schema
    within the complexity budget (``GRAPHQL_SCHEMA_MAX_TOKENS``: a ``custom`` issue naming it).

    Parsed without locations: graphql-core locates each error by scanning the text from its start,
    which made thousands of errors (200,000 ``@deprecated`` on one field) cost minutes."""
    from graphql import GraphQLError, build_ast_schema, parse, validate_schema

    def invalid(message: str) -> ZodError:
        if len(message) > MAX_MESSAGE:
            message = message[:MAX_MESSAGE] + "…"
        return ZodError([{"code": "custom", "path": ["file"], "message": f"Invalid GraphQL schema: {message}"}])

    try:
        document = parse(schema_text, no_location=True, max_tokens=GRAPHQL_SCHEMA_MAX_TOKENS)
    except GraphQLError as exc:
        if "tokens" in (exc.message or ""):
            raise ZodError([{"code": "custom", "path": ["file"], "message": GRAPHQL_SCHEMA_BUDGET}]) from None
        raise invalid(exc.message) from None
    except RecursionError:
        raise invalid("document nested too deeply") from None
    try:
        schema = build_ast_schema(document)
    except GraphQLError as exc:
        raise invalid(exc.message) from None
    except (TypeError, ValueError) as exc:  # graphql-core reports invalid SDL as TypeError
        raise invalid(str(exc).strip()) from None
    except RecursionError:
        raise invalid("document nested too deeply") from None
    errors = validate_schema(schema)
    if errors:
        raise invalid("; ".join(error.message for error in errors[:20]))


def endpoint_graphql_schema_set(*, endpoint_id: str, upload) -> Endpoint:
    """PUT /endpoint/{id}/graphql-schema: validate and store an SDL schema (DECISIONS §4).

    Raises ``EndpointNotFound``; ``PayloadTooLarge`` (413) above 5 MB; 400
    ``"Endpoint is not a GraphQL endpoint."`` for a non-GraphQL endpoint;
    ``ZodError`` for a file that is not UTF-8 text or not a valid schema.
    """
    endpoint = endpoint_get(endpoint_id=endpoint_id)
    if upload.size > GRAPHQL_SCHEMA_MAX_BYTES:
        raise PayloadTooLarge(GRAPHQL_SCHEMA_TOO_LARGE)
    if not endpoint.is_graphql:
        raise ApiError("Endpoint is not a GraphQL endpoint.")
    raw = upload.read(GRAPHQL_SCHEMA_MAX_BYTES + 1)
    try:
        schema_text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ZodError([{"code": "custom", "path": ["file"], "message": "The schema file is not UTF-8 text."}]) from None
    graphql_schema_check(schema_text=schema_text)
    with transaction.atomic():
        endpoint = endpoint_get(endpoint_id=endpoint_id, for_update=True)
        endpoint.graphql_schema = schema_text
        endpoint.save(update_fields=["graphql_schema", "updated_at"])
    logger.info("graphql schema stored for endpoint %s (%d bytes)", endpoint.uuid, len(raw))
    return endpoint


def endpoint_graphql_schema_clear(*, endpoint_id: str) -> None:
    """DELETE /endpoint/{id}/graphql-schema: remove the stored schema (nothing to remove is fine)."""
    key = endpoint_key(endpoint_id)
    if not Endpoint.objects.filter(uuid=key).update(graphql_schema=None, updated_at=timezone.now()):
        raise EndpointNotFound()
    inventory_changed()  # updatedAt is a list-item column
