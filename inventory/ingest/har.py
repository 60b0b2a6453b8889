"""HAR files as agent traces: ``manage.py import_har`` feeds them through the normal pipeline.

Each HAR entry becomes a raw trace (the shape ``/api/v1/log-request/batch``
accepts): the URL gives host (with its scheme, for the SSL rule), path and query
parameters; ``postData`` the request body (``params`` are form-encoded when
there is no ``text``); ``response.content.text`` the response body (base64
content is decoded when it is UTF-8 text); ``serverIPAddress`` the destination
address (public/private host detection).
"""
from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from urllib.parse import urlencode, urlsplit


def _pairs(items) -> list[dict]:
    out = []
    for item in items or ():
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out.append({"name": item["name"], "value": "" if item.get("value") is None else str(item["value"])})
    return out


def _response_text(content: dict) -> str:
    text = content.get("text") or ""
    if content.get("encoding") == "base64" and text:
        try:
            return base64.b64decode(text).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return ""  # binary content: nothing to analyse
    return text


def har_entry_trace(entry: dict) -> dict | None:
    """A raw trace for one HAR entry, or ``None`` when the entry has no usable URL or status."""
    request = entry.get("request") or {}
    response = entry.get("response") or {}
    url = urlsplit(str(request.get("url") or ""))
    status = response.get("status")
    if url.scheme not in ("http", "https") or not url.hostname or not isinstance(status, int) or status < 100:
        return None
    post = request.get("postData") or {}
    body = post.get("text")
    if not body and post.get("params"):
        body = urlencode([(p.get("name", ""), p.get("value") or "") for p in post["params"]])
    query = _pairs(request.get("queryString"))
    if not query and url.query:
        from urllib.parse import parse_qsl

        query = [{"name": k, "value": v} for k, v in parse_qsl(url.query, keep_blank_values=True)]
    headers = [h for h in _pairs(request.get("headers")) if not h["name"].startswith(":")]
    if post.get("mimeType") and not any(h["name"].lower() == "content-type" for h in headers):
        headers.append({"name": "Content-Type", "value": post["mimeType"]})
    response_headers = [h for h in _pairs(response.get("headers")) if not h["name"].startswith(":")]
    content = response.get("content") or {}
    if content.get("mimeType") and not any(h["name"].lower() == "content-type" for h in response_headers):
        response_headers.append({"name": "Content-Type", "value": content["mimeType"]})
    port = url.port or (443 if url.scheme == "https" else 80)
    return {
        "request": {
            "url": {"host": f"{url.scheme}://{url.netloc.rsplit('@', 1)[-1]}", "path": url.path or "/",
                    "parameters": query},
            "headers": headers,
            "body": body or "",
            "method": str(request.get("method") or "GET").upper(),
        },
        "response": {"status": status, "headers": response_headers, "body": _response_text(content)},
        "meta": {
            "incoming": True,
            "source": None,
            "sourcePort": None,
            "destination": entry.get("serverIPAddress") or None,
            "destinationPort": str(port),
            "metloSource": "har",
        },
    }


def har_traces(har: dict) -> Iterator[dict | None]:
    """One raw trace (or ``None`` for an unusable entry) per entry of a parsed HAR document."""
    for entry in ((har.get("log") or {}).get("entries") or []):
        yield har_entry_trace(entry) if isinstance(entry, dict) else None
