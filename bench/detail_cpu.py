"""CPU of one uncached GET /endpoint/{id} in this process, ORM path against prepared SQL (issue #16).

    DATABASE_URL=postgres://…/apiscope_detail16_bench python bench/detail_cpu.py [--requests 300]

Point it at a database ``bench/metlo_workload.py --keep-db`` left (2,000 endpoints from real ingestion).
For ``--requests`` random endpoints it renders the answer both ways (the ORM path:
``services.endpoint_detail`` + ``ORJSONRenderer``; the route's: ``services.endpoint_detail_body``,
prepared SQL on PostgreSQL), checks the bytes are equal, and prints ``time.process_time`` per
answer: this process's CPU only (PostgreSQL's is not counted), so a shared machine barely moves it.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import django

    django.setup()
    from core.renderers import ORJSONRenderer
    from inventory.api import services
    from inventory.models import Endpoint

    ids = [str(u) for u in Endpoint.objects.values_list("uuid", flat=True)]
    rng = random.Random(args.seed)
    sample = [rng.choice(ids) for _ in range(args.requests)]

    def orm(endpoint_id: str) -> bytes:
        return ORJSONRenderer().render(services.endpoint_detail(endpoint_id=endpoint_id))

    def sql(endpoint_id: str) -> bytes:
        return services.endpoint_detail_body(endpoint_id=endpoint_id)

    differing = sum(orm(i) != sql(i) for i in sample)
    print(f"{len(ids)} endpoints, {len(sample)} random answers, {differing} differing between the paths")
    for name, render in (("ORM", orm), ("prepared SQL", sql)) * 2:
        start, size = time.process_time(), 0
        for endpoint_id in sample:
            size += len(render(endpoint_id))
        per = (time.process_time() - start) / len(sample) * 1000
        print(f"FIGURE {name}: {per:.2f} CPU-ms per answer (average {size / len(sample) / 1000:.1f} KB)")


if __name__ == "__main__":
    main()
