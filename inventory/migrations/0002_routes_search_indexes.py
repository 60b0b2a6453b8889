"""PostgreSQL-only indexes for GET /endpoints and GET /hosts filters (skipped on other databases).

* ``searchQuery`` is ``icontains``, which Django writes as ``UPPER(col::text) LIKE UPPER(%s)``:
  trigram GIN indexes on exactly that expression (pg_trgm) serve it on path, owner,
  openapi_spec_name and the host name.
* ``dataClasses`` / ``resourcePermissions`` are jsonb ``?|`` (``has_any_keys``): GIN on the lists.

Built ``CONCURRENTLY`` (no table lock on a live inventory), hence a non-atomic migration.
When pg_trgm cannot be installed (no privilege), the trigram indexes are skipped with a
warning: searches still work, by sequential scan.
"""
import logging

from django.db import migrations

logger = logging.getLogger(__name__)

TRIGRAM_INDEXES = [
    ("endpoint_path_trgm", "inventory_endpoint", "path"),
    ("endpoint_owner_trgm", "inventory_endpoint", "owner"),
    ("endpoint_spec_name_trgm", "inventory_endpoint", "openapi_spec_name"),
    ("host_name_trgm", "inventory_host", "name"),
]
JSON_INDEXES = [
    ("endpoint_data_classes_gin", "inventory_endpoint", "data_classes"),
    ("endpoint_resource_perms_gin", "inventory_endpoint", "resource_permissions"),
]


def _trigram_available(cursor) -> bool:
    cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
    if cursor.fetchone():
        return True
    try:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except Exception as exc:  # noqa: BLE001 - lacking privilege must not block the migration
        logger.warning("pg_trgm unavailable (%s); searchQuery indexes skipped", type(exc).__name__)
        return False
    return True


# GET /endpoints' default order (risk HIGH→NONE, lastActive newest first with nulls last,
# uuid): an index in exactly that order lets a page be read without sorting the table.
LIST_ORDER_INDEX = (
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS endpoint_list_order ON inventory_endpoint "
    "(risk_rank DESC, last_active DESC NULLS LAST, uuid)"
)


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(LIST_ORDER_INDEX)
        for name, table, column in JSON_INDEXES:
            cursor.execute(f'CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} USING gin ("{column}")')
        if _trigram_available(cursor):
            for name, table, column in TRIGRAM_INDEXES:
                cursor.execute(
                    f'CREATE INDEX CONCURRENTLY IF NOT EXISTS {name} ON {table} '
                    f'USING gin ((UPPER("{column}"::text)) gin_trgm_ops)'
                )


def drop_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("DROP INDEX CONCURRENTLY IF EXISTS endpoint_list_order")
        for name, _, _ in [*JSON_INDEXES, *TRIGRAM_INDEXES]:
            cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("inventory", "0001_initial")]

    operations = [migrations.RunPython(create_indexes, drop_indexes, elidable=False)]
