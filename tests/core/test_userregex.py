"""core.userregex: user-written patterns on RE2, else on ``regex`` with a timeout, on capped input.

The bounds are asserted through what the module reports (engine, counters, log records), never
through wall-clock time.
"""
from __future__ import annotations

import logging

import pytest

from core import userregex
from core.userregex import UserRegexError, counters, user_regex, user_regex_problem, user_regex_search

CATASTROPHIC = r"^(a+)+$"  # exponential on Python's re; RE2 compiles it
LOOKAROUND = r"^(?=(a+)+$)a*b"  # RE2 refuses lookaround: the timed engine runs it
TIMES_OUT = r"^(?=(a|a)+$)"  # lookaround the timed engine backtracks on exponentially
SECRET_INPUT = "a" * 60 + "!SECRET-INPUT-4242"


@pytest.fixture(autouse=True)
def fresh_cache():
    userregex.user_regex.cache_clear()
    yield
    userregex.user_regex.cache_clear()


def test_a_catastrophic_pattern_runs_on_re2_and_answers():
    compiled = user_regex(CATASTROPHIC)
    before = counters()
    assert compiled.engine == "re2"
    assert compiled.search("a" * 4000 + "!") is False
    assert compiled.search("aaaa") is True
    assert counters()["timeouts"] == before["timeouts"]


def test_a_lookaround_pattern_runs_on_the_timed_engine():
    compiled = user_regex(LOOKAROUND)
    assert compiled.engine == "regex" and compiled.timeout == 0.02
    assert compiled.search("aaab") is False and compiled.search("a" * 60 + "!") is False  # it can never match
    assert user_regex(r"(?<=a)b").search("ab") is True


def test_a_search_that_times_out_is_undecided_counted_and_logged_without_the_input(caplog):
    compiled = user_regex(TIMES_OUT)
    assert compiled.engine == "regex"
    before = counters()["timeouts"]
    with caplog.at_level(logging.WARNING, logger="core.userregex"), userregex.scope("data class 'badge'"):
        assert compiled.search(SECRET_INPUT) is None
    assert counters()["timeouts"] == before + 1
    [record] = [r for r in caplog.records if "timed out" in r.getMessage()]
    assert compiled.ident in record.getMessage() and "data class 'badge'" in record.getMessage()
    assert "SECRET-INPUT" not in record.getMessage() and TIMES_OUT not in record.getMessage()
    assert user_regex_search(TIMES_OUT, SECRET_INPUT) is None


def test_a_pattern_that_keeps_timing_out_is_suspended(caplog):
    compiled = user_regex(TIMES_OUT)
    for _ in range(userregex.SUSPEND_AFTER):
        assert compiled.search(SECRET_INPUT) is None
    before = counters()
    assert compiled.search(SECRET_INPUT) is None  # not run at all
    after = counters()
    assert (after["suspended"], after["timeouts"]) == (before["suspended"] + 1, before["timeouts"])
    assert any("suspended" in r.getMessage() and compiled.ident in r.getMessage() for r in caplog.records)


def test_inputs_are_cut_to_the_configured_length(settings):
    settings.USER_REGEX_MAX_INPUT = 10
    assert user_regex(r"x$").max_input == 10
    assert user_regex_search(r"x$", "a" * 20 + "x") is False
    assert user_regex_search(r"x$", "a" * 9 + "x") is True
    assert user_regex_search(r"(?<=a)x", "a" * 20 + "x") is False  # the timed engine too


def test_a_pattern_neither_engine_compiles_is_refused():
    for pattern in ("(", "[z-a]", "a{2,1}"):
        with pytest.raises(UserRegexError):
            user_regex(pattern)
        assert user_regex_problem(pattern)
        assert user_regex_search(pattern, "anything") is None  # a stored bad pattern never raises
    assert user_regex_problem(LOOKAROUND) is None and user_regex_problem(CATASTROPHIC) is None


# The regex module unrolls counted repetitions when it compiles: this 31-character pattern would
# allocate tens of gigabytes. RE2 refuses it (repetition over 1,000), so it would reach that engine.
MEMORY_BOMB = "(?:(?:(?:a{1000}){1000}){1000})"


@pytest.fixture
def regex_compile_forbidden(monkeypatch):
    """Fails the test if the timed engine is asked to compile anything (it is what would blow up)."""
    def refuse(*args, **kwargs):
        raise AssertionError("regex.compile was called")

    monkeypatch.setattr(userregex.regex, "compile", refuse)


@pytest.mark.parametrize("pattern", [
    MEMORY_BOMB,
    MEMORY_BOMB + "(?=b)",                      # lookaround keeps it away from RE2 too
    "(?=x)(?:(?:a{101}){100})",                 # just over the bound
    "(?<=a)" + "x" * (userregex.MAX_FALLBACK_PATTERN + 1),
])
def test_a_pattern_that_would_unroll_too_far_is_refused_before_the_timed_engine_compiles_it(
        pattern, regex_compile_forbidden):
    before = counters()
    with pytest.raises(UserRegexError):
        user_regex(pattern)
    assert user_regex_problem(pattern) is not None
    assert user_regex_search(pattern, "aaaa") is None  # a stored one is undecided, never an error
    assert counters()["regex_compiled"] == before["regex_compiled"]


def test_a_lookaround_pattern_with_modest_repetitions_still_runs_on_the_timed_engine():
    assert user_regex(r"(?<=id-)\d{4}(?:-[a-z]{2}){3}").engine == "regex"


def test_a_traffic_value_checked_as_a_regex_is_never_compiled_on_the_timed_engine(regex_compile_forbidden):
    # JSON Schema's format: regex asks whether a value from traffic is a regex: the traffic picks
    # the pattern, so only RE2 (memory-bounded) and the standard parser (unrolls nothing) look at it.
    assert userregex.user_regex_compiles(MEMORY_BOMB) is True
    assert userregex.user_regex_compiles(MEMORY_BOMB + "(?=b)") is True
    assert userregex.user_regex_compiles("(unclosed") is False
