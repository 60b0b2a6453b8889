"""API keys: only a hash and a short display prefix are stored."""
from __future__ import annotations

import hashlib
import secrets

from django.db import models
from django.utils import timezone

KEY_PREFIX = "ask_"
DISPLAY_PREFIX_LENGTH = 12


def hash_key(raw_key: str) -> str:
    """SHA-256 of the raw key.

    Keys carry 256 bits of randomness, so a fast hash is enough: there is
    nothing to brute-force, and authentication stays one indexed lookup.
    """
    return hashlib.sha256(raw_key.encode("utf-8", "surrogatepass")).hexdigest()


class Scope(models.TextChoices):
    """What a key may do (DECISIONS §2); ``core.scopes`` holds the rules, views declare what they need.

    * ``ingest``: what agents hold — ``GET /verify``, ``GET /agent-config`` and the ``log-request`` POSTs.
    * ``read``: every ``GET`` of the API, with secrets masked (``core.masking``).
    * ``admin``: everything, secrets in clear.
    """

    INGEST = "ingest", "ingest (agents)"
    READ = "read", "read"
    ADMIN = "admin", "admin"


class ApiKeyQuerySet(models.QuerySet):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    """A credential for the REST API and the traffic agents.

    The raw key is returned once by :meth:`issue` and never stored; requests are
    matched by the SHA-256 of the key they present.
    """

    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=DISPLAY_PREFIX_LENGTH, help_text="First characters of the key, for display.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # admin by default: keys issued before scopes existed, and scripts that do not ask for one, keep working.
    scope = models.CharField(max_length=8, choices=Scope.choices, default=Scope.ADMIN, db_default=Scope.ADMIN,
                             help_text="ingest: agents (verify, agent-config, log-request). read: every GET, "
                                       "secrets masked. admin: everything.")

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]
        # The authentication's raw SQL reads the column as is: only known scopes may be stored.
        constraints = [models.CheckConstraint(condition=models.Q(scope__in=Scope.values), name="api_key_scope_known")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…, {self.scope})"

    # DRF treats the authenticated key as request.user.
    is_authenticated = True

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def set_new_key(self) -> str:
        """Give this (unsaved) row a fresh random key; return the raw key, which is not kept."""
        raw = KEY_PREFIX + secrets.token_urlsafe(32)
        self.prefix = raw[:DISPLAY_PREFIX_LENGTH]
        self.key_hash = hash_key(raw)
        return raw

    @classmethod
    def issue(cls, *, name: str, scope: str = Scope.ADMIN) -> tuple[ApiKey, str]:
        """Create a key of this scope; return the row and the raw key (shown once, never stored).

        Raises ``ValueError`` for a scope that is not one of :class:`Scope`.
        """
        if scope not in Scope.values:
            raise ValueError(f"Unknown scope {scope!r}: one of {', '.join(Scope.values)}.")
        key = cls(name=name, scope=scope)
        raw = key.set_new_key()
        key.save()
        return key, raw

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            self.save(update_fields=["revoked_at"])


class AgentKey(models.Model):
    """One RSA key pair agents encrypt full traces for (DECISIONS §9; ``core.agentkeys``).

    ``public_pem`` is what ``agent-config`` serves; ``private_encrypted`` is the private key
    encrypted at rest (never in clear, never served, never logged). Exactly one key is
    ``active`` (the one served); the others are kept after a rotation so traces encrypted
    by agents that have not re-read ``agent-config`` still decrypt.
    """

    fingerprint = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the public key (DER).")
    bits = models.PositiveSmallIntegerField()
    public_pem = models.TextField()
    private_encrypted = models.TextField(editable=False)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)
    retired_at = models.DateTimeField(null=True, blank=True, help_text="When a rotation replaced it.")
    # Set by the worker (at most about once a minute per process) when a trace decrypts with it.
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["active"], condition=models.Q(active=True), name="agent_key_one_active"),
        ]

    def __str__(self) -> str:
        return f"{self.fingerprint[:16]}… ({'active' if self.active else 'previous'})"


class TraceDecryptFailure(models.Model):
    """How many encrypted agent traces the worker skipped because they could not be decrypted, by reason."""

    class Reason(models.TextChoices):
        KEY = "key", "no key of the service unwraps its key"
        VALUE = "value", "a value failed authentication (tampered or wrong IV)"
        FORMAT = "format", "malformed encryption block or value"

    reason = models.CharField(max_length=8, choices=Reason.choices, unique=True)
    count = models.PositiveBigIntegerField(default=0)
    last_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.reason}: {self.count}"


class MarkedRun(models.Model):
    """A security-test run whose requests carry the ``X-Apiscope-Test`` marker (``core.testmarker``).

    Ingestion honours a run's marker while the run is open and shortly after it closed.
    """

    run_id = models.CharField(max_length=64, primary_key=True)
    opened_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.run_id} ({'open' if self.closed_at is None else 'closed'})"
