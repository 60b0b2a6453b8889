"""``python manage.py clear_sensitive_data [--yes]``: POST /clear-sensitive-data from the shell."""
from django.core.management.base import BaseCommand, CommandError

from classification.services import sensitive_data_clear

WARNING = (
    "This removes every sensitive-data classification across all endpoints: data classes, false positives\n"
    "and scanner results of every data field, every endpoint's risk score (set to NONE), and the alerts\n"
    "of types PII Data Detected, Sensitive Data in Query Params, Sensitive Data in Path Params and\n"
    "Unauthenticated Endpoint returning Sensitive Data. It cannot be undone."
)


class Command(BaseCommand):
    help = "Remove all sensitive-data classifications (asks for confirmation unless --yes)."

    def add_arguments(self, parser):
        parser.add_argument("--yes", action="store_true", help="Do not ask for confirmation.")

    def handle(self, *args, yes: bool = False, **options):
        if not yes:
            self.stdout.write(WARNING)
            try:
                answer = input("Type 'yes' to continue: ")
            except EOFError:
                answer = ""
            if answer.strip().lower() != "yes":
                raise CommandError("Cancelled: nothing was cleared.")
        result = sensitive_data_clear()
        self.stdout.write(self.style.SUCCESS(
            f"Cleared the classifications of {result.data_fields} data field(s), reset the risk score of "
            f"{result.endpoints} endpoint(s) and deleted {result.alerts} sensitive-data alert(s)."
        ))
