"""Encrypting a v2 trace the way Metlo's 0.1.x agents do, for tests (the facts: inventory/ingest/decrypt.py).

A fresh AES-256 key per trace, wrapped with RSA-OAEP-SHA256 for the service's public key; every
body, and every name and value of parameters and headers, AES-256-GCM with its own 12-byte IV,
sent as base64 of ciphertext + tag; IVs in ``encryption.generatedIvs`` as byte arrays.
"""
from __future__ import annotations

import base64
import copy
import os

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def encrypt_trace(trace: dict, public_pem: str) -> dict:
    """A copy of a clear v2 trace, encrypted for ``public_pem``; ``redacted: false`` (capture on)."""
    public = serialization.load_pem_public_key(public_pem.encode())
    aes_key = AESGCM.generate_key(bit_length=256)
    gcm = AESGCM(aes_key)
    ivs: dict[str, list[int]] = {}

    def seal(text: str, iv_name: str | None = None) -> str:
        iv = os.urandom(12)
        sealed = base64.b64encode(gcm.encrypt(iv, text.encode(), None)).decode()
        ivs[iv_name or sealed] = list(iv)
        return sealed

    def seal_pairs(items: list, prefix: str) -> list:
        out = []
        for item in items:
            name, value = seal(item["name"], ""), seal(str(item["value"]), "")
            ivs[f"{prefix}.{name}"], ivs[f"{prefix}.{value}"] = ivs.pop(name), ivs.pop(value)
            out.append({"name": name, "value": value})
        return out

    out = copy.deepcopy(trace)
    request, response = out["request"], out["response"]
    request["url"]["parameters"] = seal_pairs(request["url"].get("parameters") or [], "reqQuery")
    request["headers"] = seal_pairs(request.get("headers") or [], "reqHeaders")
    request["body"] = seal(request.get("body") or "", "reqBody")
    response["headers"] = seal_pairs(response.get("headers") or [], "resHeaders")
    response["body"] = seal(response.get("body") or "", "resBody")
    wrapped = public.encrypt(aes_key, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(),
                                                   label=None))
    out.update(redacted=False, encryption={"key": base64.b64encode(wrapped).decode(), "generatedIvs": ivs})
    return out
