"""The test-run marker (DECISIONS §8): a tag only the service can make, honoured only while its run
is open or just closed, judged at the trace's acceptance time."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from core.models import MarkedRun
from core.testmarker import (
    GRACE, MarkerCheck, MarkerVerdict, marked_run_close, marked_run_open, marker_check, marker_value,
)

pytestmark = pytest.mark.django_db

RUN = "5f0c6c3e-1b2a-4c8e-9d41-2a7f0e9b1c11"


def test_an_open_runs_marker_is_test_traffic():
    value = marked_run_open(RUN)
    assert value.startswith(RUN + ".") and len(value) > len(RUN) + 20
    assert marker_check(value) is MarkerVerdict.TEST


def test_a_tag_that_does_not_verify_is_forged():
    value = marked_run_open(RUN)
    run_id, _, tag = value.rpartition(".")
    flipped = ("A" if tag[0] != "A" else "B") + tag[1:]
    for forged in (f"{run_id}.{flipped}", run_id, f"{run_id}.", "", "x" * 500, f"{run_id}.{tag}x", "../..", "é.é"):
        assert marker_check(forged) is MarkerVerdict.FORGED, forged


def test_a_tag_made_under_another_key_is_forged():
    with override_settings(SECRET_KEY="someone-elses-key-0123456789abcdefghijklmnopqrstuvwxyz"):
        foreign = marker_value(RUN)
    marked_run_open(RUN)
    assert marker_check(foreign) is MarkerVerdict.FORGED


def test_a_run_never_opened_is_forged_even_with_a_valid_tag():
    assert marker_check(marker_value(RUN)) is MarkerVerdict.FORGED


def test_a_closed_run_is_honoured_for_the_grace_period_from_acceptance_time():
    value = marked_run_open(RUN)
    marked_run_close(RUN)
    closed = MarkedRun.objects.get(run_id=RUN).closed_at
    assert marker_check(value, closed + GRACE - timedelta(seconds=1)) is MarkerVerdict.TEST
    assert marker_check(value, closed + GRACE + timedelta(seconds=1)) is MarkerVerdict.FORGED
    # Accepted long before the run opened: a replay of a guessed id cannot predate its run.
    assert marker_check(value, closed - timedelta(hours=1)) is MarkerVerdict.FORGED


def test_reopening_a_run_clears_its_end_and_old_closed_runs_are_pruned():
    marked_run_open(RUN)
    marked_run_close(RUN)
    MarkedRun.objects.create(run_id="old-run", opened_at=timezone.now() - timedelta(days=3),
                             closed_at=timezone.now() - timedelta(days=2))
    value = marked_run_open(RUN)
    assert MarkedRun.objects.get(run_id=RUN).closed_at is None
    assert not MarkedRun.objects.filter(run_id="old-run").exists()
    assert marker_check(value, timezone.now() + timedelta(hours=2)) is MarkerVerdict.TEST


def test_one_check_reads_each_run_once(django_assert_num_queries):
    value = marked_run_open(RUN)
    check = MarkerCheck()
    with django_assert_num_queries(1):
        assert [check.check(value) for _ in range(5)] == [MarkerVerdict.TEST] * 5


def test_run_ids_outside_the_alphabet_are_refused():
    with pytest.raises(ValueError):
        marker_value("a.b")
