"""``manage.py import_har FILE``: ingest a HAR file through the normal ingestion pipeline."""
from __future__ import annotations

import json
import os
import time

from django.core.management.base import CommandError
from tqdm import tqdm

from core.errors import PayloadTooLarge, ServiceBusy, ZodError
from inventory.ingest.accept import traces_accept, traces_ingest_now
from inventory.ingest.har import har_traces
from core.safejson import strip_nul
from inventory.ingest.validation import MAX_TRACES_PER_BATCH, traces_validate
from inventory.management.ingest_command import IngestCommand


# The largest HAR file read: json.load keeps the whole file and its objects in memory (about five to
# ten times the file's size), so this bounds the command's memory. Larger captures: split them.
MAX_HAR_BYTES = 100 * 1024 * 1024


class Command(IngestCommand):
    help = (
        "Import a HAR file (browser devtools, proxies) as API traffic: every entry goes through the "
        "ingestion pipeline (validation, endpoint discovery, detection, redaction, alerts)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="Path of the .har file ('-' for standard input).")
        parser.add_argument("--batch-size", type=int, default=500, help="Traces per batch (1-1000, default 500).")
        parser.add_argument("--async", dest="use_worker", action="store_true",
                            help="Hand batches to the Celery workers instead of analysing them here.")
        parser.add_argument("--no-progress", action="store_true", help="Hide the progress bar.")

    def ingest(self, *, file, batch_size, use_worker, no_progress, **_):
        if not 1 <= batch_size <= MAX_TRACES_PER_BATCH:
            raise CommandError(f"--batch-size must be between 1 and {MAX_TRACES_PER_BATCH}.")
        try:
            if file == "-":
                import sys

                text = sys.stdin.read(MAX_HAR_BYTES + 1)
                if len(text) > MAX_HAR_BYTES:
                    raise CommandError(_too_large("standard input"))
                har = json.loads(text)
            else:
                if os.path.getsize(file) > MAX_HAR_BYTES:
                    raise CommandError(_too_large(file))
                with open(file, encoding="utf-8") as fh:
                    har = json.load(fh)
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror or exc}") from exc
        except ValueError as exc:
            raise CommandError(f"{file} is not a JSON (HAR) file: {exc}") from exc
        except RecursionError:
            raise CommandError(f"{file} is nested too deeply to be a HAR file.") from None
        if not isinstance(har, dict) or not isinstance(har.get("log"), dict):
            raise CommandError(f"{file} is not a HAR file (no 'log' object).")

        entries = [strip_nul(t) for t in har_traces(har)]
        imported = skipped = 0
        pending: list[dict] = []
        bar = tqdm(total=len(entries), unit="entry", disable=no_progress, desc="import_har")

        def flush():
            nonlocal imported, skipped
            if not pending:
                return
            try:
                traces = traces_validate(pending, batch=True, processed=False)
            except (ZodError, PayloadTooLarge):
                # Keep the valid entries: validate one by one to drop only the bad ones.
                traces = []
                for trace in pending:
                    try:
                        traces.extend(traces_validate([trace], batch=True, processed=False))
                    except (ZodError, PayloadTooLarge):
                        skipped += 1
            if traces:
                if use_worker:
                    while True:
                        try:
                            traces_accept(traces=traces, processed=False)
                            break
                        except ServiceBusy as busy:
                            bar.set_postfix_str(f"backlog full, waiting {busy.retry_after}s")
                            time.sleep(busy.retry_after)
                else:
                    traces_ingest_now(traces=traces)
                imported += len(traces)
            bar.update(len(pending))
            pending.clear()

        for trace in entries:
            if trace is None:
                skipped += 1
                bar.update(1)
                continue
            pending.append(trace)
            if len(pending) >= batch_size:
                flush()
        flush()
        bar.close()
        verb = "queued for analysis" if use_worker else "analysed"
        self.stdout.write(self.style.SUCCESS(f"{imported} entries {verb}, {skipped} skipped."))


def _too_large(name: str) -> str:
    return (f"{name} is larger than {MAX_HAR_BYTES // (1024 * 1024)} MB (memory budget of an import: the file is read "
            "whole); split the capture into smaller HAR files.")
