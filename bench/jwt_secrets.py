"""Benchmark: the offline search for a test user's weak JWT secret (testgen/jwt.py), in one process.

    python bench/jwt_secrets.py [--budget 30]

No service, no database: it signs HS256 tokens with chosen secrets and times ``crack_search`` on each
— a bundled common secret, a word of the host's name, the last 6-digit number (999999: the whole
numeric space), and a random secret nothing finds (the whole search, what a strong deployment costs
per token and process). Prints one FIGURE line per case with the candidates tried.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(secret: str) -> str:
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64(json.dumps({"sub": "alice", "exp": 4102444800}).encode())
    signature = hmac.new(secret.encode(), f"{head}.{claims}".encode(), hashlib.sha256).digest()
    return f"{head}.{claims}.{_b64(signature)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per search (TESTGEN_JWT_CRACK_SECONDS)")
    parser.add_argument("--small", action="store_true", help="tiny budget: checks the script works (CI smoke)")
    args = parser.parse_args()
    import django

    django.setup()
    from testgen import jwt

    budget = 0.2 if args.small else args.budget
    load = os.getloadavg()
    cases = [("a bundled common secret ('random')", "random"),
             ("a word of the host's name ('booksSecret')", "booksSecret"),
             ("the last number of 6 digits ('999999')", "999999"),
             ("a random 32-byte secret (not found: the whole search)", secrets.token_hex(32))]
    for name, secret in cases:
        started = time.perf_counter()
        found = jwt.crack_search(token(secret), ("books.example.com",), budget)
        elapsed = time.perf_counter() - started
        outcome = "found" if found.secret == secret else ("budget ran out" if found.exhausted else "not found")
        print(f"FIGURE {name}: {elapsed * 1000:,.0f} ms, {found.tried:,} candidates tried, {outcome}; "
              f"{found.tried / max(elapsed, 1e-9) / 1e6:.2f} M HMAC/s; load {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} "
              f"on {os.cpu_count()} CPUs", flush=True)


if __name__ == "__main__":
    main()
