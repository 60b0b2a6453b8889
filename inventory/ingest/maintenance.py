"""Periodic clean-up of what ingestion accumulates (run by ``ingest_prune_task``).

* stored traces older than ``TRACE_RETENTION_DAYS`` (7); the 100-per-endpoint
  cap is applied by the pipeline as it stores them;
* per-minute usage older than two days (``last1MinCnt`` needs the last minute;
  daily usage keeps 400 days);
* observed raw paths not seen within ``TRACE_RETENTION_DAYS`` (they are traffic, like traces),
  and beyond the newest 2,000 per endpoint (suggested-paths reads 2,000);
* DONE batches after an hour; FAILED ones after the trace retention.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from inventory.models import ApiTrace, IngestBatch, ObservedPath, UsageDay, UsageMinute

logger = logging.getLogger(__name__)

OBSERVED_PATHS_KEPT = 2000


def ingest_prune(*, now=None) -> dict[str, int]:
    """Delete expired rows; returns counts per table."""
    now = now or timezone.now()
    retention = timedelta(days=settings.TRACE_RETENTION_DAYS)
    counts = {
        "traces": ApiTrace.objects.filter(created_at__lt=now - retention).delete()[0],
        "usage_minutes": UsageMinute.objects.filter(minute__lt=now - timedelta(days=2)).delete()[0],
        "usage_days": UsageDay.objects.filter(day__lt=(now - timedelta(days=400)).date()).delete()[0],
        "batches": IngestBatch.objects.filter(status=IngestBatch.Status.DONE,
                                              processed_at__lt=now - timedelta(hours=1)).delete()[0]
        + IngestBatch.objects.filter(status=IngestBatch.Status.FAILED, received_at__lt=now - retention).delete()[0],
    }
    counts["observed_paths_expired"] = ObservedPath.objects.filter(last_seen__lt=now - retention).delete()[0]
    crowded = list(
        ObservedPath.objects.values("endpoint_id").annotate(n=Window(RowNumber(), partition_by=[F("endpoint_id")],
                                                                     order_by=[F("last_seen").desc(), F("id").desc()]))
        .filter(n__gt=OBSERVED_PATHS_KEPT).values_list("id", flat=True)[:100_000]
    )
    counts["observed_paths"] = ObservedPath.objects.filter(id__in=crowded).delete()[0] if crowded else 0
    logger.info("ingest prune: %s", counts)
    return counts
