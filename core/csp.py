"""Content-Security-Policy on every page a browser renders (the console, the API's docs page).

The policy (``CONTENT_SECURITY_POLICY`` in ``config/settings/base.py``, applied by django-csp) allows
scripts, styles, fonts and images from the service's own origin only (images also as ``data:`` URLs:
the favicon), no inline script, no plugin, no framing, forms posting to the service only. The console
has no inline script by construction (charts are server-side SVG), so a value from traffic that
escaped into a page could not run. The API's Swagger page keeps a policy of its own
(:func:`swagger_policy`): its assets are local too, but its page starts Swagger UI with an inline
script and Swagger UI sets inline styles.

JSON answers carry no policy (they are not documents a browser renders); every ``text/html`` answer does.
"""
from __future__ import annotations

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from csp.middleware import CSPMiddleware


class HtmlCSPMiddleware(CSPMiddleware):
    """django-csp's middleware, for ``text/html`` answers only."""

    def process_response(self, request, response):
        if not response.get("Content-Type", "").startswith("text/html"):
            return response
        return super().process_response(request, response)


def swagger_policy(view):
    """The Swagger page's policy: the console's, plus inline scripts and styles (drf-spectacular's page
    starts Swagger UI inline; Swagger UI styles its elements inline). Still no external origin."""
    return csp_update({"script-src": [SELF, UNSAFE_INLINE], "style-src": [SELF, UNSAFE_INLINE]})(view)
