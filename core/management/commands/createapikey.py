"""``manage.py createapikey NAME [--scope ingest|read|admin]``: issue a key; the raw key is the last line."""
from django.core.management.base import BaseCommand, CommandError

from core.models import ApiKey, Scope


class Command(BaseCommand):
    help = "Create an API key. The key is printed once, as the last line; only its hash is stored."

    def add_arguments(self, parser):
        parser.add_argument("name", help="A label for the key, e.g. the agent or person using it.")
        parser.add_argument(
            "--scope", choices=Scope.values, default=Scope.ADMIN,
            help="ingest: traffic agents (verify, agent-config, log-request); read: every GET, secrets masked; "
                 "admin: everything (default).",
        )
        parser.add_argument(
            "--if-none", action="store_true", help="Do nothing when an active key already exists (first-run setup)."
        )

    def handle(self, *args, name: str, scope: str = Scope.ADMIN, if_none: bool = False, **options):
        if if_none and ApiKey.objects.active().exists():
            return
        name = name.strip()
        if not name or len(name) > 100:
            raise CommandError("NAME must be 1 to 100 characters.")
        if scope not in Scope.values:  # call_command() does not apply the parser's choices
            raise CommandError(f"--scope must be one of {', '.join(Scope.values)}.")
        key, raw = ApiKey.issue(name=name, scope=scope)
        self.stderr.write(
            f"Created {key.scope} API key #{key.id} '{key.name}' ({key.prefix}…). Store it now: it is not shown again."
        )
        self.stdout.write(raw)
