"""Host names and paths in the forms the service stores and compares.

* :func:`host_normalize`: the host name of an agent's ``url.host`` (scheme, user info,
  port, brackets and trailing dot dropped, lower case). Stored host names are its
  output, so the spec diff compares them as they are.
* :func:`host_scheme`: the scheme an agent wrote in ``url.host``, if any.
* :func:`path_normalize`: a concrete path as stored: leading ``/``, no query or
  fragment, no empty segments, no trailing ``/``.
* :func:`template_normalize`: a path as an OpenAPI document writes it (path template,
  server base path): query and fragment dropped, leading ``/`` added, trailing ``/``
  dropped, otherwise as written (an empty segment stays: a template matches what it says).
"""
from __future__ import annotations

MAX_PATH_LENGTH = 2048
MAX_HOST_LENGTH = 255


def host_normalize(raw: str | None) -> str:
    """``http://User@API.Example.com:8080/x`` -> ``api.example.com``; IPv6 keeps its brackets off.

    Idempotent: a normalised name is returned unchanged.
    """
    host = (raw or "").strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in host:
        host = host.rsplit("@", 1)[1]
    if host.startswith("["):  # [::1]:8080
        end = host.find("]")
        host = host[1:end] if end > 0 else host[1:]
    elif host.count(":") == 1:  # name:port (a bare IPv6 literal has several colons)
        host = host.split(":", 1)[0]
    host = host.rstrip(".").lower()
    return host[:MAX_HOST_LENGTH]


def host_scheme(raw: str | None) -> str | None:
    """The scheme written in an agent's ``url.host`` (``http://h:5056`` -> ``http``), if any."""
    host = (raw or "").strip().lower()
    if host.startswith("https://"):
        return "https"
    if host.startswith("http://"):
        return "http"
    return None


def path_normalize(raw: str | None) -> str:
    """A concrete path: leading ``/``, no query/fragment, no empty segments, no trailing ``/``.

    A full URL in place of a path gives its path. At most 2,048 characters. Idempotent.
    """
    path = (raw or "").strip()
    if "://" in path:  # a full URL in place of a path
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    path = path.split("?", 1)[0].split("#", 1)[0]
    segments = [s for s in path.split("/") if s]
    return ("/" + "/".join(segments))[:MAX_PATH_LENGTH]


def template_normalize(path: str | None) -> str:
    """An OpenAPI path template or base path: ``users/{id}/?x`` -> ``/users/{id}``; ``""`` -> ``/``.

    Unlike :func:`path_normalize`, inner empty segments and surrounding spaces are kept.
    On a normalised concrete path it is the identity.
    """
    path = (path or "/").split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        path = "/" + path
    return path.rstrip("/") or "/"
