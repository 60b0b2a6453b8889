"""The rows one analysis works on (hosts, endpoints) and how often shared rows are refreshed."""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

MAX_FIELDS_PER_ENDPOINT = 200
TRACES_KEPT_PER_ENDPOINT = 100
LAST_SEEN_RESOLUTION = timedelta(minutes=1)
LAST_ACTIVE_RESOLUTION = timedelta(seconds=1)
NO_ENDPOINT_STATUSES = frozenset({404, 405})


@dataclass(slots=True)
class HostRow:
    id: int
    name: str
    is_public: bool
    is_public_detected: bool
    public_override: bool | None
    address_seen: bool


@dataclass(slots=True, eq=False)
class EndpointRow:
    uuid: uuid.UUID
    host: HostRow
    method: str
    path: str
    path_regex: str
    num_segments: int
    num_literal_segments: int
    user_set_path: bool = False
    learned_segments: dict | None = None  # inventory.patterns.learn: what learned parameters take
    full_trace_capture_enabled: bool = False
    is_graphql: bool = False
    last_active: datetime | None = None
    created: bool = False
