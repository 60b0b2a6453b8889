"""The URL-conf walker the security tests share: every API route, its concrete path and its view."""
from __future__ import annotations

import re
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver

# Served without a key (DECISIONS §2): health, the OpenAPI schema and its docs page.
PUBLIC = {"/api/v1", "/api/v1/schema", "/api/v1/docs"}
SAMPLE_ID = "7b0e1f8c-6d1a-4c55-9a53-3c1f2f4f9d11"


def walk(patterns, prefix=""):
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern), entry


def concrete(route: str) -> str:
    """A request path for a route: converters filled with a syntactically valid id."""
    path = re.sub(r"<(?:\w+:)?\w+>", SAMPLE_ID, route)
    return "/" + path.lstrip("^").rstrip("$")


def schema_concrete(path: str) -> str:
    """The request path for an OpenAPI path (``/api/v1/endpoint/{endpoint_id}``)."""
    return re.sub(r"\{[^}]+\}", SAMPLE_ID, path)


@dataclass(frozen=True)
class Route:
    path: str  # concrete request path
    view: type  # the view class (DRF's as_view keeps it on the callback)


def api_routes() -> list[Route]:
    """Every route under /api, regex catch-alls aside, sorted by path."""
    found = {}
    for route, entry in walk(get_resolver().url_patterns):
        if route.startswith("api/") and "(?:" not in route and "(?" not in route:
            found[concrete(route)] = Route(concrete(route), getattr(entry.callback, "cls", None))
    return [found[path] for path in sorted(found)]
