"""Shared agent settings for the tiny test apps, read from the environment.

METLO_COLLECTOR_URL  e.g. http://127.0.0.1:5055  (scheme required)
METLO_API_KEY        the key sent verbatim in the Authorization header
METLO_AGENT_KIND     "v1" (metlo 0.0.17) or "v2" (metlo 0.1.x + Rust bindings)

The 0.1.x agent ignores the port in the URL: unless told otherwise it talks to
<scheme>://<host>:8000 (backend: /api/v1, /api/v1/agent-config) and
<scheme>://<host>:8081 (collector: /api/v1/verify, /api/v2/log-request/batch).
So for v2 we pass BACKEND_PORT and COLLECTOR_PORT explicitly (ints).
"""
import logging
import os
from urllib.parse import urlsplit

COLLECTOR_URL = os.environ.get("METLO_COLLECTOR_URL", "http://127.0.0.1:5055")
API_KEY = os.environ.get("METLO_API_KEY", "test-api-key")
KIND = os.environ.get("METLO_AGENT_KIND", "v1")


def _port(url):
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def v2_options():
    """Keyword options understood by metlo 0.1.x (ignored by 0.0.17)."""
    port = _port(COLLECTOR_URL)
    level = os.environ.get("METLO_LOG_LEVEL", "INFO").upper()
    return {
        "BACKEND_PORT": port,
        "COLLECTOR_PORT": port,
        "LOG_LEVEL": 5 if level == "TRACE" else getattr(logging, level, logging.INFO),
    }
