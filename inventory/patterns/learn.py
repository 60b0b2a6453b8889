"""Parameterisation learned from cardinality (DECISIONS §9): which literal endpoints are one parameterised one.

Pure: the caller (``inventory.learning``) gives the endpoints of one host and method as
:class:`Known` items (pattern, the request/response key set, whether an operator wrote
the pattern) and merges what :func:`patterns_learn` answers.

The rule, for one segment position among patterns that are otherwise identical (same
segment count, same prefix and suffix; parameters compare alike):

* *Standouts* never become values: ordinary dictionary words, whatever their count and
  shapes (``details``, ``history``, ``settings``, ``cat``, ``tree``: ``words.is_dictionary_word``,
  inflections included) and compounds of two or three of them (``configmaps``,
  ``words.is_compound_word``), reserved API words the dictionary lacks (``admin``, ``api``, ``oauth``…,
  :data:`RESERVED`), versions (``v2``, ``v1beta1``), names starting with ``_`` (``_debug``) and
  dotted vendor namespaces (``Microsoft.Compute``). Values that are not dictionary words
  (usernames such as ``name1`` or ``dmitri``, slugs with digits or several joined words, codes)
  can be learned.
* Among id-like values (``/payment/id1`` … ``id30``: when at least 75% of the candidates carry a
  digit), a name without one (``/payment/alice``) stays literal; otherwise every candidate is a value.
* Of the candidates, the values whose key sets agree (Jaccard similarity ≥ 0.7 with the most
  agreed-with key set) become one parameter once there are 3 of them; values without
  a key set (no JSON body seen) join them; a value whose key set disagrees stays its own
  endpoint (``/users/me`` answering another shape, ``/v1/customers`` beside ``/v1/charges``).
  A sibling already parameterised at that position (``/api/{param1}`` from a UUID) counts as
  one agreeing value when its key set agrees.
* Without 3 agreeing key sets, 10 distinct values are enough when no key set contradicts
  them (metadata-only traffic, file names, bodies that are not JSON).

The first segment is never a learned value (``/users``, ``/orders`` are resources). Positions
are tried left to right and the whole is repeated until nothing changes, so a
family varying in two positions (``/repos/{owner}/{repo}``) is learned once each
position has enough evidence on its own; when no single position has, two positions
varying together are learned when each has 3 distinct values the rule accepts
(``/namespaces/{namespace}/pods/{name}``). Operator-set patterns are never merged nor
generalised: they are left out of the groups.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from .segments import is_dotted_name, path_segments, pattern_normalise, segment_has_parameter, segment_is_value
from .words import is_compound_word, is_dictionary_word

MIN_AGREEING = 3
MIN_DISTINCT = 10
AGREEMENT = 0.7
ID_MAJORITY = 0.75
MAX_ROUNDS = 8
MAX_CENTRES = 20

NAMES = "names"  # a learned position whose values were names (usernames, slugs): any non-standout segment
WORDS = "words"  # what NAMES was called before dictionary words became standouts; read like NAMES
IDS = "ids"  # a learned position whose values were id-like: only id-like segments are values

# Words that name a view, an action or a state of a collection rather than one of its items, many of
# them dictionary words already; the others (``admin``, ``api``, ``oauth``…) are not in the dictionary.
RESERVED = frozenset("""
me my mine self current all any none new latest recent popular trending featured top
search find query filter count counts total list lookup batch bulk export import upload download
sync stats statistics summary overview history audit logs events activity feed timeline
settings config configuration preferences profile status health healthz livez readyz ping info
metadata meta schema spec version versions openapi swagger docs
login logout signin signout signup register auth oauth token tokens refresh verify callback
password reset confirm activate deactivate invite invitations
pending active inactive archived deleted draft drafts published unpublished scheduled open closed
cancelled canceled completed complete failed succeeded shipped delivered approved rejected expired
upcoming past today tomorrow yesterday first last next previous prev random
public private internal debug
admin admins api apis oauth oauth2 openid saml sso mfa otp totp 2fa jwks wellknown graphql webhook webhooks
signup signin logout login oidc ws websocket rpc jsonrpc healthcheck env config configs
""".split())
_VERSION = re.compile(r"^v\d+(?:[._]\d+)*(?:(?:alpha|beta|rc)\d*)?$", re.IGNORECASE)


def is_standout(segment: str) -> bool:
    """A segment that names something whatever its neighbours: never a learned value."""
    return (
        segment.lower() in RESERVED
        or segment.startswith("_")
        or bool(_VERSION.match(segment))
        or is_dotted_name(segment)
        or is_dictionary_word(segment)
        or is_compound_word(segment)
    )


def is_id_like(segment: str) -> bool:
    """A segment that looks like an identifier: it carries a digit, or is a value by DECISIONS §9's shapes."""
    return any(c.isdigit() for c in segment) or segment_is_value(segment)


def segment_absorbs(kind: str | None, segment: str) -> bool:
    """Whether a learned parameter of this kind takes a concrete segment in ingestion."""
    if kind in (NAMES, WORDS):
        return not is_standout(segment) or segment_is_value(segment)
    if kind == IDS:
        return is_id_like(segment) and not is_standout(segment)
    return segment_is_value(segment)


@dataclass(frozen=True)
class Known:
    """An endpoint as learning sees it. ``shape``: its request and response key set, ``None`` when no
    body or query field was seen; ``fixed``: an operator wrote its pattern."""

    key: Hashable
    path: str
    shape: frozenset | None = None
    fixed: bool = False
    kinds: tuple = ()  # (position, kind) pairs of positions learned before


@dataclass
class Learned:
    """A learned pattern and the endpoints it gathers (their keys; the first existing one with that pattern,
    if any, is ``target``)."""

    path: str
    members: list = field(default_factory=list)
    target: Hashable | None = None
    kinds: dict = field(default_factory=dict)  # position -> NAMES or IDS


@dataclass
class _Item:
    segments: list[str]
    shape: frozenset | None
    keys: list
    kinds: dict


def _similar(a: frozenset, b: frozenset) -> bool:
    if not a and not b:
        return True
    return len(a & b) / len(a | b) >= AGREEMENT


def values_choose(values: dict[str, frozenset | None], anchor: frozenset | None = None,
                  anchored: bool = False) -> tuple[set[str], str] | None:
    """The values of one position that become a parameter, and the position's kind; ``None`` for none.
    ``anchored``: a sibling is already a parameter at that position (``anchor``: its key set), which
    counts as one more agreeing value."""
    candidates = {v: s for v, s in values.items() if not is_standout(v)}
    if len(candidates) + anchored < MIN_AGREEING:
        return None
    id_like = [v for v in candidates if is_id_like(v)]
    kind = NAMES
    if len(id_like) >= ID_MAJORITY * len(candidates):
        kind = IDS
        candidates = {v: candidates[v] for v in id_like}
    known = {v: s for v, s in candidates.items() if s}
    agreeing: set[str] = set()
    centre: frozenset | None = None
    # Candidate centres: the most frequent key sets (bounded, so that thousands of distinct
    # key sets cost a linear pass each rather than a quadratic comparison).
    for shape, _ in Counter(known.values()).most_common(MAX_CENTRES):
        group = {v for v, s in known.items() if _similar(s, shape)}
        if len(group) > len(agreeing):
            agreeing, centre = group, shape
    unknown = {v for v, s in candidates.items() if not s}
    # The parameterised sibling: one more value, unless its key set contradicts the agreeing ones.
    extra = int(anchored and (not anchor or centre is None or _similar(anchor, centre)))
    if len(agreeing) + extra >= MIN_AGREEING or len(agreeing | unknown) + extra >= MIN_DISTINCT:
        if agreeing or unknown:
            return agreeing | unknown, kind
    return None


def patterns_learn(endpoints: Sequence[Known]) -> list[Learned]:
    """The parameterised patterns learned from these endpoints (one host and method), each with the
    endpoints it gathers; endpoints nothing was learned for are not mentioned."""
    items = [
        _Item(path_segments(e.path), e.shape, [e.key], dict(e.kinds))
        for e in endpoints if not e.fixed
    ]
    originals = {e.key: pattern_normalise(e.path) for e in endpoints}
    width = max((len(i.segments) for i in items), default=0)
    for _ in range(MAX_ROUNDS):
        changed = False
        for position in range(width):
            items, learned_here = _learn_position(items, position)
            changed |= learned_here
        if not changed:
            for first in range(1, width):
                for second in range(first + 1, width):
                    items, learned_here = _learn_pair(items, first, second)
                    changed |= learned_here
        if not changed:
            break
    results = []
    for item in items:
        path = pattern_normalise("/" + "/".join(item.segments))
        if len(item.keys) > 1:
            target = next((k for k in item.keys if originals[k] == path), None)
            results.append(Learned(path=path, members=list(item.keys), target=target, kinds=dict(item.kinds)))
    return results


def _context(item: _Item, position: int) -> tuple:
    return tuple(None if i == position else "{}" if segment_has_parameter(s) else s
                 for i, s in enumerate(item.segments))


def _learn_position(items: list[_Item], position: int) -> tuple[list[_Item], bool]:
    groups: dict[tuple, list[_Item]] = defaultdict(list)
    rest = []
    for item in items:
        if len(item.segments) > position:
            groups[_context(item, position)].append(item)
        else:
            rest.append(item)
    changed = False
    for context, members in groups.items():
        if position == 0:
            rest.extend(members)  # top-level names are resources (/users, /orders), never values
            continue
        literal = [m for m in members if not segment_has_parameter(m.segments[position])]
        anchor = next((m for m in members if segment_has_parameter(m.segments[position])), None)
        by_value = {m.segments[position]: m for m in literal}
        choice = values_choose({v: m.shape for v, m in by_value.items()}, anchor.shape if anchor else None,
                               anchor is not None) if len(by_value) + (anchor is not None) >= MIN_AGREEING else None
        chosen, kind = choice or (set(), anchor.kinds.get(position) if anchor else None)
        if anchor is not None and anchor.kinds.get(position):
            # Late arrivals (analysed after the family was learned): what ingestion would now give it.
            chosen |= {v for v in by_value if segment_absorbs(anchor.kinds[position], v)}
        absorbed = [m for m in literal if m.segments[position] in chosen]
        if not absorbed:
            rest.extend(members)
            continue
        # An endpoint already parameterised at this position (same context) receives them.
        merged = _merge([*([anchor] if anchor else []), *absorbed], position, kind)
        taken = {id(m) for m in absorbed} | {id(anchor)}
        rest.extend(m for m in members if id(m) not in taken)
        rest.append(merged)
        changed = True
    return rest, changed


def _learn_pair(items: list[_Item], first: int, second: int) -> tuple[list[_Item], bool]:
    """Two positions varying together (``/namespaces/{ns}/pods/{name}`` where each namespace shows one or two
    pods): both are learned when each has at least 3 distinct values the single-position rule accepts."""
    groups: dict[tuple, list[_Item]] = defaultdict(list)
    rest = []
    for item in items:
        literal = len(item.segments) > second and not (
            segment_has_parameter(item.segments[first]) or segment_has_parameter(item.segments[second]))
        if literal:
            key = tuple(None if i in (first, second) else "{}" if segment_has_parameter(s) else s
                        for i, s in enumerate(item.segments))
            groups[key].append(item)
        else:
            rest.append(item)
    changed = False
    for members in groups.values():
        choices = []
        for position in (first, second):
            values = {}
            for m in members:
                values.setdefault(m.segments[position], m.shape)
            choices.append(values_choose(values) if len(values) >= MIN_AGREEING else None)
        if None in choices:
            rest.extend(members)
            continue
        (chosen_first, kind_first), (chosen_second, kind_second) = choices
        absorbed = [m for m in members if m.segments[first] in chosen_first and m.segments[second] in chosen_second]
        if len({m.segments[first] for m in absorbed}) < MIN_AGREEING or \
                len({m.segments[second] for m in absorbed}) < MIN_AGREEING:
            rest.extend(members)
            continue
        merged = _merge(absorbed, first, kind_first)
        merged.segments[second] = "{}"
        merged.kinds[second] = kind_second
        taken = {id(m) for m in absorbed}
        rest.extend(m for m in members if id(m) not in taken)
        rest.append(merged)
        changed = True
    return rest, changed


def _merge(members: list[_Item], position: int, kind: str) -> _Item:
    segments = list(members[0].segments)
    segments[position] = "{}"
    shapes = Counter(m.shape for m in members if m.shape)  # few distinct shapes: compare those
    shape = max(shapes, key=lambda s: sum(n for t, n in shapes.items() if _similar(s, t))) if shapes else None
    kinds = {}
    for m in members:
        kinds.update(m.kinds)
    kinds[position] = kind
    keys = [k for m in members for k in m.keys]
    return _Item(segments, shape, keys, kinds)
