"""Which uploaded spec documents an endpoint: ``Endpoint.openapi_spec_name``.

An endpoint is documented by the first spec (by name) whose servers name its host and which has
an operation for its method and path pattern (its parameter segments must be template parameters).
Two callers keep the column current: the ingestion pipeline's linking step for the endpoints of a
batch (:func:`endpoints_spec_link`), and uploads, replacements and deletions of specs for every
endpoint of the hosts concerned (:func:`endpoints_link_specs`).
"""
from __future__ import annotations

from inventory.counts import inventory_changed
from inventory.models import Endpoint
from inventory.patterns.normalize import host_normalize

from .compiled import CompiledSpec, specs_for_host


def endpoint_spec_name(*, host: str, pattern: str, method: str, specs: list[CompiledSpec]) -> str | None:
    """The name of the first spec (by name) documenting the endpoint, or None."""
    for spec in specs:
        if spec.documents_pattern(host=host, pattern=pattern, method=method):
            return spec.name
    return None


def endpoints_spec_link(endpoints, specs_by_host: dict[str, list[CompiledSpec]]) -> int:
    """Set ``openapi_spec_name`` of the given endpoints whose host has specs; returns how many changed.

    ``endpoints``: objects with ``uuid``, ``method``, ``path`` (the pattern) and ``host.name`` (the
    pipeline's endpoint rows); ``specs_by_host`` as :func:`detections.openapi.compiled.specs_for_hosts`
    returns it. Endpoints of hosts without specs are left alone. Queries: none when no endpoint's host
    has specs, else one to read the current names and one UPDATE per distinct new name.
    """
    links: dict = {}
    for endpoint in endpoints:
        specs = specs_by_host.get(host_normalize(endpoint.host.name))
        if specs and endpoint.uuid not in links:
            links[endpoint.uuid] = endpoint_spec_name(host=endpoint.host.name, pattern=endpoint.path,
                                                      method=endpoint.method.upper(), specs=specs)
    if not links:
        return 0
    current = dict(Endpoint.objects.filter(uuid__in=links).values_list("uuid", "openapi_spec_name"))
    changes: dict = {}
    for endpoint_id, name in links.items():
        if endpoint_id in current and current[endpoint_id] != name:
            changes.setdefault(name, []).append(endpoint_id)
    return _apply(changes)


def endpoints_link_specs(*, hosts) -> int:
    """Recompute ``openapiSpecName`` of every endpoint of ``hosts``; returns how many changed."""
    changes: dict = {}
    for host in set(hosts):
        specs = specs_for_host(host)
        for endpoint_id, path, method, current in Endpoint.objects.filter(host__name=host).values_list(
            "uuid", "path", "method", "openapi_spec_name"
        ):
            name = endpoint_spec_name(host=host, pattern=path, method=method, specs=specs)
            if name != current:
                changes.setdefault(name, []).append(endpoint_id)
    return _apply(changes)


def _apply(changes: dict) -> int:
    """One UPDATE per new name (``changes``: name → endpoint ids)."""
    for name, endpoint_ids in changes.items():
        Endpoint.objects.filter(uuid__in=endpoint_ids).update(openapi_spec_name=name)
    if changes:
        inventory_changed()  # searchQuery matches openapiSpecName
    return sum(len(ids) for ids in changes.values())
