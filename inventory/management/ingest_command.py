"""The base of the operator commands that feed traffic through the ingestion pipeline
(``import_har``, ``seed_demo``)."""
from __future__ import annotations

import logging

from django.core.management.base import BaseCommand


class IngestCommand(BaseCommand):
    """A command whose work is ingestion. The pipeline logs one line per batch: below
    ``--verbosity 2`` those lines are held back (WARNING and above still show), so the progress
    bar and the summary stay readable. Subclasses implement :meth:`ingest` (the parsed options)."""

    def handle(self, *args, verbosity=1, **options):
        pipeline_log = logging.getLogger("inventory.ingest")
        level = pipeline_log.level
        if verbosity < 2:
            pipeline_log.setLevel(logging.WARNING)
        try:
            self.ingest(**options)
        finally:
            pipeline_log.setLevel(level)

    def ingest(self, **options) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
