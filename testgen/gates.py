"""Requests a test decides not to send (TestConfig extensions ``skip`` and ``onlyIfStatus``).

Used by the runner before resolving a request: a reason comes back as the request's ``skipped``.
"""
from __future__ import annotations

import re

from .verdicts import refusal


def not_sent(request: dict, records: list) -> str | None:
    """Why a request is not sent by the test's own decision: ``skip`` (a reason written by the
    generator, e.g. a write to an object that may not be the test identities' own),
    ``onlyIfLoggedIn: i`` when request i (a ``loginAs``) did not return the identity's credential,
    ``onlyIfAccepted: i`` when request i was not sent or was refused in any form (``verdicts.py``: the
    attack is not sent when the example request alone fails, DECISIONS §8), or ``onlyIfStatus``
    ``{"request": i, "matches": regex}`` when request i's last status does not match."""
    if isinstance(request.get("skip"), str) and request["skip"]:
        return request["skip"]
    login = request.get("onlyIfLoggedIn")
    if isinstance(login, int) and not isinstance(login, bool):
        earlier = records[login] if 0 <= login < len(records) else None
        answer = earlier.exchanges[-1] if earlier is not None and earlier.exchanges else None
        if answer is None or not answer.logged_in:
            return f"request {login} (a login) gave no credential"
    gate = request.get("onlyIfAccepted")
    if isinstance(gate, int) and not isinstance(gate, bool):
        earlier = records[gate] if 0 <= gate < len(records) else None
        answer = earlier.exchanges[-1] if earlier is not None and earlier.exchanges else None
        if answer is None or answer.status is None:
            return f"request {gate} got no answer"
        why = refusal(answer.status, answer.text)
        if why:
            return f"request {gate} (the example request alone) was refused ({why})"
    condition = request.get("onlyIfStatus")
    if isinstance(condition, dict):
        index = condition.get("request")
        earlier = records[index] if isinstance(index, int) and 0 <= index < len(records) else None
        status = earlier.exchanges[-1].status if earlier is not None and earlier.exchanges else None
        try:
            matched = status is not None and re.search(str(condition.get("matches", "")), str(status))
        except re.error:
            matched = False
        if not matched:
            return f"request {index} was answered {status if status is not None else 'nothing'}"
    return None
