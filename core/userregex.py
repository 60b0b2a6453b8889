"""Regular expressions written by users, run on traffic at a bounded cost.

Operators write regexes in two places: custom data classes (value and key regex, admin) and the
``pattern`` / ``patternProperties`` keywords of uploaded OpenAPI specs (run by the spec diff).
Both run here, never on Python's backtracking ``re``, so one pattern such as ``^(a+)+$`` cannot
stall the analysis worker:

* **RE2** (``google-re2``) first: matching time is linear in the input, whatever the pattern.
* **``regex`` with a timeout** for patterns RE2 refuses (lookaround, backreferences, ``\\Z``):
  each search gives up after ``USER_REGEX_TIMEOUT_MS``. The ``regex`` module unrolls counted
  repetitions when it compiles, so ``(?:(?:a{1000}){1000}){1000}`` (31 characters) would allocate
  gigabytes before any timeout could help: before that engine compiles anything, the pattern is
  parsed with the standard library's parser (which unrolls nothing) and refused when it is longer
  than ``MAX_FALLBACK_PATTERN`` characters, does not parse, or would unroll to more than
  ``MAX_EXPANSION`` elements. A timeout counts
  as *undecided* (callers treat it as no match, or skip the check), is counted and logged with the
  pattern's id, never the input. A pattern that times out ``SUSPEND_AFTER`` times in a process is
  suspended (every search undecided at no cost) for ``SUSPEND_SECONDS``.
* Every input is cut to ``USER_REGEX_MAX_INPUT`` characters before matching.

Compiled patterns are cached per process (:func:`user_regex`). A pattern neither engine compiles
raises :class:`UserRegexError` (validate at creation with :func:`user_regex_problem`).
Works without Django settings (the defaults below), e.g. in ``python -m classification.detector``.
"""
from __future__ import annotations

import contextvars
import hashlib
import logging
import threading
import time
from contextlib import contextmanager
from functools import lru_cache

import regex

try:  # the standard library's regex parser: builds a tree, unrolls nothing (Python 3.11+)
    from re import _constants as _sre, _parser as _sre_parse
except ImportError:  # pragma: no cover - older layouts
    import sre_constants as _sre
    import sre_parse as _sre_parse

try:  # the wheel exists for the platforms we run on; without it every pattern takes the timed path
    import re2
except ImportError:  # pragma: no cover
    re2 = None

logger = logging.getLogger(__name__)

DEFAULT_MAX_INPUT = 4096
DEFAULT_TIMEOUT_MS = 20
SUSPEND_AFTER = 3  # timeouts of one pattern before it is suspended
SUSPEND_SECONDS = 600.0
# Bounds of the timed engine's compile step (see the module docstring).
MAX_FALLBACK_PATTERN = 1000
MAX_EXPANSION = 10_000
ENGINE_RE2 = "re2"
ENGINE_REGEX = "regex"

_COUNTS = {"re2_compiled": 0, "regex_compiled": 0, "timeouts": 0, "suspended": 0, "skipped": 0}
_COUNTS_LOCK = threading.Lock()
_scope: contextvars.ContextVar[str] = contextvars.ContextVar("user_regex_scope", default="")

_UNANCHORED = None
if re2 is not None:
    _RE2_OPTIONS = re2.Options()
    _RE2_OPTIONS.log_errors = False  # RE2 would print the refused pattern to stderr
    _RE2_OPTIONS.never_capture = True  # only "does it occur" is asked: no submatch bookkeeping
    # The binding's own search() builds match objects in Python (2 µs a call); its compiled program's
    # Match() answers the same question for a third of that, on the pinned google-re2.
    _UNANCHORED = getattr(getattr(getattr(re2, "_re2", None), "RE2", None), "Anchor", None)
    _UNANCHORED = getattr(_UNANCHORED, "UNANCHORED", None)


class UserRegexError(ValueError):
    """Neither RE2 nor the ``regex`` module compiles the pattern; the message says why."""


_REPEATS = frozenset(getattr(_sre, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
                     if hasattr(_sre, name))


def _expansion(items, limit: int) -> int:
    """How many elements the parsed pattern ``items`` unrolls to, counting each counted repetition
    ``{m,n}`` as ``n`` copies (``m`` when unbounded); stops counting past ``limit``."""
    total = 0
    for op, av in items:
        if op in _REPEATS:
            low, high, sub = av
            times = low if high == _sre.MAXREPEAT else high
            total += max(times, 1) * _expansion(sub, limit)
        elif op == _sre.SUBPATTERN:
            total += _expansion(av[-1], limit)
        elif op == _sre.BRANCH:
            total += sum(_expansion(branch, limit) for branch in av[1])
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            total += _expansion(av[1], limit)
        elif op == getattr(_sre, "ATOMIC_GROUP", None):
            total += _expansion(av, limit)
        elif op == _sre.GROUPREF_EXISTS:
            total += _expansion(av[1], limit) + (_expansion(av[2], limit) if av[2] is not None else 0)
        else:
            total += 1
        if total > limit:
            return total
    return total


def _parse_bounded(pattern: str) -> str | None:
    """Why the timed engine must not compile ``pattern`` (``None``: it may). Parsing only: the
    standard library's parser builds a tree and unrolls nothing, whatever the pattern says."""
    if len(pattern) > MAX_FALLBACK_PATTERN:
        return f"longer than {MAX_FALLBACK_PATTERN} characters (patterns RE2 cannot run are kept short)"
    try:
        parsed = _sre_parse.parse(pattern)
    except (_sre.error, OverflowError, RecursionError, ValueError, TypeError) as exc:
        return str(exc) or type(exc).__name__
    if _expansion(parsed, MAX_EXPANSION) > MAX_EXPANSION:
        return f"its repetitions unroll to more than {MAX_EXPANSION:,} elements"
    return None


def _count(name: str, n: int = 1) -> None:
    with _COUNTS_LOCK:
        _COUNTS[name] += n


def counters() -> dict[str, int]:
    """Process-wide counts: patterns compiled per engine, searches timed out, searches answered
    undecided because their pattern was suspended, and checks callers skipped (:func:`count_skip`)."""
    with _COUNTS_LOCK:
        return dict(_COUNTS)


def count_skip() -> None:
    """A caller skipped a check because of these bounds (e.g. the spec diff's unevaluatedProperties)."""
    _count("skipped")


@contextmanager
def scope(label: str):
    """Name what is being evaluated (``OpenAPI spec 12``) in this context's timeout log lines."""
    token = _scope.set(label)
    try:
        yield
    finally:
        _scope.reset(token)


def _limits() -> tuple[int, float]:
    from django.conf import settings

    if settings.configured:
        return (int(getattr(settings, "USER_REGEX_MAX_INPUT", DEFAULT_MAX_INPUT)),
                int(getattr(settings, "USER_REGEX_TIMEOUT_MS", DEFAULT_TIMEOUT_MS)) / 1000)
    return DEFAULT_MAX_INPUT, DEFAULT_TIMEOUT_MS / 1000


class UserRegex:
    """One compiled user pattern. ``engine`` is ``"re2"`` or ``"regex"`` (timed); ``ident`` is a
    short hash of the pattern, the only thing logs say about it."""

    __slots__ = ("pattern", "engine", "ident", "max_input", "timeout", "_search", "_timeouts",
                 "_suspended_until")

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.ident = "rx-" + hashlib.sha256(pattern.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        self.max_input, self.timeout = _limits()
        self._timeouts = 0
        self._suspended_until = 0.0
        compiled = None
        if re2 is not None:
            try:
                compiled = re2.compile(pattern, options=_RE2_OPTIONS)
            except (re2.error, ValueError, TypeError):
                compiled = None
        if compiled is not None:
            program = getattr(compiled, "_regexp", None)
            if _UNANCHORED is not None and hasattr(program, "Match"):
                self._search = program.Match
            else:  # pragma: no cover - another google-re2 layout: its public API, same answers
                self._search = lambda _, data, start, end: [(0, 0) if compiled.search(data.decode()) else (-1, -1)]
            self.engine = ENGINE_RE2
            _count("re2_compiled")
            return
        refused = _parse_bounded(pattern)
        if refused is not None:
            raise UserRegexError(refused)
        try:
            compiled = regex.compile(pattern)
        except (regex.error, OverflowError, RecursionError, ValueError, MemoryError) as exc:
            raise UserRegexError(str(exc) or type(exc).__name__) from None
        self.engine, self._search = ENGINE_REGEX, compiled.search
        _count("regex_compiled")

    def search(self, text: str, where: str = "") -> bool | None:
        """Whether the pattern occurs in ``text`` (its first ``max_input`` characters).

        ``None`` when undecided: the timed engine gave up, or the pattern is suspended. Never
        raises for a string argument. ``where`` names the pattern's owner in log lines (else the
        context's :func:`scope`).
        """
        if len(text) > self.max_input:
            text = text[:self.max_input]
        if self.engine == ENGINE_RE2:
            try:
                data = text.encode()
            except UnicodeError:  # a lone surrogate: RE2 matches UTF-8 only
                return None
            return self._search(_UNANCHORED, data, 0, len(data))[0][0] >= 0
        if self._suspended_until:
            if time.monotonic() < self._suspended_until:
                _count("suspended")
                return None
            self._suspended_until, self._timeouts = 0.0, 0
        try:
            return self._search(text, timeout=self.timeout) is not None
        except TimeoutError:
            self._timed_out(len(text), where)
            return None

    def _timed_out(self, size: int, where: str) -> None:
        _count("timeouts")
        self._timeouts += 1
        where = where or _scope.get() or "-"
        logger.warning("user regex %s (%s) timed out on a %d-character input after %d ms; counted as no match",
                       self.ident, where, size, round(self.timeout * 1000))
        if self._timeouts >= SUSPEND_AFTER:
            self._suspended_until = time.monotonic() + SUSPEND_SECONDS
            logger.warning("user regex %s (%s) suspended for %d s after %d timeouts", self.ident, where,
                           SUSPEND_SECONDS, self._timeouts)


@lru_cache(maxsize=2048)
def user_regex(pattern: str) -> UserRegex:
    """The compiled pattern (cached per process); raises :class:`UserRegexError`."""
    return UserRegex(pattern)


def user_regex_search(pattern: str, text: str) -> bool | None:
    """:meth:`UserRegex.search` of a pattern compiled on first use; ``None`` (undecided) as well
    when the pattern does not compile, so callers never raise on a stored pattern."""
    try:
        compiled = user_regex(pattern)
    except UserRegexError:
        return None
    return compiled.search(text)


def user_regex_compiles(text: str) -> bool:
    """Whether a value from traffic is a regex (JSON Schema's ``format: regex``), on its first
    ``USER_REGEX_MAX_INPUT`` characters. The value is traffic, so nothing is compiled on an engine
    whose cost the value could choose: RE2 (memory-bounded) accepts it, or the standard library's
    parser (which unrolls nothing) parses it."""
    text = text[:_limits()[0]]
    if re2 is not None:
        try:
            re2.compile(text, options=_RE2_OPTIONS)
            return True
        except (re2.error, ValueError, TypeError):
            pass
    try:
        _sre_parse.parse(text)
    except (_sre.error, OverflowError, RecursionError, ValueError, TypeError):
        return False
    return True


def user_regex_problem(pattern: str) -> str | None:
    """``None`` when the pattern compiles with either engine, else why it does not (for a 400)."""
    try:
        user_regex(pattern)
    except UserRegexError as exc:
        return str(exc)
    return None
