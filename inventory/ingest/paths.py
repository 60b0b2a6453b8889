"""Hosts and paths: normalisation, parameterisation and pattern matching (DECISIONS §4, §9).

Pure functions, no database: the pipeline and the inventory routes
(update-paths) share them.

* ``host_normalize`` strips scheme, user info, port and trailing dot, lower-cases.
* ``path_normalize`` gives a clean concrete path: leading ``/``, no query or
  fragment, no empty segments, no trailing slash.
* ``path_parameterize`` turns a concrete path into a pattern: a segment becomes
  ``{paramN}`` (numbered left to right) when it is numeric, a UUID, hex of 8+
  characters with a digit, a letters-and-digits token of 10+ characters, an
  e-mail, a date or a long opaque token. ``v1``, ``api``, camelCase and ordinary
  words stay literal.
* ``PatternMatcher`` picks the most specific existing pattern for a concrete path.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache

PARAM_RE = re.compile(r"\{[^{}/]*\}")
_AGENT_PARAM_RE = re.compile(r"^(?::[A-Za-z_][A-Za-z0-9_]*|<[^<>/]+>|\{[^{}/]*\})$")

# ---------------------------------------------------------------- segments

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


@lru_cache(maxsize=65536)
def segment_is_parameter(segment: str) -> bool:
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
    if len(segment) >= 16 and _OPAQUE.match(segment) and not _WORDY.match(segment):
        # A long token: random-looking letters (mixed case not in camel humps),
        # base64 padding, JWT dots... Word-like names stay literal.
        return True
    return False


# ---------------------------------------------------------------- hosts

def host_normalize(raw: str | None) -> str:
    """``http://User@API.Example.com:8080/x`` -> ``api.example.com``; IPv6 keeps its brackets off."""
    host = (raw or "").strip()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in host:
        host = host.rsplit("@", 1)[1]
    if host.startswith("["):  # [::1]:8080
        end = host.find("]")
        host = host[1:end] if end > 0 else host[1:]
    elif host.count(":") == 1:  # name:port (a bare IPv6 literal has several colons)
        host = host.split(":", 1)[0]
    host = host.rstrip(".").lower()
    return host[:255]


def host_scheme(raw: str | None) -> str | None:
    """The scheme written in an agent's ``url.host`` (``http://h:5056`` -> ``http``), if any."""
    host = (raw or "").strip().lower()
    if host.startswith("https://"):
        return "https"
    if host.startswith("http://"):
        return "http"
    return None


_PRIVATE_SUFFIXES = (".local", ".internal", ".lan", ".svc", ".cluster.local", ".localhost", ".localdomain",
                     ".home.arpa", ".intranet", ".corp")


def host_name_is_public(name: str) -> bool:
    """DECISIONS §4 name heuristics, used while no destination address was seen for the host."""
    if not name or name == "localhost":
        return False
    try:
        return ipaddress.ip_address(name).is_global
    except ValueError:
        pass
    if "." not in name:
        return False
    return not name.endswith(_PRIVATE_SUFFIXES)


@lru_cache(maxsize=65536)
def _address_normalize(text: str) -> str | None:
    text = text.strip().strip("[]").split("%", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped:
        address = address.ipv4_mapped
    return str(address)


def address_normalize(raw: object) -> str | None:
    """An IP address as text (zone and brackets dropped), or ``None`` when ``raw`` is not one."""
    if not isinstance(raw, str) or not raw:
        return None
    return _address_normalize(raw)


@lru_cache(maxsize=65536)
def address_is_global(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_global
    except ValueError:
        return False


# ---------------------------------------------------------------- paths

def path_normalize(raw: str | None) -> str:
    """A concrete path: leading ``/``, no query/fragment, no empty segments, no trailing ``/``."""
    path = (raw or "").strip()
    if "://" in path:  # a full URL in place of a path
        path = "/" + path.split("://", 1)[1].partition("/")[2]
    path = path.split("?", 1)[0].split("#", 1)[0]
    segments = [s for s in path.split("/") if s]
    return ("/" + "/".join(segments))[:2048]


def path_segments(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def path_parameterize(path: str) -> str:
    """The pattern of a concrete (normalised) path: parameter-like segments become ``{paramN}``."""
    out: list[str] = []
    n = 0
    for segment in path_segments(path):
        if segment_is_parameter(segment):
            n += 1
            out.append(f"{{param{n}}}")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def pattern_renumber(pattern: str) -> str:
    """An agent- or operator-written pattern in our spelling: ``/u/:id/{x}`` -> ``/u/{param1}/{param2}``."""
    counter = 0

    def next_param(_match=None) -> str:
        nonlocal counter
        counter += 1
        return f"{{param{counter}}}"

    out: list[str] = []
    for segment in path_segments(path_normalize(pattern)):
        if _AGENT_PARAM_RE.match(segment):
            out.append(next_param())
        else:
            out.append(PARAM_RE.sub(next_param, segment))
    return "/" + "/".join(out)


def pattern_regex(pattern: str) -> str:
    """The regex matching concrete paths of a pattern (stored in ``Endpoint.path_regex``)."""
    parts = []
    for segment in path_segments(pattern):
        pieces = PARAM_RE.split(segment)
        parts.append("[^/]+".join(re.escape(p) for p in pieces))
    return "^/" + "/".join(parts) + "$"


def pattern_shape(pattern: str) -> tuple[int, int]:
    """(number of segments, number of literal segments) of a pattern: the matching pre-filter and order."""
    segments = path_segments(pattern)
    literal = sum(1 for s in segments if not PARAM_RE.search(s))
    return len(segments), literal


@lru_cache(maxsize=16384)
def _compiled(regex: str) -> re.Pattern[str] | None:
    try:
        return re.compile(regex)
    except re.error:
        return None


@dataclass
class Candidate:
    """An endpoint as the matcher sees it."""

    uuid: object
    path: str
    path_regex: str
    num_segments: int
    num_literal_segments: int
    user_set_path: bool = False


class PatternMatcher:
    """Matches concrete paths against the patterns of one (host, method).

    Order: an endpoint whose pattern equals the path (literal), then the path's
    own parameterised pattern, then the other patterns most specific first (most
    literal segments, then fewest parameters, then the pattern text). A pattern
    parameter only absorbs a segment that is itself parameter-like, so
    ``/users/me`` is not swallowed by ``/users/{param1}``; endpoints whose
    pattern an operator wrote (``user_set_path``) take any segment.
    """

    def __init__(self, candidates: list[Candidate] = ()):  # type: ignore[assignment]
        self._exact: dict[str, Candidate] = {}
        self._by_len: dict[int, list[Candidate]] = {}
        for c in candidates:
            self.add(c)

    def add(self, candidate: Candidate) -> None:
        self._exact[candidate.path] = candidate
        bucket = self._by_len.setdefault(candidate.num_segments, [])
        bucket.append(candidate)
        bucket.sort(key=lambda c: (-c.num_literal_segments, c.path))

    def match(self, path: str, own_pattern: str | None = None) -> Candidate | None:
        exact = self._exact.get(path)
        if exact is not None:
            return exact
        if own_pattern is not None:
            own = self._exact.get(own_pattern)
            if own is not None:
                return own
        segments = path_segments(path)
        for c in self._by_len.get(len(segments), ()):
            if c.num_literal_segments == c.num_segments:
                continue  # literal patterns only match exactly (done above)
            regex = _compiled(c.path_regex)
            if regex is None or not regex.match(path):
                continue
            if c.user_set_path or _parameters_are_values(c.path, segments):
                return c
        return None


def _parameters_are_values(pattern: str, segments: list[str]) -> bool:
    for pattern_segment, segment in zip(path_segments(pattern), segments):
        if PARAM_RE.fullmatch(pattern_segment) and not segment_is_parameter(segment):
            return False
    return True
