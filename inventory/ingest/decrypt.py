"""Decrypting the full traces Metlo's 0.1.x agents encrypt for the service's key (DECISIONS §9).

The format, as those agents send it on ``POST /api/v2/log-request/batch``: a trace with an
``encryption`` object ``{key, generatedIvs}``. ``key`` is base64 of a fresh AES-256 key wrapped
with RSA-OAEP (SHA-256, MGF1-SHA-256) for the public key of ``agent-config``. Every value is
encrypted separately with AES-256-GCM under that key and its own 12-byte IV, and sent as base64
of ciphertext + 16-byte tag: ``request.body`` (IV ``generatedIvs.reqBody``), ``response.body``
(``resBody``), and the names *and* values of ``request.url.parameters``, ``request.headers`` and
``response.headers``, whose IVs are keyed ``reqQuery.<ciphertext>``, ``reqHeaders.<ciphertext>``,
``resHeaders.<ciphertext>``; ``processedTraceData.xssDetected`` values (``xss.<key>``) and the first
item of ``sqliDetected`` values (``sqli.<key>``) too. IVs are JSON arrays of byte values. Host,
path, method, status, meta and the rest of ``processedTraceData`` are in clear.

:func:`trace_decrypt` returns the trace in clear (``redacted: false``, no ``encryption``), with its
credential channel staged exactly as the accept path stages a clear trace (``staging.py``). A trace
that cannot be decrypted raises :class:`TraceUndecryptable` (a ``ValueError``: the pipeline skips
it and analyses the rest of its batch), is logged by index and reason, and is counted in
``core.TraceDecryptFailure`` once the batch commits. Nothing of it is stored.
"""
from __future__ import annotations

import base64
import binascii
import logging
import time
from functools import partial

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from core.agentkeys import PrivateKey, private_keys
from core.zod import issue_required, issue_wrong_type
from core.models import AgentKey, TraceDecryptFailure

from .staging import trace_stage

logger = logging.getLogger(__name__)

_OAEP = padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
KEYRING_TTL = 60.0  # seconds a worker keeps its keys before re-reading them
USED_MARK_INTERVAL = 60.0  # a key's last_used_at is written at most this often per process

Reason = TraceDecryptFailure.Reason


class TraceUndecryptable(ValueError):
    """An encrypted trace the service cannot decrypt; ``reason`` is a ``TraceDecryptFailure.Reason``."""

    def __init__(self, reason: str):
        super().__init__(f"encrypted trace could not be decrypted ({reason})")
        self.reason = reason


class _Keyring:
    """The worker's private keys, re-read every ``KEYRING_TTL`` and when a trace fits none of them
    while a newer key exists (a rotation happened since they were read)."""

    def __init__(self):
        self.keys: list[PrivateKey] = []
        self.loaded_at = float("-inf")
        self.used_marked: dict[int, float] = {}

    def get(self) -> list[PrivateKey]:
        if time.monotonic() - self.loaded_at > KEYRING_TTL:
            self.reload()
        return self.keys

    def reload(self) -> None:
        self.keys, self.loaded_at = private_keys(), time.monotonic()

    def reload_if_rotated(self) -> bool:
        """Re-read the keys when a newer one exists than those held (one indexed query): a trace that
        fits none of them may be encrypted for a key made since they were read."""
        newest = AgentKey.objects.order_by("-id").values_list("id", flat=True).first()
        if newest is None or newest <= max((key.id for key in self.keys), default=0):
            return False
        self.reload()
        return True

    def mark_used(self, key: PrivateKey) -> None:
        now = time.monotonic()
        if now - self.used_marked.get(key.id, float("-inf")) >= USED_MARK_INTERVAL:
            self.used_marked[key.id] = now
            transaction.on_commit(partial(_mark_used, key.id))


_keyring = _Keyring()


def keyring_reset() -> None:
    """Forget the cached keys (tests; a process that just rotated)."""
    global _keyring
    _keyring = _Keyring()


def _mark_used(key_id: int) -> None:
    AgentKey.objects.filter(id=key_id).update(last_used_at=timezone.now())


def _count_failure(reason: str, count: int = 1) -> None:
    updated = TraceDecryptFailure.objects.filter(reason=reason).update(count=F("count") + count,
                                                                       last_at=timezone.now())
    if not updated:
        try:
            with transaction.atomic():
                TraceDecryptFailure.objects.create(reason=reason, count=count, last_at=timezone.now())
        except IntegrityError:  # created concurrently: count on the row that won
            TraceDecryptFailure.objects.filter(reason=reason).update(count=F("count") + count,
                                                                     last_at=timezone.now())


def _b64(value: object) -> bytes:
    if not isinstance(value, str):
        raise TraceUndecryptable(Reason.FORMAT)
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise TraceUndecryptable(Reason.FORMAT) from None


def _unwrap(wrapped: bytes) -> bytes:
    """The trace's AES key: the key that worked last first, then the others; re-read once if none fits."""
    aes_key = _unwrap_with(_keyring.get(), wrapped)
    if aes_key is None and _keyring.reload_if_rotated():
        aes_key = _unwrap_with(_keyring.keys, wrapped)
    if aes_key is None:
        raise TraceUndecryptable(Reason.KEY)
    return aes_key


def _unwrap_with(keys: list[PrivateKey], wrapped: bytes) -> bytes | None:
    for position, key in enumerate(keys):
        try:
            aes_key = key.key.decrypt(wrapped, _OAEP)
        except ValueError:
            continue
        if len(aes_key) != 32:
            raise TraceUndecryptable(Reason.FORMAT)
        if position:  # a wrong key costs a whole RSA operation: try the key that worked last first
            keys.insert(0, keys.pop(position))
        _keyring.mark_used(key)
        return aes_key
    return None


class _Values:
    """Decrypts one trace's values with its AES key and IV map."""

    def __init__(self, aes_key: bytes, ivs: dict):
        self.gcm = AESGCM(aes_key)
        self.ivs = ivs

    def text(self, value: object, iv_name: str) -> str:
        if value is None or value == "" and iv_name not in self.ivs:
            return ""
        iv = self.ivs.get(iv_name)
        if not isinstance(iv, list) or len(iv) != 12 or not all(isinstance(b, int) and 0 <= b < 256 for b in iv):
            raise TraceUndecryptable(Reason.FORMAT)
        try:
            return self.gcm.decrypt(bytes(iv), _b64(value), None).decode("utf-8")
        except InvalidTag:
            raise TraceUndecryptable(Reason.VALUE) from None
        except (UnicodeDecodeError, ValueError):  # not UTF-8; or too short to hold a tag
            raise TraceUndecryptable(Reason.FORMAT) from None

    def pairs(self, items: object, prefix: str) -> list:
        if items is None:
            return []
        if not isinstance(items, list):
            raise TraceUndecryptable(Reason.FORMAT)
        out = []
        for item in items:
            if not isinstance(item, dict):
                raise TraceUndecryptable(Reason.FORMAT)
            name, value = item.get("name"), item.get("value")
            out.append({"name": self.text(name, f"{prefix}.{name}"), "value": self.text(value, f"{prefix}.{value}")})
        return out


def _decrypt(raw: dict) -> dict:
    encryption = raw["encryption"]
    ivs = encryption.get("generatedIvs")
    if not isinstance(ivs, dict):
        raise TraceUndecryptable(Reason.FORMAT)
    values = _Values(_unwrap(_b64(encryption.get("key"))), ivs)
    request = dict(raw.get("request") or {})
    url = dict(request.get("url") or {})
    url["parameters"] = values.pairs(url.get("parameters"), "reqQuery")
    request.update(url=url, headers=values.pairs(request.get("headers"), "reqHeaders"),
                   body=values.text(request.get("body"), "reqBody"))
    plain = {k: v for k, v in raw.items() if k != "encryption"}
    plain.update(request=request, redacted=False)
    if isinstance(raw.get("response"), dict):
        response = dict(raw["response"])
        response.update(headers=values.pairs(response.get("headers"), "resHeaders"),
                        body=values.text(response.get("body"), "resBody"))
        plain["response"] = response
    data = raw.get("processedTraceData")
    if isinstance(data, dict):
        data = dict(data)
        if isinstance(data.get("xssDetected"), dict):
            data["xssDetected"] = {k: values.text(v, f"xss.{k}") for k, v in data["xssDetected"].items()}
        if isinstance(data.get("sqliDetected"), dict):
            data["sqliDetected"] = {
                k: [values.text(v[0], f"sqli.{k}"), *v[1:]] if isinstance(v, list) and v else v
                for k, v in data["sqliDetected"].items()
            }
        plain["processedTraceData"] = data
    return plain


def trace_decrypt(raw: dict, index: int) -> dict:  # noqa: ARG001 - index: the caller's, for its log line
    """The trace ``raw`` (which has an ``encryption`` object) in clear and staged; see the module.

    Raises :class:`TraceUndecryptable` when it cannot be decrypted: the caller skips the trace and
    reports a batch's failures together (:func:`decrypt_failures_record`).
    """
    plain = _decrypt(raw)
    return trace_stage(plain) or plain


def decrypt_failures_record(failed: dict[str, list[int]]) -> None:
    """One batch's undecryptable traces (reason -> their indexes): one log line for the batch, the
    counters (``TraceDecryptFailure``) updated once per reason after commit."""
    # Indexes and reasons only: never the ciphertext, the wrapped key or anything decrypted.
    total = sum(len(indexes) for indexes in failed.values())
    detail = "; ".join(f"{reason}: {len(indexes)} (trace {', '.join(str(i) for i in indexes[:10])}"
                       f"{'…' if len(indexes) > 10 else ''})" for reason, indexes in sorted(failed.items()))
    logger.warning("%d encrypted trace(s) of a batch could not be decrypted and were skipped (%s)", total, detail)
    for reason, indexes in failed.items():
        transaction.on_commit(partial(_count_failure, reason, len(indexes)))


def encryption_issues(value: object, path: list) -> list[dict]:
    """Accept-time check of a trace's ``encryption`` object (absent or null is fine): zod-style
    issues for a shape the worker could never decrypt. Values themselves are checked by the worker."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [issue_wrong_type(path, "object", value)]
    issues = []
    for name, expected, kind in (("key", "string", str), ("generatedIvs", "object", dict)):
        if name not in value:
            issues.append(issue_required([*path, name], expected))
        elif not isinstance(value[name], kind):
            issues.append(issue_wrong_type([*path, name], expected, value[name]))
    return issues
