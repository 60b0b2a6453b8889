"""Learned parameterisation's rule in one process: how long ``patterns_learn`` takes for one group.

Unlike the other scripts this one starts no service: the rule is pure (``inventory.patterns.learn``)
and runs in the worker after each analysis that created endpoints, over one (host, method, segment
count) of at most ``inventory.learning.MAX_GROUP`` endpoints. Two worst cases per size: a family to
learn (usernames under three collections and three sub-resources) and literals whose key sets all
disagree (nothing to learn, every value compared). Prints ``FIGURE`` lines; seeds are fixed.

    python bench/learning.py [--small]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def _families(n: int) -> list:
    from inventory.patterns.learn import Known

    rng = random.Random(1)
    shape = frozenset({("RESPONSE_BODY", "login"), ("RESPONSE_BODY", "id")})
    return [Known(i, f"/api/v1/{rng.choice(['users', 'teams', 'orgs'])}/"
                     f"user{''.join(rng.choice('abcdefghij') for _ in range(6))}/"
                     f"{rng.choice(['profile', 'repos', 'keys'])}", shape) for i in range(n)]


def _disagreeing(n: int) -> list:
    from inventory.patterns.learn import Known

    return [Known(i, f"/api/v1/thing{i}x/{'abcdefgh'[i % 8]}", frozenset({("RESPONSE_BODY", f"k{i}")}))
            for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes (a smoke run)")
    args = parser.parse_args()
    import django

    django.setup()
    from inventory.patterns.learn import patterns_learn

    for size in ((100, 500) if args.small else (1000, 5000)):
        for name, build in (("a family", _families), ("disagreeing literals", _disagreeing)):
            endpoints = build(size)
            start = time.perf_counter()
            learned = patterns_learn(endpoints)
            elapsed = (time.perf_counter() - start) * 1000
            print(f"FIGURE learning rule, {size} endpoints, {name}: {elapsed:.0f} ms "
                  f"({len(learned)} pattern(s) learned)", flush=True)


if __name__ == "__main__":
    main()
