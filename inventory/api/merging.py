"""Moving what endpoints hold into another endpoint: the parts of every merge.

Shared by update-paths (``inventory.api.merge``) and learned parameterisation
(``inventory.learning``): fields, alerts, usage counters and callers, attributes, and
the aliases that keep merged endpoints' ids resolving.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from django.db import connection
from django.db.models import Model
from django.utils import timezone

from classification.models import DataField
from core.enums import AlertStatus, AlertType
from detections.models import Alert
from inventory.models import ApiTrace, Endpoint, EndpointAlias, EndpointCaller, ObservedPath, UsageDay, UsageMinute

_STATUS_RANK = {AlertStatus.OPEN: 0, AlertStatus.IGNORED: 1, AlertStatus.RESOLVED: 2}


def fields_move(*, target: Endpoint, sources: list[Endpoint]) -> None:
    """Move the sources' data fields to the target; fields with the same identity collapse into one."""
    source_ids = [s.uuid for s in sources]
    fields = list(DataField.objects.select_for_update().filter(endpoint_id__in=[target.uuid, *source_ids]))
    groups: dict[tuple, list[DataField]] = defaultdict(list)
    for f in fields:
        groups[(f.data_section, f.status_code, f.data_path)].append(f)
    keepers, doomed = [], []
    for members in groups.values():
        members.sort(key=lambda f: (f.endpoint_id != target.uuid, f.created_at))
        keeper, others = members[0], members[1:]
        false_positives = union(f.false_positives for f in members)
        keeper.data_classes = [c for c in union(f.data_classes for f in members) if c not in false_positives]
        keeper.false_positives = false_positives
        keeper.scanner_identified = union(f.scanner_identified for f in members)
        keeper.is_nullable = any(f.is_nullable for f in members)
        keeper.content_type = keeper.content_type or next((f.content_type for f in others if f.content_type), "")
        keeper.entity = keeper.entity or next((f.entity for f in others if f.entity), None)
        keeper.created_at = min(f.created_at for f in members)
        keeper.last_seen = max(f.last_seen for f in members)
        keeper.endpoint_id = target.uuid
        keepers.append(keeper)
        doomed.extend(o.uuid for o in others)
    DataField.objects.filter(uuid__in=doomed).delete()
    DataField.objects.bulk_update(
        keepers,
        ["endpoint", "data_classes", "false_positives", "scanner_identified", "is_nullable", "content_type", "entity",
         "created_at", "last_seen"],
        batch_size=500,
    )


def union(lists) -> list:
    return list(dict.fromkeys(item for items in lists for item in (items or ())))


def alerts_move(*, target: Endpoint, sources: list[Endpoint], resolve_as: str | None = None) -> None:
    """Move the sources' alerts to the target; duplicates (same type and description; one "New Endpoint
    Detected" per endpoint) collapse into the most relevant (Open, then Ignored, then Resolved; oldest first).

    The other duplicates are deleted (update-paths), or with ``resolve_as`` kept, resolved with that
    resolution message (learned parameterisation: "resolved as merged").
    """
    alerts = list(Alert.objects.filter(endpoint_id__in=[target.uuid, *(s.uuid for s in sources)]))
    groups: dict[tuple, list[Alert]] = defaultdict(list)
    for alert in alerts:
        key = (alert.type,) if alert.type == AlertType.NEW_ENDPOINT else (alert.type, alert.description)
        groups[key].append(alert)
    doomed, keep = [], []
    for members in groups.values():
        members.sort(key=lambda a: (_STATUS_RANK.get(a.status, 3), a.created_at, str(a.uuid)))
        keep.append(members[0].uuid)
        doomed.extend(a.uuid for a in members[1:])
    if resolve_as is None:
        Alert.objects.filter(uuid__in=doomed).delete()
    else:
        Alert.objects.filter(uuid__in=doomed).update(
            endpoint_id=target.uuid, status=AlertStatus.RESOLVED, resolution_message=resolve_as,
            updated_at=timezone.now(),
        )
    Alert.objects.filter(uuid__in=keep).exclude(endpoint_id=target.uuid).update(endpoint_id=target.uuid)


def counters_move(*, target: Endpoint, sources: list[Endpoint]) -> None:
    """Sum the sources' usage counters into the target's, move their callers; then drop the sources' rows."""
    source_ids = [s.uuid for s in sources]
    for model, key in ((UsageMinute, "minute"), (UsageDay, "day")):
        totals: Counter = Counter()
        for bucket, count in model.objects.filter(endpoint_id__in=source_ids).values_list(key, "count"):
            totals[bucket] += count
        rows_upsert(model, [(target.uuid, b, c) for b, c in totals.items()],
                fields=("endpoint", key, "count"), conflict=("endpoint", key), add=("count",))
        model.objects.filter(endpoint_id__in=source_ids).delete()
    latest: dict[str, object] = {}
    for address, last_seen in EndpointCaller.objects.filter(endpoint_id__in=source_ids).values_list("address", "last_seen"):
        latest[address] = max(latest.get(address, last_seen), last_seen)
    rows_upsert(EndpointCaller, [(target.uuid, a, s) for a, s in latest.items()],
            fields=("endpoint", "address", "last_seen"), conflict=("endpoint", "address"), greatest=("last_seen",))
    EndpointCaller.objects.filter(endpoint_id__in=source_ids).delete()


def rows_upsert(model: type[Model], rows: list[tuple], *, fields: tuple[str, ...], conflict: tuple[str, ...],
               add: tuple[str, ...] = (), greatest: tuple[str, ...] = (), replace: tuple[str, ...] = ()) -> None:
    """Insert rows of ``fields``; on a ``conflict`` add to the existing ``add`` counters, keep the
    latest ``greatest`` values and overwrite the ``replace`` ones.

    Done in SQL (``INSERT … ON CONFLICT … DO UPDATE``, PostgreSQL and SQLite ≥ 3.24) so
    increments made concurrently by ingestion on the target's rows are never lost.
    """
    if not rows:
        return
    opts, quote = model._meta, connection.ops.quote_name
    table = quote(opts.db_table)
    model_fields = [opts.get_field(name) for name in fields]

    def column(name: str) -> str:
        return quote(opts.get_field(name).column)

    largest = "GREATEST" if connection.vendor == "postgresql" else "MAX"
    updates = [f"{column(n)} = {table}.{column(n)} + excluded.{column(n)}" for n in add]
    updates += [f"{column(n)} = {largest}({table}.{column(n)}, excluded.{column(n)})" for n in greatest]
    updates += [f"{column(n)} = excluded.{column(n)}" for n in replace]
    sql = (
        f"INSERT INTO {table} ({', '.join(column(n) for n in fields)}) VALUES ({', '.join(['%s'] * len(fields))}) "
        f"ON CONFLICT ({', '.join(column(n) for n in conflict)}) DO UPDATE SET {', '.join(updates)}"
    )

    def prepare(model_field, value):
        db_field = model_field.target_field if model_field.is_relation else model_field
        return db_field.get_db_prep_save(value, connection)

    prepared = [[prepare(f, value) for f, value in zip(model_fields, row)] for row in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, prepared)


def attributes_merge(target: Endpoint, *, traffic: list[Endpoint], settings: list[Endpoint],
                     first_detected_default=None) -> None:
    """Set ``target``'s attributes (not saved) from the endpoints whose ``traffic`` it now holds and
    whose operator ``settings`` it inherits (the first set value wins, in list order).

    Timestamps come from the traffic (no traffic: ``first_detected_default`` and no activity);
    flags that say "seen once" (unauthenticated success, GraphQL, full capture) are any-of.
    """
    first = [e.first_detected for e in traffic if e.first_detected]
    last = [e.last_active for e in traffic if e.last_active]
    target.first_detected = min(first) if first else first_detected_default
    target.last_active = max(last) if last else None
    target.unauthenticated_success_seen = any(e.unauthenticated_success_seen for e in settings)
    target.is_authenticated_detected = (
        all(e.is_authenticated_detected for e in settings) and not target.unauthenticated_success_seen
    )
    target.is_authenticated_user_set = next(
        (e.is_authenticated_user_set for e in settings if e.is_authenticated_user_set is not None), None
    )
    target.full_trace_capture_enabled = any(e.full_trace_capture_enabled for e in settings)
    target.is_graphql = any(e.is_graphql for e in settings)
    target.graphql_schema = next((e.graphql_schema for e in settings if e.graphql_schema), None)
    target.owner = next((e.owner for e in settings if e.owner), "")
    target.openapi_spec_name = next((e.openapi_spec_name for e in settings if e.openapi_spec_name), None)
    target.resource_permissions = sorted(union(e.resource_permissions for e in settings))
    target.updated_at = timezone.now()


ATTRIBUTES = ["first_detected", "last_active", "unauthenticated_success_seen", "is_authenticated_detected",
              "is_authenticated_user_set", "full_trace_capture_enabled", "is_graphql", "graphql_schema", "owner",
              "openapi_spec_name", "resource_permissions", "updated_at"]


def aliases_record(*, destination: dict) -> None:
    """Old ids keep resolving (DECISIONS §9, Metlo's ``oldEndpointUuids``): each consumed endpoint's
    uuid, and the ids that already resolved to it, now resolve to its destination.

    ``destination``: consumed endpoint uuid -> the endpoint it was merged into. Called before the
    consumed endpoints are deleted (their own alias rows would go with them).
    """
    for old, target in destination.items():
        EndpointAlias.objects.filter(endpoint_id=old).update(endpoint_id=target)
    rows_upsert(EndpointAlias, [(old, target, timezone.now()) for old, target in destination.items()],
                fields=("old_uuid", "endpoint", "created_at"), conflict=("old_uuid",), replace=("endpoint",))


def traffic_move(*, target: Endpoint, sources: list[Endpoint]) -> None:
    """Move all the sources' observed paths (counts added, latest sighting kept) and traces to the target."""
    source_ids = [s.uuid for s in sources]
    rows = list(ObservedPath.objects.filter(endpoint_id__in=source_ids).values_list("path", "count", "last_seen"))
    rows_upsert(ObservedPath, [(target.uuid, path, count, seen) for path, count, seen in rows],
                fields=("endpoint", "path", "count", "last_seen"), conflict=("endpoint", "path"),
                add=("count",), greatest=("last_seen",))
    ObservedPath.objects.filter(endpoint_id__in=source_ids).delete()
    ApiTrace.objects.filter(endpoint_id__in=source_ids).update(endpoint_id=target.uuid)


def literal_paths_observe(*, endpoints: list[Endpoint]) -> None:
    """Record a literal endpoint's own path as an observed path (ingestion keeps raw paths only for
    patterns with parameters), counted from its daily usage, so that the path and its count follow it
    into a parameterised endpoint (suggested-paths and test generation read observed paths). Endpoints
    that already have observed paths, or no traffic counted, are left as they are."""
    literal = [e for e in endpoints if e.num_literal_segments == e.num_segments]
    if not literal:
        return
    recorded = set(ObservedPath.objects.filter(endpoint_id__in=[e.uuid for e in literal])
                   .values_list("endpoint_id", flat=True).distinct())
    literal = [e for e in literal if e.uuid not in recorded]
    counts = Counter()
    for endpoint_id, count in UsageDay.objects.filter(endpoint_id__in=[e.uuid for e in literal]).values_list(
            "endpoint_id", "count"):
        counts[endpoint_id] += count
    rows = [(e.uuid, e.path, counts[e.uuid], e.last_active or e.created_at) for e in literal if counts[e.uuid]]
    rows_upsert(ObservedPath, rows, fields=("endpoint", "path", "count", "last_seen"), conflict=("endpoint", "path"),
                greatest=("count", "last_seen"))
