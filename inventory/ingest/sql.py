"""Portable bulk upserts: ``INSERT ... ON CONFLICT (...) DO UPDATE`` on PostgreSQL and SQLite.

Django's ``bulk_create(update_conflicts=True)`` can only *replace* a column
with the incoming value; counters need ``count = count + excluded.count`` so
two workers adding to the same minute never lose an increment. Both databases
accept that statement (SQLite since 3.24). Rows are sorted by their conflict key
so concurrent transactions lock rows in the same order (no deadlock cycles).

On PostgreSQL the rows travel by ``COPY`` into a per-connection staging table
(``ON COMMIT DELETE ROWS``) and one ``INSERT ... SELECT`` / ``UPDATE ... FROM``
applies them: no SQL text to build, quote and parse per value (Django's
psycopg cursors bind parameters client-side, in Python), about twice as fast
as ``unnest`` arrays and several times faster than multi-row ``VALUES``
(``bench/README.md``). Reads that return many rows use :func:`pg_cursor`
(server-side binding, binary results).
"""
from __future__ import annotations

import hashlib
import json
import time
import weakref
from collections.abc import Iterable, Sequence

import orjson
from django.db import DEFAULT_DB_ALIAS, connections, models, transaction

CHUNK = 500


def _json_dumps(value) -> str:
    """JSON text for a jsonb value: orjson, or the standard library for what orjson refuses
    (integer keys, integers beyond 64 bits)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value)


def pg_cursor(*, binary: bool = False):
    """A psycopg cursor with server-side binding on Django's default connection (PostgreSQL only).

    It runs in the caller's transaction. Parameters are sent separately from the SQL
    (lists become arrays: ``= ANY(%s)``) and, with ``binary``, results come back in
    binary form (UUIDs, integers and timestamps without text parsing); cast JSON
    columns to ``::text`` and decode them with ``orjson``.
    """
    import psycopg

    connection = connections[DEFAULT_DB_ALIAS]
    connection.ensure_connection()
    cursor = psycopg.Cursor(connection.connection)
    if binary:
        cursor.format = psycopg.pq.Format.BINARY
    return cursor



def pg_execute(cursor, sql: str, params=None):
    """Run ``sql`` on a :func:`pg_cursor` as a prepared statement (parsed and planned once per
    connection) and return the cursor. Logged in Django's ``connection.queries`` while queries are
    captured (``DEBUG``, ``assertNumQueries``), as the ORM's are."""
    connection = connections[DEFAULT_DB_ALIAS]
    if not connection.queries_logged:
        return cursor.execute(sql, params, prepare=True)
    start = time.monotonic()
    try:
        return cursor.execute(sql, params, prepare=True)
    finally:
        connection.queries_log.append({"sql": _bound(cursor, sql, params), "time": f"{time.monotonic() - start:.3f}"})


def _bound(cursor, sql: str, params) -> str:
    """The statement with its parameters in it, as Django logs the ORM's (runnable as it stands)."""
    import psycopg

    try:
        return psycopg.ClientCursor(cursor.connection).mogrify(sql, params) if params else sql
    except Exception:  # noqa: BLE001 - a log line must never fail the query it describes
        return sql

# psycopg connection -> staging tables known to exist on it (registered once their creation committed).
_staging_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _stage(cursor, model: type[models.Model], fields: list, rows: Iterable[Sequence]) -> str:
    """COPY ``rows`` (values in ``fields`` order) into this connection's staging table for those
    columns and return its name. The table is temporary, ``ON COMMIT DELETE ROWS``; the statement
    reading it must empty it (``DELETE ... RETURNING``) so a second use in one transaction starts
    empty."""
    from psycopg.types.json import Jsonb

    connection = connections[DEFAULT_DB_ALIAS]
    qn = connection.ops.quote_name
    columns = [f.column for f in fields]
    digest = hashlib.sha1(",".join(columns).encode()).hexdigest()[:10]
    name = f"_stage_{model._meta.db_table}_{digest}"
    known = _staging_tables.setdefault(connection.connection, set())
    column_list = ", ".join(qn(c) for c in columns)
    if name not in known:
        cursor.execute(
            f"CREATE TEMPORARY TABLE IF NOT EXISTS {qn(name)} ON COMMIT DELETE ROWS AS "
            f"SELECT {column_list} FROM {qn(model._meta.db_table)} WITH NO DATA"
        )
        pg_connection = connection.connection
        transaction.on_commit(lambda: _staging_tables.setdefault(pg_connection, set()).add(name))
    json_columns = [i for i, f in enumerate(fields) if isinstance(f, models.JSONField)]
    with cursor.copy(f"COPY {qn(name)} ({column_list}) FROM STDIN") as copy:
        for values in rows:
            if json_columns:
                values = list(values)
                for i in json_columns:
                    values[i] = Jsonb(values[i], dumps=_json_dumps)
            copy.write_row(values)
    return name


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
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql":
        return _pg_upsert(model, rows, conflict=conflict, increment=increment, replace=replace, greatest=greatest)
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
    # From here on SQLite (PostgreSQL returned above): its two-argument MAX is GREATEST.
    updates += [
        f"{qn(meta.get_field(n).column)} = MAX({table}.{qn(meta.get_field(n).column)}, excluded.{qn(meta.get_field(n).column)})"
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
                    values[i] = Jsonb(values[i], dumps=_json_dumps)
                copy.write_row(values)
    return len(rows)


def _pg_upsert(model, rows, *, conflict, increment, replace, greatest) -> int:
    """PostgreSQL :func:`upsert`: COPY into the staging table, one ``INSERT ... SELECT ... ORDER BY``
    (rows locked in conflict-key order, as the sorted multi-row insert did)."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return 0
    connection = connections[DEFAULT_DB_ALIAS]
    meta = model._meta
    qn = connection.ops.quote_name
    table = qn(meta.db_table)
    names = list(rows[0].keys())
    fields = [meta.get_field(n) for n in names]
    columns = ", ".join(qn(f.column) for f in fields)

    def col(name: str) -> str:
        return qn(meta.get_field(name).column)

    updates = [f"{col(n)} = {table}.{col(n)} + excluded.{col(n)}" for n in increment]
    updates += [f"{col(n)} = excluded.{col(n)}" for n in replace]
    updates += [f"{col(n)} = GREATEST({table}.{col(n)}, excluded.{col(n)})" for n in greatest]
    action = f"DO UPDATE SET {', '.join(updates)}" if updates else "DO NOTHING"
    on_conflict = f" ON CONFLICT ({', '.join(col(n) for n in conflict)}) {action}" if conflict else ""
    order = f" ORDER BY {', '.join(col(n) for n in conflict)}" if conflict else ""
    # The staged rows live until commit: one transaction (the caller's, when there is one).
    with transaction.atomic(savepoint=False), pg_cursor() as cursor:
        stage = _stage(cursor, model, fields, ([row[n] for n in names] for row in rows))
        cursor.execute(
            f"WITH s AS (DELETE FROM {qn(stage)} RETURNING {columns}) "
            f"INSERT INTO {table} ({columns}) SELECT {columns} FROM s{order}{on_conflict}"
        )
    return len(rows)


def bulk_set(model: type[models.Model], rows: list[dict], *, replace: Sequence[str] = (),
             greatest: Sequence[str] = (), lock: bool = True) -> int:
    """Update existing rows by primary key: each row is a dict with ``pk`` and the columns to set.

    ``replace`` columns take the row's value; ``greatest`` columns keep the larger of the stored
    value (NULL counts as smaller) and the row's. The rows are locked in key order first, as
    every multi-row write here does (``lock=False`` when the caller already holds the locks). Replaces Django's ``bulk_update``, whose ``CASE WHEN`` per
    row costs time quadratic in the number of rows on the server and a compiled expression per
    row in Python. Returns the number of rows sent.
    """
    if not rows:
        return 0
    connection = connections[DEFAULT_DB_ALIAS]
    meta = model._meta
    if connection.vendor != "postgresql":
        from django.db.models import F, Value
        from django.db.models.functions import Coalesce, Greatest

        objects = []
        for row in rows:
            obj = model(pk=row["pk"])
            for n in replace:
                setattr(obj, n, row[n])
            for n in greatest:
                setattr(obj, n, Greatest(Coalesce(F(n), Value(row[n])), Value(row[n])))
            objects.append(obj)
        model.objects.bulk_update(objects, [*replace, *greatest])
        return len(rows)
    qn = connection.ops.quote_name
    table = qn(meta.db_table)
    pk = meta.pk
    names = [*replace, *greatest]
    fields = [pk, *(meta.get_field(n) for n in names)]
    assignments = [f"{qn(meta.get_field(n).column)} = s.{qn(meta.get_field(n).column)}" for n in replace]
    assignments += [
        f"{qn(meta.get_field(n).column)} = GREATEST(COALESCE({table}.{qn(meta.get_field(n).column)}, "
        f"s.{qn(meta.get_field(n).column)}), s.{qn(meta.get_field(n).column)})"
        for n in greatest
    ]
    ordered = sorted(rows, key=lambda r: str(r["pk"]))
    with transaction.atomic(savepoint=False), pg_cursor() as cursor:
        if lock:
            cursor.execute(
                f"SELECT 1 FROM {table} WHERE {qn(pk.column)} = ANY(%s) ORDER BY {qn(pk.column)} FOR NO KEY UPDATE",
                [[r["pk"] for r in ordered]],
            )
        stage = _stage(cursor, model, fields, ([r["pk"], *(r[n] for n in names)] for r in ordered))
        cursor.execute(
            f"WITH s AS (DELETE FROM {qn(stage)} RETURNING *) "
            f"UPDATE {table} SET {', '.join(assignments)} FROM s WHERE {table}.{qn(pk.column)} = s.{qn(pk.column)}"
        )
    return len(rows)
