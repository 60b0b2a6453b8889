"""The data classes in force for a batch: a detector, the enabled names and every severity.

One query per batch reads the ``DataClass`` table; the compiled
:class:`~classification.detector.Detector` is reused across batches as long as
the table's rows and ``PHONE_REGIONS`` are unchanged (operators rarely edit classes, and
building a detector compiles the custom regexes).
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from django.conf import settings

from classification.detector import CustomRule, Detector, normalize_class_name
from classification.models import DataClass
from core.enums import RiskScore

logger = logging.getLogger(__name__)

# Infrastructure headers: recorded as data fields but never classified (a Host
# header holding the server's own IP address is not sensitive data).
UNCLASSIFIED_HEADERS = frozenset({
    "host", ":authority", "content-length", "content-type", "accept", "accept-encoding", "accept-language",
    "connection", "date", "etag", "last-modified", "cache-control", "vary", "server", "via", "age",
    "transfer-encoding", "content-encoding", "expires", "pragma", "keep-alive", "user-agent",
})


@dataclass(frozen=True)
class ClassConfig:
    detector: Detector
    enabled: frozenset[str]
    severity: dict[str, str]

    def normalize(self, names) -> set[str]:
        """Agent-reported class names in ours (Metlo's names mapped); only enabled classes kept."""
        out = set()
        for name in names:
            ours = normalize_class_name(name)
            if ours in self.enabled:
                out.add(ours)
        return out

    def risk(self, classes) -> str:
        rank = {RiskScore.NONE: 0, RiskScore.LOW: 1, RiskScore.MEDIUM: 2, RiskScore.HIGH: 3}
        best = RiskScore.NONE
        for name in classes:
            severity = self.severity.get(name, RiskScore.NONE)
            if rank.get(severity, 0) > rank[best]:
                best = RiskScore(severity)
        return best


_cache_lock = threading.Lock()
_cache: dict[tuple, ClassConfig] = {}


def class_config_load() -> ClassConfig:
    """Read the data classes (one query) and return the matching, possibly cached, configuration."""
    rows = tuple(
        DataClass.objects.order_by("name").values_list("name", "severity", "enabled", "builtin", "value_regex", "key_regex")
    )
    key = (rows, tuple(settings.PHONE_REGIONS))
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            return cached
    enabled = [name for name, _, on, builtin, _, _ in rows if on and builtin]
    custom = []
    for name, _, on, builtin, value_regex, key_regex in rows:
        if on and not builtin and (value_regex or key_regex):
            rule = CustomRule(name=name, value_regex=value_regex or None, key_regex=key_regex or None)
            try:
                Detector([], [rule])
            except ValueError:
                logger.warning("data class %s has an invalid regex; skipped", name)
                continue
            custom.append(rule)
    config = ClassConfig(
        detector=Detector(enabled, custom, phone_regions=settings.PHONE_REGIONS),
        enabled=frozenset(name for name, _, on, _, _, _ in rows if on),
        severity={name: severity for name, severity, _, _, _, _ in rows},
    )
    with _cache_lock:
        _cache.clear()  # only the current table matters
        _cache[key] = config
    return config
