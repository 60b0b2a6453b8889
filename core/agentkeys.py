"""The service's RSA key pair for encrypted agent traces (DECISIONS §9).

Metlo's 0.1.x agents send full traces only when ``agent-config`` carries an
``encryptionPublicKey``; they then encrypt each one for it (``inventory.ingest.decrypt``).

* The first key pair is made on first use (the first ``agent-config`` read or decryption), with
  ``AGENT_KEY_BITS``; two processes racing make one (a partial unique constraint keeps one active).
* The private key is stored encrypted at rest (Fernet: AES-128-CBC + HMAC-SHA256) under a key
  stretched with SHA-256 from ``AGENT_KEY_ENCRYPTION_KEY`` (comma-separated: the first entry
  encrypts, every entry decrypts), else ``FIELD_ENCRYPTION_KEY``, else ``SECRET_KEY``. A label
  keeps it distinct from the key the same material gives ``testgen.crypto``.
* :func:`agent_key_rotate` makes a new active pair and keeps the previous ones (still tried for
  decryption), re-encrypting them under the first configured material.
* The private key never leaves this module in clear except as a ``cryptography`` key object
  for :mod:`inventory.ingest.decrypt`; it is never served, printed or logged.
"""
from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.models import AgentKey

logger = logging.getLogger(__name__)

_LABEL = b"apiscope agent private key v1:"

__all__ = ["InvalidToken", "RotationSummary", "active_public_key", "agent_key_rotate", "private_keys"]


def _materials() -> list[str]:
    for setting in (settings.AGENT_KEY_ENCRYPTION_KEY, settings.FIELD_ENCRYPTION_KEY):
        entries = [m.strip() for m in (setting or "").split(",") if m.strip()]
        if entries:
            return entries
    return [settings.SECRET_KEY]


def _cipher() -> MultiFernet:
    return MultiFernet([
        Fernet(base64.urlsafe_b64encode(hashlib.sha256(_LABEL + m.encode()).digest())) for m in _materials()
    ])


def _generate(bits: int) -> AgentKey:
    """A new (unsaved) active key pair; the private key is encrypted before it leaves this function."""
    private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    public = private.public_key()
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    pkcs8 = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
    return AgentKey(
        fingerprint=hashlib.sha256(der).hexdigest(),
        bits=bits,
        public_pem=public.public_bytes(serialization.Encoding.PEM,
                                       serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii"),
        private_encrypted=_cipher().encrypt(pkcs8).decode("ascii"),
        active=True,
    )


def active_key() -> AgentKey:
    """The active key pair, made (once, race-safe) when there is none yet."""
    key = AgentKey.objects.filter(active=True).first()
    if key is not None:
        return key
    fresh = _generate(settings.AGENT_KEY_BITS)  # slow (RSA): outside any transaction
    try:
        with transaction.atomic():
            fresh.save()
    except IntegrityError:  # another process made one meanwhile: theirs is the key
        return AgentKey.objects.get(active=True)
    logger.info("agent encryption key %s generated (%s bits)", fresh.fingerprint[:16], fresh.bits)
    return fresh


def active_public_key() -> str:
    """The PEM (SubjectPublicKeyInfo) public key ``agent-config`` serves."""
    return active_key().public_pem


@dataclass(frozen=True)
class PrivateKey:
    """A key the worker may decrypt with: its id (for ``last_used_at``) and the key object."""

    id: int
    fingerprint: str
    key: rsa.RSAPrivateKey


def private_keys() -> list[PrivateKey]:
    """Every stored private key the configured material can read, the active one first.

    A key that cannot be read (the encryption material changed) is left out and logged by
    fingerprint; traces encrypted for it are then counted as undecryptable.
    """
    active_key()
    cipher = _cipher()
    out = []
    for row in AgentKey.objects.order_by("-active", "-created_at", "-id"):
        try:
            der = cipher.decrypt(row.private_encrypted.encode("ascii"))
        except InvalidToken:
            logger.error("agent encryption key %s cannot be read with the configured key material "
                         "(AGENT_KEY_ENCRYPTION_KEY / FIELD_ENCRYPTION_KEY / SECRET_KEY changed?)", row.fingerprint[:16])
            continue
        out.append(PrivateKey(row.id, row.fingerprint, serialization.load_der_private_key(der, password=None)))
    return out


@dataclass
class RotationSummary:
    """What :func:`agent_key_rotate` did."""

    new_fingerprint: str = ""
    previous_kept: int = 0
    reencrypted: int = 0
    unreadable: list[str] | None = None


def agent_key_rotate(*, progress: Callable[[str], None] = lambda _: None) -> RotationSummary:
    """Make a new active key pair; keep the previous ones for decryption, re-encrypted at rest under
    the first configured material (a previous key that cannot be read is kept as it is and reported).

    One transaction: a failure changes nothing. Agents pick the new public key up on their next
    ``agent-config`` read; until then their traces decrypt with the previous key.
    """
    summary = RotationSummary(unreadable=[])
    progress(f"generating a {settings.AGENT_KEY_BITS}-bit RSA key pair")
    fresh = _generate(settings.AGENT_KEY_BITS)
    cipher = _cipher()
    with transaction.atomic():
        previous = list(AgentKey.objects.select_for_update().order_by("created_at", "id"))
        for index, row in enumerate(previous, 1):
            progress(f"re-encrypting previous key {index}/{len(previous)} ({row.fingerprint[:16]}…)")
            try:
                row.private_encrypted = cipher.rotate(row.private_encrypted.encode("ascii")).decode("ascii")
                summary.reencrypted += 1
            except InvalidToken:
                summary.unreadable.append(row.fingerprint)
            if row.active:
                row.active, row.retired_at = False, timezone.now()
            row.save(update_fields=["private_encrypted", "active", "retired_at"])
        fresh.save()
    summary.new_fingerprint, summary.previous_kept = fresh.fingerprint, len(previous)
    logger.info("agent encryption key rotated: %s active, %s previous kept", fresh.fingerprint[:16], len(previous))
    return summary
