"""What a stored ApiTrace holds: the trace with credentials and sensitive values replaced (DECISIONS §4).

* Credentials are always ``"[REDACTED]"`` (``credentials.py`` holds the one rule,
  :func:`~.credentials.is_credential_name`, compared decoded and without array subscripts):
  ``Authorization`` (keeping a known scheme word: ``Bearer [REDACTED]``), cookies, credential
  headers (``X-API-Key``, ``X-Key``, ``X-Auth-Token``…), credential query parameters (``api_key``,
  ``key[]``, ``access_token``, ``code``…), body fields, form fields and multipart parts named like
  credentials, JSON strings that are JSON documents (``MAX_NESTED_JSON`` levels), GraphQL
  arguments named like credentials in the document and the variables they take (whatever the
  analysis found); in free-text bodies (text, XML, NDJSON, invalid or too deep JSON) named values
  (``pass=…``, ``"pin": "…"``, ``<cvv>…</cvv>``), Bearer tokens, JWTs, known key formats and URL
  userinfo passwords are replaced.
* Unless the endpoint has full trace capture on, every value the analysis
  classified as sensitive is replaced too: query parameters, headers, body
  fields, path segments; a free-text body that carried sensitive data is
  replaced whole.
* ``redacted`` is true when anything was replaced (and for v2 traces, whose
  agent already withheld headers and bodies).
* Stored bodies are capped at 64 KB.
"""
from __future__ import annotations

import re
from urllib.parse import urlencode

import orjson

from core.enums import DataSection

from .analysis import TraceResult
from .credentials import (
    REDACTED,
    credential_redact,
    group_replaced,
    is_credential_header,
    is_credential_name,
    is_credential_param,
    may_hold_credential_names,
    may_hold_secret_text,
    route_credential_params,
    scrub_text,
    url_credentials_redact,
)
from .fields import MAX_PARSED_DEPTH, nested_deeper_than

MAX_STORED_BODY = 64 * 1024
# JSON strings that are JSON documents themselves are redacted this many levels deep.
MAX_NESTED_JSON = 2


def _has_sensitive(result: TraceResult, section: str) -> bool:
    return any(s == section for s, _ in result.sensitive)
_GRAPHQL_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
# A GraphQL argument or input-object field: ``name: "literal"`` (block strings too), ``name: 1234``
# or ``name: $variable``. Bounded and linear (alternatives start on different characters).
_GRAPHQL_ARGUMENT = re.compile(
    r'\b([A-Za-z_]\w{0,63})[ \t\r\n,]{0,16}:[ \t\r\n,]{0,16}'
    r'(?:("""(?:[^"\\]|\\.|"(?!"")){0,8192}"""|"(?:[^"\\\r\n]|\\.){0,4096}"|-?\d[\w.+-]{0,64})|\$(\w{1,64}))')


class _Redactor:
    """Replaces, in place, credential-named fields and (unless full capture) sensitive leaves.

    The parsed body is the analysis' own copy and is not used after redaction, so
    no new tree is built; child paths are only spelled out when some leaf of the
    section is sensitive.
    """

    def __init__(self, sensitive: set[tuple[str, str]], section: str, full_capture: bool, depth: int = 0,
                 graphql: bool = False):
        self.sensitive = {path for sec, path in sensitive if sec == section} if not full_capture else set()
        self.track = bool(self.sensitive)
        self.changed = False
        self.depth = depth
        # A GraphQL request's document (``query``) is redacted by its own rules (its arguments and the
        # variables they take), not scrubbed as text.
        self.graphql = graphql

    def walk(self, node: object, path: str) -> object:
        if isinstance(node, dict):
            for key, value in node.items():
                if is_credential_name(key) and value not in (None, "", [], {}):
                    node[key] = REDACTED
                    self.changed = True
                elif self.graphql and key == "query" and path in ("", "[]") and value.__class__ is str:
                    continue
                elif self.track or isinstance(value, (dict, list)) or _maybe_json(value) or _maybe_text(value):
                    node[key] = self.walk(value, f"{path}.{key}" if path else key)
            return node
        if isinstance(node, list):
            child_path = f"{path}[]"
            for index, item in enumerate(node):
                if self.track or isinstance(item, (dict, list)) or _maybe_json(item) or _maybe_text(item):
                    node[index] = self.walk(item, child_path)
            return node
        if self.track and path in self.sensitive and node is not None and not isinstance(node, bool):
            self.changed = True
            return REDACTED
        if _maybe_json(node) and self.depth < MAX_NESTED_JSON:
            return self.nested(node)
        if _maybe_text(node):
            # Credentials inside a string: ``password=…`` in a log line, ``postgres://user:PASS@…``,
            # ``?code=…&token=…`` in a URL, a Bearer token or a JWT.
            new, changed = url_credentials_redact(node)
            if changed:
                self.changed = True
                return new
        return node

    def nested(self, text: str) -> str:
        """A JSON string holding a JSON object or array, with its credential-named fields redacted
        (recursively, ``MAX_NESTED_JSON`` levels); text that does not parse is scrubbed as text."""
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            new, changed = scrub_text(text)
        else:
            if not isinstance(parsed, (dict, list)):
                return text
            if nested_deeper_than(parsed, MAX_PARSED_DEPTH):
                new, changed = scrub_text(text)
            else:
                inner = _Redactor(set(), "", True, self.depth + 1)
                new_tree = inner.walk(parsed, "")
                new, changed = (orjson.dumps(new_tree).decode(), True) if inner.changed else (text, False)
        self.changed = self.changed or changed
        return new


def _maybe_json(value: object) -> bool:
    """A string that may be a JSON document holding a credential name (cheap tests only)."""
    return (value.__class__ is str and value[:1] in ("{", "[") and len(value) > 6  # type: ignore[index]
            and may_hold_credential_names(value))  # type: ignore[arg-type]


def _maybe_text(value: object) -> bool:
    """A string that may hold a credential inside its text (cheap tests only)."""
    return value.__class__ is str and may_hold_secret_text(value)  # type: ignore[arg-type]


def _cap(text: str) -> str:
    return text if len(text) <= MAX_STORED_BODY else text[:MAX_STORED_BODY] + "…[truncated]"


def _body(kind: str, parsed: object, original: str, *, section: str, result: TraceResult,
          full_capture: bool, graphql_op: str | None = None, graphql_request: bool = False) -> tuple[str, bool]:
    if kind == "empty":
        return original, False
    if kind == "json":
        if not may_hold_credential_names(original) and not may_hold_secret_text(original) and (
                full_capture or not _has_sensitive(result, section)):
            return _cap(original), False  # nothing to replace: skip the walk
        redactor = _Redactor(result.sensitive, section, full_capture, graphql=graphql_request)
        if graphql_op and isinstance(parsed, dict) and isinstance(parsed.get("data"), dict):
            # Response fields were recorded under the operation type (query.user.email).
            data = redactor.walk(parsed["data"], graphql_op)
            rest = redactor.walk({k: v for k, v in parsed.items() if k != "data"}, "")
            new = {**rest, "data": data} if isinstance(rest, dict) else parsed
        else:
            new = redactor.walk(parsed, "")
        changed = redactor.changed
        if graphql_request:
            new, credentials_found = _graphql_credentials_redact(new)
            changed = changed or credentials_found
        if graphql_request and not full_capture and any(s == section for s, _ in result.sensitive):
            new, changed = _graphql_request_redact(new), True
        if not changed:
            return _cap(original), False
        return _cap(orjson.dumps(new).decode()), True
    if kind == "form":
        sensitive = {p for s, p in result.sensitive if s == section} if not full_capture else set()
        changed = False
        pairs = []
        for name, value in parsed:  # type: ignore[union-attr]
            if (is_credential_name(name) and value) or name in sensitive:
                pairs.append((name, REDACTED))
                changed = True
            else:
                pairs.append((name, value))
        return (_cap(urlencode(pairs)), True) if changed else (_cap(original), False)
    # text and multipart
    if not full_capture and (section, "") in result.sensitive:
        return REDACTED, True
    text, changed = scrub_text(original)
    if kind == "multipart" and not full_capture:
        for name, _ in parsed or ():  # type: ignore[union-attr]
            if (section, name) in result.sensitive:
                return REDACTED, True
    return _cap(text), changed


def _graphql_request_redact(body: object) -> object:
    """Sensitive GraphQL arguments: string literals of the document and every variable value."""
    def scrub(item):
        if not isinstance(item, dict):
            return item
        out = dict(item)
        if isinstance(out.get("query"), str):
            out["query"] = _GRAPHQL_STRING.sub(f'"{REDACTED}"', out["query"])
        if isinstance(out.get("variables"), dict):
            out["variables"] = _all_values(out["variables"])
        return out

    return [scrub(i) for i in body] if isinstance(body, list) else scrub(body)


def _graphql_credentials_redact(body: object) -> tuple[object, bool]:
    """GraphQL requests (one or a batch) with the arguments named like credentials redacted, whatever
    the analysis found: literals in the document (``login(password: "…")``, ``input: {pin: 1234}``)
    become ``"[REDACTED]"``, and so do the variables such arguments take (``password: $pw`` → the
    value of ``variables.pw``). Returns (body, changed)."""
    changed = False

    def scrub(item: object) -> object:
        nonlocal changed
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            return item
        document = item["query"]
        if not may_hold_credential_names(document):
            return item
        variables: list[str] = []

        def argument(match: re.Match) -> str:
            if not is_credential_name(match.group(1)):
                return match.group(0)
            if match.group(3):
                variables.append(match.group(3))
                return match.group(0)
            return group_replaced(match, 2, f'"{REDACTED}"')

        new_document = _GRAPHQL_ARGUMENT.sub(argument, document)
        out = dict(item)
        if new_document != document:
            out["query"], changed = new_document, True
        values = item.get("variables")
        if isinstance(values, dict) and any(values.get(name) not in (None, "", [], {}) for name in variables):
            out["variables"] = {k: REDACTED if k in variables and v not in (None, "", [], {}) else v
                                for k, v in values.items()}
            changed = True
        return out

    new = [scrub(i) for i in body] if isinstance(body, list) else scrub(body)
    return new, changed


def _all_values(node: object) -> object:
    if isinstance(node, dict):
        return {k: _all_values(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_all_values(v) for v in node]
    return node if node is None or isinstance(node, bool) else REDACTED


def trace_redact(result: TraceResult, *, full_capture: bool) -> dict:
    """The ApiTrace column values for an analysed trace."""
    trace = result.trace
    redacted = trace.withheld
    path = trace.path
    if result.sensitive_segments and not full_capture:
        segments = path.split("/")
        # segments[0] is "" (leading slash); positions are 1-based over real segments.
        for position in result.sensitive_segments:
            if position < len(segments):
                segments[position] = REDACTED
        path = "/".join(segments)
        redacted = True

    query_sensitive = {p for s, p in result.sensitive if s == DataSection.REQUEST_QUERY} if not full_capture else set()
    # Credentials by route context (a password under a neutral name on a password-change route).
    route_secrets = set(route_credential_params(trace.path, trace.query))
    params = []
    for name, value in trace.query:
        if (is_credential_param(name) and value) or name in query_sensitive or name in route_secrets:
            value, redacted = REDACTED, True
        elif value and may_hold_secret_text(value):
            value, changed = url_credentials_redact(value)
            redacted = redacted or changed
        params.append({"name": name, "value": value})

    def headers(pairs, section):
        nonlocal redacted
        sensitive = {p for s, p in result.sensitive if s == section} if not full_capture else set()
        out = []
        for name, value in pairs:
            if is_credential_header(name) and value:
                value, redacted = credential_redact(name, value), True
            elif name.lower() in sensitive:
                value, redacted = REDACTED, True
            elif value and ("=" in value or may_hold_secret_text(value)):
                # A URL in a header (Location, Referer, Link) with ?code=…&token=…, or text holding one.
                value, changed = url_credentials_redact(value)
                redacted = redacted or changed
            out.append({"name": name, "value": value})
        return out

    graphql_op = result.graphql_ops[0] if len(set(result.graphql_ops)) == 1 else None
    request_body, changed = _body(*result.req_body, trace.req_body, section=DataSection.REQUEST_BODY, result=result,
                                  full_capture=full_capture, graphql_request=result.is_graphql)
    redacted = redacted or changed
    response_body, changed = _body(*result.resp_body, trace.resp_body, section=DataSection.RESPONSE_BODY,
                                   result=result, full_capture=full_capture, graphql_op=graphql_op)
    redacted = redacted or changed
    return {
        "host": trace.host,
        "path": path,
        "method": trace.method,
        "request_parameters": params,
        "request_headers": headers(trace.req_headers, DataSection.REQUEST_HEADER),
        "request_body": request_body,
        "response_status": trace.status,
        "response_headers": headers(trace.resp_headers, DataSection.RESPONSE_HEADER),
        "response_body": response_body,
        "meta": trace.meta,
        "redacted": redacted,
    }
