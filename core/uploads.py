"""Bounded file uploads: the multipart routes (GraphQL schema, OpenAPI specs) read at most their limit.

Django applies ``DATA_UPLOAD_MAX_MEMORY_SIZE`` to form fields but not to files: its default upload
handlers keep a file in memory up to ``FILE_UPLOAD_MAX_MEMORY_SIZE`` and spool the rest, however
large, to a temporary file before a view can look at its size. An upload view built on
:class:`BoundedUploadView` instead:

* refuses a declared ``Content-Length`` over its limit (plus ``MULTIPART_OVERHEAD`` for the
  boundaries and part headers) with ``413`` before reading any of the body;
* keeps files in memory only (never a temporary file) and answers ``413`` as soon as the bytes
  actually received in file parts pass the limit, whatever the request or the part declared;
* reads a chunked body (no ``Content-Length``; the server de-chunks it and says so with
  ``wsgi.input_terminated``, as gunicorn does) up to the same bound, instead of seeing it empty.

The ``413`` body is the view's JSON string (``PayloadTooLarge``, core/errors.py). Nothing is
stored: the body is refused while the request is parsed, before the view's service runs.
"""
from __future__ import annotations

import io

from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.core.handlers.wsgi import LimitedStream
from rest_framework.parsers import MultiPartParser
from rest_framework.views import APIView

from .errors import PayloadTooLarge

# What a multipart request adds around its file: boundaries, part headers, a file name.
MULTIPART_OVERHEAD = 64 * 1024


def declared_length(meta: dict) -> int:
    """The request's ``Content-Length`` (0 when missing or malformed, as Django reads it)."""
    try:
        return max(int(meta.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


class BoundedMemoryUploadHandler(FileUploadHandler):
    """Keeps the request's file parts in memory and raises ``PayloadTooLarge(message)`` once the
    bytes received in them, all parts together, pass ``max_bytes``.

    Memory held is at most ``max_bytes`` plus one chunk; no temporary file is ever created.
    The count is of bytes received, so a part's own (client-declared) length is never trusted.
    """

    def __init__(self, request=None, *, max_bytes: int, message: str):
        super().__init__(request)
        self.max_bytes = max_bytes
        self.message = message
        self.received = 0
        self.file: io.BytesIO | None = None

    def new_file(self, *args, **kwargs) -> None:
        super().new_file(*args, **kwargs)
        self.file = io.BytesIO()

    def receive_data_chunk(self, raw_data: bytes, start: int) -> None:
        self.received += len(raw_data)
        if self.received > self.max_bytes:
            raise PayloadTooLarge(self.message)
        self.file.write(raw_data)

    def file_complete(self, file_size: int) -> InMemoryUploadedFile:
        self.file.seek(0)
        return InMemoryUploadedFile(
            file=self.file, field_name=self.field_name, name=self.file_name, content_type=self.content_type,
            size=file_size, charset=self.charset, content_type_extra=self.content_type_extra,
        )


class BoundedMultiPartParser(MultiPartParser):
    """DRF's multipart parser with the view's limit: ``413`` up front for a declared length over
    the limit, then :class:`BoundedMemoryUploadHandler` as the only upload handler."""

    def __init__(self, *, max_bytes: int, message: str):
        self.max_bytes = max_bytes
        self.message = message

    def parse(self, stream, media_type=None, parser_context=None):
        request = parser_context["request"]
        if declared_length(request.META) > self.max_bytes + MULTIPART_OVERHEAD:
            raise PayloadTooLarge(self.message)
        # The Django request's handlers are the ones DRF's parser hands to Django's.
        request._request.upload_handlers = [
            BoundedMemoryUploadHandler(request._request, max_bytes=self.max_bytes, message=self.message),
        ]
        return super().parse(stream, media_type, parser_context)


def chunked_body_bounded(request, *, cap: int) -> None:
    """Let the parser read a de-chunked body (no ``Content-Length``) of ``request`` (Django's),
    at most ``cap`` bytes of it. Django frames every body by ``Content-Length`` and so reads a
    chunked one as empty; a server that de-chunks says so with ``wsgi.input_terminated`` (PEP
    3333 errata), and then the input ends by itself. No-op for any other request."""
    meta = request.META
    if declared_length(meta) or "chunked" not in meta.get("HTTP_TRANSFER_ENCODING", "").lower():
        return
    if not meta.get("wsgi.input_terminated") or getattr(request, "_read_started", False):
        return
    request._stream = LimitedStream(meta["wsgi.input"], cap)
    meta["CONTENT_LENGTH"] = str(cap)  # an upper bound; the stream ends where the body does


class BoundedUploadView(APIView):
    """An APIView whose body is a multipart upload of at most ``upload_max_bytes`` in its file
    part(s); over it, ``413`` with the JSON string ``upload_too_large``."""

    upload_max_bytes: int
    upload_too_large: str

    def get_parsers(self):
        return [BoundedMultiPartParser(max_bytes=self.upload_max_bytes, message=self.upload_too_large)]

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        chunked_body_bounded(request._request, cap=self.upload_max_bytes + MULTIPART_OVERHEAD)
