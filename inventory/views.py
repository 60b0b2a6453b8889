"""Agent protocol routes (DECISIONS §9): key check, configuration and trace ingestion."""
import zlib

import orjson
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse
from rest_framework.exceptions import AuthenticationFailed, UnsupportedMediaType
from rest_framework.response import Response
from rest_framework.views import APIView

from core.authentication import ApiKeyAuthentication
from core.errors import PayloadTooLarge, ServiceBusy, ZodError
from core.safejson import nested_deeper_than, strip_nul
from core.openapi import operation
from core.scopes import Scope, scope_allows

from .ingest.accept import traces_accept
from .ingest.agent_config import agent_config
from .ingest.health import request_recorded, source_of
from .ingest.schema import AgentConfigSerializer, ProcessedTraceSerializer, RawTraceSerializer
from .ingest.validation import MAX_REQUEST_BYTES, traces_validate


class VerifyView(APIView):
    """``GET /api/v1/verify``: agents check their key with it; ``"OK"`` for a valid key."""

    @operation(Scope.INGEST, "verify_key",
               responses={200: OpenApiResponse(response={"type": "string", "enum": ["OK"]})}, tags=["agents"])
    def get(self, request):
        return Response("OK")


# ---------------------------------------------------------------- agent ingestion (DECISIONS §9)

_OK = OpenApiResponse(response={"type": "string", "enum": ["OK"]}, description="Accepted; analysed asynchronously.")
_INGEST_ERRORS = {
    400: OpenApiResponse(description="Malformed JSON or an invalid trace: ZOD body, issue paths start with the "
                                     "trace's index in the batch."),
    401: OpenApiResponse(description='"Client unauthorized"'),
    413: OpenApiResponse(description="Request over 10 MB or a trace over 1 MB."),
    503: OpenApiResponse(description="Too many traces waiting for analysis; retry after the Retry-After seconds."),
}


# Deepest JSON accepted in an ingestion body (bodies sent as objects included); well under the
# nesting Python's json encoder and orjson's encoder (254) can handle.
MAX_TRACE_DEPTH = 128


def _is_json_media_type(request) -> bool:
    """Agents send ``application/json``; a body declared as anything else (text, XML, forms) is refused."""
    media_type = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
    return not media_type or media_type == "application/json" or media_type.endswith("+json")


def _read_json(request) -> tuple[object, bytes]:
    """The request body parsed, and its (inflated, NUL-free) JSON text: 10 MB limit (gzip bodies
    inflated within it), malformed JSON is a ZOD 400, a body declared in another media type is 415."""
    if not _is_json_media_type(request):
        raise UnsupportedMediaType(request.META.get("CONTENT_TYPE", ""))
    body = request.body
    if len(body) > MAX_REQUEST_BYTES:
        raise PayloadTooLarge()
    if request.headers.get("Content-Encoding", "").lower() == "gzip":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = inflater.decompress(body, MAX_REQUEST_BYTES + 1)
        except zlib.error:
            raise ZodError([{"code": "custom", "path": [], "message": "Malformed request body: invalid gzip data"}])
        if len(body) > MAX_REQUEST_BYTES or inflater.unconsumed_tail:
            raise PayloadTooLarge()
    try:
        payload = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ZodError([{"code": "custom", "path": [], "message": "Malformed request body: invalid JSON"}]) from None
    if nested_deeper_than(payload, MAX_TRACE_DEPTH):
        # Storing it (JSONField's json.dumps) or walking it would exhaust the stack: a 500.
        raise ZodError([{"code": "custom", "path": [],
                         "message": f"Malformed request body: nested deeper than {MAX_TRACE_DEPTH} levels"}])
    if b"\\u0000" in body:
        # NUL can only arrive escaped in JSON; PostgreSQL refuses it in jsonb/text, so it is dropped
        # (and the stored text re-written without it).
        payload = strip_nul(payload)
        body = orjson.dumps(payload)
    return payload, body


class _IngestView(APIView):
    batch = True
    processed = False

    def post(self, request):
        traces, body = self.read(request)
        self.store(traces, body, source=source_of(request))
        request.accepted_traces = traces
        return Response("OK")

    @classmethod
    def read(cls, request) -> tuple[list, bytes]:
        """The body's traces, validated, and their JSON text (raises the SPEC's 4xx errors)."""
        payload, body = _read_json(request)
        return traces_validate(payload, batch=cls.batch, processed=cls.processed), body

    @classmethod
    def store(cls, traces: list, body: bytes, *, source: str) -> None:
        """Store validated traces sent by ``source`` (``ServiceBusy`` when the backlog is full: nothing
        stored then)."""
        # The validated body is stored as sent (no re-serialisation) unless a trace carries credentials
        # of its own channel, which traces_accept redacts before storing (inventory.ingest.staging).
        traces_accept(traces=traces, processed=cls.processed, traces_json=body if cls.batch else b"[" + body + b"]",
                      single=not cls.batch, source=source)

    def finalize_response(self, request, response, *args, **kwargs):
        # Ingestion health (console): one pipelined Redis write per request, whatever the answer.
        request_recorded(request, response.status_code, getattr(request, "accepted_traces", None))
        return super().finalize_response(request, response, *args, **kwargs)


class LogRequestSingleView(_IngestView):
    """``POST /api/v1/log-request/single``: one raw trace (Metlo's pure-Python agent).

    Agents post every request they see here, so the accepted case skips DRF (:meth:`as_view`):
    a ``POST`` with a key whose scope allows the route and a valid trace is stored and answered
    ``"OK"`` by :func:`_single_fast`. Everything else (no or unknown key, another scope, another
    method, any 4xx, a 503) goes through the DRF view below, which answers it exactly as for the
    other routes; the fast path stores nothing before it knows the trace is accepted.
    """

    batch = False

    @operation(Scope.INGEST, "log_request_single", request=RawTraceSerializer,
               responses={200: _OK, **_INGEST_ERRORS}, tags=["agents"])
    def post(self, request):
        return super().post(request)

    @classmethod
    def as_view(cls, **initkwargs):
        drf_view = super().as_view(**initkwargs)

        def view(request, *args, **kwargs):
            return _single_fast(cls, request) or drf_view(request, *args, **kwargs)

        # What Django (csrf_exempt) and the schema generator (cls, initkwargs) read from a DRF view.
        view.__dict__.update(drf_view.__dict__)
        view.__name__, view.__doc__ = drf_view.__name__, drf_view.__doc__
        return view


_OK_BODY = b'"OK"'


def _single_fast(view_class, request) -> HttpResponse | None:
    """The accepted single trace without DRF: ``200 "OK"``, or ``None`` to let DRF answer."""
    if request.method != "POST":
        return None
    try:
        found = ApiKeyAuthentication().authenticate(request)
    except AuthenticationFailed:
        return None
    if found is None or not scope_allows(found[1].scope, Scope.INGEST, "POST"):
        return None
    try:
        traces, body = view_class.read(request)
    except Exception:  # noqa: BLE001 - nothing stored yet: the DRF view answers it in the SPEC's shape
        return None
    try:
        view_class.store(traces, body, source=source_of(request, key=found[1]))
    except ServiceBusy:  # raised before storing: the DRF view answers the 503 (Retry-After)
        return None
    # What ingestion health names the source by, as DRF's request would. Only once stored: DRF's
    # request (the 503 above) would read it through to this one and skip authenticating.
    request._auth = found[1]
    request_recorded(request, 200, traces)
    return HttpResponse(_OK_BODY, content_type="application/json")


class LogRequestBatchView(_IngestView):
    """``POST /api/v1/log-request/batch``: an array of raw traces (at most 1,000)."""

    @operation(Scope.INGEST, "log_request_batch", request=RawTraceSerializer(many=True),
               responses={200: _OK, **_INGEST_ERRORS}, tags=["agents"])
    def post(self, request):
        return super().post(request)


class LogRequestBatchV2View(_IngestView):
    """``POST /api/v2/log-request/batch``: processed traces of Metlo 0.1.x agents (at most 1,000)."""

    processed = True

    @operation(Scope.INGEST, "log_request_batch_v2", request=ProcessedTraceSerializer(many=True),
               responses={200: _OK, **_INGEST_ERRORS}, tags=["agents"])
    def post(self, request):
        return super().post(request)


class AgentConfigView(APIView):
    """``GET /api/v1/agent-config``: the configuration Metlo agents load at start."""

    @operation(Scope.INGEST, "agent_config", responses={200: AgentConfigSerializer}, tags=["agents"])
    def get(self, request):
        return Response(agent_config())
