"""Factories for test generation: endpoints as traffic would have described them."""
from __future__ import annotations

import json

import factory
from django.utils import timezone

from core.enums import DataSection
from core.jsontypes import json_type
from inventory.models import ApiTrace, ObservedPath
from tests.factories import DataFieldFactory, EndpointFactory, HostFactory

__all__ = ["ApiTraceFactory", "ObservedPathFactory", "endpoint_from_traffic"]


class ObservedPathFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ObservedPath

    endpoint = factory.SubFactory(EndpointFactory)
    path = factory.Sequence(lambda n: f"/api/v1/items/{n}")
    last_seen = factory.LazyFunction(timezone.now)


class ApiTraceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ApiTrace

    endpoint = factory.SubFactory(EndpointFactory)
    host = factory.LazyAttribute(lambda o: o.endpoint.host.name)
    path = factory.LazyAttribute(lambda o: o.endpoint.path.replace("{param1}", "1"))
    method = factory.LazyAttribute(lambda o: o.endpoint.method)
    request_parameters = factory.LazyFunction(list)
    request_headers = factory.LazyFunction(list)
    request_body = ""
    response_status = 200
    response_headers = factory.LazyFunction(list)
    response_body = ""


def _flatten(value, prefix=""):
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _flatten(sub, f"{prefix}.{key}" if prefix else key)
    elif isinstance(value, list) and value:
        yield from _flatten(value[0], f"{prefix}[]")
    else:
        yield prefix, json_type(value)


def endpoint_from_traffic(*, host: str, method: str, path: str, authenticated: bool = False,
                          paths: list[str] = (), query: dict[str, str] | None = None, body: dict | None = None,
                          response: dict | None = None, credential_header: str = "Authorization"):
    """An endpoint with what ingestion would have recorded for the given traffic: observed
    concrete paths, a trace with the query and (JSON) body, and the data fields of both."""
    segments = [s for s in path.split("/") if s]
    endpoint = EndpointFactory(
        host=HostFactory(name=host), method=method, path=path,
        path_regex="^/" + "/".join("[^/]+" if s.startswith("{") else s for s in segments) + "$",
        is_authenticated_detected=authenticated,
    )
    for offset, concrete in enumerate(paths):
        ObservedPathFactory(endpoint=endpoint, path=concrete, last_seen=timezone.now() - timezone.timedelta(seconds=offset))
    headers = [{"name": credential_header, "value": "[REDACTED]"}] if authenticated else []
    if body is not None:
        headers.append({"name": "Content-Type", "value": "application/json"})
    ApiTraceFactory(
        endpoint=endpoint,
        path=paths[0] if paths else path,
        request_parameters=[{"name": k, "value": v} for k, v in (query or {}).items()],
        request_headers=headers,
        request_body=json.dumps(body) if body is not None else "",
        response_body=json.dumps(response) if response is not None else "",
    )
    for name in query or {}:
        DataFieldFactory(endpoint=endpoint, data_section=DataSection.REQUEST_QUERY, data_path=name, data_type="string")
    for data_path, data_type in _flatten(body or {}):
        DataFieldFactory(endpoint=endpoint, data_section=DataSection.REQUEST_BODY, data_path=data_path,
                         data_type=data_type, content_type="application/json")
    for data_path, data_type in _flatten(response or {}):
        DataFieldFactory(endpoint=endpoint, data_section=DataSection.RESPONSE_BODY, data_path=data_path,
                         data_type=data_type, content_type="application/json", status_code=200)
    return endpoint


