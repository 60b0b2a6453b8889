"""Which endpoints a run may send anything to (DECISIONS §8, "what a test may send").

* The testing environment's ``exclude`` (``[{path, methods?}]``) removes endpoints from every run.
* An endpoint whose path or traffic shows that it resets, seeds, purges or bulk-deletes shared state
  (``/createdb``, ``/reset``, ``/api/seed``, ``/flush``, a ``DELETE`` of a whole collection — not of the
  caller's relation to one object such as ``/articles/{slug}/favorite`` —, an answer saying "database
  populated") is never a target, nor a read-back, unless ``allowDestructive`` names it.

A pattern's ``path`` is compared segment by segment with the endpoint's path pattern: a ``{name}``
segment or ``*`` matches any one segment, ``**`` (last) any number of segments, and a literal segment
matches the same text (``?`` and ``*`` inside a segment are wildcards: ``reset*``). ``methods`` (upper
case) narrows it; without it every method matches.

Pure: the generation service (``services/generation.py``) asks :func:`exclusion` for every endpoint and
answers ``{success: false, msg: "Excluded from testing: <reason>"}`` for those it names.
"""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

from inventory.patterns.segments import path_segments, segment_is_parameter

EXCLUDED = "Excluded from testing: "
# A literal path segment (lower case, "-", "_" and "." removed) naming a state-resetting function.
_RESET_WORDS = ("reset", "reseed", "seed", "seeds", "seeding", "init", "initdb", "initialize", "initialise",
                "initialization", "createdb", "createdatabase", "dropdb", "dropdatabase", "populate",
                "populatedb", "repopulate", "flush", "flushall", "flushdb", "purge", "purgeall", "wipe", "wipeall",
                "truncate", "truncateall", "clearall", "cleardb", "deleteall", "removeall", "destroyall",
                "factoryreset", "resetdb", "resetdatabase", "resetall", "resetdata", "rebuild", "rebuilddb",
                "teardown", "nuke", "restore", "restoredb", "loaddata", "loadfixtures", "recreate", "recreatedb")
# A path naming a credential flow resets a credential, not shared state (``/password/reset``, ``/auth/init``).
_CREDENTIAL_FLOW = re.compile(r"pass(word|wd)?|pin|otp|mfa|2fa|token|code|e-?mail|verif|auth|login|signin|"
                              r"session|oauth|credential", re.IGNORECASE)
_RESET_SEGMENT = re.compile(
    "^(" + "|".join(_RESET_WORDS) + r")$"
    r"|^(create|init|reset|seed|drop|populate|flush|purge|wipe|truncate|clear|delete|remove|destroy|restore|"
    r"rebuild|recreate|load)(db|database|data|all|everything|tables?|users|fixtures)$")
# What an answer says after resetting shared state.
_RESET_ANSWER = re.compile(
    r"\b(database|db|data|tables?|store|everything)\b[^.\n\"]{0,40}\b(re-?populated|populated|re-?seeded|seeded|"
    r"re-?set|wiped|purged|truncated|dropped|re-?created|re-?initiali[sz]ed|initiali[sz]ed|flushed|cleared|"
    r"restored)\b|\b(re-?populated|re-?seeded|wiped|purged|truncated|flushed|re-?initiali[sz]ed)\b[^.\n\"]{0,40}"
    r"\b(database|db|data|tables?)\b", re.IGNORECASE)


# A query parameter naming one object (``id``, ``itemId``, ``user_id``): the DELETE is no bulk delete.
_ID_QUERY = re.compile(r"(^(id|uid|uuid|guid|key|name|slug)$)|([_-](id|uuid|key|name)$)|([a-z0-9](Id|ID|Uuid|Name)$)")


def _compact(segment: str) -> str:
    return re.sub(r"[-_.\s]", "", segment).lower()


def destructive_reason(path: str, method: str, answers: Iterable[str] = (), query: Iterable[str] = ()) -> str | None:
    """Why the endpoint resets or bulk-deletes shared state (path words, a ``DELETE`` of a collection
    naming no object in its query, an answer saying so), or None. ``query``: its query parameter names."""
    segments = path_segments(path)
    credential_flow = any(_CREDENTIAL_FLOW.search(s) for s in segments if not segment_is_parameter(s))
    for segment in segments:
        if not segment_is_parameter(segment) and _RESET_SEGMENT.match(_compact(segment)) and not credential_flow:
            return f"its path ('{segment}') resets or seeds shared state"
    if method == "DELETE" and segments and not segment_is_parameter(segments[-1]) and \
            not any(_ID_QUERY.search(name) for name in query) and not re.fullmatch(
                r"(me|self|my|current|session|sessions|logout|token|tokens|cookie|cookies)", segments[-1].lower()) \
            and not relation(segments):
        return "a DELETE of a whole collection (bulk delete)"
    for answer in answers:
        if answer and _RESET_ANSWER.search(answer[:2000]):
            return "its answers in traffic say it resets or seeds shared state"
    return None


def relation(segments: list[str]) -> bool:
    """A singular word after an object (``/articles/{slug}/favorite``, ``/profiles/{name}/follow``,
    ``/posts/{id}/like``): the caller's relation to that one object, undone by a DELETE — no collection
    (``/articles/{slug}/comments``, plural, stays a bulk delete)."""
    last = segments[-1].lower()
    return len(segments) >= 2 and segment_is_parameter(segments[-2]) and last.isalpha() \
        and (not last.endswith("s") or last.endswith("ss"))


def pattern_matches(pattern: dict, method: str, path: str) -> bool:
    """Whether an ``exclude``/``allowDestructive`` item names the endpoint (see the module docstring)."""
    methods = pattern.get("methods")
    if methods and method.upper() not in {str(m).upper() for m in methods}:
        return False
    wanted = path_segments(str(pattern.get("path", "")))
    actual = path_segments(path)
    for index, segment in enumerate(wanted):
        if segment == "**":
            return True
        if index >= len(actual):
            return False
        if segment == "*" or segment_is_parameter(segment):
            continue
        if segment_is_parameter(actual[index]) or not fnmatch.fnmatchcase(actual[index], segment):
            return False
    return len(wanted) == len(actual)


def exclusion(*, method: str, path: str, answers: Iterable[str], exclude: list[dict] | None,
              allow_destructive: list[dict] | None, query: Iterable[str] = ()) -> str | None:
    """Why the endpoint is excluded from testing (the text after ``Excluded from testing: ``), or None."""
    for item in exclude or ():
        if pattern_matches(item, method, path):
            return f"listed in the testing environment's exclude ({item.get('path')})"
    reason = destructive_reason(path, method, answers, query)
    if reason and not any(pattern_matches(item, method, path) for item in allow_destructive or ()):
        return f"{reason}; list it in allowDestructive to test it"
    return None
