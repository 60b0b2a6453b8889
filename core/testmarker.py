"""The marker every request of a security-test run carries (DECISIONS §8, ``X-Apiscope-Test``).

When the application under test is itself monitored, the run's own probes reach ingestion like
any visitor's traffic. The runner sends ``X-Apiscope-Test: <run id>.<tag>`` on every request it
makes; ``<tag>`` is an HMAC-SHA256 of the run id under a key derived from ``SECRET_KEY`` (a label
keeps it apart from the other keys derived from the same material), so nobody without the key can
make a tag that verifies. Ingestion honours a marker only while its run is open or closed less
than :data:`GRACE` ago, judged at the time the trace was accepted: a replayed marker of an old run,
or one whose run this service never opened, is :attr:`MarkerVerdict.FORGED` and the trace is
analysed as ordinary traffic.

The runner calls :func:`marked_run_open` before its first request (it returns the header value,
which is never stored in a test configuration) and :func:`marked_run_close` when it ends. Runs are
kept in :class:`core.models.MarkedRun`, a table of this module's own, so ingestion never needs to
know about the test-generation app.
"""
from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import re
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from core.models import MarkedRun

HEADER = "X-Apiscope-Test"
# Traces accepted up to this long after the run closed still count as the run's (agents batch and
# the worker may be behind; the acceptance time is what is compared, not the analysis time).
GRACE = timedelta(minutes=5)
# Closed runs older than this are deleted when a new run opens (a marker that old is stale anyway).
_KEEP_CLOSED = timedelta(days=1)
_LABEL = b"apiscope test-run marker v1:"
_TAG_LENGTH = 32  # base64url characters: 192 bits of the HMAC
_RUN_ID = re.compile(r"[A-Za-z0-9-]{1,64}")


class MarkerVerdict(enum.Enum):
    """What ingestion makes of a marker header's value."""

    TEST = "test"  # the tag verifies and the run was open (or just closed) when the trace was accepted
    FORGED = "forged"  # anything else: malformed, wrong tag, unknown run, stale


def _key() -> bytes:
    return hashlib.sha256(_LABEL + settings.SECRET_KEY.encode("utf-8", "surrogatepass")).digest()


def marker_tag(run_id: str) -> str:
    """The HMAC tag of ``run_id`` (URL-safe base64, no padding)."""
    digest = hmac.new(_key(), run_id.encode("ascii"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii")[:_TAG_LENGTH]


def marker_value(run_id: str) -> str:
    """The header value for ``run_id``: ``<run id>.<tag>``."""
    if not _RUN_ID.fullmatch(run_id):
        raise ValueError("a run id is 1-64 letters, digits and dashes")
    return f"{run_id}.{marker_tag(run_id)}"


def marked_run_open(run_id: str) -> str:
    """Record that ``run_id`` starts sending requests and return its header value.

    Re-opening a run (a retried task) clears its end. Closed runs older than a day are pruned.
    """
    value = marker_value(run_id)
    now = timezone.now()
    MarkedRun.objects.filter(closed_at__lt=now - _KEEP_CLOSED).delete()
    MarkedRun.objects.update_or_create(run_id=run_id, defaults={"opened_at": now, "closed_at": None})
    return value


def marked_run_close(run_id: str) -> None:
    """Record that ``run_id`` sent its last request (a no-op for a run never opened)."""
    MarkedRun.objects.filter(run_id=run_id, closed_at__isnull=True).update(closed_at=timezone.now())


def _parse(value: str) -> str | None:
    """The run id of a marker whose tag verifies, else None (constant-time comparison)."""
    run_id, sep, tag = value.strip().rpartition(".")
    if not sep or not _RUN_ID.fullmatch(run_id) or len(tag) != _TAG_LENGTH:
        return None
    return run_id if hmac.compare_digest(tag.encode("ascii", "replace"), marker_tag(run_id).encode("ascii")) else None


class MarkerCheck:
    """Verifies marker values for one batch of traces, reading each run's window at most once.

    ``check(value, accepted_at)`` answers :attr:`MarkerVerdict.TEST` only when the tag verifies and
    the run was open at ``accepted_at`` or had closed less than :data:`GRACE` before it.
    """

    def __init__(self) -> None:
        self._windows: dict[str, tuple[datetime, datetime | None] | None] = {}

    def _window(self, run_id: str) -> tuple[datetime, datetime | None] | None:
        if run_id not in self._windows:
            row = MarkedRun.objects.filter(run_id=run_id).values_list("opened_at", "closed_at").first()
            self._windows[run_id] = row
        return self._windows[run_id]

    def check(self, value: str, accepted_at: datetime | None = None) -> MarkerVerdict:
        run_id = _parse(value) if isinstance(value, str) and len(value) <= 200 else None
        if run_id is None:
            return MarkerVerdict.FORGED
        window = self._window(run_id)
        if window is None:
            return MarkerVerdict.FORGED
        opened, closed = window
        at = accepted_at or timezone.now()
        # A trace accepted a little before the row was written (clocks of two machines) still counts.
        if at < opened - GRACE or (closed is not None and at > closed + GRACE):
            return MarkerVerdict.FORGED
        return MarkerVerdict.TEST


def marker_check(value: str, accepted_at: datetime | None = None) -> MarkerVerdict:
    """:meth:`MarkerCheck.check` for a single value."""
    return MarkerCheck().check(value, accepted_at)
