"""gunicorn's access log with credentials masked (``gunicorn.conf.py`` names it as the logger class).

gunicorn writes each request line as sent (``GET /path?api_key=… HTTP/1.1``), and a log format may
quote any request header or WSGI variable. This logger masks, with the API's rule
(``core.masking``): the values of credential query parameters (``api_key``, ``token``, ``password``…)
in the request line, the query string and the referer; and every atom that is a credential header
(``Authorization``, ``Cookie``, ``X-API-Key``…) as a request header or as a WSGI variable. Ids,
paths and the rest of the line are kept.
"""
from __future__ import annotations

from gunicorn.glogging import Logger

from inventory.ingest.credentials import is_credential_header

# core.masking imports models: loaded on the first request line, once the worker has loaded Django
# (gunicorn's master loads this module before the application).


def _uri_masked(uri: str) -> str:
    from .masking import query_masked

    path, sep, query = uri.partition("?")
    return f"{path}?{query_masked(query)}" if sep else uri


class MaskedAccessLogger(Logger):
    """gunicorn's logger whose access-log atoms hold no credential (see the module)."""

    def atoms(self, resp, req, environ, request_time):
        from .masking import MASK, query_masked, url_masked

        atoms = super().atoms(resp, req, environ, request_time)
        raw_uri = environ.get("RAW_URI", "")
        if "?" in raw_uri:
            masked_uri = _uri_masked(raw_uri)
            atoms["r"] = atoms["r"].replace(raw_uri, masked_uri, 1)
            atoms["{raw_uri}e"] = masked_uri
        if atoms.get("q"):
            atoms["q"] = atoms["{query_string}e"] = query_masked(atoms["q"])
        if atoms.get("f") not in (None, "-"):
            atoms["f"] = atoms["{http_referer}e"] = url_masked(atoms["f"])
            atoms["{referer}i"] = atoms["f"]
        for name in list(atoms):
            if name.endswith("}i") and is_credential_header(name[1:-2]):
                atoms[name] = MASK
            elif name.startswith("{http_") and name.endswith("}e") and name != "{http_referer}e" and \
                    is_credential_header(name[6:-2].replace("_", "-")):
                atoms[name] = MASK
        return atoms
