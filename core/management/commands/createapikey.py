"""``manage.py createapikey NAME``: issue a key; the raw key is the last line of output."""
from django.core.management.base import BaseCommand, CommandError

from core.models import ApiKey


class Command(BaseCommand):
    help = "Create an API key. The key is printed once, as the last line; only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("name", help="A label for the key, e.g. the agent or person using it.")
        parser.add_argument(
            "--if-none", action="store_true", help="Do nothing when an active key already exists (first-run setup)."
        )

    def handle(self, *args, name: str, if_none: bool = False, **options):
        if if_none and ApiKey.objects.active().exists():
            return
        name = name.strip()
        if not name or len(name) > 100:
            raise CommandError("NAME must be 1 to 100 characters.")
        key, raw = ApiKey.issue(name=name)
        self.stderr.write(f"Created API key #{key.id} '{key.name}' ({key.prefix}…). Store it now: it is not shown again.")
        self.stdout.write(raw)
