"""Encryption of secrets at rest (the testing environment's ``authToken``).

Fernet (AES-128-CBC + HMAC-SHA256) from ``cryptography``. The key comes from
``settings.FIELD_ENCRYPTION_KEY``: a comma-separated list whose first entry
encrypts and every entry decrypts (key rotation: put the new key first, keep
the old one until every secret was saved again). Each entry is either a Fernet
key (32 url-safe base64 bytes) or any other string, which is stretched into one
with SHA-256. Empty: a key derived from ``SECRET_KEY``, so a fresh checkout
works, at the price that rotating ``SECRET_KEY`` makes stored tokens unreadable.
"""
from __future__ import annotations

import base64
import binascii
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

__all__ = ["InvalidToken", "secret_decrypt", "secret_encrypt"]

_DERIVATION_LABEL = b"apiscope field encryption v1:"


def _fernet_key(material: str) -> bytes:
    """A Fernet key from a configured value: used as is when it already is one."""
    raw = material.strip().encode()
    try:
        if len(base64.urlsafe_b64decode(raw)) == 32:
            return raw
    except (binascii.Error, ValueError):
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(_DERIVATION_LABEL + raw).digest())


def _cipher() -> MultiFernet:
    configured = [k for k in (settings.FIELD_ENCRYPTION_KEY or "").split(",") if k.strip()]
    materials = configured or [settings.SECRET_KEY]
    return MultiFernet([Fernet(_fernet_key(m)) for m in materials])


def secret_encrypt(plaintext: str) -> str:
    """Encrypt a secret for storage; the result is ASCII (a Fernet token)."""
    return _cipher().encrypt(plaintext.encode("utf-8")).decode("ascii")


def secret_decrypt(ciphertext: str) -> str:
    """Decrypt a stored secret.

    Raises ``InvalidToken`` when the value was not encrypted with any configured key
    (the key was changed) or was tampered with.
    """
    return _cipher().decrypt(ciphertext.encode("ascii")).decode("utf-8")
