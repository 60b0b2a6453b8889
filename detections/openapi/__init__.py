"""Uploaded OpenAPI specs as the analysis uses them: compiled for matching, linked to endpoints,
compared with responses.

* ``compiled``: a stored spec compiled once per process (hosts and base paths from its servers,
  path templates by specificity, schema validators on bounded regex engines), looked up by host;
* ``link``: which uploaded spec documents an endpoint (``openapi_spec_name``), for the pipeline's
  linking step and for uploads, replacements and deletions;
* ``responses``: how one response differs from its operation (documented status, media type,
  schema findings as sentence fragments built from the schema, never from the data).

The "Open API Spec Diff" alert rule built on them is ``detections.rules.openapi``.
"""
