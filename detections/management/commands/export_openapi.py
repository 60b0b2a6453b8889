"""``manage.py export_openapi HOST [-o FILE] [--yaml]``: the OpenAPI 3.1 document of a host's traffic."""
from __future__ import annotations

import sys

import yaml
from django.core.management.base import BaseCommand, CommandError

from core.errors import ZodError
from detections.openapi.generate.service import document_text, generated_document
from detections.specs import openapi_validate
from inventory.models import Host
from inventory.patterns.normalize import host_normalize


class Command(BaseCommand):
    help = ("Write the OpenAPI 3.1 document generated from a host's traffic (built now from the inventory, "
            "validated) to standard output or a file; JSON, or YAML with --yaml. For CI: exit status 1 when the "
            "host is unknown or has no endpoints.")

    def add_arguments(self, parser):
        parser.add_argument("host", help="host name as the inventory lists it (a scheme or port is ignored)")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")
        parser.add_argument("--yaml", action="store_true", help="YAML instead of JSON")

    def handle(self, *args, host: str, output: str | None, yaml: bool = False, **options):
        row = Host.objects.filter(name=host_normalize(host)).first()
        if row is None:
            raise CommandError(f"Unknown host '{host}'.")
        document = generated_document(row)
        if not document.get("paths"):
            raise CommandError(f"Host '{row.name}' has no endpoints.")
        try:
            openapi_validate(document)
        except ZodError as exc:  # a bug of ours, never the operator's input
            raise CommandError(f"The generated document is invalid: {exc.issues[0]['message']}") from None
        text = _yaml_text(document) if yaml else document_text(document, indent=True) + "\n"
        if output:
            with open(output, "w", encoding="utf-8") as out:
                out.write(text)
            self.stderr.write(f"{len(document['paths'])} path(s) of {row.name} written to {output}")
        else:
            sys.stdout.write(text)


def _yaml_text(document: dict) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)
