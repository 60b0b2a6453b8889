"""Accuracy of learned parameterisation on the labelled families of ``fixtures/path_families.txt``.

Each concrete path goes through what the service does: ingestion's own parameterisation
(``path_parameterize``: ids, UUIDs, hashes, dates…), one endpoint per resulting pattern with
its key set, then the learning rule over each host and method (``patterns_learn``). The
final pattern of every concrete path is compared, segment by segment, with the labelled
truth: a parameter segment found is a true positive, a literal made a parameter a false
positive, a parameter left literal a false negative.

``python -m tests.inventory.learning_accuracy`` prints the table published in docs/inventory.md.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from inventory.patterns.learn import Known, patterns_learn
from inventory.patterns.segments import path_parameterize, path_segments, segment_has_parameter

DATA = Path(__file__).parent / "fixtures" / "path_families.txt"
_PARAM = re.compile(r"\{[^{}/]*\}")


@dataclass
class Sample:
    host: str
    method: str
    truth: str
    path: str
    shape: frozenset | None
    word_routes: bool = False  # a row of the file's "Word routes" part (issue #25)


WORD_ROUTES_MARK = "# Word routes"


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    families: int = 0
    paths: int = 0
    mistakes: list = field(default_factory=list)  # (host, method, path, truth, predicted)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def samples_load(text: str | None = None) -> tuple[list[Sample], int]:
    """The concrete paths of the labelled file, and the number of families (lines)."""
    text = DATA.read_text() if text is None else text
    host, samples, families, word_routes = "", [], 0, False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(WORD_ROUTES_MARK):
            word_routes = True
        if not line or line.startswith("#"):
            continue
        if line.startswith("@"):
            host = line[1:].strip()
            continue
        head, _, keys = line.partition(" ; ")
        if head.endswith(" ;"):
            head, keys = head[:-2], ""
        head, _, values = head.partition(" : ")
        method, truth = head.split(" ", 1)
        shape = frozenset(("RESPONSE_BODY", k) for k in keys.split()) if " ; " in line or keys else None
        families += 1
        count = len(_PARAM.findall(truth))
        for token in values.split() if count else [""]:
            parts = token.split("|") if count else []
            assert len(parts) == count, (line, token)
            path = _PARAM.sub(lambda m, it=iter(parts): next(it), truth)
            samples.append(Sample(host, method, truth, path, shape or None, word_routes))
    return samples, families


def predict(samples: list[Sample]) -> dict[tuple, str]:
    """(host, method, concrete path) -> the pattern the service ends with."""
    endpoints: dict[tuple, dict[str, Known]] = defaultdict(dict)
    pattern_of = {}
    for s in samples:
        pattern = path_parameterize(s.path)
        pattern_of[(s.host, s.method, s.path)] = pattern
        endpoints[(s.host, s.method)].setdefault(pattern, Known(pattern, pattern, s.shape))
    learned_of: dict[tuple, str] = {}
    for (host, method), known in endpoints.items():
        for learned in patterns_learn(list(known.values())):
            for member in learned.members:
                learned_of[(host, method, member)] = learned.path
    return {key: learned_of.get((key[0], key[1], pattern), pattern) for key, pattern in pattern_of.items()}


def score(samples: list[Sample], families: int) -> Score:
    result = Score(families=families, paths=len(samples))
    predicted = predict(samples)
    for s in samples:
        final = predicted[(s.host, s.method, s.path)]
        truth_segments, final_segments = path_segments(s.truth), path_segments(final)
        wrong = False
        for t, f in zip(truth_segments, final_segments):
            is_param, found = segment_has_parameter(t), segment_has_parameter(f)
            if is_param and found:
                result.tp += 1
            elif found:
                result.fp += 1
                wrong = True
            elif is_param:
                result.fn += 1
                wrong = True
            else:
                result.tn += 1
        if wrong:
            result.mistakes.append((s.host, s.method, s.path, s.truth, final))
    return result


def baseline(samples: list[Sample], families: int) -> Score:
    """The same measure for ingestion's parameterisation alone (no learning)."""
    result = Score(families=families, paths=len(samples))
    for s in samples:
        for t, f in zip(path_segments(s.truth), path_segments(path_parameterize(s.path))):
            is_param, found = segment_has_parameter(t), segment_has_parameter(f)
            result.tp += is_param and found
            result.fp += found and not is_param
            result.fn += is_param and not found
            result.tn += not is_param and not found
    return result


def table() -> str:
    samples, families = samples_load()
    learned, plain = score(samples, families), baseline(samples, families)
    words = [s for s in samples if s.word_routes]
    others = [s for s in samples if not s.word_routes]
    lines = [
        f"{families} labelled families and literal paths, {len(samples)} concrete paths "
        f"({len(words)} of them in the word routes), "
        f"{learned.tp + learned.fn} parameter segments, {learned.tn + learned.fp} literal segments.",
        "",
        "| | precision | recall | TP | FP | FN |",
        "|---|---|---|---|---|---|",
        f"| ingestion's rules alone | {plain.precision:.3f} | {plain.recall:.3f} | {plain.tp} | {plain.fp} | {plain.fn} |",
        f"| with learning | {learned.precision:.3f} | {learned.recall:.3f} | {learned.tp} | {learned.fp} | {learned.fn} |",
    ]
    for label, part in (("with learning, families before the word routes", others),
                        ("with learning, word routes only", words)):
        scored = _part(learned, samples, part, families)
        lines.append(f"| {label} | {scored.precision:.3f} | {scored.recall:.3f} | {scored.tp} | {scored.fp} | "
                     f"{scored.fn} |")
    lines += ["", "Mistakes with learning (concrete path: labelled → learned):", ""]
    for host, method, path, truth, final in learned.mistakes:
        lines.append(f"- `{method} {host}{path}`: `{truth}` → `{final}`")
    return "\n".join(lines)


def _part(learned: Score, samples: list[Sample], part: list[Sample], families: int) -> Score:
    """The segment counts of ``part`` of the samples, learned over all of them (hosts mix both parts)."""
    predicted = predict(samples)
    result = Score(families=families, paths=len(part))
    for s in part:
        for t, f in zip(path_segments(s.truth), path_segments(predicted[(s.host, s.method, s.path)])):
            is_param, found = segment_has_parameter(t), segment_has_parameter(f)
            result.tp += is_param and found
            result.fp += found and not is_param
            result.fn += is_param and not found
            result.tn += not is_param and not found
    return result


if __name__ == "__main__":
    import django
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()
    print(table())
