"""The eight alert rules of DECISIONS §6, over the ingestion pipeline's view of a batch.

* :func:`traffic_rules` (``traffic``): the seven traffic rules, reading fields found and their
  classes, path parameters and credentials;
* :func:`openapi_rules` (``openapi``): "Open API Spec Diff", reading parsed response bodies
  against the specs uploaded for each host (:func:`specs_of`).

Rules return :class:`~detections.services.AlertCandidate` lists and write nothing; the pipeline
raises all of a batch's candidates in one ``detections.services.alerts_raise`` call, which skips
any alert already Open or Ignored for the same endpoint, type and description and offers each new
one to the webhooks. :class:`BatchView` (``view``) is what the rules read, and when.
"""
from .openapi import openapi_rules, specs_of
from .traffic import traffic_rules
from .view import BatchView, Seen

__all__ = ["BatchView", "Seen", "openapi_rules", "specs_of", "traffic_rules"]
