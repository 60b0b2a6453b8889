"""Per-trace analysis, pure Python: fields, data types, classes, GraphQL, credentials.

The pipeline matches a trace to its endpoint first, then calls
:func:`trace_analyze` with what it needs to know about that endpoint's existing
fields (their false positives). The result says which fields were seen with
which types and classes, which values were sensitive (for redaction), which path
segments carried sensitive data, and how the request was authenticated.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from core.enums import DataSection
from inventory.patterns.segments import path_segments, segment_has_parameter

from .classes import UNCLASSIFIED_HEADERS, ClassConfig
from .channel import own_channel_classes
from .credentials import is_basic_auth, names_have_credentials, request_has_credentials, route_credential_params
from .fields import (
    GRAPHQL_QUERY_PARAMS,
    Leaf,
    body_leaves,
    graphql_leaves,
    graphql_requests,
    graphql_response_leaves,
    header_leaves,
    media_type,
    parse_body,
    query_leaves,
)
from .traces import Trace

REQUEST_SECTIONS = (DataSection.REQUEST_QUERY, DataSection.REQUEST_HEADER, DataSection.REQUEST_BODY)
HEADER_SECTIONS = (DataSection.REQUEST_HEADER, DataSection.RESPONSE_HEADER)
_TYPE_ORDER = {"null": 0, "object": 1, "array": 1, "boolean": 2, "integer": 3, "number": 4, "string": 5}
_AGENT_TYPES = {"string": "string", "number": "number", "integer": "integer", "int": "integer", "float": "number",
                "boolean": "boolean", "bool": "boolean", "null": "null", "object": "object", "array": "array"}


@dataclass(slots=True)
class Observation:
    """A field as seen in one trace (several leaves of an array collapse into one)."""

    dtype: str
    nullable: bool
    classes: set[str]
    content_type: str


@dataclass(slots=True)
class TraceResult:
    trace: Trace
    # (section, data_path) -> observation; status code is implied by the section.
    fields: dict[tuple[str, str], Observation] = field(default_factory=dict)
    # (section, data_path) of leaves whose value was classified (after false positives).
    sensitive: set[tuple[str, str]] = field(default_factory=set)
    # (1-based segment position, class) for sensitive path parameters.
    path_classes: set[tuple[int, str]] = field(default_factory=set)
    sensitive_segments: set[int] = field(default_factory=set)
    has_credentials: bool = False
    basic_auth: bool = False
    is_graphql: bool = False
    graphql_ops: list[str] = field(default_factory=list)
    req_body: tuple[str, object] = ("empty", None)
    resp_body: tuple[str, object] = ("empty", None)

    def status_of(self, section: str) -> int:
        return -1 if section in REQUEST_SECTIONS else self.trace.status


_NOTHING: frozenset[str] = frozenset()


class Detections:
    """A per-batch memo around ``Detector.detect``: header values and short strings repeat a lot."""

    def __init__(self, config: ClassConfig):
        self.config = config
        self._detect = config.detector.detect
        self._memo: dict[tuple, frozenset[str]] = {}

    def __call__(self, key: str | None, value: object) -> frozenset[str]:
        kind = type(value)
        if kind is str:
            if len(value) > 256:
                return frozenset(self._detect(key, value))
        elif kind is not int and kind is not float:
            return _NOTHING  # null, booleans, empty containers
        memo_key = (key, value, kind)
        found = self._memo.get(memo_key)
        if found is None:
            found = frozenset(self._detect(key, value))
            if len(self._memo) < 200_000:
                self._memo[memo_key] = found
        return found


def _merge_type(current: str, new: str) -> str:
    if current == new or new == "null":
        return current
    if current == "null":
        return new
    if {current, new} == {"integer", "number"}:
        return "number"
    return current if _TYPE_ORDER.get(current, 5) >= _TYPE_ORDER.get(new, 5) else new


def _observe(result: TraceResult, section: str, path: str, dtype: str, classes, content_type: str) -> None:
    key = (section, path)
    obs = result.fields.get(key)
    if obs is None:
        result.fields[key] = Observation(dtype if dtype != "null" else "null", dtype == "null", set(classes), content_type)
    else:
        obs.dtype = _merge_type(obs.dtype, dtype)
        obs.nullable = obs.nullable or dtype == "null"
        obs.classes.update(classes)


def trace_analyze(
    trace: Trace,
    *,
    detections: Detections,
    false_positives: dict[tuple[str, str], set[str]],
    pattern: str,
) -> TraceResult:
    """Analyse one trace matched to an endpoint with ``pattern``.

    ``false_positives`` maps (section, dataPath) of this endpoint's fields (for the
    trace's status code) to classes an operator removed: they are not reported.
    Request sections are analysed only when the response status is below 400.
    """
    result = TraceResult(trace)
    analyse_request = trace.status < 400
    req_ct = media_type(trace.header("content-type"))
    resp_ct = media_type(trace.header("content-type", response=True))

    # Credentials (before any redaction).
    result.has_credentials = request_has_credentials(trace.req_headers, trace.query, trace.credential_cookies)
    result.basic_auth = is_basic_auth(trace.header("authorization")) or trace.auth_type == "basic"

    # Path parameters: detection only (no data field), for the path-parameter alert and redaction.
    pattern_segments = path_segments(pattern)
    for position, (segment, pattern_segment) in enumerate(zip(path_segments(trace.path), pattern_segments), 1):
        if segment_has_parameter(pattern_segment):
            classes = detections(None, segment)
            if classes:
                result.sensitive_segments.add(position)
                for name in classes:
                    result.path_classes.add((position, name))

    leaves: list[Leaf] = []
    op_types: list[str] = []
    if analyse_request:
        query_leaves(trace.query, leaves)
        header_leaves(trace.req_headers, DataSection.REQUEST_HEADER, leaves)
        result.req_body = parse_body(trace.req_body, req_ct)
        body_is_graphql = query_is_graphql = False
        for section, document, variables in graphql_requests(*result.req_body, trace.query):
            types = graphql_leaves(document, variables, section, leaves)
            if types:
                op_types.extend(types)
                body_is_graphql = body_is_graphql or section == DataSection.REQUEST_BODY
                query_is_graphql = query_is_graphql or section == DataSection.REQUEST_QUERY
        if query_is_graphql:
            # The document and its variables are analysed as arguments, not as plain parameters.
            leaves = [leaf for leaf in leaves
                      if not (leaf[0] == DataSection.REQUEST_QUERY and leaf[1] in GRAPHQL_QUERY_PARAMS)]
        if not body_is_graphql:
            body_leaves(*result.req_body, DataSection.REQUEST_BODY, leaves)
    header_leaves(trace.resp_headers, DataSection.RESPONSE_HEADER, leaves)
    result.resp_body = parse_body(trace.resp_body, resp_ct)
    if op_types and result.resp_body[0] == "json":
        graphql_response_leaves(result.resp_body[1], op_types, DataSection.RESPONSE_BODY, leaves)
    else:
        body_leaves(*result.resp_body, DataSection.RESPONSE_BODY, leaves)
    result.graphql_ops = op_types
    result.is_graphql = bool(op_types) or trace.graphql_hint or trace.path.endswith("/graphql")

    # The hot loop (every leaf of every trace): locals and inlined bookkeeping.
    content_types = {DataSection.REQUEST_BODY: req_ct, DataSection.RESPONSE_BODY: resp_ct}
    fields = result.fields
    sensitive = result.sensitive
    detect = detections
    empty = frozenset()
    for section, path, key, value, dtype in leaves:
        if section in HEADER_SECTIONS and path in UNCLASSIFIED_HEADERS:
            classes = empty
        else:
            classes = detect(key, value)
            if classes:
                if section in HEADER_SECTIONS or section == DataSection.REQUEST_BODY:
                    classes = own_channel_classes(section, path, classes)
                if false_positives:
                    removed = false_positives.get((section, path))
                    if removed:
                        classes = classes - removed
                if classes:
                    sensitive.add((section, path))
        obs = fields.get((section, path))
        if obs is None:
            fields[(section, path)] = Observation(dtype, dtype == "null", set(classes),
                                                  content_types.get(section, ""))
        else:
            if dtype != obs.dtype:
                obs.dtype = _merge_type(obs.dtype, dtype)
                if dtype == "null":
                    obs.nullable = True
            if classes:
                obs.classes.update(classes)

    if trace.staged and analyse_request:
        _staged_observations(trace, result, detections.config, false_positives)
    if analyse_request and trace.query:
        _route_credentials(trace, result, detections.config, false_positives)
    if trace.processed is not None:
        _processed_observations(trace, result, detections.config, false_positives, analyse_request)
    return result


def _staged_observations(trace: Trace, result: TraceResult, config: ClassConfig, false_positives) -> None:
    """Classes of credential values redacted when the batch was accepted (staging.py): the value is
    ``[REDACTED]`` now, what it was is known from acceptance (a key in the URL is data, DECISIONS §5)."""
    for key, names in trace.staged.items():
        obs = result.fields.get(key)
        classes = config.normalize(names) - false_positives.get(key, set())
        if obs is not None and classes:
            obs.classes.update(classes)
            result.sensitive.add(key)


def _route_credentials(trace: Trace, result: TraceResult, config: ClassConfig, false_positives) -> None:
    """Passwords in the URL recognised by route context and value shape (``credentials.route_credential_params``:
    ``/account/password?old=…&new=…``): the ``password`` class on those query parameters (DECISIONS §5)."""
    if "password" not in config.enabled:
        return
    for name in route_credential_params(trace.path, trace.query):
        key = (DataSection.REQUEST_QUERY, name)
        obs = result.fields.get(key)
        if obs is not None and "password" not in false_positives.get(key, ()):
            obs.classes.add("password")
            result.sensitive.add(key)


def _processed_observations(trace: Trace, result: TraceResult, config: ClassConfig, false_positives, analyse_request):
    """A v2 agent's findings: data types and classes keyed by section and path."""
    processed = trace.processed
    req_ct = media_type(processed.request_content_type)
    resp_ct = media_type(processed.response_content_type)
    header_names, query_names = [], []
    keys = set(processed.data_types) | set(processed.classes)
    for section, path in keys:
        if section in REQUEST_SECTIONS and not analyse_request:
            continue
        if section == DataSection.REQUEST_HEADER:
            header_names.append(path)
        elif section == DataSection.REQUEST_QUERY:
            query_names.append(path)
        types = [_AGENT_TYPES.get(t, "string") for t in processed.data_types.get((section, path), [])]
        non_null = [t for t in types if t != "null"]
        dtype = non_null[0] if non_null else ("null" if types else "string")
        for other in non_null[1:]:
            dtype = _merge_type(dtype, other)
        classes = set()
        if not (section in HEADER_SECTIONS and path in UNCLASSIFIED_HEADERS):
            classes = config.normalize(processed.classes.get((section, path), ()))
            classes = set(own_channel_classes(section, path, classes)) - false_positives.get((section, path), set())
        if classes:
            result.sensitive.add((section, path))
        if section == DataSection.REQUEST_BODY:
            content_type = req_ct
        elif section == DataSection.RESPONSE_BODY:
            content_type = resp_ct
        else:
            content_type = ""
        _observe(result, section, path, dtype, classes, content_type)
        if "null" in types:
            result.fields[(section, path)].nullable = True
    if trace.auth_provided is True or names_have_credentials(header_names, query_names):
        result.has_credentials = True
