"""``manage.py split_word_merges``: take apart endpoints that learning merged from dictionary words.

Older versions learned ``/api/users/{param1}/{param2}`` from ``/api/users/7/details``, ``…/history``,
``…/settings``; dictionary words are never merged now (DECISIONS §9 amended). This command gives each
word its endpoint back (``inventory.learning.word_merges_split`` says where uuids, aliases, fields,
alerts and usage go). Run it once after upgrading; running it again changes nothing. Not part of
``migrate``: it may move many rows, and an operator decides when.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand

from inventory.learning import word_merges_split


class Command(BaseCommand):
    help = ("Split endpoints that learned parameterisation merged from ordinary dictionary words "
            "(/api/users/{param1}/{param2} from .../details, .../history) back into one endpoint per word.")

    def add_arguments(self, parser):
        parser.add_argument("--host", help="Only this host's endpoints.")
        parser.add_argument("--dry-run", action="store_true", help="Say what would be split; change nothing.")

    def handle(self, *, host=None, dry_run=False, **_):
        self.stdout.write("Looking for endpoints learned from dictionary words" + (f" on {host}" if host else "")
                          + (" (dry run: nothing is changed)" if dry_run else "") + "...")
        splits = word_merges_split(dry_run=dry_run, host=host, progress=lambda line: self.stdout.write(line))
        created = sum(len(s.created) for s in splits)
        joined = sum(len(s.joined) for s in splits)
        verb = "would be" if dry_run else "were"
        self.stdout.write(self.style.SUCCESS(
            f"{len(splits)} learned endpoint(s) {verb} split: {created} endpoint(s) split out, "
            f"{joined} existing endpoint(s) joined."))
