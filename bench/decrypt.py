#!/usr/bin/env python
"""Cost of decrypting Metlo 0.1.x encrypted traces in the worker, per RSA key size (no database).

    python bench/decrypt.py [--traces 2000] [--small]

Encrypts ``--traces`` full v2 traces (a JSON body of ~1 KB, 6 request and 3 response headers,
2 query parameters) the way the agents do, then times ``inventory.ingest.decrypt.trace_decrypt``
on them with the service key first in the keyring, and with it third (two newer keys tried first:
traces of an agent that has not re-read agent-config after two rotations). Prints one FIGURE line
per key size and case: microseconds per trace and traces/s of one process.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402

from core.agentkeys import PrivateKey  # noqa: E402
from inventory.ingest import decrypt  # noqa: E402
from tests.support.agent_crypto import encrypt_trace  # noqa: E402


def clear_trace(i: int) -> dict:
    body = json.dumps({"user": {"id": i, "email": f"user{i}@example.com", "bio": "x" * 900}})
    headers = [{"name": n, "value": v} for n, v in [("Host", "api.example.com:8000"), ("Accept", "*/*"),
               ("User-Agent", "bench"), ("Authorization", f"Bearer t{i}"), ("Connection", "close"),
               ("Accept-Encoding", "gzip")]]
    return {"request": {"method": "GET", "url": {"host": "api.example.com:8000", "path": f"/users/{i}",
                                                 "parameters": [{"name": "page", "value": "2"},
                                                                {"name": "q", "value": "abc"}]},
                        "headers": headers, "body": ""},
            "response": {"status": 200, "headers": headers[:3], "body": body},
            "meta": {"incoming": True, "source": "10.0.0.1", "sourcePort": 1, "destination": "10.0.0.2",
                     "destinationPort": 8000}, "analysisType": "full"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=2000)
    parser.add_argument("--small", action="store_true", help="100 traces")
    args = parser.parse_args()
    count = 100 if args.small else args.traces
    decrypt._Keyring.mark_used = lambda self, key: None  # no database in this benchmark
    for bits in (2048, 3072, 4096):
        keys = [rsa.generate_private_key(public_exponent=65537, key_size=bits) for _ in range(3)]
        pem = keys[0].public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        traces = [encrypt_trace(clear_trace(i), pem) for i in range(count)]
        for label, order in (("service key first", keys), ("service key third", keys[1:] + keys[:1])):
            decrypt.keyring_reset()
            decrypt._keyring.keys = [PrivateKey(n, str(n), k) for n, k in enumerate(order)]
            decrypt._keyring.loaded_at = time.monotonic() + 3600
            started = time.perf_counter()
            for index, trace in enumerate(traces):
                decrypt.trace_decrypt(trace, index)
            elapsed = time.perf_counter() - started
            print(f"FIGURE decrypt rsa={bits} {label}: {elapsed / count * 1e6:.0f} us/trace, "
                  f"{count / elapsed:.0f} traces/s (one process, {count} traces, load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
