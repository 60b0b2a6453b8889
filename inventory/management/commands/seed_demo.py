"""``manage.py seed_demo``: fill the inventory with realistic demo traffic through the normal pipeline."""
from __future__ import annotations

from datetime import timedelta

from django.core.management.base import CommandError
from django.utils import timezone
from tqdm import tqdm

from inventory.ingest.accept import traces_ingest_now
from inventory.ingest.demo import demo_traces
from inventory.management.ingest_command import IngestCommand
from inventory.models import Endpoint

BATCH = 100


class Command(IngestCommand):
    help = (
        "Ingest demo traffic for five hosts of a fictitious shop (public API, GraphQL, internal orders and "
        "payments services, a partner's plain-HTTP export) so the inventory, data classes, alerts, usage and "
        "hosts graph have something to show. Deterministic for a given --seed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--traces", type=int, default=1500, help="Number of traces (default 1500).")
        parser.add_argument("--seed", type=int, default=7, help="Random seed (default 7).")
        parser.add_argument("--days", type=int, default=6,
                            help="Spread the traffic over this many past days, ending now (default 6, max 6: "
                                 "traces older than 7 days are pruned).")
        parser.add_argument("--if-empty", action="store_true", help="Do nothing when the inventory has endpoints.")
        parser.add_argument("--no-progress", action="store_true")

    def ingest(self, *, traces, seed, days, if_empty, no_progress, **_):
        if traces < 1:
            raise CommandError("--traces must be at least 1.")
        if not 1 <= days <= 6:
            raise CommandError("--days must be between 1 and 6 (traces older than 7 days are pruned).")
        if if_empty and Endpoint.objects.exists():
            self.stdout.write("The inventory is not empty; nothing seeded.")
            return
        now = timezone.now()
        batches = (traces + BATCH - 1) // BATCH
        generated = demo_traces(traces, seed=seed)
        with tqdm(total=traces, unit="trace", disable=no_progress, desc="seed_demo") as bar:
            for index in range(batches):
                chunk = [t for _, t in zip(range(BATCH), generated)]
                # Oldest first, the last batch now: daily usage over several days and a live last minute.
                received = now - timedelta(days=days) * (batches - 1 - index) / max(1, batches - 1)
                traces_ingest_now(traces=chunk, received_at=received)
                bar.update(len(chunk))
        self.stdout.write(self.style.SUCCESS(
            f"Seeded {traces} demo traces: {Endpoint.objects.count()} endpoints on "
            f"{Endpoint.objects.values('host').distinct().count()} hosts."
        ))
