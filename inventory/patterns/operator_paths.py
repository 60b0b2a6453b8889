"""What operators write and are offered: update-paths' rules and suggested paths (DECISIONS §4).

* :func:`path_problem`: why a path is not acceptable for update-paths.
* :func:`pattern_name`, :func:`operator_pattern`: an operator's pattern as stored, names kept.
* :func:`paths_suggest`: candidate patterns for an endpoint's observed concrete paths
  (:func:`names_apply` keeps the endpoint's own parameter names in them).
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from .regex import Pattern, pattern_regex, pattern_shape
from .segments import PARAM, path_segments, pattern_normalise, segment_is_parameter

# update-paths accepts only these parameter names (the grammar itself is wider: segments.PARAM).
OPERATOR_PARAM = re.compile(r"\{[A-Za-z0-9_.-]*\}")
# Characters update-paths refuses in a path (DECISIONS §4), and why.
FORBIDDEN_CHARACTERS = "?#\\<>&="
AUTO_NAME = re.compile(r"\{param\d+\}")

MAX_SUGGESTIONS = 100
SUGGESTION_SAMPLE = 2000
PARAMETER_FREQUENCY = 0.10


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
    segments = path[1:].split("/") if path != "/" else []  # as written: empty segments kept
    if any(s == "" for s in segments):
        return "must not contain empty segments"
    for segment in segments:
        rest = OPERATOR_PARAM.sub("", segment)
        if "{" in rest or "}" in rest:
            return "braces must enclose a parameter name, e.g. /users/{param1}"
    names = [m.group(0)[1:-1] for segment in segments for m in OPERATOR_PARAM.finditer(segment)]
    named = [n for n in names if n]
    if len(set(named)) != len(named):
        return "parameter names must be distinct"
    if num_segments is not None and len(segments) != num_segments:
        return f"must have {num_segments} segment(s) like the current path, not {len(segments)}"
    return None


def pattern_name(path: str) -> str:
    """An operator's pattern as stored: parameter names kept (``/catalog/{itemId}`` stays as written,
    DECISIONS §4); an unnamed ``{}`` becomes ``{paramN}``, N its place among the parameters (the next
    free number when an operator already used that name)."""
    segments = path_segments(path)
    used = {m.group(0) for s in segments for m in PARAM.finditer(s) if m.group(0) != "{}"}
    counter = 0

    def name(match: re.Match) -> str:
        nonlocal counter
        counter += 1
        if match.group(0) != "{}":
            return match.group(0)
        number = counter
        while f"{{param{number}}}" in used:
            number += 1
        used.add(f"{{param{number}}}")
        return f"{{param{number}}}"

    return "/" + "/".join(PARAM.sub(name, s) for s in segments)


def operator_pattern(path: str) -> Pattern:
    """The :class:`~.regex.Pattern` of an update-paths path, its parameter names kept (:func:`pattern_name`)."""
    named = pattern_name(path)
    return Pattern(named, pattern_regex(named), *pattern_shape(named))


def names_apply(pattern: str, names_from: str | None) -> str:
    """``pattern`` with the operator's parameter names of ``names_from`` where both have a whole-segment
    parameter at the same place (``/catalog/{param1}`` with ``/catalog/{itemId}`` -> ``/catalog/{itemId}``).

    Automatic names (``{paramN}``) are not carried over: they are renumbered left to right.
    """
    if not names_from:
        return pattern
    source = path_segments(names_from)
    segments = path_segments(pattern)
    if len(source) != len(segments):
        return pattern
    out = []
    for own, theirs in zip(segments, source):
        keep = segment_is_parameter(own) and segment_is_parameter(theirs) and not AUTO_NAME.fullmatch(theirs)
        out.append(theirs if keep else "{}" if segment_is_parameter(own) else own)
    return pattern_name("/" + "/".join(out))


def paths_suggest(paths: Iterable[str], *, limit: int = MAX_SUGGESTIONS, names_from: str | None = None) -> list[str]:
    """Suggested patterns for a set of concrete paths (DECISIONS §4, suggested-paths).

    Paths are grouped by segment count. Within a group, a segment value seen in
    under 10% of the group's paths at its position becomes a parameter; each
    path thus yields a candidate pattern, scored by the mean frequency of its
    literal segments (0 when it has none). Distinct candidates, best score
    first (ties: more paths behind the candidate, then alphabetical), at most
    ``limit``. With ``names_from`` (the endpoint's own pattern), its operator-written parameter
    names are kept in the candidates (:func:`names_apply`).
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
            candidate = names_apply(pattern_normalise("/" + "/".join(pattern_segments)), names_from)
            score = sum(literal_freqs) / len(literal_freqs) if literal_freqs else 0.0
            _, support = scored.get(candidate, (score, 0))
            scored[candidate] = (score, support + 1)

    ranked = sorted(scored.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    return [candidate for candidate, _ in ranked[:limit]]

