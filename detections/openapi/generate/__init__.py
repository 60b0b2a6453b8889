"""OpenAPI 3.1 documents generated from one host's traffic (DECISIONS §10, docs/openapi.md).

* ``collect``: the three reads a build needs (endpoints, data fields, sampled stored traces);
* ``schema`` / ``values``: JSON Schema from fields and sampled values (types, required keys,
  formats, enums, redacted examples, ``x-data-classes``);
* ``traffic`` / ``operation`` / ``document``: one endpoint as an operation, the host as a document;
* ``service``: names, storage as an ``OpenApiSpec`` (``is_auto_generated``), the debounced refresh.
"""
