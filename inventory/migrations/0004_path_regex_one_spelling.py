"""Every stored ``Endpoint.path_regex`` rewritten in the one spelling of ``inventory.patterns.regex``.

Ingestion wrote ``^/users/[^/]+$`` (``re.escape`` for literals) and update-paths wrote
``^\\/users\\/[^/]+$``; both matched the same paths. The regex is derived from the
endpoint's pattern again, so the result is what both write from now on.
"""
from django.db import migrations

from inventory.patterns.regex import pattern_regex

BATCH = 2000


def path_regexes_rewrite(apps, schema_editor) -> int:
    """Set each endpoint's ``path_regex`` to ``pattern_regex(path)``; returns how many rows changed."""
    Endpoint = apps.get_model("inventory", "Endpoint")
    changed, total = [], 0
    for endpoint in Endpoint.objects.only("uuid", "path", "path_regex").order_by("uuid").iterator(chunk_size=BATCH):
        regex = pattern_regex(endpoint.path)
        if endpoint.path_regex != regex:
            endpoint.path_regex = regex
            changed.append(endpoint)
        if len(changed) >= BATCH:
            Endpoint.objects.bulk_update(changed, ["path_regex"])
            total, changed = total + len(changed), []
    Endpoint.objects.bulk_update(changed, ["path_regex"])
    return total + len(changed)


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0003_merge_ingest_routes"),
    ]

    operations = [
        migrations.RunPython(path_regexes_rewrite, migrations.RunPython.noop, elidable=True),
    ]
