"""Traffic ingestion (DECISIONS §9): agent traces in, inventory out.

* ``wire`` — the shape of an agent trace: fields, leniencies and limits, shared by
  ``validation``, ``traces`` and (checked by a test) the docs schema ``schema``
* ``validation`` — fast structural checks at accept time (zod issues, size limits)
* ``accept`` — store a batch, enqueue its analysis, backpressure, lost-message sweep
* ``pipeline`` — the batch analysis the Celery task runs (bounded queries, bulk writes)
* ``traces``, ``wire``, ``fields``, ``analysis``, ``credentials``, ``redact``, ``classes``,
  ``store`` (the database side, one module per table family), ``sql`` — the pieces it is made of
  (the alert rules it runs are ``detections.rules``)
* ``agent_config`` — ``GET /api/v1/agent-config``
* ``har``, ``demo`` — HAR import and demo traffic (management commands, benchmark)
* ``maintenance`` — retention and pruning
"""
