"""The regex of a pattern (``Endpoint.path_regex``), specificity and matching.

One spelling, whoever builds it (ingestion, update-paths, a data migration, the spec
diff): ``^/`` + the segments joined by ``/`` + ``$``; a parameter is ``[^/]+``; in a
literal only the characters ``\\ ^ $ . | ? * + ( ) [ ] { }`` are escaped, each with one
backslash (``/``, ``-`` and the rest stay as they are). So ``/users/{param1}`` is
``^/users/[^/]+$`` and the root is ``^/$``. Python's ``re`` (not in VERBOSE mode),
PostgreSQL's ``~`` and JavaScript (also with the ``u`` flag) read it the same way.

Specificity: among patterns matching a path, more literal segments is more specific.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from .learn import segment_absorbs
from .segments import (
    PARAM,
    path_segments,
    pattern_normalise,
    segment_has_parameter,
    segment_is_parameter,
)

PARAM_REGEX = "[^/]+"
_META = frozenset("\\^$.|?*+()[]{}")


def literal_escape(text: str) -> str:
    """``a.b+c`` -> ``a\\.b\\+c``: regex metacharacters escaped with one backslash, nothing else."""
    return "".join("\\" + ch if ch in _META else ch for ch in text)


def pattern_regex(path: str) -> str:
    """The anchored regex of a pattern (see the module docstring for its one spelling).

    One regex segment per segment of ``path`` as written (an empty segment, which
    stored patterns never have, matches an empty segment).
    """
    segments = path[1:].split("/") if path.startswith("/") else path.split("/")
    if segments == [""]:
        return "^/$"
    body = "/".join(PARAM_REGEX.join(literal_escape(piece) for piece in PARAM.split(s)) for s in segments)
    return f"^/{body}$"


@lru_cache(maxsize=16384)
def regex_compile(regex: str) -> re.Pattern[str] | None:
    """A stored ``path_regex`` compiled (cached), or ``None`` when it does not compile."""
    try:
        return re.compile(regex)
    except re.error:
        return None


def regex_matches(regex: str, path: str) -> bool:
    """Whether the whole of ``path`` matches ``regex`` (``False`` for a regex that does not compile)."""
    compiled = regex_compile(regex)
    return compiled is not None and compiled.fullmatch(path) is not None


def pattern_shape(path: str) -> tuple[int, int]:
    """(number of segments, number of literal segments) of a pattern: the matching pre-filter and order."""
    segments = path_segments(path)
    return len(segments), sum(1 for s in segments if not segment_has_parameter(s))


@dataclass(frozen=True)
class Pattern:
    """A normalised pattern with what ingestion stores next to it on the endpoint."""

    path: str
    regex: str
    num_segments: int
    num_literal_segments: int

    def matches(self, concrete_path: str) -> bool:
        """Whether a concrete path (or a more specific pattern) falls under this pattern."""
        return regex_matches(self.regex, concrete_path)


def pattern_compile(path: str) -> Pattern:
    """Number the parameters (:func:`~.segments.pattern_normalise`), compute the regex and segment counts."""
    normalised = pattern_normalise(path)
    return Pattern(normalised, pattern_regex(normalised), *pattern_shape(normalised))


def pattern_specificity(pattern) -> int:
    """Ranking among patterns matching one path: more literal segments = more specific."""
    return pattern.num_literal_segments


def pattern_best_match(concrete_path: str, patterns: Sequence[Pattern]) -> Pattern | None:
    """The most specific pattern matching a path; ties go to the earlier pattern."""
    best: Pattern | None = None
    for pattern in patterns:
        if pattern.matches(concrete_path) and (best is None or pattern_specificity(pattern) > pattern_specificity(best)):
            best = pattern
    return best


class Candidate(Protocol):
    """An endpoint as :class:`PatternMatcher` sees it (ingestion's ``EndpointRow``)."""

    path: str
    path_regex: str
    num_segments: int
    num_literal_segments: int
    user_set_path: bool
    # learned_segments (optional): position (text) -> "words" | "ids", from learned parameterisation


class PatternMatcher:
    """Matches concrete paths against the patterns of one (host, method), for ingestion.

    Order: an endpoint whose pattern equals the path (literal), then the path's own
    parameterised pattern, then the other patterns most specific first (then by
    pattern text). A parameter that is a whole segment only absorbs a segment that is
    itself a value (:func:`~.segments.segment_is_value`), so ``/users/me`` is not
    swallowed by ``/users/{param1}``; at a position learned from cardinality, what it learned
    to take (``learned_segments``); endpoints whose pattern an operator wrote
    (``user_set_path``) take any segment.
    """

    def __init__(self, candidates: Sequence[Candidate] = ()):
        self._exact: dict[str, Candidate] = {}
        self._by_len: dict[int, list[Candidate]] = {}
        for c in candidates:
            self.add(c)

    def add(self, candidate: Candidate) -> None:
        self._exact[candidate.path] = candidate
        bucket = self._by_len.setdefault(candidate.num_segments, [])
        bucket.append(candidate)
        bucket.sort(key=lambda c: (-pattern_specificity(c), c.path))

    def match(self, path: str, own_pattern: str | None = None) -> Candidate | None:
        """The endpoint a concrete path (or an agent-sent pattern) belongs to, or ``None``."""
        exact = self._exact.get(path)
        if exact is not None:
            return exact
        if own_pattern is not None:
            own = self._exact.get(own_pattern)
            if own is not None:
                return own
        segments = path_segments(path)
        for c in self._by_len.get(len(segments), ()):
            if c.num_literal_segments == c.num_segments:
                continue  # literal patterns only match exactly (done above)
            if not regex_matches(c.path_regex, path):
                continue
            if c.user_set_path or _parameters_absorb(c, segments):
                return c
        return None


def _parameters_absorb(candidate: Candidate, segments: list[str]) -> bool:
    """Whether each whole-segment parameter of an automatic pattern takes the concrete segment at its
    place: a value (:func:`~.segments.segment_is_value`), or at a learned position what that position
    learned to take (:func:`~.learn.segment_absorbs`: any non-reserved word, or any id-like token)."""
    learned = getattr(candidate, "learned_segments", None) or {}
    for position, (pattern_segment, segment) in enumerate(zip(path_segments(candidate.path), segments)):
        if segment_is_parameter(pattern_segment) and not segment_absorbs(learned.get(str(position)), segment):
            return False
    return True
