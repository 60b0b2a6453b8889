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
"""
from __future__ import annotations

import re

from classification.detector import AGENT_PATTERNS
from classification.models import DataClass

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


def agent_config() -> dict:
    """The agent configuration object (one query)."""
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
        "endpoints": [],
        "specs": [],
        "globalFullTraceCapture": False,
        "encryptionPublicKey": None,
        "authenticationConfig": [],
        "hostMap": [],
        "hostBlockList": [],
        "pathBlockList": [],
    }
