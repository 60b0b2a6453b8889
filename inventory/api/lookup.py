"""Shared by the inventory routes' services: pages, endpoint ids and lookups, trace retention."""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from core.errors import EndpointNotFound
from inventory.models import ApiTrace, Endpoint, EndpointAlias

MAX_DETAIL_TRACES = 100


@dataclass(frozen=True)
class Page:
    """One page of a list and the number of matches before paging (``X-Total-Count``)."""

    items: list
    total: int


def endpoint_key(endpoint_id: str) -> uuid.UUID:
    """Parse an endpoint id from a URL; a malformed id is ``EndpointNotFound`` like an unknown one."""
    try:
        return uuid.UUID(str(endpoint_id))
    except ValueError:
        raise EndpointNotFound() from None


def endpoint_resolve(endpoint_id: str) -> uuid.UUID:
    """The id of the endpoint an id names: itself, or for the id of an endpoint merged into another
    (update-paths, learned parameterisation) the endpoint it went into. Unknown ids are returned as they are."""
    key = endpoint_key(endpoint_id)
    if Endpoint.objects.filter(uuid=key).exists():
        return key
    alias = EndpointAlias.objects.filter(old_uuid=key).values_list("endpoint_id", flat=True).first()
    return alias or key


def endpoint_get(*, endpoint_id: str, for_update: bool = False) -> Endpoint:
    """The endpoint with this id (host joined), or the one it was merged into (:func:`endpoint_resolve`);
    ``EndpointNotFound`` for an unknown or malformed id."""
    queryset = Endpoint.objects.select_related("host")
    if for_update:
        queryset = queryset.select_for_update(of=("self",))
    key = endpoint_key(endpoint_id)
    endpoint = queryset.filter(uuid=key).first()
    if endpoint is None:
        alias = EndpointAlias.objects.filter(old_uuid=key).values_list("endpoint_id", flat=True).first()
        endpoint = queryset.filter(uuid=alias).first() if alias else None
    if endpoint is None:
        raise EndpointNotFound()
    return endpoint


def _freeze(value):
    """A hashable form of validated query values (cache keys)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def traces_prune(*, endpoint_ids: Iterable, keep: int = MAX_DETAIL_TRACES) -> int:
    """Keep the newest ``keep`` traces of each endpoint; returns how many were deleted."""
    deleted = 0
    for endpoint_id in endpoint_ids:
        newest = ApiTrace.objects.filter(endpoint_id=endpoint_id).order_by("-created_at", "uuid").values("uuid")[:keep]
        deleted += ApiTrace.objects.filter(endpoint_id=endpoint_id).exclude(uuid__in=newest).delete()[0]
    return deleted
