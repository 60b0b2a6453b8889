"""Content negotiation that never answers 406.

The API speaks JSON only. DRF answers ``406`` when the ``Accept`` header names nothing a
view can render (``Accept: text/html``, or an empty ``Accept:``, which Schemathesis sends);
RFC 9110 lets a server disregard the header instead, which is what clients of a JSON API
expect. Views with several renderers (the OpenAPI document: YAML or JSON) still honour it
when they can.
"""
from __future__ import annotations

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


# What nearly every client sends: the answer is the one renderer's JSON, as DRF would choose it,
# without parsing the header (DRF builds and walks every request header for it).
_PLAIN_ACCEPT = frozenset({"", "*/*", "application/json"})


class JsonContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        meta = request.META
        if (len(renderers) == 1 and format_suffix is None and meta.get("HTTP_ACCEPT", "*/*").strip() in _PLAIN_ACCEPT
                and self.settings.URL_FORMAT_OVERRIDE not in request.query_params):
            return renderers[0], renderers[0].media_type
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            renderer = renderers[0]
            return renderer, renderer.media_type
