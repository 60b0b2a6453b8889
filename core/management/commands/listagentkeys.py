"""``manage.py listagentkeys``: the agent encryption keys (never a private key) and the undecryptable count."""
from django.core.management.base import BaseCommand

from core.models import AgentKey, TraceDecryptFailure


class Command(BaseCommand):
    help = "List the key pairs agents encrypt traces for, and how many traces could not be decrypted."

    def handle(self, *args, **options):
        self.stdout.write(f"{'ID':>4}  {'FINGERPRINT (SHA-256)':<64}  {'BITS':>4}  {'STATE':<8}  "
                          f"{'CREATED':<16}  LAST USED")
        for key in AgentKey.objects.all():
            used = f"{key.last_used_at:%Y-%m-%d %H:%M}" if key.last_used_at else "never"
            self.stdout.write(f"{key.id:>4}  {key.fingerprint:<64}  {key.bits:>4}  "
                              f"{'active' if key.active else 'previous':<8}  {key.created_at:%Y-%m-%d %H:%M}  {used}")
        failures = {row.reason: row for row in TraceDecryptFailure.objects.all()}
        total = sum(row.count for row in failures.values())
        self.stdout.write(f"traces that could not be decrypted: {total}")
        for reason, label in TraceDecryptFailure.Reason.choices:
            row = failures.get(reason)
            if row is not None:
                self.stdout.write(f"  {reason:<7} {row.count:>10}  last {row.last_at:%Y-%m-%d %H:%M:%S}  ({label})")
