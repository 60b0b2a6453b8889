"""The data fields of a batch's endpoints: loaded in one read, merged in memory, written in bulk."""
from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import orjson
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from classification.models import DataField

from ..analysis import REQUEST_SECTIONS, TraceResult, _merge_type
from ..sql import bulk_set, pg_cursor, upsert
from .rows import LAST_SEEN_RESOLUTION, MAX_FIELDS_PER_ENDPOINT


@dataclass(slots=True)
class FieldRow:
    uuid: uuid.UUID
    classes: list[str]
    false_positives: set[str]
    dtype: str
    nullable: bool
    content_type: str
    last_seen: datetime | None
    new: bool = False
    changed: bool = False
    seen_at: datetime | None = None
    # Classes this batch put on the field; replaced (never mutated in place), so rows loaded
    # from the database can share one empty set.
    added: frozenset[str] | set[str] = frozenset()


class FieldState:
    """The batch's view of the data fields of its endpoints: loaded once, merged in memory, written in bulk."""

    def __init__(self):
        self.rows: dict[tuple, FieldRow] = {}
        self.counts: dict = defaultdict(int)
        # (endpoint, section, status, path, class) for every class newly put on a field.
        self.class_events: list[tuple] = []
        # Only fields with false positives, by endpoint (few): looked up once per trace.
        self._fps: dict = defaultdict(list)
        self._fp_cache: dict = {}

    @classmethod
    def load(cls, endpoint_ids: set) -> FieldState:
        state = cls()
        rows, counts, fps_by_endpoint = state.rows, state.counts, state._fps
        no_fps: frozenset = frozenset()
        # The batch's largest read (every field of every endpoint seen): one pass, no intermediate rows.
        for uid, endpoint_id, section, status, path, classes, fps, dtype, nullable, content_type, last_seen in (
            _fields_of(endpoint_ids)
        ):
            rows[(endpoint_id, section, status, path)] = FieldRow(
                uid, classes, set(fps) if fps else no_fps, dtype, nullable, content_type, last_seen
            )
            counts[endpoint_id] += 1
            if fps:
                fps_by_endpoint[endpoint_id].append((section, status, path, set(fps)))
        return state

    def false_positives(self, endpoint_id, status: int) -> dict[tuple[str, str], set[str]]:
        """(section, dataPath) -> classes an operator removed, for a trace with this status."""
        key = (endpoint_id, status)
        cached = self._fp_cache.get(key)
        if cached is None:
            cached = {
                (section, path): fps
                for section, code, path, fps in self._fps.get(endpoint_id, ())
                if code == (-1 if section in REQUEST_SECTIONS else status)
            }
            self._fp_cache[key] = cached
        return cached

    def classes_of(self, endpoint_id, section, status, path) -> list[str]:
        row = self.rows.get((endpoint_id, section, status, path))
        return row.classes if row else []

    def merge(self, endpoint_id, result: TraceResult) -> None:
        """Fold one trace's observations into the fields (at most 200 per endpoint, false positives kept out)."""
        at = result.trace.received_at
        for (section, path), obs in result.fields.items():
            key = (endpoint_id, section, result.status_of(section), path)
            row = self.rows.get(key)
            if row is None:
                if self.counts[endpoint_id] >= MAX_FIELDS_PER_ENDPOINT:
                    continue  # DECISIONS §5: at most 200 fields per endpoint
                self.counts[endpoint_id] += 1
                row = FieldRow(uuid.uuid4(), sorted(obs.classes), set(), obs.dtype, obs.nullable, obs.content_type,
                               None, new=True, seen_at=at, added=set(obs.classes))
                self.rows[key] = row
                for name in sorted(obs.classes):
                    self.class_events.append(key + (name,))
                continue
            add = obs.classes.difference(row.classes, row.false_positives)
            if add:
                row.classes = sorted({*row.classes, *add})
                row.added = row.added | add
                row.changed = True
                for name in sorted(add):
                    self.class_events.append(key + (name,))
            dtype = _merge_type(row.dtype, obs.dtype)
            if dtype != row.dtype:
                row.dtype, row.changed = dtype, True
            if obs.nullable and not row.nullable:
                row.nullable, row.changed = True, True
            if obs.content_type and obs.content_type != row.content_type:
                row.content_type, row.changed = obs.content_type, True
            if row.seen_at is None or row.seen_at < at:
                row.seen_at = at

    def endpoints_with_new_classes(self) -> set:
        return {key[0] for key, row in self.rows.items() if row.added}

    def write(self) -> int:
        """Insert new fields and update changed ones (re-read under lock). Returns the number inserted."""
        now = timezone.now()
        new = sorted(((k, r) for k, r in self.rows.items() if r.new), key=lambda kr: tuple(map(str, kr[0])))
        if new:
            # ON CONFLICT DO NOTHING: a concurrent worker may have created the same field.
            upsert(
                DataField,
                [{"uuid": r.uuid, "endpoint": k[0], "data_section": k[1], "status_code": k[2], "data_path": k[3],
                  "data_classes": r.classes, "false_positives": [], "scanner_identified": [], "data_type": r.dtype,
                  "is_nullable": r.nullable, "content_type": r.content_type, "entity": None,
                  "created_at": r.seen_at, "updated_at": now, "last_seen": r.seen_at}
                 for k, r in new],
                conflict=("endpoint", "data_section", "status_code", "data_path"),
            )
        changed = {r.uuid: r for r in self.rows.values() if r.changed and not r.new}
        if changed:
            # Re-read under lock: an operator (update-classes) or another worker may have
            # changed these rows since the batch loaded them; merge onto the current state.
            updates = []
            for uid, classes, fps, dtype, nullable in _changed_fields_locked(sorted(changed)):
                ours = changed[uid]
                fps = set(fps or ())
                merged = sorted(set(classes or ()) | (ours.added - fps))
                ours.classes = merged
                ours.added = ours.added & set(merged)  # an operator just removed one: no alert for it
                updates.append({
                    "pk": uid, "data_classes": merged, "data_type": _merge_type(dtype, ours.dtype),
                    "is_nullable": nullable or ours.nullable, "content_type": ours.content_type,
                    "last_seen": ours.seen_at, "updated_at": now,
                })
            bulk_set(DataField, updates, lock=False,  # locked just above
                     replace=["data_classes", "data_type", "is_nullable", "content_type", "last_seen", "updated_at"])
        return len(new)

    def touch(self) -> None:
        """Fields only seen again: ``last_seen`` refreshed at most once a minute per field."""
        stale = [r for r in self.rows.values()
                 if r.seen_at is not None and not r.new and not r.changed
                 and (r.last_seen is None or r.last_seen < r.seen_at - LAST_SEEN_RESOLUTION)]
        if stale:
            at = max(r.seen_at for r in stale)
            DataField.objects.filter(uuid__in=sorted(r.uuid for r in stale), last_seen__lt=at).update(last_seen=at)


_FIELD_COLUMNS = ("uuid", "endpoint_id", "data_section", "status_code", "data_path", "data_classes",
                  "false_positives", "data_type", "is_nullable", "content_type", "last_seen")


def _fields_of(endpoint_ids) -> Iterator[tuple]:
    """Every data field of these endpoints as tuples in ``_FIELD_COLUMNS`` order (JSON lists decoded).

    On PostgreSQL a binary, server-bound query whose JSON lists are decoded with orjson (the
    common empty list without a call): five times less CPU than the ORM's rows.
    """
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        for row in DataField.objects.filter(endpoint_id__in=endpoint_ids).values_list(*_FIELD_COLUMNS):
            yield (*row[:5], list(row[5] or ()), list(row[6] or ()), *row[7:])
        return
    loads = orjson.loads
    with pg_cursor(binary=True) as cursor:
        cursor.execute(
            "SELECT uuid, endpoint_id, data_section, status_code, data_path, data_classes::text, "
            "false_positives::text, data_type, is_nullable, content_type, last_seen "
            "FROM classification_datafield WHERE endpoint_id = ANY(%s)",
            [list(endpoint_ids)],
        )
        for u, e, sec, st, p, c, f, t, n, ct, ls in cursor.fetchall():
            yield u, e, sec, st, p, [] if c == "[]" else loads(c), () if f == "[]" else loads(f), t, n, ct, ls


def _changed_fields_locked(field_ids: list) -> list[tuple]:
    """(uuid, data_classes, false_positives, data_type, is_nullable) of these fields, locked in uuid order."""
    return list(
        DataField.objects.select_for_update().filter(uuid__in=field_ids).order_by("uuid")
        .values_list("uuid", "data_classes", "false_positives", "data_type", "is_nullable")
    )
