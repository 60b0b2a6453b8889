"""Drift between an uploaded spec and the inventory of its hosts (``GET /spec/{name}/drift``).

What the report lists (DECISIONS §10), each list by host, path and method, at most ``MAX_ITEMS``:

* ``shadowEndpoints``: endpoints of the spec's hosts that it does not document;
* ``unusedOperations``: documented operations with no traffic within ``TRACE_RETENTION_DAYS``;
* ``zombieOperations``: documented operations marked ``deprecated`` that are still called;
* ``parameterDrift``: query parameters and headers seen but not documented, and required ones
  documented but never seen;
* ``responseDrift``: statuses seen but not documented, and response body fields that are
  undocumented, of another type than documented, or required but never seen.

Compared with the data fields (every field ever seen, types merged), never with values: nothing
from the traffic but names and types appears in the report. The alert rule ("Open API Spec Diff")
reports differences trace by trace as they happen; documented-but-unseen operations appear only here.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from classification.models import DataField
from core.enums import DataSection
from core.fields import timestamp
from inventory.ingest.credentials import is_auth_param
from inventory.models import Endpoint

from .compiled import deref, spec_compile
from .generate.traffic import boring_header
from .responses import json_schema_pointer, response_for
from .schema_paths import schema_paths, types_agree

MAX_ITEMS = 1000
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _at(document, tokens: list):
    for token in tokens:
        document = document.get(token) if isinstance(document, dict) else None
    return document


def _documented_parameters(spec: dict, route, operation: dict, pointer: list) -> dict[tuple[str, str], bool]:
    """(in, name) -> required, of the path item's and the operation's parameters ($refs followed)."""
    found: dict[tuple[str, str], bool] = {}
    path_item, _ = deref(spec, route.path_item, route.pointer)
    for params in ((path_item or {}).get("parameters"), operation.get("parameters")):
        for raw in params or ():
            param, _ = deref(spec, raw, pointer)
            if isinstance(param, dict) and isinstance(param.get("name"), str) and param.get("in") in ("query", "header"):
                name = param["name"].lower() if param["in"] == "header" else param["name"]
                found[(param["in"], name)] = bool(param.get("required"))
    return found


def _parameter_drift(where: dict, documented: dict, observed: dict[str, set[str]]) -> list[dict]:
    items = []
    for kind, names in (("query", observed.get(DataSection.REQUEST_QUERY, set())),
                        ("header", observed.get(DataSection.REQUEST_HEADER, set()))):
        for name in sorted(names):
            if kind == "header" and boring_header(name) or kind == "query" and is_auth_param(name):
                continue  # transport headers and credentials (security schemes) are not parameters
            if (kind, name) not in documented:
                items.append({**where, "in": kind, "name": name, "kind": "undocumented"})
        seen = {n.lower() for n in names} if kind == "header" else names
        if names or kind == "query":
            for (place, name), required in sorted(documented.items()):
                if place == kind and required and name not in seen:
                    items.append({**where, "in": kind, "name": name, "kind": "required_not_seen"})
    return items


def _response_drift(compiled, where: dict, operation: dict, pointer: list, fields: list) -> list[dict]:
    items = []
    by_status: dict[int, list] = defaultdict(list)
    for section, status, path, dtype, content_type in fields:
        if section in (DataSection.RESPONSE_BODY, DataSection.RESPONSE_HEADER):
            by_status[status].append((section, path, dtype, content_type))
    for status, rows in sorted(by_status.items()):
        response = response_for(operation, status)
        if response is None:
            items.append({**where, "statusCode": status, "kind": "undocumented_status"})
            continue
        body = [(p, t, ct) for sec, p, t, ct in rows if sec == DataSection.RESPONSE_BODY]
        if not body:
            continue
        schema_pointer = json_schema_pointer(compiled, response, pointer, body[0][2] or None)
        if schema_pointer is None:
            continue
        documented = schema_paths(compiled.spec, _at(compiled.spec, schema_pointer))
        observed = {p: t for p, t, _ in body}
        for path, dtype in sorted(observed.items()):
            known = documented.lookup(path)
            if known is None:
                if not documented.is_open(path):
                    items.append({**where, "statusCode": status, "field": path, "kind": "undocumented_field",
                                  "observed": dtype})
            elif not types_agree(known, dtype):
                items.append({**where, "statusCode": status, "field": path, "kind": "type_mismatch",
                              "documented": sorted(known), "observed": dtype})
        for path in sorted(documented.required):
            if path not in observed and not any(p.startswith(path + ".") or p.startswith(path + "[]")
                                                for p in observed):
                parent = path.rsplit(".", 1)[0] if "." in path else ""
                if parent == "" or any(p == parent or p.startswith(parent + ".") or p.startswith(parent + "[]")
                                       for p in observed):
                    items.append({**where, "statusCode": status, "field": path, "kind": "required_not_seen"})
    return items


def spec_drift(spec_row, *, now=None) -> dict:
    """The drift report of an uploaded spec (``spec_row.spec`` loaded)."""
    now = now or timezone.now()
    window = timedelta(days=settings.TRACE_RETENTION_DAYS)
    compiled = spec_compile(spec_row)
    endpoints = list(Endpoint.objects.filter(host__name__in=spec_row.hosts).order_by("host__name", "path", "method")
                     .values_list("uuid", "host__name", "method", "path", "last_active"))
    fields: dict = defaultdict(list)
    for endpoint_id, section, status, path, dtype, content_type in DataField.objects.filter(
        endpoint_id__in=[e[0] for e in endpoints]
    ).values_list("endpoint_id", "data_section", "status_code", "data_path", "data_type", "content_type"):
        fields[endpoint_id].append((section, status, path, dtype, content_type))

    shadow, zombies, parameters, responses = [], [], [], []
    used: dict[tuple[str, str], dict] = {}
    for uuid, host, method, path, last_active in endpoints:
        where = {"uuid": str(uuid), "host": host, "method": method, "path": path}
        found = compiled.pattern_operation(host=host, pattern=path, method=method)
        if found is None:
            shadow.append({**where, "lastActive": timestamp(last_active)})
            continue
        route, operation, pointer = found
        key = (route.template, method.lower())
        entry = used.setdefault(key, {"lastActive": None, "endpoints": []})
        entry["endpoints"].append(str(uuid))
        if last_active is not None and (entry["lastActive"] is None or last_active > entry["lastActive"]):
            entry["lastActive"] = last_active
        where["operation"] = f"{method.upper()} {route.template}"
        if operation.get("deprecated") is True and last_active is not None and last_active >= now - window:
            zombies.append({**where, "lastActive": timestamp(last_active)})
        observed: dict[str, set[str]] = defaultdict(set)
        for section, _status, field_path, _t, _ct in fields[uuid]:
            if section in (DataSection.REQUEST_QUERY, DataSection.REQUEST_HEADER) and field_path:
                observed[section].add(field_path)
        parameters += _parameter_drift(where, _documented_parameters(compiled.spec, route, operation, pointer),
                                       observed)
        try:
            responses += _response_drift(compiled, where, operation, pointer, fields[uuid])
        except RecursionError:
            pass

    unused = []
    for template, item in sorted((compiled.spec.get("paths") or {}).items()):
        item, _ = deref(compiled.spec, item, ["paths", template])
        for method in METHODS:
            if not isinstance(item, dict) or not isinstance(item.get(method), dict):
                continue
            entry = used.get((template, method))
            last = entry["lastActive"] if entry else None
            if last is None or last < now - window:
                unused.append({"method": method.upper(), "path": template, "lastActive": timestamp(last),
                               "endpoints": entry["endpoints"] if entry else []})
    lists = {"shadowEndpoints": shadow, "unusedOperations": unused, "zombieOperations": zombies,
             "parameterDrift": parameters, "responseDrift": responses}
    return {
        "spec": spec_row.name,
        "hosts": list(spec_row.hosts),
        "windowDays": settings.TRACE_RETENTION_DAYS,
        "generatedAt": timestamp(now),
        "summary": {name: len(items) for name, items in lists.items()},
        **{name: items[:MAX_ITEMS] for name, items in lists.items()},
    }
