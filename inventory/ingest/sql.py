"""Portable bulk upserts: ``INSERT ... ON CONFLICT (...) DO UPDATE`` on PostgreSQL and SQLite.

Django's ``bulk_create(update_conflicts=True)`` can only *replace* a column
with the incoming value; counters need ``count = count + excluded.count`` so
two workers adding to the same minute never lose an increment. Both databases
accept that statement (SQLite since 3.24). Rows are sorted by their conflict key
so concurrent transactions lock rows in the same order (no deadlock cycles).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import DEFAULT_DB_ALIAS, connections, models

CHUNK = 500


def upsert(
    model: type[models.Model],
    rows: Iterable[dict],
    *,
    conflict: Sequence[str] = (),
    increment: Sequence[str] = (),
    replace: Sequence[str] = (),
    greatest: Sequence[str] = (),
) -> int:
    """Insert ``rows`` (dicts of field name -> value); on a conflict on ``conflict`` columns,
    add ``increment`` columns, overwrite ``replace`` columns and keep the larger of ``greatest``
    columns; with no update columns conflicting rows are skipped (``DO NOTHING``); with no
    ``conflict`` columns it is a plain multi-row insert. Returns the number of rows sent.

    Also the fast path for plain bulk inserts: Django 5.2's ``bulk_create`` sends one
    array per column (``UNNEST``) on PostgreSQL, which psycopg's client-side binding
    quotes element by element in Python -- several times slower for text and JSON rows.
    """
    rows = sorted(rows, key=lambda r: tuple(str(r[c]) for c in conflict)) if conflict else list(rows)
    if not rows:
        return 0
    # The connection itself, not the ``django.db.connection`` proxy: one attribute
    # lookup per value through the proxy costs more than the conversion.
    connection = connections[DEFAULT_DB_ALIAS]
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
    on_conflict = f" ON CONFLICT ({conflict_columns}) {action}" if conflict else ""
    placeholder = "(" + ", ".join(["%s"] * len(columns)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start:start + CHUNK]
            params: list = []
            for row in chunk:
                params.extend(f.get_db_prep_save(row[n], connection) for f, n in zip(fields, names))
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(qn(c) for c in columns)}) VALUES "
                f"{', '.join([placeholder] * len(chunk))}{on_conflict}",
                params,
            )
    return len(rows)


def bulk_insert(model: type[models.Model], rows: list[dict]) -> int:
    """Plain bulk insert of ``rows`` (dicts of field name -> value); returns the number inserted.

    PostgreSQL: ``COPY ... FROM STDIN`` -- no SQL text to build or parse, values
    streamed by psycopg (used for traces, the largest rows ingestion writes).
    Elsewhere: a multi-row ``INSERT``.
    """
    if not rows:
        return 0
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor != "postgresql":
        return upsert(model, rows)
    from psycopg.types.json import Jsonb

    meta = model._meta
    names = list(rows[0].keys())
    fields = [meta.get_field(n) for n in names]
    json_columns = [i for i, f in enumerate(fields) if isinstance(f, models.JSONField)]
    qn = connection.ops.quote_name
    sql = f"COPY {qn(meta.db_table)} ({', '.join(qn(f.column) for f in fields)}) FROM STDIN"
    with connection.cursor() as cursor:
        with cursor.cursor.copy(sql) as copy:
            for row in rows:
                values = [row[n] for n in names]
                for i in json_columns:
                    values[i] = Jsonb(values[i])
                copy.write_row(values)
    return len(rows)
