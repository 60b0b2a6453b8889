"""One endpoint as an OpenAPI operation: parameters, request body, responses per status and media
type, security requirements; GraphQL endpoints described as such."""
from __future__ import annotations

import re
from http import HTTPStatus

from core.enums import DataSection

from . import traffic
from .collect import EndpointFacts
from .schema import Node
from .values import user_of

_PARAM = re.compile(r"\{([^{}/]*)\}")
_STATUS = re.compile(r"^[1-5]\d\d$")
_GRAPHQL_PREFIXES = ("query.", "mutation.", "subscription.")
GRAPHQL_REQUEST = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "variables": {"type": ["object", "null"]},
                   "operationName": {"type": ["string", "null"]}, "extensions": {"type": ["object", "null"]}},
}
_INTEGER = re.compile(r"^-?\d{1,18}$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def template(pattern: str) -> tuple[str, list[str]]:
    """The path key of an endpoint pattern and its parameter names: the operator's names kept;
    an empty or repeated name becomes ``param<N>`` (OpenAPI needs unique names)."""
    names: list[str] = []

    def rename(match: re.Match) -> str:
        name = match.group(1)
        if not name or name in names or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
            name = f"param{len(names) + 1}"
            while name in names:
                name += "_"
        names.append(name)
        return "{" + name + "}"

    path = _PARAM.sub(rename, pattern or "/")
    return (path if path.startswith("/") else "/" + path), names


def _path_parameters(endpoint: EndpointFacts, path: str, names: list[str]) -> list[dict]:
    segments = path.split("/")
    observed: dict[str, list[str]] = {name: [] for name in names}
    for trace in endpoint.traces:
        concrete = trace[0].split("/")
        if len(concrete) != len(segments):
            continue
        for pattern_segment, value in zip(segments, concrete):
            match = _PARAM.fullmatch(pattern_segment)
            if match and match.group(1) in observed:
                observed[match.group(1)].append(value)
    params = []
    for name in names:
        seen = observed[name]
        schema: dict = {"type": "string"}
        if seen and all(_INTEGER.match(v) for v in seen):
            schema = {"type": "integer"}
        elif seen and all(_UUID.match(v) for v in seen):
            schema = {"type": "string", "format": "uuid"}
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    return params


def _named_parameters(endpoint: EndpointFacts, section: str, where: str, requests: list) -> list[dict]:
    """Query or header parameters: from the data fields of the section and the sampled requests."""
    nodes: dict[str, Node] = {}
    spelling: dict[str, str] = {}
    for sec, _status, path, _dtype, _nullable, classes, _ct in endpoint.fields:
        if sec == section and path:
            key = path.lower() if where == "header" else path
            node = nodes.setdefault(key, Node(path))
            node.classes.update(classes or ())
            spelling.setdefault(key, path)
    present: dict[str, int] = {}
    for pairs, user in requests:
        seen = set()
        for pair in pairs or ():
            name = str(pair.get("name", ""))
            key = name.lower() if where == "header" else name
            if not name or key in seen:
                continue
            seen.add(key)
            node = nodes.get(key)
            if node is None and len(nodes) < 100:
                node = nodes[key] = Node(name)
            if node is not None:
                spelling[key] = name
                present[key] = present.get(key, 0) + 1
                node.add_sample(str(pair.get("value", "")), user)
    params = []
    for key, node in sorted(nodes.items()):
        name = spelling[key]
        if where == "header" and traffic.boring_header(name):
            continue
        if where == "query" and traffic.is_auth_param(name):
            continue  # a security scheme (apiKey in query)
        schema = node.schema(required=False)
        schema.pop("x-data-classes", None)
        param = {"name": name, "in": where, "schema": schema or {"type": "string"}}
        if requests and present.get(key, 0) == len(requests):
            param["required"] = True
        if node.classes:
            param["x-data-classes"] = sorted(node.classes)
        params.append(param)
    return params


def _content(node: Node, medias: set[str], *, required: bool, graphql: bool) -> dict:
    schema = node.schema(required=required and not graphql)
    if graphql:
        schema.setdefault("type", "object")
    example = node.example()
    content = {}
    for media in sorted(medias) or ["application/json"]:
        if media in ("", "application/json") or media.endswith("+json") or "json" in media:
            entry = {"schema": schema}
            if example is not None:
                entry["example"] = example
        elif media in ("application/x-www-form-urlencoded", "multipart/form-data"):
            entry = {"schema": schema if node.props else {"type": "object"}}
        else:
            entry = {"schema": {"type": "string"}}
        content[media or "application/json"] = entry
    return content


def _field_path(endpoint: EndpointFacts, path: str) -> str:
    if endpoint.is_graphql:
        for prefix in _GRAPHQL_PREFIXES:
            if path.startswith(prefix):
                return "data." + path[len(prefix):]
            if path == prefix[:-1]:
                return "data"
    return path


def _request_body(endpoint: EndpointFacts, successful: list) -> dict | None:
    node, medias = Node(), set()
    with_body = 0
    for sec, _s, path, dtype, nullable, classes, content_type in endpoint.fields:
        if sec == DataSection.REQUEST_BODY and not endpoint.is_graphql:
            node.add_field(path, dtype, nullable, classes)
            if content_type:
                medias.add(content_type)
    for trace in successful:
        if not (trace[3] or "").strip():
            continue
        with_body += 1
        media, kind, parsed = traffic.body(trace[3], trace[2])
        medias.add(media or "application/json")
        if kind == "json" and not endpoint.is_graphql:
            node.add_sample(parsed, user_of(trace[7]))
    if endpoint.is_graphql and (with_body or endpoint.method in ("POST", "PUT", "PATCH")):
        return {"required": bool(successful) and with_body == len(successful),
                "content": {"application/json": {"schema": GRAPHQL_REQUEST}}}
    if not with_body and not node.types and not node.props and node.items is None:
        return None
    return {"required": bool(successful) and with_body == len(successful),
            "content": _content(node, medias, required=True, graphql=False)}


def _responses(endpoint: EndpointFacts) -> dict:
    bodies: dict[int, Node] = {}
    medias: dict[int, set[str]] = {}
    headers: dict[int, dict[str, set]] = {}
    for sec, status, path, dtype, nullable, classes, content_type in endpoint.fields:
        if sec == DataSection.RESPONSE_BODY:
            bodies.setdefault(status, Node()).add_field(_field_path(endpoint, path), dtype, nullable, classes)
            if content_type:
                medias.setdefault(status, set()).add(content_type)
        elif sec == DataSection.RESPONSE_HEADER:
            known = headers.setdefault(status, {})
            if not traffic.boring_header(path):
                known.setdefault(path, set()).update(classes or ())
    for trace in endpoint.traces:
        status, resp_headers, resp_body = trace[4], trace[5], trace[6]
        headers.setdefault(status, {})
        if not (resp_body or "").strip():
            continue
        media, kind, parsed = traffic.body(resp_body, resp_headers)
        medias.setdefault(status, set()).add(media or "application/json")
        if kind == "json":
            bodies.setdefault(status, Node()).add_sample(parsed, user_of(trace[7]))
    responses = {}
    for status in sorted(set(bodies) | set(headers) | set(medias)):
        if not _STATUS.match(str(status)):
            continue
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "Observed status"
        response: dict = {"description": phrase}
        if status in bodies or medias.get(status):
            response["content"] = _content(bodies.get(status, Node()), medias.get(status, set()), required=True,
                                           graphql=endpoint.is_graphql)
        named = headers.get(status) or {}
        if named:
            response["headers"] = {
                name: {"schema": {"type": "string"}, **({"x-data-classes": sorted(c)} if c else {})}
                for name, c in sorted(named.items())[:50]
            }
        responses[str(status)] = response
    return responses or {"default": {"description": "No response observed yet."}}


def _security(endpoint: EndpointFacts, schemes: dict) -> list[dict] | None:
    requirements: list[dict] = []
    anonymous = endpoint.unauthenticated_success_seen
    for trace in endpoint.traces:
        found = traffic.credentials(trace[2], trace[1], trace[7])
        for name, scheme in found:
            schemes.setdefault(name, scheme)
        requirement = {name: [] for name, _ in sorted(found)}
        if not found and 200 <= trace[4] < 300:
            anonymous = True
        elif found and requirement not in requirements:
            requirements.append(requirement)
    if not requirements:
        return None
    if anonymous:
        requirements.append({})
    return requirements


def operation_build(endpoint: EndpointFacts, operation_id: str, schemes: dict) -> tuple[str, dict]:
    """(path key, operation object) of one endpoint; ``schemes`` collects the security schemes used."""
    path, names = template(endpoint.path)
    successful = [t for t in endpoint.traces if t[4] < 400]  # request sections are analysed below 400
    parameters = _path_parameters(endpoint, path, names)
    parameters += _named_parameters(endpoint, DataSection.REQUEST_QUERY, "query",
                                    [(t[1], user_of(t[7])) for t in successful])
    parameters += _named_parameters(endpoint, DataSection.REQUEST_HEADER, "header",
                                    [(t[2], user_of(t[7])) for t in successful])
    operation: dict = {"operationId": operation_id, "summary": f"{endpoint.method} {endpoint.path}"}
    if endpoint.is_graphql:
        operation["tags"] = ["graphql"]
        operation["description"] = ("A GraphQL endpoint: requests carry a GraphQL document (`query`) and its "
                                    "`variables`; responses carry `data` and `errors`.")
        operation["x-graphql"] = True
        if endpoint.graphql_schema:
            operation["x-graphql-schema"] = {
                "href": f"/api/v1/endpoint/{endpoint.uuid}",
                "description": "The GraphQL schema uploaded for this endpoint (graphQlSchema of the endpoint detail).",
            }
    if parameters:
        operation["parameters"] = parameters
    body = _request_body(endpoint, successful)
    if body is not None:
        operation["requestBody"] = body
    operation["responses"] = _responses(endpoint)
    security = _security(endpoint, schemes)
    if security is not None:
        operation["security"] = security
    operation["x-apiscope-endpoint"] = str(endpoint.uuid)
    return path, operation
