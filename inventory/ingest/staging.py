"""What an accepted batch row holds: traces whose credential channel is already redacted.

An ``IngestBatch`` row waits in PostgreSQL until a worker analyses it (seconds, or longer under a
backlog or while workers are down). From the moment it is accepted it holds no credential of the
request's own channel (DECISIONS §4, ``credentials.AUTH_HEADERS`` / ``AUTH_QUERY_PARAMS``):

* credential headers (``Authorization``, ``Cookie``, ``X-API-Key``…) hold ``[REDACTED]``, keeping a
  known scheme word (``Basic [REDACTED]``, ``Bearer [REDACTED]``): the worker still sees that the
  request was authenticated, and that it used Basic authentication;
* credential query parameters (``api_key``, ``key``, ``key[]``, ``access_token``…), given as
  parameters or in the URL's query string, hold ``[REDACTED]``. A credential in the URL is also *data* (DECISIONS
  §5: ``api_key`` / ``authentication_token``): which of those two classes its value showed is
  decided here and kept in the trace under :data:`STAGED_CLASSES`, for the worker's analysis;
* user information in ``url.host`` (``https://user:password@host``) is dropped.

Cookies keep their names (DECISIONS §4): ``Cookie: lang=[REDACTED]; sessionid=[REDACTED]``. Which
of them are credentials is decided here, on the values (``credentials.is_credential_cookie``: a
neutral name holding a JWT or a long random token is one), and kept in the trace under
:data:`STAGED_COOKIES`. So is a fingerprint of the request's credentials (:data:`STAGED_CLIENT`: a
keyed hash, never the credential), which tells users apart where a generated spec may only copy
values seen from several users (DECISIONS §10).

A trace carrying the test-run marker (``X-Apiscope-Test``, DECISIONS §8) is judged here, at the
time it is accepted (``core.testmarker``): :data:`STAGED_MARKER` says ``test`` when the tag verifies
and the run is open or closed minutes ago (the worker keeps such traces out of the inventory,
alerts and specs, and counts them), ``forged`` otherwise (analysed as ordinary traffic, counted).
The marker's value is redacted here, so it is never stored.

Names that are redacted in stored traces but do not authenticate (``X-Pass``, ``?code=``,
``?password=``, see ``credentials.py``) are left alone here, like bodies and the response (the
worker classifies them, and drops them from the row once analysed). The worker accepts
:data:`STAGED_CLASSES`, :data:`STAGED_COOKIES` and :data:`STAGED_CLIENT` only from here: an agent's
own are dropped.
"""
from __future__ import annotations

from functools import lru_cache
from urllib.parse import parse_qsl, urlencode

from django.utils.crypto import salted_hmac

from core.enums import DataSection

from .credentials import (
    REDACTED,
    cookie_header_credentials,
    cookie_pairs,
    credential_key,
    credential_redact,
    is_auth_header,
    is_auth_param,
)

STAGED_CLASSES = "apiscopeStagedClasses"
STAGED_COOKIES = "apiscopeCredentialCookies"
STAGED_CLIENT = "apiscopeClient"
STAGED_MARKER = "apiscopeTestMarker"  # "test" (a verified X-Apiscope-Test of a live run) or "forged"
STAGED_KEYS = (STAGED_CLASSES, STAGED_COOKIES, STAGED_CLIENT, STAGED_MARKER)
MARKER_TEST, MARKER_FORGED = "test", "forged"
_MARKER_HEADER = "x-apiscope-test"
_CLIENT_SALT = "apiscope.ingest.client-fingerprint"
# The built-in classes a credential of the URL can be (the detector's credential reading).
CREDENTIAL_CLASSES = ("api_key", "authentication_token")


@lru_cache(maxsize=1)
def _credential_detector():
    from classification.detector import Detector

    return Detector(CREDENTIAL_CLASSES)


def _scalar_text(value: object) -> str | None:
    """A non-empty credential value as text; None for empty, null and false values (no credential)."""
    if value is None or value is False or value == "":
        return None
    return value if isinstance(value, str) else str(value)


def _staged_param(name: str, value: str, classes: dict[str, list[str]], secrets: list[str] | None = None) -> str:
    """Record the credential classes of a URL credential's value in ``classes`` (and the value in
    ``secrets``, for the client fingerprint); its redacted form."""
    if secrets is not None:
        secrets.append(f"?{credential_key(name)}={value}")
    found = _credential_detector().detect(name, value)
    if found:
        classes[name] = sorted(set(classes.get(name, ())) | found)
    return REDACTED


def _stage_query_string(path: str, classes: dict[str, list[str]], secrets: list[str]) -> str | None:
    """``path`` with the credential parameters of its query string redacted; None when it has none."""
    head, _, rest = path.partition("?")
    query, hash_mark, fragment = rest.partition("#")
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(value and is_auth_param(name) for name, value in pairs):
        return None
    staged = []
    for name, value in pairs:
        staged.append((name, _staged_param(name, value, classes, secrets) if value and is_auth_param(name) else value))
    return f"{head}?{urlencode(staged)}{hash_mark}{fragment}"


def _redact_pairs(pairs: object, is_credential, redact) -> list | None:
    """A copy of ``[{name, value}]`` whose credential items (``is_credential(name)``, non-empty value)
    hold ``redact(name, value)``; None when there is none (or ``pairs`` is not a list)."""
    if not isinstance(pairs, list):
        return None
    new_pairs = None
    for index, item in enumerate(pairs):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        value = _scalar_text(item.get("value"))
        if value is None or not is_credential(item["name"]):
            continue
        if new_pairs is None:
            new_pairs = list(pairs)
        new_pairs[index] = {**item, "value": redact(item["name"], value)}
    return new_pairs


def trace_stage(trace: dict, markers=None, accepted_at=None) -> dict | None:
    """A copy of one validated trace with its credential channel redacted, or None when it has
    nothing to redact. The input is never modified. ``markers``: a ``core.testmarker.MarkerCheck``
    shared by the traces of one request (made here when None and a marker is present);
    ``accepted_at``: when the trace was accepted (now when None)."""
    request = trace.get("request") if isinstance(trace.get("request"), dict) else {}
    new_request = None
    secrets: list[str] = []  # the credentials in clear, for the client fingerprint
    cookies: list[str] = []
    new_headers = _redact_pairs(request.get("headers"), is_auth_header,
                                lambda name, value: _staged_header(name, value, secrets, cookies))
    if new_headers is not None:
        new_request = {**request, "headers": new_headers}
    marker = _marker_value(new_headers if new_headers is not None else request.get("headers"))
    verdict = None
    if marker is not None:
        index, value = marker
        verdict = _marker_verdict(value, markers, accepted_at)
        headers = list(new_headers if new_headers is not None else request["headers"])
        headers[index] = {**headers[index], "value": REDACTED}
        new_request = {**(new_request or request), "headers": headers}
    url = request.get("url")
    classes: dict[str, list[str]] = {}
    if isinstance(url, dict):
        new_url = _stage_url(url, classes, secrets)
        if new_url is not None:
            new_request = {**(new_request or request), "url": new_url}
    if new_request is None and not classes and not any(key in trace for key in STAGED_KEYS):
        return None
    staged = {k: v for k, v in trace.items() if k not in STAGED_KEYS}
    if new_request is not None:
        staged["request"] = new_request
    if classes:
        staged[STAGED_CLASSES] = [[DataSection.REQUEST_QUERY.value, name, names] for name, names in classes.items()]
    if cookies:
        staged[STAGED_COOKIES] = sorted(set(cookies))
    if secrets:
        staged[STAGED_CLIENT] = client_fingerprint(secrets)
    if verdict is not None:
        staged[STAGED_MARKER] = verdict
    return staged


def _marker_value(headers: object) -> tuple[int, str] | None:
    """(index, value) of the first non-empty ``X-Apiscope-Test`` header, if any."""
    if not isinstance(headers, list):
        return None
    for index, item in enumerate(headers):
        if isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].strip().lower() == _MARKER_HEADER:
            value = _scalar_text(item.get("value"))
            if value is not None:
                return index, value
    return None


def _marker_verdict(value: str, markers, accepted_at) -> str:
    from core.testmarker import MarkerCheck, MarkerVerdict

    checker = markers if markers is not None else MarkerCheck()
    return MARKER_TEST if checker.check(value, accepted_at) is MarkerVerdict.TEST else MARKER_FORGED


def _staged_header(name: str, value: str, secrets: list[str], cookies: list[str]) -> str:
    """The staged form of a credential-channel header; records its credentials (and, for ``Cookie``,
    the names of its credential cookies, decided on their values)."""
    if credential_key(name) == "cookie":
        found = cookie_header_credentials(value)
        if found is None:
            secrets.append(value)  # not name=value pairs: the whole header, as before names were kept
        else:
            cookies.extend(found)
            secrets.extend(f"{n}={v}" for n, v in _cookie_values(value, found))
    else:
        secrets.append(f"{credential_key(name)}:{value}")
    return credential_redact(name, value)


def _cookie_values(header: str, names: list[str]) -> list[tuple[str, str]]:
    wanted = set(names)
    return [(n, v) for n, v in cookie_pairs(header) or () if n in wanted]


def client_fingerprint(secrets: list[str]) -> str:
    """A keyed hash of a request's credentials (``SECRET_KEY``-derived, 16 hex digits): the same
    credentials give the same fingerprint, and nothing about them can be read back from it."""
    return salted_hmac(_CLIENT_SALT, "\x00".join(sorted(secrets)), algorithm="sha256").hexdigest()[:16]


def _stage_url(url: dict, classes: dict[str, list[str]], secrets: list[str]) -> dict | None:
    new_url = None
    new_parameters = _redact_pairs(url.get("parameters"), is_auth_param,
                                   lambda name, value: _staged_param(name, value, classes, secrets))
    if new_parameters is not None:
        new_url = {**url, "parameters": new_parameters}
    path = url.get("path")
    if isinstance(path, str) and "?" in path:
        new_path = _stage_query_string(path, classes, secrets)
        if new_path is not None:
            new_url = {**(new_url or url), "path": new_path}
    host = url.get("host")
    if isinstance(host, str) and "@" in host:
        scheme, sep, rest = host.rpartition("://")
        new_url = {**(new_url or url), "host": f"{scheme}{sep}{rest.rsplit('@', 1)[1]}"}
    return new_url


def traces_stage(traces: list, accepted_at=None) -> list | None:
    """The traces as an ``IngestBatch`` row may hold them (see the module), or None when none of
    them has anything to redact (the caller can store its JSON text as received). Test-run markers
    are judged as of ``accepted_at`` (now when None), each run read once for the whole list."""
    from core.testmarker import MarkerCheck

    staged = None
    markers = MarkerCheck()
    for index, trace in enumerate(traces):
        new = trace_stage(trace, markers, accepted_at) if isinstance(trace, dict) else None
        if new is not None:
            if staged is None:
                staged = list(traces)
            staged[index] = new
    return staged


def staged_classes(raw: dict) -> dict[tuple[str, str], list[str]]:
    """The credential classes :func:`trace_stage` recorded in a stored trace, keyed (section, name)."""
    out: dict[tuple[str, str], list[str]] = {}
    entries = raw.get(STAGED_CLASSES)
    if not isinstance(entries, list):
        return out
    for entry in entries:
        if (isinstance(entry, list) and len(entry) == 3 and entry[0] == DataSection.REQUEST_QUERY
                and isinstance(entry[1], str) and isinstance(entry[2], list)):
            out[(entry[0], entry[1])] = [n for n in entry[2] if n in CREDENTIAL_CLASSES]
    return out


def staged_cookies(raw: dict) -> frozenset[str]:
    """The credential cookies :func:`trace_stage` found in a stored trace's ``Cookie`` header."""
    names = raw.get(STAGED_COOKIES)
    if not isinstance(names, list):
        return frozenset()
    return frozenset(n for n in names if isinstance(n, str))


def staged_client(raw: dict) -> str | None:
    """The client fingerprint :func:`trace_stage` took from a stored trace's credentials, if any."""
    value = raw.get(STAGED_CLIENT)
    return value if isinstance(value, str) and len(value) == 16 else None


def staged_marker(raw: dict) -> str | None:
    """``test``, ``forged`` or None: what :func:`trace_stage` made of the trace's test-run marker."""
    value = raw.get(STAGED_MARKER)
    return value if value in (MARKER_TEST, MARKER_FORGED) else None
