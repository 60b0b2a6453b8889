"""``manage.py revokeapikey ID_OR_PREFIX``: revoke a key; it stops working at once."""
from django.core.management.base import BaseCommand, CommandError

from core.models import ApiKey


class Command(BaseCommand):
    help = "Revoke an API key by id or by its display prefix."

    def add_arguments(self, parser):
        parser.add_argument("key", help="The key's id (see listapikeys) or its display prefix.")

    def handle(self, *args, key: str, **options):
        matches = ApiKey.objects.filter(id=int(key)) if key.isdigit() else ApiKey.objects.filter(prefix=key.rstrip("…"))
        if matches.count() != 1:
            raise CommandError(f"No single API key matches '{key}'.")
        api_key = matches.get()
        if not api_key.is_active:
            self.stdout.write(f"API key #{api_key.id} '{api_key.name}' was already revoked.")
            return
        api_key.revoke()
        self.stdout.write(f"Revoked API key #{api_key.id} '{api_key.name}'.")
