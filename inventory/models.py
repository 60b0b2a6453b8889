"""The inventory: hosts, endpoints, traces, usage, observed paths and addresses.

Endpoint identity is (host, method, path pattern). Rows are written by the
ingestion pipeline (``inventory.ingest``) and read by the SPEC routes.
PostgreSQL is the production database; everything here also runs on SQLite
(the zero-configuration demo), so PostgreSQL-only indexes live in migrations
guarded by the database vendor.
"""
from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from core.enums import HttpMethod, RiskScore
from core.timestamps import Timestamped


class Host(Timestamped):
    """A hostname seen in traffic.

    ``is_public`` is the effective value used by hostType filters: the
    operator's ``public_override`` when set, else ``is_public_detected``.
    """

    name = models.CharField(max_length=255, unique=True)
    is_public_detected = models.BooleanField(default=False)
    public_override = models.BooleanField(null=True, blank=True, help_text="Operator override of public/private.")
    is_public = models.BooleanField(default=False, db_index=True, editable=False)
    # True once any destination address was seen in this host's traffic: from then on
    # only addresses decide public/private, not the name (DECISIONS §4).
    address_seen = models.BooleanField(default=False, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args, **kwargs):
        self.is_public = self.public_override if self.public_override is not None else self.is_public_detected
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "is_public"}
        super().save(*args, **kwargs)


class Endpoint(Timestamped):
    """An API endpoint: a method and a path pattern (``/users/{param1}``) on a host."""

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="endpoints")
    method = models.CharField(max_length=10, choices=HttpMethod.choices)
    path = models.CharField(max_length=2048)
    # Regex matching concrete paths of this pattern, and its segment count (cheap pre-filter).
    path_regex = models.CharField(max_length=4096)
    num_segments = models.PositiveSmallIntegerField(default=0)
    # Number of literal (non-parameter) segments: more literal = more specific, matched first.
    num_literal_segments = models.PositiveSmallIntegerField(default=0)
    # Set when an operator wrote the pattern (update-paths): its parameters then absorb any
    # segment value; an auto-detected pattern's parameters only absorb id-like values, so
    # /users/me is not swallowed by /users/{param1} (inventory.patterns.regex.PatternMatcher).
    user_set_path = models.BooleanField(default=False)
    # Positions parameterised by learning from cardinality (DECISIONS §9), segment index (as text)
    # -> "words" or "ids": what such a parameter absorbs in ingestion (inventory.patterns.learn).
    learned_segments = models.JSONField(default=dict, blank=True)
    risk_score = models.CharField(max_length=6, choices=RiskScore.choices, default=RiskScore.NONE)
    # 0..3 for NONE..HIGH: the list order is by risk, and the enum's text order is not.
    risk_rank = models.PositiveSmallIntegerField(default=0)
    data_classes = models.JSONField(default=list, blank=True)
    resource_permissions = models.JSONField(default=list, blank=True)
    owner = models.CharField(max_length=255, blank=True, default="")
    openapi_spec_name = models.CharField(max_length=255, null=True, blank=True)
    is_authenticated_detected = models.BooleanField(default=False)
    # Sticky: once a request without credentials got a 2xx, the endpoint is not authenticated.
    unauthenticated_success_seen = models.BooleanField(default=False)
    is_authenticated_user_set = models.BooleanField(null=True, blank=True)
    full_trace_capture_enabled = models.BooleanField(default=False)
    is_graphql = models.BooleanField(default=False)
    graphql_schema = models.TextField(null=True, blank=True)
    first_detected = models.DateTimeField(null=True, blank=True)
    last_active = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["host", "method", "path"], name="endpoint_identity"),
        ]
        indexes = [
            # The GET /endpoints order index (risk HIGH→NONE, lastActive DESC NULLS LAST, uuid)
            # is created by migration 0002_routes_search_indexes on PostgreSQL only: SQLite
            # cannot build an index with NULLS LAST.
            # Ingestion matches concrete paths against the patterns of one host and method.
            models.Index(fields=["host", "method", "num_segments"], name="endpoint_match"),
            # GET /new-detections by firstDetected window.
            models.Index(fields=["first_detected"], name="endpoint_first_detected"),
            models.Index(fields=["method"], name="endpoint_method"),
        ]

    def __str__(self) -> str:
        # The host's name (callers listing endpoints select_related("host")).
        return f"{self.method} {self.host.name} {self.path}"

    @property
    def is_authenticated(self) -> bool:
        """Effective authentication: the operator's setting when given, else detection."""
        if self.is_authenticated_user_set is not None:
            return self.is_authenticated_user_set
        return self.is_authenticated_detected


class EndpointAlias(models.Model):
    """The id of an endpoint merged into another (update-paths or learned parameterisation):
    lookups of ``old_uuid`` answer ``endpoint`` (Metlo kept ``oldEndpointUuids``)."""

    old_uuid = models.UUIDField(primary_key=True)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="aliases")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.old_uuid} -> {self.endpoint_id}"


class ApiTrace(models.Model):
    """One observed request/response, redacted (DECISIONS §4); 100 newest kept per endpoint, 7 days."""

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="traces")
    host = models.CharField(max_length=255)
    path = models.CharField(max_length=2048)
    method = models.CharField(max_length=10)
    request_parameters = models.JSONField(default=list, blank=True)
    request_headers = models.JSONField(default=list, blank=True)
    request_body = models.TextField(blank=True, default="")
    response_status = models.PositiveSmallIntegerField()
    response_headers = models.JSONField(default=list, blank=True)
    response_body = models.TextField(blank=True, default="")
    meta = models.JSONField(default=dict, blank=True)
    redacted = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    # The trace as GET /endpoint/{id} shows it (``render.trace_json``), rendered once by the ingestion
    # writer that stores it: the detail concatenates these bytes. NULL where that writer could not
    # promise the bytes a rendering of the columns gives (and on rows written another way): the
    # readers then render the columns.
    rendered = models.BinaryField(null=True, editable=False)

    class Meta:
        indexes = [
            # Endpoint detail (newest first) and per-endpoint pruning to 100.
            models.Index(fields=["endpoint", "-created_at"], name="trace_endpoint_recent"),
            # Age pruning (7 days).
            models.Index(fields=["created_at"], name="trace_created"),
        ]

    def save(self, *args, **kwargs):
        """A trace edited or created through the ORM has no rendering it could contradict."""
        self.rendered = None
        if kwargs.get("update_fields") is not None:
            kwargs["update_fields"] = {*kwargs["update_fields"], "rendered"}
        super().save(*args, **kwargs)


class UsageMinute(models.Model):
    """Requests per endpoint per UTC minute; incremented with an upsert (no lost increments)."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="usage_minutes")
    minute = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "minute"], name="usage_minute_unique")]
        indexes = [models.Index(fields=["minute"], name="usage_minute_prune")]


class UsageDay(models.Model):
    """Requests per endpoint per UTC day (dailyUsage), incremented with the minute counter."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="usage_days")
    day = models.DateField()
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "day"], name="usage_day_unique")]


class ObservedPath(models.Model):
    """A concrete path seen for an endpoint (suggested-paths reads the newest 2,000)."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="observed_paths")
    path = models.CharField(max_length=2048)
    count = models.PositiveIntegerField(default=1)
    last_seen = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "path"], name="observed_path_unique")]
        indexes = [models.Index(fields=["endpoint", "-last_seen"], name="observed_path_recent")]


class AddressSeen(models.Model):
    """An IP address seen in traffic, and when it was last seen (abstract: the two kinds below)."""

    address = models.CharField(max_length=64)
    last_seen = models.DateTimeField(default=timezone.now)

    class Meta:
        abstract = True


class HostAddress(AddressSeen):
    """An address a host's traffic was served on (destination), for public/private and the hosts graph."""

    host = models.ForeignKey(Host, on_delete=models.CASCADE, related_name="addresses")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["host", "address"], name="host_address_unique")]
        # hosts-graph joins caller addresses to served addresses.
        indexes = [models.Index(fields=["address"], name="host_address_addr")]


class EndpointCaller(AddressSeen):
    """A source address that called an endpoint (edges of the hosts graph)."""

    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="callers")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "address"], name="endpoint_caller_unique")]
        indexes = [models.Index(fields=["address"], name="endpoint_caller_addr")]


class IngestBatch(models.Model):
    """Traces accepted by an ingestion route and waiting for (or done with) analysis.

    The row is the durable hand-off between the web process and the worker: the
    Celery message only carries its id, and a sweep re-enqueues rows left pending,
    so an accepted trace is analysed even if the broker loses the message. The
    analysis marks the row done in the same transaction as its writes: exactly once.

    A worker *claims* rows before analysing them, in a transaction of its own that counts the
    attempt and leases the rows (``claimed_until``); a row still leased when the lease ends lost its
    worker (killed by the analysis' hard time limit, the OOM killer, SIGKILL). Such a row is analysed
    alone from then on (a batch of several traces is first split into one row per trace), and a row
    whose worker died while analysing it alone is QUARANTINED: kept, counted and shown in the
    console, never sent again (``inventory.ingest.pipeline``).
    """

    class Kind(models.TextChoices):
        RAW = "RAW"  # /api/v1/log-request/{single,batch}
        PROCESSED = "PROCESSED"  # /api/v2/log-request/batch

    class Status(models.TextChoices):
        PENDING = "PENDING"
        DONE = "DONE"
        FAILED = "FAILED"
        QUARANTINED = "QUARANTINED"  # its analysis killed its worker when analysed alone

    kind = models.CharField(max_length=10, choices=Kind.choices)
    traces = models.JSONField()
    num_traces = models.PositiveIntegerField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    received_at = models.DateTimeField(default=timezone.now)
    # Last time the sweep re-sent this batch's message (lost-message recovery), so a
    # long but healthy backlog is not flooded with duplicate messages.
    requeued_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    # Who sent it: the API key's name and the agent's User-Agent, as ingestion health names a source
    # (``inventory.ingest.health.source_of``; never the key itself), so the worker counts what it
    # analysed, skipped or failed per source. Empty for rows not sent through a route.
    source = models.CharField(max_length=200, blank=True, default="")
    # Costly-looking at acceptance (large traces, many GraphQL spreads: inventory.ingest.accept.weighed):
    # analysed after the light rows, a few at a time (pipeline.singles_claim).
    heavy = models.BooleanField(default=False)
    # The lease of the claim analysing it (None when no worker holds it); see the class docstring.
    claimed_until = models.DateTimeField(null=True, blank=True)
    # Traces in the claim that last held this row (how many were analysed together with it).
    claim_traces = models.PositiveIntegerField(default=0)
    # Claims whose worker died before finishing (lease ended), and whether it is analysed alone now.
    lost_claims = models.PositiveSmallIntegerField(default=0)
    alone = models.BooleanField(default=False)

    class Meta:
        indexes = [
            # Backlog size (backpressure) and the re-enqueue sweep read only pending rows.
            models.Index(
                fields=["received_at"],
                name="ingest_pending",
                condition=models.Q(status="PENDING"),
            ),
            # The drain's first choice: light rows, oldest first (pipeline.singles_claim).
            models.Index(
                fields=["received_at"],
                name="ingest_pending_light",
                condition=models.Q(status="PENDING", heavy=False),
            ),
            # Rows held by a claim (their lease, to find those whose worker died) or analysed alone.
            models.Index(
                fields=["claimed_until"],
                name="ingest_pending_claimed",
                condition=models.Q(status="PENDING") & (models.Q(claimed_until__isnull=False) | models.Q(alone=True)),
            ),
        ]
