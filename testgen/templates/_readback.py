"""The views a write's effect is read back through, as the object's owner sees it (DECISIONS §8).

A write's effect shows where its owner looks: the object's own GET, the parent objects' GETs
(``/baskets/{b}`` for ``/baskets/{b}/items/{i}``), the collection that lists it (``/baskets/{b}/items``,
``/books``) and, for a user's own profile written without an id in the path, the self routes
(``/me``, ``/account/profile``). Templates read these before and after the write and compare them
(``compare: similar``): a value written, an item removed or a state moved all show as a difference. A
collection is compared only where it lists the object (its entries naming the object's id or natural
key, ``item``): other users' entries change for reasons of their own.
Only GET endpoints of the inventory are read (never an excluded or state-resetting one).
"""
from __future__ import annotations

from inventory.patterns.segments import path_segments, segment_is_parameter

from ..profile import EndpointProfile

MAX_VIEWS = 4
SELF_SEGMENTS = {"me", "self", "current", "profile", "account", "whoami", "my", "myself"}


def is_self_path(path: str) -> bool:
    """A route of the caller's own user: a self word in it (``/me``, ``/account/settings``), or a path
    without parameters ending in the singular ``user`` (``GET /api/user``: the caller, where ``/users``
    would be the collection)."""
    segments = [s.lower() for s in path_segments(path)]
    return any(s in SELF_SEGMENTS for s in segments) or (
        bool(segments) and segments[-1] == "user" and not any(segment_is_parameter(s) for s in segments))


def views(profile: EndpointProfile, segments: list[str], *, user: bool = False,
          user_value: str | None = None, kinds: dict | None = None) -> list[tuple[EndpointProfile, list[str]]]:
    """(GET profile, concrete segments) of the views reading what a write to ``segments`` (the write's
    path with its values) changes, at most :data:`MAX_VIEWS`, nearest first. ``user``: the write is about
    a user named outside the path (a body field): the self routes read it too (as its owner), and the
    host's user read at ``user_value`` when given."""
    reads = profile.facts.reads if profile.facts is not None else {}
    pattern = path_segments(profile.path)
    found: list[tuple[EndpointProfile, list[str]]] = []

    def add(path: str, values: list[str], kind: str = "object") -> None:
        read = reads.get(path)
        if read is not None and all(r.path != path for r, _ in found) and len(found) < MAX_VIEWS:
            found.append((read, values))
            if kinds is not None:
                kinds[path] = kind

    add(profile.path, list(segments))
    implicit = profile.implicit_user.key if profile.implicit_user is not None else None
    parameters = [i for i, s in enumerate(pattern) if segment_is_parameter(s) or i == implicit]
    user_read = profile.host_reads.user_read_path if profile.host_reads is not None else None
    for position in reversed(parameters):
        if position == implicit and user_read and len(path_segments(user_read)) == position + 1:
            add(user_read, list(segments[:position + 1]))  # a literal user name: read as the host's user read
        add("/" + "/".join(pattern[:position + 1]), list(segments[:position + 1]))
        add("/" + "/".join(pattern[:position]), list(segments[:position]), "collection")  # the listing
    if user and user_value is not None and user_read and user_read in reads:
        add(user_read, [*reads[user_read].segments[:-1], user_value])
    if not parameters or user:
        for path, read in sorted(reads.items()):
            if not read.path_inputs and is_self_path(path):
                add(path, list(read.segments), "self")
    return found


def own_views(profile: EndpointProfile) -> list[tuple[EndpointProfile, list[str]]]:
    """The views of the test identity's own object a write names (none when it names another's: the
    write is then not sent, ``own_writes.py``)."""
    if profile.not_own:
        return []
    return views(profile, profile.segments, user=not profile.path_inputs)
