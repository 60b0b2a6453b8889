r"""``GET /api/v1/agent-config``: what Metlo agents need to start (DECISIONS §9).

v2 agents refuse to start without every key of this object. ``sensitiveDataList``
lists our enabled data classes with patterns the agents evaluate themselves
(``regex`` searched in values, ``keyRegex`` in the field's full path such as
``reqBody.user.email``), so the classes they report are ours. Built-ins use the
patterns of ``classification.detector.AGENT_PATTERNS``; custom classes use the
operator's regexes when the agent's regex engine (Rust ``regex``) can compile
them — lookaround and backreferences cannot be, and are left out (an agent
silently drops a class whose pattern does not compile). Agents match
``keyRegex`` against the full path, so an operator's anchored key regex
``^dob$`` is sent as ``(?:^|\.)(?:dob$)``.

Full trace capture reaches the agents through ``globalFullTraceCapture``
(``AGENT_GLOBAL_FULL_TRACE_CAPTURE``) and ``endpoints`` (``agent_endpoints``), and
``encryptionPublicKey`` is the service's public key (``core.agentkeys``): 0.1.x agents send
captured full traces only encrypted for it.
"""
from __future__ import annotations

import re

from django.conf import settings

from classification.detector import AGENT_PATTERNS
from classification.models import DataClass
from core.agentkeys import active_public_key
from inventory.models import ApiTrace, Endpoint

_RUST_UNSUPPORTED = re.compile(r"\(\?[=!]|\(\?<[=!]|\\[1-9]|\(\?P=|\(\?>|[*+?}]\+")


def agent_regex(pattern: str | None) -> str | None:
    """``pattern`` when an agent can compile it, else ``None``."""
    if not pattern:
        return None
    try:
        re.compile(pattern)
    except re.error:
        return None
    return None if _RUST_UNSUPPORTED.search(pattern) else pattern


def agent_key_regex(pattern: str | None) -> str | None:
    """An operator's key regex (matched by us against the field name) for agents, which match it
    against the full path (``reqBody.user.email``): a leading ``^`` becomes "start or after a dot"."""
    regex = agent_regex(pattern)
    if regex and regex.startswith("^"):
        regex = r"(?:^|\.)(?:" + regex[1:] + ")"
    return regex


def agent_endpoints() -> list[dict]:
    """``endpoints`` as 0.1.x agents read them: the endpoints with full trace capture on, at most
    ``AGENT_CONFIG_MAX_ENDPOINTS``. Agents treat an endpoint they are not told about as capture off,
    so the others are left out: the ``ingest`` key sits in every monitored app's configuration and
    must not read the inventory through this route. Agents compare ``host`` with their trace's host
    as the app saw it (``Host`` header: ``127.0.0.1:5000``), which we store without a port, so each
    endpoint is also listed as ``name:port`` for each destination port its stored traces show."""
    rows = list(
        Endpoint.objects.filter(full_trace_capture_enabled=True).order_by("host__name", "path", "method")
        .values_list("uuid", "host__name", "method", "path", "is_graphql", "openapi_spec_name")
        [: settings.AGENT_CONFIG_MAX_ENDPOINTS]
    )
    ports: dict = {}
    if rows:
        for endpoint_id, port in (ApiTrace.objects.filter(endpoint_id__in=[row[0] for row in rows])
                                  .values_list("endpoint_id", "meta__destinationPort").distinct()):
            if port not in (None, "", 80, 443, "80", "443"):
                ports.setdefault(endpoint_id, set()).add(str(port))
    out = []
    for uuid, host, method, path, graphql, spec in rows:
        entry = {"path": path, "openapiSpecName": spec, "method": method, "fullTraceCaptureEnabled": True,
                 "numberParams": min(path.count("{"), 255), "isGraphQl": graphql}
        for spelling in [host, *sorted(f"{host}:{port}" for port in ports.get(uuid, ()))]:
            out.append({**entry, "host": spelling})
    return out


def agent_config() -> dict:
    """The agent configuration object."""
    sensitive = []
    for name, severity, builtin, value_regex, key_regex in DataClass.objects.filter(enabled=True).order_by(
        "-builtin", "name"
    ).values_list("name", "severity", "builtin", "value_regex", "key_regex"):
        if builtin:
            patterns = AGENT_PATTERNS.get(name, {})
            regex, key = patterns.get("regex"), patterns.get("keyRegex")
        else:
            regex, key = agent_regex(value_regex), agent_key_regex(key_regex)
        sensitive.append({"className": name, "severity": severity, "regex": regex, "keyRegex": key})
    return {
        "sensitiveDataList": sensitive,
        "endpoints": agent_endpoints(),
        "specs": [],
        "globalFullTraceCapture": settings.AGENT_GLOBAL_FULL_TRACE_CAPTURE,
        "encryptionPublicKey": active_public_key(),
        "authenticationConfig": [],
        "hostMap": [],
        "hostBlockList": [],
        "pathBlockList": [],
    }
