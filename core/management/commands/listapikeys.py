"""``manage.py listapikeys``: the keys with their scope, display prefix and state (never the key)."""
from django.core.management.base import BaseCommand

from core.models import ApiKey


class Command(BaseCommand):
    help = "List API keys (id, name, scope, prefix, created, state)."

    def add_arguments(self, parser):
        parser.add_argument("--active", action="store_true", help="Only keys that are not revoked.")

    def handle(self, *args, active: bool = False, **options):
        keys = ApiKey.objects.active() if active else ApiKey.objects.all()
        self.stdout.write(f"{'ID':>5}  {'NAME':<30} {'SCOPE':<7} {'PREFIX':<14} {'CREATED':<20} STATE")
        for key in keys.order_by("id"):
            state = "active" if key.is_active else f"revoked {key.revoked_at:%Y-%m-%d %H:%M}"
            self.stdout.write(
                f"{key.id:>5}  {key.name[:30]:<30} {key.scope:<7} {key.prefix + '…':<14} "
                f"{key.created_at:%Y-%m-%d %H:%M:%S}  {state}"
            )
