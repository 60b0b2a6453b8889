"""Stored generated tests are compressed with lz4 instead of pglz (PostgreSQL 14+ built with lz4).

A host's answer reads ~100 bodies of ~12 KB on every call of GET /gen-test-endpoints, and pglz's
decompression was most of PostgreSQL's time for it (bench/README.md); lz4 decompresses several
times faster at about the same size. Rows keep the compression they were written with until they are
written again. Elsewhere (SQLite, a server without lz4) nothing changes.
"""
from django.db import migrations


def lz4(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_settings WHERE name = 'default_toast_compression'"
                       " AND 'lz4' = ANY(enumvals)")
        if cursor.fetchone()[0]:
            cursor.execute("ALTER TABLE testgen_storedtest ALTER COLUMN body SET COMPRESSION lz4")


class Migration(migrations.Migration):

    dependencies = [
        ("testgen", "0006_stored_tests"),
    ]

    operations = [
        migrations.RunPython(lz4, migrations.RunPython.noop),
    ]
