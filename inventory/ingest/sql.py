"""Portable bulk upserts: ``INSERT ... ON CONFLICT (...) DO UPDATE`` on PostgreSQL and SQLite.

Django's ``bulk_create(update_conflicts=True)`` can only *replace* a column
with the incoming value; counters need ``count = count + excluded.count`` so
two workers adding to the same minute never lose an increment. Both databases
accept that statement (SQLite since 3.24). Rows are sorted by their conflict key
so concurrent transactions lock rows in the same order (no deadlock cycles).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection, models

CHUNK = 500


def upsert(
    model: type[models.Model],
    rows: Iterable[dict],
    *,
    conflict: Sequence[str],
    increment: Sequence[str] = (),
    replace: Sequence[str] = (),
    greatest: Sequence[str] = (),
) -> int:
    """Insert ``rows`` (dicts of field name -> value); on a conflict on ``conflict`` columns,
    add ``increment`` columns, overwrite ``replace`` columns and keep the larger of ``greatest``
    columns. Returns the number of rows sent."""
    rows = sorted(rows, key=lambda r: tuple(str(r[c]) for c in conflict))
    if not rows:
        return 0
    meta = model._meta
    names = list(rows[0].keys())
    fields = [meta.get_field(n) for n in names]
    columns = [f.column for f in fields]
    qn = connection.ops.quote_name
    table = qn(meta.db_table)
    updates = [f"{qn(meta.get_field(n).column)} = {table}.{qn(meta.get_field(n).column)} + excluded.{qn(meta.get_field(n).column)}"
               for n in increment]
    updates += [f"{qn(meta.get_field(n).column)} = excluded.{qn(meta.get_field(n).column)}" for n in replace]
    max_fn = "GREATEST" if connection.vendor == "postgresql" else "MAX"
    updates += [
        f"{qn(meta.get_field(n).column)} = {max_fn}({table}.{qn(meta.get_field(n).column)}, excluded.{qn(meta.get_field(n).column)})"
        for n in greatest
    ]
    conflict_columns = ", ".join(qn(meta.get_field(n).column) for n in conflict)
    action = f"DO UPDATE SET {', '.join(updates)}" if updates else "DO NOTHING"
    placeholder = "(" + ", ".join(["%s"] * len(columns)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start:start + CHUNK]
            params: list = []
            for row in chunk:
                params.extend(f.get_db_prep_save(row[n], connection) for f, n in zip(fields, names))
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(qn(c) for c in columns)}) VALUES "
                f"{', '.join([placeholder] * len(chunk))} ON CONFLICT ({conflict_columns}) {action}",
                params,
            )
    return len(rows)
