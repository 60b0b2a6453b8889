"""The credential channel adds no data class (DECISIONS §5).

A request's own credentials in their own channel — the ``Authorization`` and ``Cookie``
headers and API-key headers (``credentials.AUTH_HEADERS``) — are authentication, not data:
they drive ``isAuthenticatedDetected`` and are redacted, but give the endpoint no class, so
riskScore tells endpoints that expose data apart from endpoints that merely require login.
``Set-Cookie`` is the same channel seen from the server. A password in the request body
(logging in, registering) is the credential channel too, and so is a password-named request
header; a password anywhere else (a response section, a query parameter) is data.

Credentials elsewhere stay data: a token in a response body or in a non-credential header,
a key in a request body or in the URL's query (``api_key`` / ``authentication_token``).
"""
from __future__ import annotations

from core.enums import DataSection

from .credentials import is_auth_header

_NOTHING: frozenset[str] = frozenset()
# Classes that are the credential channel in a request section (a password sent to log in).
_REQUEST_CHANNEL_CLASSES = frozenset({"password"})
_SERVER_CREDENTIAL_HEADERS = frozenset({"set-cookie", "set-cookie2"})


def own_channel_classes(section: str, path: str, classes):
    """``classes`` found at (``section``, ``path``) less what is the credential channel there:
    every class of a credential-channel request header or of ``Set-Cookie``, and ``password``
    in request headers and bodies. Returns ``classes`` itself when nothing is removed."""
    if section == DataSection.REQUEST_HEADER:
        if is_auth_header(path):
            return _NOTHING
        return classes - _REQUEST_CHANNEL_CLASSES if "password" in classes else classes
    if section == DataSection.RESPONSE_HEADER:
        return _NOTHING if path.lower() in _SERVER_CREDENTIAL_HEADERS else classes
    if section == DataSection.REQUEST_BODY and "password" in classes:
        return classes - _REQUEST_CHANNEL_CLASSES
    return classes
