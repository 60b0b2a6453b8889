"""Segments: splitting paths, the parameter grammar, parameterisation and numbering.

* A *pattern* segment holds a parameter when it contains ``{name}`` (:data:`PARAM`: a
  name without ``{``, ``}`` or ``/``, possibly empty); it *is* a parameter when it is
  exactly one (``{param1}``, not ``{param1}.json``).
* A *concrete* segment is a value (DECISIONS §9) when it is numeric, a UUID, hex of 8+
  characters with a digit, a letters-and-digits token of 10+ characters with two
  digits, an e-mail, a date or a long opaque token; ``v1``, ``api``, camelCase and
  ordinary words stay literal (:func:`segment_is_value`).
* :func:`path_parameterize` turns a concrete path into its pattern; :func:`pattern_normalise`
  numbers ``{…}`` parameters ``{param1}``, ``{param2}``… left to right;
  :func:`pattern_renumber` also reads the parameter spellings agents send (``:id``, ``<id>``).
"""
from __future__ import annotations

import re
from functools import lru_cache

from .normalize import path_normalize

PARAM = re.compile(r"\{[^{}/]*\}")
_AGENT_PARAM = re.compile(r"^(?::[A-Za-z_][A-Za-z0-9_]*|<[^<>/]+>|\{[^{}/]*\})$")

_NUMERIC = re.compile(r"^[+-]?\d+(?:[.,]\d+)?$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^(?:0x)?[0-9a-fA-F]{8,}$")
_ALNUM = re.compile(r"^[A-Za-z0-9_-]{10,}$")
_EMAIL = re.compile(r"^[^@\s/]+@[^@\s/]+\.[^@\s/]+$")
_DATE = re.compile(
    r"^(?:\d{4}[-_/.]?(?:0[1-9]|1[0-2])[-_/.]?(?:0[1-9]|[12]\d|3[01])"
    r"(?:[T_ ]\d{2}(?::?\d{2}){0,2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|(?:0[1-9]|[12]\d|3[01])[-.](?:0[1-9]|1[0-2])[-.]\d{4})$"
)
# Token alphabet of opaque identifiers (base64, base64url, percent-encoding, JWT dots).
_OPAQUE = re.compile(r"^[A-Za-z0-9_\-.~+=%:]{16,}$")
# Word-like segments that stay literal however long: lower/kebab/snake case words,
# camelCase or PascalCase words, optionally with a file extension.
_WORDY = re.compile(
    r"^(?:[a-z]+(?:[-_][a-z]+)*|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*(?:[-_][A-Za-z][a-z]+)*)(?:\.[a-z]{1,5})?$"
)
# Words joined by dots, camelCase allowed (Slack's Web API methods: ``conversations.history``,
# ``users.lookupByEmail``): a name however long, not an opaque token.
_WORDY_DOTTED = re.compile(r"^[A-Za-z][a-z]*(?:[A-Z][a-z]+)*(?:\.[A-Za-z][a-z]*(?:[A-Z][a-z]+)*)+$")

# Dotted vendor namespaces (Microsoft.Compute, io.k8s.api): names, not values (DECISIONS §9).
_DOTTED_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)+$")
FILE_EXTENSIONS = frozenset(
    "js mjs css map html htm json xml txt csv md pdf png jpg jpeg gif svg webp ico woff woff2 ttf eot "
    "zip gz tgz tar bz2 yaml yml wasm mp3 mp4 webm".split()
)
_WORD_PART = re.compile(r"^[A-Za-z][A-Za-z]*\d{0,2}[a-z]*$")


def is_dotted_name(segment: str) -> bool:
    """``Microsoft.Compute``, ``io.k8s.api``: a dotted name whose parts are words (not ``a1b2.c3d4``), with a
    capitalised part or three parts or more (a user name such as ``john.doe`` is not a namespace)."""
    if not _DOTTED_NAME.match(segment):
        return False
    parts = segment.split(".")
    if parts[-1].lower() in FILE_EXTENSIONS:
        return False  # jquery.min.js is a file name
    return all(_WORD_PART.match(p) for p in parts) and (len(parts) >= 3 or any(p[0].isupper() for p in parts))


def path_segments(path: str) -> list[str]:
    """The non-empty segments of a path (a query string is not part of it): ``/a/b?x`` -> ``[a, b]``."""
    return [s for s in path.split("?", 1)[0].split("/") if s]


def segment_has_parameter(segment: str) -> bool:
    """Whether a pattern segment holds a parameter (``{param1}``, ``{id}``, ``{param2}.json``)."""
    return PARAM.search(segment) is not None


def segment_is_parameter(segment: str) -> bool:
    """Whether a pattern segment is exactly one parameter (``{param1}``, not ``{param1}.json``)."""
    return PARAM.fullmatch(segment) is not None


@lru_cache(maxsize=65536)
def segment_is_value(segment: str) -> bool:
    """True when a concrete path segment is a value (an id, a token, an e-mail...), not a name."""
    if not segment:
        return False
    if _NUMERIC.match(segment) or _UUID.match(segment) or _EMAIL.match(segment) or _DATE.match(segment):
        return True
    has_digit = any(c.isdigit() for c in segment)
    if has_digit and _HEX.match(segment):
        return True
    if _ALNUM.match(segment):
        # Letters and digits mixed, 10+ characters; at least two digits so that
        # names such as "oauth2callback" stay literal.
        digits = sum(c.isdigit() for c in segment)
        if digits >= 2 and any(c.isalpha() for c in segment):
            return True
    if len(segment) >= 16 and _OPAQUE.match(segment) and not _WORDY.match(segment) and not is_dotted_name(segment) \
            and not _WORDY_DOTTED.match(segment):
        # A long token: random-looking letters (mixed case not in camel humps),
        # base64 padding, JWT dots... Word-like names stay literal.
        return True
    return False


# A short number as the first segment, followed by literal segments, is an API version (Twitter's
# /2/tweets/..., /1.1/statuses/...), not an id; alone (/3) or before values only, it is a value.
_ROOT_VERSION = re.compile(r"^\d{1,2}(?:\.\d{1,2})?$")


def path_parameterize(path: str) -> str:
    """The pattern of a concrete (normalised) path: value segments become ``{paramN}``, except a short
    number as the first segment followed by a literal segment, an API version: ``/2/users/42`` ->
    ``/2/users/{param1}``, but ``/3`` -> ``/{param1}``."""
    out: list[str] = []
    n = 0
    segments = path_segments(path)
    for position, segment in enumerate(segments):
        version = position == 0 and _ROOT_VERSION.match(segment) and any(
            not segment_is_value(s) for s in segments[1:])
        if segment_is_value(segment) and not version:
            n += 1
            out.append(f"{{param{n}}}")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def _numbered(segments: list[str], *, agent_spellings: bool) -> str:
    counter = 0

    def next_param(_match=None) -> str:
        nonlocal counter
        counter += 1
        return f"{{param{counter}}}"

    out = []
    for segment in segments:
        if agent_spellings and _AGENT_PARAM.match(segment):
            out.append(next_param())
        else:
            out.append(PARAM.sub(next_param, segment))
    return "/" + "/".join(out)


def pattern_normalise(path: str) -> str:
    """Renumber ``{…}`` parameters ``{param1}``, ``{param2}``… left to right (``/a/{id}`` -> ``/a/{param1}``)."""
    return _numbered(path_segments(path), agent_spellings=False)


def pattern_renumber(pattern: str) -> str:
    """An agent-written pattern in our spelling: ``/u/:id/<x>/{y}`` -> ``/u/{param1}/{param2}/{param3}``.

    The pattern is normalised like a concrete path first (:func:`path_normalize`).
    """
    return _numbered(path_segments(path_normalize(pattern)), agent_spellings=True)
