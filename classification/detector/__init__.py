"""The value classifier: which data classes a field value belongs to.

Pure Python, no Django (custom regexes run on ``core.userregex``'s bounded
engines, which read their limits from Django settings when configured, else
defaults). "Detection" elsewhere means the alerts app (``detections``).

Public interface::

    BUILTIN_CLASSES        className -> (severity, shortName) for the 14 built-ins
    METLO_CLASS_NAMES      Metlo's class names -> ours
    normalize_class_name   map a Metlo name to ours, pass anything else through
    CustomRule             an operator-defined class (name, value_regex, key_regex)
    Detector               Detector(enabled, custom).detect(key, value) -> set of class names
    AGENT_PATTERNS         className -> {"regex", "keyRegex"} for agent-config's sensitiveDataList

``python -m classification.detector`` prints a rough per-field timing.
"""

from .agent import AGENT_PATTERNS
from .builtins import BUILTIN_CLASSES, METLO_CLASS_NAMES, normalize_class_name
from .detector import CustomRule, Detector
from .keys import key_hints, normalize_key

__all__ = [
    "AGENT_PATTERNS",
    "BUILTIN_CLASSES",
    "METLO_CLASS_NAMES",
    "CustomRule",
    "Detector",
    "key_hints",
    "normalize_class_name",
    "normalize_key",
]
