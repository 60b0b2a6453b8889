"""Upload routes read at most their limit (issue #12, point 7): GraphQL schema and OpenAPI spec files.

A declared length over the limit is refused before a byte of the body is read; a body that
declares less than it carries, or no length at all (chunked), stops being read once its file
bytes pass the limit; no upload is ever spooled to a temporary file. Every refusal is ``413``
with the route's JSON string and stores nothing.
"""
from __future__ import annotations

import functools
import json
import tempfile
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import django.core.files.temp
import pytest
import requests
import yaml

from core.models import ApiKey
from core.uploads import MULTIPART_OVERHEAD
from detections.models import OpenApiSpec
from tests.factories import EndpointFactory
from tests.support.processes import process_env
from tests.support.web import start_web

from .support import SPEC_FILE, row_counts

pytestmark = pytest.mark.django_db

MB = 1024 * 1024
LIMIT = 5 * MB
BOUNDARY = "apiscopeTestBoundary"
CHUNK = 64 * 1024


# ----------------------------------------------------------------------------- bodies


def part_head(filename: str, *, declared: int | None = None) -> bytes:
    """The opening of the multipart body up to the file's first byte (``declared``: the part's
    own Content-Length header, which a client may set to anything)."""
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/octet-stream\r\n")
    if declared is not None:
        head += f"Content-Length: {declared}\r\n"
    return (head + "\r\n").encode()


TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


def multipart(content: bytes, filename: str, **kwargs) -> bytes:
    return part_head(filename, **kwargs) + content + TAIL


def endless_file(filename: str, size: int) -> Iterator[bytes]:
    """A multipart body streaming a file of ``size`` bytes, produced chunk by chunk."""
    yield part_head(filename)
    for start in range(0, size, CHUNK):
        yield b"x" * min(CHUNK, size - start)
    yield TAIL


class CountingInput:
    """A ``wsgi.input`` producing ``chunks`` on demand and counting the bytes the service read."""

    def __init__(self, chunks: Iterable[bytes]):
        self._chunks = iter(chunks)
        self._buffer = b""
        self.read_bytes = 0

    def _fill(self, size: int) -> None:
        while size < 0 or len(self._buffer) < size:
            try:
                self._buffer += next(self._chunks)
            except StopIteration:
                return

    def read(self, size: int = -1) -> bytes:
        self._fill(size)
        cut = len(self._buffer) if size is None or size < 0 else size
        data, self._buffer = self._buffer[:cut], self._buffer[cut:]
        self.read_bytes += len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        self._fill(size if size and size > 0 else CHUNK)
        end = self._buffer.find(b"\n") + 1 or len(self._buffer)
        return self.read(min(end, size) if size and size > 0 else end)


# ----------------------------------------------------------------------------- the two routes


@dataclass
class Route:
    method: str
    path: str
    filename: str
    message: str
    exactly_the_limit: Callable[[], bytes]  # a valid file of LIMIT bytes
    stored: Callable[[], bool]


def sdl_of_size(size: int) -> bytes:
    tail = b'"""\ntype Query { a: Int }\n'
    return b'"""' + b"x" * (size - len(tail) - 3) + tail


def spec_of_size(size: int) -> bytes:
    document = yaml.safe_load(SPEC_FILE.read_bytes())
    document["info"]["description"] = ""
    pad = size - len(json.dumps(document).encode())
    document["info"]["description"] = "x" * pad
    return json.dumps(document).encode()


@pytest.fixture(params=["graphql-schema", "spec"])
def route(request) -> Route:
    if request.param == "spec":
        return Route("POST", "/api/v1/spec/new", "big.json", "Spec file is larger than 5 MB.",
                     lambda: spec_of_size(LIMIT), OpenApiSpec.objects.exists)
    endpoint = EndpointFactory(path="/graphql", method="POST", is_graphql=True)

    def stored() -> bool:
        endpoint.refresh_from_db()
        return endpoint.graphql_schema is not None

    return Route("PUT", f"/api/v1/endpoint/{endpoint.uuid}/graphql-schema", "schema.graphql",
                 "GraphQL schema larger than 5 MB.", lambda: sdl_of_size(LIMIT), stored)


def send(client, route: Route, body: CountingInput, *, content_length: int | None, **environ):
    """Send ``body`` as the raw request body of ``route``; ``content_length=None`` sends none (chunked)."""
    return send_to(client, route.method, route.path, body, content_length=content_length, **environ)


def send_to(client, method: str, path: str, body: CountingInput, *, content_length: int | None, **environ):
    if content_length is not None:
        environ["CONTENT_LENGTH"] = str(content_length)
    return client.generic(method, path, b"", content_type=f"multipart/form-data; boundary={BOUNDARY}",
                          **{"wsgi.input": body, **environ})


CHUNKED = {"HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True}


def assert_refused(response, route: Route, before: dict) -> None:
    assert response.status_code == 413, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == route.message
    assert not route.stored()
    assert row_counts() == before


@pytest.fixture
def no_spooling(settings, tmp_path, monkeypatch):
    """Uploads spooled to disk would land in ``tmp_path`` and stay there (not deleted on close)."""
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    monkeypatch.setattr(django.core.files.temp, "NamedTemporaryFile",
                        functools.partial(tempfile.NamedTemporaryFile, delete=False))
    yield
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- tests


def test_a_declared_length_over_the_limit_is_413_before_any_byte_is_read(client, route, no_spooling):
    before = row_counts()
    body = multipart(b"x" * (6 * MB), route.filename)
    counting = CountingInput([body])
    response = send(client, route, counting, content_length=len(body))
    assert_refused(response, route, before)
    assert counting.read_bytes == 0


def test_a_file_part_declaring_less_than_it_carries_stops_at_the_limit(client, route, no_spooling):
    # The request's length is within limit + overhead (so not refused up front); the part claims 10 bytes.
    before = row_counts()
    body = multipart(b"x" * (LIMIT + 1), route.filename, declared=10)
    assert len(body) <= LIMIT + MULTIPART_OVERHEAD
    response = send(client, route, CountingInput([body]), content_length=len(body))
    assert_refused(response, route, before)


def test_a_chunked_body_stops_being_read_at_the_limit(client, route, no_spooling):
    before = row_counts()
    counting = CountingInput(endless_file(route.filename, 50 * MB))
    response = send(client, route, counting, content_length=None, **CHUNKED)
    assert_refused(response, route, before)
    assert counting.read_bytes <= LIMIT + MULTIPART_OVERHEAD


def test_a_file_of_exactly_the_limit_is_accepted_without_spooling(client, route, no_spooling):
    content = route.exactly_the_limit()
    assert len(content) == LIMIT
    body = multipart(content, route.filename)
    response = send(client, route, CountingInput([body]), content_length=len(body))
    assert response.status_code in (200, 201), response.content
    assert route.stored()


def test_a_chunked_upload_under_the_limit_is_read_and_stored(client, route):
    body = multipart(route.exactly_the_limit(), route.filename)
    response = send(client, route, CountingInput([body]), content_length=None, **CHUNKED)
    assert response.status_code in (200, 201), response.content
    assert route.stored()


def test_an_oversized_upload_to_an_unknown_endpoint_is_still_404(client):
    body = multipart(b"x" * (6 * MB), "schema.graphql")
    counting = CountingInput([body])
    response = send_to(client, "PUT", "/api/v1/endpoint/7b0e1f8c-6d1a-4c55-9a53-3c1f2f4f9d11/graphql-schema",
                       counting, content_length=len(body))
    assert response.status_code == 404 and response.json() == "Endpoint does not exist."
    assert counting.read_bytes == 0


@pytest.mark.django_db(transaction=True)
def test_through_gunicorn_oversized_uploads_are_413_and_a_chunked_one_is_stored():
    """The real server: a 20 MB chunked body and a 6 MB declared one get the 413 answer (the
    client reads it, the connection is not just dropped); a chunked spec under the limit is stored."""
    _, key = ApiKey.issue(name="uploads")
    web = start_web(process_env())
    try:
        url = f"{web.base_url}/api/v1/spec/new"
        headers = {"Authorization": key, "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
        chunked = requests.post(url, data=endless_file("big.json", 20 * MB), headers=headers, timeout=30)
        assert chunked.status_code == 413 and chunked.json() == "Spec file is larger than 5 MB."
        declared = requests.post(url, data=multipart(b"x" * (6 * MB), "big.json"), headers=headers, timeout=30)
        assert declared.status_code == 413 and declared.json() == "Spec file is larger than 5 MB."
        assert not OpenApiSpec.objects.exists()
        small = requests.post(url, data=iter([multipart(SPEC_FILE.read_bytes(), "petstore.yaml")]),
                              headers=headers, timeout=30)
        assert small.status_code == 201, small.text
        assert OpenApiSpec.objects.filter(name="petstore").exists()
    finally:
        web.stop()


# --------------------------------------------------------------------------------- complexity budgets

def _budget_issue(response) -> str:
    assert response.status_code == 400, response.content
    (issue,) = response.json()["err"]["issues"]
    assert issue["code"] == "custom" and issue["path"] == ["file"]
    return issue["message"]


def test_a_spec_over_its_value_budget_is_a_400_naming_the_budget_and_stores_nothing(client):
    """A spec under 5 MB with more values than the validator may look at (it costs ~50 µs a value):
    refused before validation, JSON and YAML alike (YAML counted while libyaml reads it)."""
    from detections.specs import MAX_SPEC_NODES

    document = yaml.safe_load(SPEC_FILE.read_bytes())
    document["x-bulk"] = list(range(MAX_SPEC_NODES))
    for name, content in (("bulk.json", json.dumps(document).encode()),
                          ("bulk.yaml", yaml.safe_dump(document, default_flow_style=True).encode())):
        assert len(content) < LIMIT
        before = row_counts()
        response = client.post("/api/v1/spec/new", data=multipart(content, name),
                               content_type=f"multipart/form-data; boundary={BOUNDARY}")
        message = _budget_issue(response)
        assert f"more than {MAX_SPEC_NODES:,} values (complexity budget of an uploaded spec" in message, name
        assert row_counts() == before


def test_a_yaml_alias_bomb_is_refused_by_the_value_budget(client):
    bomb = "openapi: 3.0.3\nl0: &l0 [a, a, a, a, a, a, a, a, a, a]\n" + "".join(
        f"l{i}: &l{i} [{', '.join(['*l' + str(i - 1)] * 10)}]\n" for i in range(1, 9))
    response = client.post("/api/v1/spec/new", data=multipart(bomb.encode(), "bomb.yaml"),
                           content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert "complexity budget of an uploaded spec" in _budget_issue(response)
    assert not OpenApiSpec.objects.exists()


def test_a_graphql_schema_over_its_token_budget_is_a_400_naming_the_budget(client):
    from inventory.api.graphql import GRAPHQL_SCHEMA_MAX_TOKENS

    endpoint = EndpointFactory(path="/graphql", method="POST", is_graphql=True)
    fields = " ".join(f"f{i}: Int" for i in range(GRAPHQL_SCHEMA_MAX_TOKENS // 3 + 10))
    sdl = f"type Query {{ {fields} }}".encode()
    assert len(sdl) < LIMIT
    response = client.put(f"/api/v1/endpoint/{endpoint.uuid}/graphql-schema", data=multipart(sdl, "big.graphql"),
                          content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert f"more than {GRAPHQL_SCHEMA_MAX_TOKENS:,} tokens (complexity budget" in _budget_issue(response)
    endpoint.refresh_from_db()
    assert endpoint.graphql_schema is None


def test_thousands_of_repeated_directives_are_a_quick_400_not_minutes(client):
    """200,000 ``@deprecated`` on one field once took 347 s (each error located by scanning the text from
    its start): within the token budget it is now one linear pass and a 400 quoting at most 1,000
    characters of errors; over it, the budget's 400."""
    import time

    endpoint = EndpointFactory(path="/graphql", method="POST", is_graphql=True)
    for count in (20_000, 200_000):
        sdl = ("type Query { a: String" + " @deprecated" * count + " }").encode()
        started = time.process_time()
        response = client.put(f"/api/v1/endpoint/{endpoint.uuid}/graphql-schema", data=multipart(sdl, "d.graphql"),
                              content_type=f"multipart/form-data; boundary={BOUNDARY}")
        message = _budget_issue(response)
        print(f"{count} directives: {time.process_time() - started:.2f} s of CPU")  # reported, not asserted
        assert len(message) < 1200
        assert ("can only be used once" in message) if count == 20_000 else ("complexity budget" in message)
