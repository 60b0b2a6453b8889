"""Test generation data: the global testing environment (and the record of test runs).

The testing environment is what generated tests run against (SPEC "Global testing
environment"): one row, key ``global``. ``authToken`` is stored encrypted
(``testgen.crypto``); every other value in clear. ``None`` means "not set": the
API shows only the keys that were set, the runner applies its defaults.
"""
from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from core.timestamps import Timestamped

GLOBAL_ENV_KEY = "global"


class TestingEnvironment(Timestamped):
    """The environment generated tests run against: target, credentials, request options.

    ``extra`` holds operator-defined string values, each usable as a ``{{name}}``
    placeholder in tests. ``auth_token_encrypted`` is a Fernet token ("" = unset);
    read it through ``testgen.services.global_env_read``, never directly.
    """

    __test__ = False  # not a pytest test class, despite the name

    key = models.CharField(max_length=32, unique=True, default=GLOBAL_ENV_KEY, editable=False)
    base_url = models.CharField(max_length=2048)
    auth_token_encrypted = models.TextField(blank=True, default="", editable=False)
    # ``{"identities": [...], "login": {...}}`` as encrypted JSON ("" = neither set; DECISIONS §8).
    identities_encrypted = models.TextField(blank=True, default="", editable=False)
    test_user_id = models.CharField(max_length=255, null=True, blank=True)
    timeout_ms = models.PositiveIntegerField(null=True, blank=True, help_text="Per-request timeout in milliseconds.")
    retries = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Retries on connection errors.")
    headers = models.JSONField(null=True, blank=True, help_text="Headers sent with every test request.")
    extra = models.JSONField(default=dict, blank=True, help_text="Custom placeholder values: name to string.")
    # What runs may send (DECISIONS §8): endpoints removed from every run, and state-changing
    # endpoints the operator accepts as targets; lists of {path, methods?} (None = not set).
    exclude = models.JSONField(null=True, blank=True, help_text="Endpoints removed from every run.")
    allow_destructive = models.JSONField(null=True, blank=True,
                                         help_text="State-resetting endpoints the operator accepts as targets.")

    class Meta:
        verbose_name = "testing environment"

    def __str__(self) -> str:
        return f"Testing environment ({self.base_url})"

    @property
    def has_auth_token(self) -> bool:
        return bool(self.auth_token_encrypted)


class TestRun(models.Model):
    """One run of security tests (from the API, in the worker, or from ``run_security_tests``).

    A run is created PENDING, claimed RUNNING by exactly one worker (conditional
    update), and ends DONE (results recorded, whatever they say) or FAILED (it
    could not run: no environment, unreadable token, worker lost).
    """

    __test__ = False

    class Status(models.TextChoices):
        PENDING = "PENDING"
        RUNNING = "RUNNING"
        DONE = "DONE"
        FAILED = "FAILED"

    class Source(models.TextChoices):
        API = "API"
        CLI = "CLI"

    uuid = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    source = models.CharField(max_length=3, choices=Source.choices, default=Source.API)
    host = models.CharField(max_length=255, blank=True, default="")
    endpoint = models.CharField(max_length=2048, blank=True, default="")
    method = models.CharField(max_length=10, blank=True, default="")
    template_name = models.CharField(max_length=64, blank=True, default="")
    template_version = models.PositiveIntegerField(null=True, blank=True)
    base_url = models.CharField(max_length=2048, blank=True, default="")
    num_tests = models.PositiveIntegerField(default=0)
    num_passed = models.PositiveIntegerField(default=0)
    num_failed = models.PositiveIntegerField(default=0)
    num_errors = models.PositiveIntegerField(default=0)
    num_inconclusive = models.PositiveIntegerField(default=0)
    num_not_generated = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    # Per endpoint and identity: requests sent and their statuses, what was skipped or undecided and
    # why, which objectIds would decide it (testgen/coverage.py); None until the run is recorded.
    coverage = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # GET /testing/runs, newest first.
            models.Index(fields=["-created_at"], name="test_run_recent"),
            # The sweep looks for runs left PENDING or RUNNING.
            models.Index(fields=["status", "created_at"], name="test_run_status"),
        ]

    def __str__(self) -> str:
        return f"Test run {self.uuid} ({self.status})"


class TestRunResult(models.Model):
    """The outcome of one test in a run, with its checks (descriptions and failure explanations)."""

    __test__ = False

    class Outcome(models.TextChoices):
        PASSED = "PASSED"
        FAILED = "FAILED"
        ERROR = "ERROR"
        INCONCLUSIVE = "INCONCLUSIVE"

    run = models.ForeignKey(TestRun, on_delete=models.CASCADE, related_name="results")
    position = models.PositiveIntegerField()
    test_id = models.CharField(max_length=64)
    name = models.CharField(max_length=2048)
    template_name = models.CharField(max_length=64, blank=True, default="")
    host = models.CharField(max_length=255, blank=True, default="")
    method = models.CharField(max_length=10, blank=True, default="")
    endpoint = models.CharField(max_length=2048, blank=True, default="")
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    message = models.TextField(blank=True, default="")
    checks = models.JSONField(default=list, blank=True)
    # The request/response pair that decided a FAILED or ERROR outcome, redacted (testgen/evidence.py).
    evidence = models.JSONField(null=True, blank=True)
    severity = models.CharField(max_length=8, blank=True, default="")  # of a FAILED result's finding
    num_requests = models.PositiveIntegerField(default=0)
    duration_ms = models.FloatField(default=0)

    class Meta:
        ordering = ["run", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="test_run_result_position")]

    def __str__(self) -> str:
        return f"{self.outcome} {self.name}"


class StoredTest(models.Model):
    """A generated test result kept for one endpoint and one choice of template (``options``).

    ``body`` is the result exactly as GET /gen-test-endpoint renders it (JSON bytes), so a
    repeat call concatenates stored bytes. ``stamp`` fingerprints everything the result was
    generated from (the endpoint, its data fields, traces and observed paths, the host's GET
    patterns, the templates' code, the generation settings and the testing environment): a
    row whose stamp no longer matches is regenerated and replaced (``testgen.services.stored``).
    Rows go with their endpoint; at most one per endpoint and choice of template.
    """

    __test__ = False

    endpoint = models.ForeignKey("inventory.Endpoint", on_delete=models.CASCADE, related_name="stored_tests")
    options = models.CharField(max_length=80, help_text="'' for automatic selection, else TYPE:VERSION.")
    stamp = models.CharField(max_length=64)
    body = models.BinaryField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "options"], name="stored_test_unique")]

    def __str__(self) -> str:
        return f"Stored test {self.endpoint_id} {self.options or 'auto'}"
