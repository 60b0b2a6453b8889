"""XSS: reflected script payloads must not come back unescaped.

Each string input (query parameters, string body fields, non-numeric path
parameters; at most ``TESTGEN_MAX_INPUTS``) is sent with three payloads
(``<script>``, ``<img onerror>`` after ``">``, ``<svg onload>``). Only answers a
browser would render count (``whenContentType``: an HTML or SVG content type, which
includes JSON served as ``text/html``): none may contain a payload's markup
verbatim. HTML-escaped (``&lt;script&gt;``) reflections pass, and so does any
``application/json`` (or other non-rendered) answer that merely contains the value.
The checked markup has no ``"``, ``'``, ``\\`` or ``/``, so JSON string encoding alone
does not hide a reflection in JSON served as HTML (and no quote breaks an
SQL-injectable query before the reflection happens). Checking every answer
for every payload also catches one request's payload stored and shown in a
later answer; after a write, the views that show what was written (its GET, the
collection listing it, read with the query traffic used, e.g. ``?format=html``)
are read too.

The example request is sent first, as traffic showed it: when it is refused or fails on its own (a
unique title reused, a debug page of its own error), the payloads are not sent and the test is
INCONCLUSIVE (DECISIONS §8) — outside credential flows, whose example names a user that does not exist.
"""
from __future__ import annotations

from ..ownership import WRITES, is_credential_flow
from ..profile import EndpointProfile, Input
from ._base import (GenerationContext, SecurityTemplate, accepted, assertion, auth_headers, build_request,
                    distinct_names, input_label, inputs_named, register, request_with_input)
from ._readback import own_views

MARKER = "31337"
# (payload sent, markup that must not come back verbatim). No quote in the script part:
# a quote could break an SQL-injectable query before the reflection happens.
# Content types a browser renders as a document (scripts run): text/html, application/xhtml+xml,
# image/svg+xml. JSON, text/plain, XML data… are shown as text or not at all.
RENDERED = r"html|svg"
PAYLOADS = (
    (f"<script>alert({MARKER})</script>", f"<script>alert({MARKER})"),
    (f'"><img src=x onerror=alert({MARKER})>', f"<img src=x onerror=alert({MARKER})>"),
    (f"<svg onload=alert({MARKER})>", f"<svg onload=alert({MARKER})>"),
)


def string_inputs(profile: EndpointProfile) -> list[Input]:
    return [i for i in profile.inputs if i.is_string and not (i.location == "path" and i.looks_numeric)]


@register
class Xss(SecurityTemplate, name="XSS", priority=50, title="Cross-site scripting"):
    def applies(self, profile: EndpointProfile) -> bool:
        return bool(string_inputs(profile))

    def generate(self, profile: EndpointProfile, context: GenerationContext) -> dict:
        inputs = string_inputs(profile)[: context.max_inputs]
        gate = None if is_credential_flow(profile.path) else 0
        requests = [build_request(profile, "The example request, as traffic showed it (the baseline)")]
        requests += [
            request_with_input(profile, f"{input_label(item)}: {payload}", item, payload, payload=payload,
                               onlyIfAccepted=gate)
            for item in inputs
            for payload, _ in PAYLOADS
        ]
        checks = [] if gate is None else [accepted(0, "The example request alone is accepted (else a payload's "
                                                      "answer proves nothing)", inconclusive=True)]
        if profile.method in WRITES:
            # Stored: the views that show what was written (the object's GET, the collection listing it), with
            # the query traffic read them with (``?format=html``), read after the payloads.
            for read, segments in own_views(profile):
                requests.append(build_request(read, f"What was written, as its views show it (GET {read.path})",
                                              method="GET", segments=list(segments), body=None,
                                              headers=auth_headers(read), onlyIfAccepted=gate))
        return self.test_config(
            profile,
            description=(
                f"{profile.method} {profile.path}: script payloads in string inputs ({inputs_named(inputs)}) must not be "
                "reflected unescaped in an answer a browser would render as HTML."
            ),
            requests=distinct_names(requests),
            assertions=[assertion("body", "notContains", [markup for _, markup in PAYLOADS], whenContentType=RENDERED,
                                  request=list(range(1, len(requests))), description="No payload comes back unescaped"),
                        *checks],
        )
