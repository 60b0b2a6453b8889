"""Path patterns, the one home: ``/users/{param1}/orders`` and the concrete paths they match.

Pure functions, no models, no database. Used by ingestion (``inventory.ingest``), the
inventory routes (update-paths and its merge, suggested-paths), test generation
(``testgen.profile`` and its templates) and the spec diff (``detections.openapi``).

A *pattern* is a path whose parameters are written ``{name}`` (a name without ``{``, ``}``
or ``/``; DECISIONS §4 numbers them ``{param1}``, ``{param2}``… left to right), usually
a whole segment (``/users/{param1}``), possibly inside one (``/files/{param1}.json``, as
agents may send). A parameter matches a non-empty run of characters other than ``/``.

Modules:

* :mod:`.normalize`: host names and concrete paths as stored (``host_normalize``,
  ``path_normalize``), the scheme an agent wrote, OpenAPI templates as written
  (``template_normalize``).
* :mod:`.segments`: splitting paths, the parameter grammar, DECISIONS §9's rules for a
  concrete segment that is a value (``segment_is_value``), parameterising concrete paths
  and numbering parameters.
* :mod:`.regex`: the regex of a pattern in its one spelling (``Endpoint.path_regex``),
  :class:`~.regex.Pattern`, specificity, best match and ingestion's
  :class:`~.regex.PatternMatcher`.
* :mod:`.operator_paths`: what operators write and are offered: update-paths validation
  (``path_problem``) and suggested paths (``paths_suggest``).
"""
