"""Generating security tests for endpoints (SPEC "Test generation", DECISIONS §8).

A result is SPEC's "Test generation result": ``{success, templateName,
templateVersion, test}`` or ``{success: false, msg}``; per-host items also carry
``endpoint`` (the path pattern) and ``method``.
"""
from __future__ import annotations

import logging
import uuid
from typing import Any

from core.enums import HttpMethod
from core.logsafe import withheld
from inventory.models import Endpoint, Host
from inventory.patterns.segments import path_segments, segment_is_parameter

from ..errors import TestEndpointNotFound
from ..own_writes import own_objects_in_writes
from ..profile import EndpointProfile, profile_load, profiles_load
from ..scope import EXCLUDED, exclusion, pattern_matches
from ..templates import GenerationContext, SecurityTemplate, template_get, templates_by_priority

logger = logging.getLogger(__name__)

NO_TEMPLATE = "No suitable test template found"
METHOD_ORDER = {m: i for i, m in enumerate(HttpMethod.values)}


def endpoint_find(*, endpoint: str, host: str | None = None, method: str | None = None) -> Endpoint:
    """The endpoint named by a uuid or a path, narrowed by host and method.

    ``endpoint`` is tried as an endpoint uuid, then as a path pattern
    (``/users/{param1}``, trailing slash ignored), then as a concrete path matched
    against the patterns (``/users/42``; the most literal pattern wins). Among
    several matches (one path on several hosts or methods) the first by method
    (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS) then host name is taken.
    Raises :class:`TestEndpointNotFound` (SPEC's 404 body).
    """
    queryset = Endpoint.objects.select_related("host")
    if host:
        queryset = queryset.filter(host__name__iexact=host)
    if method:
        queryset = queryset.filter(method=method.upper())
    try:
        endpoint_uuid = uuid.UUID(endpoint)
    except ValueError:
        endpoint_uuid = None
    if endpoint_uuid is not None:
        found = queryset.filter(uuid=endpoint_uuid).first()
        if found is None:
            raise TestEndpointNotFound()
        return found

    def first(rows) -> Endpoint | None:
        rows = list(rows)
        rows.sort(key=lambda e: (METHOD_ORDER.get(e.method, 99), e.host.name))
        return rows[0] if rows else None

    path = endpoint if endpoint.startswith("/") else f"/{endpoint}"
    candidates = {path, path.rstrip("/") or "/"}
    found = first(queryset.filter(path__in=candidates))
    if found is not None:
        return found
    wanted = path_segments(path)
    best: list[Endpoint] = []
    best_literal = -1
    for row in queryset.filter(num_segments=len(wanted)).only(
        "uuid", "path", "method", "num_literal_segments", "host__name"
    ):
        pattern = path_segments(row.path)
        if len(pattern) != len(wanted):
            continue
        if all(segment_is_parameter(p) or p == w for p, w in zip(pattern, wanted, strict=True)):
            literal = sum(1 for p in pattern if not segment_is_parameter(p))
            if literal > best_literal:
                best, best_literal = [row], literal
            elif literal == best_literal:
                best.append(row)
    found = first(best)
    if found is None:
        raise TestEndpointNotFound()
    return Endpoint.objects.select_related("host").get(uuid=found.uuid)


def _candidates(template_name: str | None, version: int | None) -> list[SecurityTemplate]:
    if template_name is None:
        return templates_by_priority()
    template = template_get(template_name, version)
    return [template] if template else []


def test_generate(*, endpoint: Endpoint, template_name: str | None = None, version: int | None = None,
                  profile: EndpointProfile | None = None, context: GenerationContext | None = None) -> dict:
    """Generate one test for an endpoint: with the named template (and version), or with the
    first applicable template in DECISIONS §8 order. Never raises for the endpoint's data:
    a template that fails on it is logged and skipped.

    A write's example request names the test identity's own objects first (``own_writes.py``).

    Returns ``{success: True, templateName, templateVersion, test}`` or
    ``{success: False, msg: "No suitable test template found"}``.
    """
    profile = profile or profile_load(endpoint=endpoint)
    context = context or GenerationContext.from_settings()
    excluded = excluded_reason(profile, context)
    if excluded:
        return {"success": False, "msg": EXCLUDED + excluded}
    # Writes name the test identity's own objects, whatever the template (DECISIONS §8).
    own_objects_in_writes(profile, test_user_id=context.test_user_id, object_ids=context.object_ids)
    for template in _candidates(template_name, version):
        if not template.applies(profile):
            continue
        try:
            test = template.generate(profile, context)
        except Exception as exc:  # a template bug on unusual traffic must not fail the route
            logger.error("Template %s v%s failed on endpoint %s", template.name, template.version, endpoint.uuid,
                         exc_info=withheld(exc))
            continue
        return {"success": True, "templateName": template.name, "templateVersion": template.version, "test": test}
    return {"success": False, "msg": NO_TEMPLATE}


def excluded_reason(profile: EndpointProfile, context: GenerationContext) -> str | None:
    """Why the endpoint is excluded from testing (the environment's ``exclude``, or it resets shared
    state and ``allowDestructive`` does not name it; testgen/scope.py), or None. The host's reads
    lose the excluded and state-resetting GETs, so no test reads back through them either."""
    if profile.host_reads is not None and context.exclude and \
            getattr(profile.host_reads, "scoped", None) != context.exclude:
        reads = profile.host_reads
        gone = {p for p in reads.patterns if any(pattern_matches(x, "GET", p) for x in context.exclude)}
        reads.patterns -= gone
        reads.items = {k: v for k, v in reads.items.items() if v not in gone}
        if reads.user_read_path in gone:
            reads.user_read_path = None
        reads.scoped = context.exclude
    if profile.facts is not None:
        profile.facts.exclude = context.exclude
    return exclusion(method=profile.method, path=profile.path, answers=profile.answers, exclude=list(context.exclude),
                     allow_destructive=list(context.allow_destructive), query=list(profile.query))


def tests_generate_for_host(*, host: str, template_name: str | None = None,
                            version: int | None = None) -> list[dict[str, Any]]:
    """One result per endpoint of the host (ordered by path, then method), each carrying
    ``endpoint`` and ``method``; a failed item is ``{success: false, endpoint, method, msg}``.
    An unknown host has no endpoints: ``[]``. A fixed number of queries.
    """
    host_row = Host.objects.filter(name__iexact=host).first()
    if host_row is None:
        return []
    endpoints = sorted(
        Endpoint.objects.filter(host=host_row).select_related("host"),
        key=lambda e: (e.path, METHOD_ORDER.get(e.method, 99)),
    )
    profiles = profiles_load(endpoints=endpoints, host_id=host_row.id)
    context = GenerationContext.from_settings()
    items = []
    for endpoint in endpoints:
        result = test_generate(endpoint=endpoint, template_name=template_name, version=version,
                               profile=profiles[endpoint.uuid], context=context)
        if result["success"]:
            items.append({**result, "endpoint": endpoint.path, "method": endpoint.method})
        else:
            items.append({"success": False, "endpoint": endpoint.path, "method": endpoint.method, "msg": result["msg"]})
    return items


def tests_generate_every(*, endpoints: list[Endpoint], host_id: int | None = None) -> list[dict[str, Any]]:
    """What a run without a template covers: one result per applicable template per endpoint
    (DECISIONS §8 order), each carrying ``endpoint`` and ``method``; an endpoint no template
    applies to gives one ``{success: false, …}`` item. ``host_id``: all endpoints are of that host
    (profiles loaded together)."""
    profiles = profiles_load(endpoints=endpoints, host_id=host_id) if host_id is not None else {}
    context = GenerationContext.from_settings()
    items: list[dict[str, Any]] = []
    for endpoint in endpoints:
        profile = profiles.get(endpoint.uuid) or profile_load(endpoint=endpoint)
        excluded = excluded_reason(profile, context)
        if excluded:
            items.append({"success": False, "endpoint": endpoint.path, "method": endpoint.method,
                          "msg": EXCLUDED + excluded})
            continue
        generated = []
        for template in templates_by_priority():
            if template.applies(profile):
                result = test_generate(endpoint=endpoint, template_name=template.name, version=template.version,
                                       profile=profile, context=context)
                if result["success"]:
                    generated.append({**result, "endpoint": endpoint.path, "method": endpoint.method})
        items.extend(generated or [{"success": False, "endpoint": endpoint.path, "method": endpoint.method,
                                    "msg": NO_TEMPLATE}])
    return items


def host_endpoints(host: str) -> tuple[int | None, list[Endpoint]]:
    """The host's id and endpoints (by path, then method); ``(None, [])`` for an unknown host."""
    host_row = Host.objects.filter(name__iexact=host).first()
    if host_row is None:
        return None, []
    endpoints = sorted(Endpoint.objects.filter(host=host_row).select_related("host"),
                       key=lambda e: (e.path, METHOD_ORDER.get(e.method, 99)))
    return host_row.id, endpoints


# Named like tests, but they are services: keep pytest from collecting them where imported.
test_generate.__test__ = False
tests_generate_for_host.__test__ = False
tests_generate_every.__test__ = False
