"""Path patterns: ``/users/{param1}/orders`` and the concrete paths they match.

Pure functions, no database: shared by the routes (update-paths, suggested-paths)
and by ingestion. A pattern is a path whose parameters are ``{paramN}``,
numbered left to right (DECISIONS §4), usually whole segments (``/users/{param1}``),
possibly inside one (``/files/{param1}.json``, as agents may send). Its regex
matches concrete paths with the same number of segments, each parameter
matching a non-empty run of characters other than ``/``. A segment holding a
parameter is not literal. The regex uses only escapes and constructs that Python,
PostgreSQL (``~``) and JavaScript read the same way.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PARAM = re.compile(r"\{[A-Za-z0-9_.-]*\}")
PARAM_REGEX = "[^/]+"
# Characters update-paths refuses in a path (DECISIONS §4), and why.
FORBIDDEN_CHARACTERS = "?#\\<>&="
_REGEX_SPECIAL = set(".^$*+?()[]{}|\\/-")

MAX_SUGGESTIONS = 100
SUGGESTION_SAMPLE = 2000
PARAMETER_FREQUENCY = 0.10


@dataclass(frozen=True)
class Pattern:
    """A normalised pattern with what ingestion stores next to it on the endpoint."""

    path: str
    regex: str
    num_segments: int
    num_literal_segments: int

    def matches(self, concrete_path: str) -> bool:
        """Whether a concrete path (or a more specific pattern) falls under this pattern."""
        return re.fullmatch(self.regex, concrete_path) is not None


def path_segments(path: str) -> list[str]:
    """Segments of a path: ``/a/b`` → ``["a", "b"]``; ``/`` → ``[]``."""
    if path in ("", "/"):
        return []
    return path[1:].split("/") if path.startswith("/") else path.split("/")


def is_parameter(segment: str) -> bool:
    """Whether a pattern segment holds a parameter (``{param1}``, ``{id}``, ``{param2}.json``)."""
    return PARAM.search(segment) is not None


def _escape(literal: str) -> str:
    return "".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in literal)


def pattern_regex(path: str) -> str:
    """The anchored regex of a pattern: literal segments escaped, parameters ``[^/]+``."""
    segments = path_segments(path)
    if not segments:
        return "^\\/$"
    body = "\\/".join(PARAM_REGEX.join(_escape(piece) for piece in PARAM.split(s)) for s in segments)
    return f"^\\/{body}$"


def pattern_normalise(path: str) -> str:
    """Renumber parameters ``{param1}``, ``{param2}``… left to right."""
    counter = 0

    def number(_match) -> str:
        nonlocal counter
        counter += 1
        return f"{{param{counter}}}"

    return "/" + "/".join(PARAM.sub(number, segment) for segment in path_segments(path))


def pattern_compile(path: str) -> Pattern:
    """Normalise a pattern and compute its regex and segment counts."""
    normalised = pattern_normalise(path)
    segments = path_segments(normalised)
    return Pattern(
        path=normalised,
        regex=pattern_regex(normalised),
        num_segments=len(segments),
        num_literal_segments=sum(1 for s in segments if not is_parameter(s)),
    )


def path_problem(path: str, *, num_segments: int | None = None) -> str | None:
    """Why ``path`` is not an acceptable pattern for update-paths, or ``None`` when it is.

    Rules (DECISIONS §4): starts with ``/``; none of ``? # \\ < > & =``; no empty
    segment (so no ``//`` and no trailing ``/`` except the root itself); as many
    segments as ``num_segments`` when given. Also refused: whitespace and control
    characters, and braces that do not enclose a parameter name.
    """
    if not path.startswith("/"):
        return "must start with /"
    for ch in FORBIDDEN_CHARACTERS:
        if ch in path:
            return f"must not contain {ch}"
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return "must not contain whitespace or control characters"
    segments = path_segments(path)
    if any(s == "" for s in segments):
        return "must not contain empty segments"
    for segment in segments:
        rest = PARAM.sub("", segment)
        if "{" in rest or "}" in rest:
            return "braces must enclose a parameter name, e.g. /users/{param1}"
    if num_segments is not None and len(segments) != num_segments:
        return f"must have {num_segments} segment(s) like the current path, not {len(segments)}"
    return None


def pattern_specificity(pattern: Pattern) -> int:
    """Ranking among patterns matching one path: more literal segments = more specific."""
    return pattern.num_literal_segments


def pattern_best_match(concrete_path: str, patterns: Sequence[Pattern]) -> Pattern | None:
    """The most specific pattern matching a path; ties go to the earlier pattern."""
    best: Pattern | None = None
    for pattern in patterns:
        if pattern.matches(concrete_path) and (best is None or pattern_specificity(pattern) > pattern_specificity(best)):
            best = pattern
    return best


def paths_suggest(paths: Iterable[str], *, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Suggested patterns for a set of concrete paths (DECISIONS §4, suggested-paths).

    Paths are grouped by segment count. Within a group, a segment value seen in
    under 10% of the group's paths at its position becomes a parameter; each
    path thus yields a candidate pattern, scored by the mean frequency of its
    literal segments (0 when it has none). Distinct candidates, best score
    first (ties: more paths behind the candidate, then alphabetical), at most
    ``limit``.
    """
    groups: dict[int, list[list[str]]] = defaultdict(list)
    for path in dict.fromkeys(paths):
        groups[len(path_segments(path))].append(path_segments(path))

    scored: dict[str, tuple[float, int]] = {}
    for size, members in groups.items():
        total = len(members)
        position_counts = [Counter(segments[i] for segments in members) for i in range(size)]
        for segments in members:
            pattern_segments, literal_freqs = [], []
            for i, value in enumerate(segments):
                frequency = position_counts[i][value] / total
                if frequency < PARAMETER_FREQUENCY:
                    pattern_segments.append("{}")
                else:
                    pattern_segments.append(value)
                    literal_freqs.append(frequency)
            candidate = pattern_normalise("/" + "/".join(pattern_segments))
            score = sum(literal_freqs) / len(literal_freqs) if literal_freqs else 0.0
            _, support = scored.get(candidate, (score, 0))
            scored[candidate] = (score, support + 1)

    ranked = sorted(scored.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    return [candidate for candidate, _ in ranked[:limit]]

