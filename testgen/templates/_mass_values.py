"""MASS_ASSIGNMENT's choice of what to inject: properties the API really has, with values it really uses.

A property is *grounded* when a GET that reads the written object shows it in its answer (the
object's own properties as the API serialises them) and its name says it grants something (a role,
an admin or verified flag, a plan, a balance); its value comes from the host's traffic and uploaded
specs (:meth:`~testgen.hostfacts.HostFacts.values`):

* a flag: ``true``, unless traffic shows it true for everyone (nothing to gain);
* a role-like string: a seen (or spec ``enum``) value that names a privilege (``admin``, ``owner``…),
  else the rarest value seen (few users hold the privileged role), else an ``enum`` value not seen,
  else the generic guess ``"admin"``;
* a balance-like number: 1,000,000 (ten times the largest value seen when that is not more).

Generic guesses (:data:`PRIVILEGED_FIELDS`) are added for names neither grounded nor in the body. The
object's own ``id`` is not among them: rewriting it grants nothing and leaves the test identity without
its object for every later test.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..hostfacts import leaf

# Field, value an attacker would want applied, when traffic shows nothing better.
PRIVILEGED_FIELDS = (
    ("isAdmin", True),
    ("is_admin", True),
    ("admin", True),
    ("role", "admin"),
    ("ownerId", 987654321),
    ("owner_id", 987654321),
    ("userId", 987654321),
    ("balance", 1000000),
)
PRIVILEGED_NAME = re.compile(
    r"admin|staff|super|root|moderator|role|permission|privilege|scope|group|verified|approved|confirmed|"
    r"premium|vip|plan|tier|level|credit|balance|points|discount|trusted|internal|subscription|account_?type",
    re.IGNORECASE)
PRIVILEGED_VALUE = re.compile(r"admin|root|super|owner|staff|manager|moderator|premium|vip|enterprise|platinum|"
                              r"gold|editor|maintainer|operator", re.IGNORECASE)
ROLE_NAME = re.compile(r"role|group|permission|scope|type|level|tier|plan", re.IGNORECASE)
AMOUNT_NAME = re.compile(r"balance|credit|points|quota|discount|limit", re.IGNORECASE)
ID_NAME = re.compile(r"(^|_)(id|uuid|pk)$|[a-z](Id|ID|Uuid)$", re.IGNORECASE)
LARGE_AMOUNT = 1000000


@dataclass
class Injection:
    """One property added to the write: its name and value, where it came from, and where each read
    that shows the property has it (read path pattern -> data path in that read's answer)."""

    name: str
    value: Any
    source: str  # "traffic", "spec" or "guess"
    visible: dict[str, str] = field(default_factory=dict)


def _visible_path(read, name: str) -> str | None:
    """The data path of property ``name`` in a read's answer (outside lists), shortest first."""
    paths = [p for p in read.response_fields if leaf(p) == name and "[" not in p]
    return min(paths, key=len) if paths else None


def _value(name: str, data_type: str, seen: list[Any], facts) -> tuple[Any, str] | None:
    def count(value: Any) -> int:
        return facts.seen(name, value) if facts is not None else 0

    if data_type == "boolean":
        flags = [v for v in seen if isinstance(v, bool)]
        return None if flags and all(flags) else (True, "traffic" if flags else "guess")
    if data_type in ("integer", "number"):
        if not AMOUNT_NAME.search(name):
            return None
        numbers = [v for v in seen if isinstance(v, (int, float)) and not isinstance(v, bool)]
        largest = max(numbers, default=0)
        return (LARGE_AMOUNT if largest < LARGE_AMOUNT else largest * 10), "traffic"
    if data_type != "string" or not ROLE_NAME.search(name):
        return None
    strings = [v for v in seen if isinstance(v, str) and v]
    privileged = [v for v in strings if PRIVILEGED_VALUE.search(v)]
    if privileged:
        return privileged[0], "traffic" if count(privileged[0]) else "spec"
    observed = [v for v in strings if count(v)]
    if len(observed) >= 2:
        return min(observed, key=count), "traffic"  # the rarest: few hold a privileged role
    unseen = [v for v in strings if v not in observed]
    if unseen:
        return unseen[0], "spec"
    return "admin", "guess"


def injections(body: dict, reads: list, facts) -> list[Injection]:
    """What to add to ``body`` (see the module docstring); ``reads``: the read-back GET profiles."""
    present = {str(k).lower() for k in body}
    chosen: dict[str, Injection] = {}
    for read in reads:
        for data_path, data_type in read.response_fields.items():
            name = leaf(data_path)
            if "[" in data_path or not name or name.lower() in present or ID_NAME.search(name):
                continue
            if not PRIVILEGED_NAME.search(name):
                continue
            if name not in chosen:
                picked = _value(name, data_type, facts.values(name) if facts is not None else [], facts)
                if picked is None:
                    continue
                chosen[name] = Injection(name, picked[0], picked[1])
            path = _visible_path(read, name)
            if path:
                chosen[name].visible.setdefault(read.path, path)
    grounded = {n.lower() for n in chosen}
    for name, value in PRIVILEGED_FIELDS:
        if name.lower() in present or name.lower() in grounded:
            continue
        guess = Injection(name, value, "guess")
        for read in reads:
            guess.visible[read.path] = _visible_path(read, name) or f"{read_prefix(read)}{name}"
        chosen[name] = guess
    return list(chosen.values())


def read_prefix(read) -> str:
    """Where a read's object sits in its answer: ``""`` or one wrapper (``data.``) shared by all its fields."""
    heads = {p.split(".", 1)[0] for p in read.response_fields if "." in p}
    if len(heads) == 1 and all("." in p for p in read.response_fields):
        head = heads.pop()
        return "" if "[" in head else f"{head}."
    return ""
