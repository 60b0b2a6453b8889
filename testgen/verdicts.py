"""What an answer proves: a refusal in any form, or an acceptance (DECISIONS §8, "what a finding must prove").

A finding is an effect observed against a control, never a status code alone, so every template
judges answers the same way:

* **refused**: the answer neither returns nor changes the object — any 3xx (a redirect to a login
  page), 4xx (400 with an error body, 404, 409, 422, 429…) or 5xx, or a 2xx whose body says it
  failed (:func:`failure_body`: ``{"status": "fail", …}``, ``{"success": false}``, ``{"error": "…"}``
  without data, a bare message such as ``{"message": "Invalid token"}``, a short text answer
  ``Unauthorized``);
* **accepted**: any other answer (a 1xx/2xx whose body does not say it failed).

Pure functions over a status and a body text; the assertion extension ``verdict`` uses them
(``testgen/assertions.py``).
"""
from __future__ import annotations

import json
import re
from typing import Any

# "status"/"result"/"state" values that mean the call failed.
FAILED_STATES = frozenset({"fail", "failed", "failure", "error", "errors", "denied", "unauthorized", "unauthorised",
                           "forbidden", "invalid", "rejected", "ko", "nok", "not_found", "notfound", "unauthenticated",
                           "refused", "blocked", "locked"})
# Keys whose false value means the call failed.
SUCCESS_FLAGS = frozenset({"success", "ok", "successful", "succeeded", "result", "valid", "authenticated"})
STATE_KEYS = frozenset({"status", "result", "state", "outcome"})
ERROR_KEYS = frozenset({"error", "errors", "err", "errormessage", "error_message", "errordescription",
                        "error_description", "fault", "exception"})
DATA_KEYS = frozenset({"data", "result", "results", "items", "item", "value", "payload"})
# Keys an error envelope is made of (a body of only these, saying it failed, is a refusal).
ENVELOPE_KEYS = frozenset({"message", "msg", "detail", "details", "description", "reason", "title", "status", "code",
                           "statuscode", "status_code", "timestamp", "path", "type", "instance", "traceid",
                           "trace_id", "requestid", "request_id", "errorcode", "error_code", *ERROR_KEYS})
FAILURE_WORDS = re.compile(
    r"\b(invalid|incorrect|wrong|denied|not allowed|unauthori[sz]ed|forbidden|not found|does ?n[o']t exist|no such|"
    r"failed|failure|error|expired|missing|required|not permitted|no permission|insufficient|not authenticated|"
    r"unauthenticated|login required|bad request|cannot|can't|unable|rejected|too many|rate limit|locked|blocked|"
    r"disabled|not authori[sz]ed|access denied)\b", re.IGNORECASE)
SHORT_TEXT = 300
_HTML = re.compile(r"^\s*<", re.DOTALL)


def failure_body(text: str) -> str | None:
    """Why a body says its call failed (for the message), or None. Only the top level of a JSON object
    is read; a non-JSON answer counts only when it is a short text (not markup) with failure words."""
    if not text:
        return None
    stripped = text.strip()
    try:
        value: Any = json.loads(stripped) if stripped[:1] in "{[\"" else None
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, str):
        stripped, value = value, None
    if value is None:
        if len(stripped) <= SHORT_TEXT and not _HTML.match(stripped) and FAILURE_WORDS.search(stripped):
            return f"the answer says {stripped[:60]!r}"
        return None
    if not isinstance(value, dict):
        return None
    lowered = {str(k).lower(): v for k, v in value.items()}
    for key in SUCCESS_FLAGS:
        if lowered.get(key) is False:
            return f"'{key}' is false"
    for key in STATE_KEYS:
        state = lowered.get(key)
        if isinstance(state, str) and state.strip().lower() in FAILED_STATES:
            return f"'{key}' is {state.strip()!r}"
        if isinstance(state, int) and not isinstance(state, bool) and 400 <= state <= 599:
            return f"'{key}' is {state}"
    data = any(lowered.get(key) not in (None, "", [], {}) for key in DATA_KEYS)
    for key in ERROR_KEYS:
        error = lowered.get(key)
        if error not in (None, False, "", [], {}, 0) and not data:
            return f"it carries '{key}'"
    if lowered and set(lowered) <= ENVELOPE_KEYS:
        for key, item in lowered.items():
            if isinstance(item, str) and FAILURE_WORDS.search(item):
                return f"'{key}' says {item[:60]!r}"
    return None


def refusal(status: int | None, text: str) -> str | None:
    """Why an answer is a refusal (``status 403``, ``200 whose body says 'status' is 'fail'``), or None
    when it was accepted. ``status`` None (no answer) is neither: callers handle it first."""
    if status is None:
        return None
    if status >= 300:
        return f"status {status}"
    reason = failure_body(text)
    return f"{status} whose body says it failed ({reason})" if reason else None
