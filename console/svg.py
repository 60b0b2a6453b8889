"""Server-rendered SVG charts (no script, no CDN: they work offline and in any browser).

Pure functions of plain data; every text is escaped. Colours are the console's series colours
(``static``-free: inline attributes)."""
from __future__ import annotations

import math
from collections.abc import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

SERIES = ("#3b6ea8", "#e0912f", "#5a9a5a")
WIDTH, HEIGHT, PAD_LEFT, PAD_BOTTOM, PAD_TOP = 720, 200, 40, 34, 24


def _ceiling(value: int) -> int:
    """A round axis maximum at or above ``value`` (1, 2, 5 × 10^n)."""
    if value <= 0:
        return 1
    power = 10 ** int(math.floor(math.log10(value)))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power


def daily_bars_svg(rows: Sequence[tuple], *, labels: Sequence[str], title: str = "") -> SafeString:
    """Grouped bars per day: ``rows`` are (date, value of series 1, value of series 2, ...)."""
    count = max(1, len(rows))
    top = _ceiling(max((v for row in rows for v in row[1:]), default=0))
    plot_w, plot_h = WIDTH - PAD_LEFT - 8, HEIGHT - PAD_TOP - PAD_BOTTOM
    slot = plot_w / count
    bar = max(1.0, (slot - 2) / max(1, len(labels)))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
             f'class="console-chart" aria-label="{escape(title or " / ".join(labels))}">']
    for fraction in (0, 0.5, 1):
        y = PAD_TOP + plot_h * (1 - fraction)
        parts.append(f'<line x1="{PAD_LEFT}" x2="{WIDTH - 8}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                     f'<text x="{PAD_LEFT - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">'
                     f'{int(top * fraction)}</text>')
    for index, (day, *values) in enumerate(rows):
        x0 = PAD_LEFT + index * slot + 1
        for series, value in enumerate(values):
            h = plot_h * value / top
            parts.append(f'<rect x="{x0 + series * bar:.1f}" y="{PAD_TOP + plot_h - h:.1f}" width="{bar:.1f}" '
                         f'height="{h:.1f}" fill="{SERIES[series % len(SERIES)]}">'
                         f'<title>{escape(str(day))}: {value} {escape(labels[series])}</title></rect>')
        if index % 5 == 0 or index == len(rows) - 1:
            parts.append(f'<text x="{x0 + slot / 2:.1f}" y="{HEIGHT - PAD_BOTTOM + 14}" text-anchor="middle" '
                         f'font-size="10">{escape(day.strftime("%m-%d") if hasattr(day, "strftime") else day)}</text>')
    for series, label in enumerate(labels):
        x = PAD_LEFT + series * 140
        parts.append(f'<rect x="{x}" y="4" width="10" height="10" fill="{SERIES[series % len(SERIES)]}"/>'
                     f'<text x="{x + 14}" y="13" font-size="11">{escape(label)}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))


MAX_NODES = 60


def graph_drawn(graph: dict, limit: int = MAX_NODES) -> dict:
    """The part of a hosts graph that is drawn: every host when there are at most ``limit``, else the
    hosts of the edges first and then those with the most endpoints, with the edges between them."""
    hosts = graph["hosts"]
    if len(hosts) <= limit:
        return graph
    linked = {name for edge in graph["edges"] for name in (edge["srcHost"], edge["dstHost"])}
    ranked = sorted(hosts, key=lambda name: (name not in linked, -hosts[name]["numEndpoints"], name))[:limit]
    kept = set(ranked)
    return {"hosts": {name: hosts[name] for name in ranked},
            "edges": [e for e in graph["edges"] if e["srcHost"] in kept and e["dstHost"] in kept]}


def hosts_graph_svg(graph: dict, *, width: int = 1000, height: int = 600) -> SafeString:
    """GET /hosts-graph drawn: hosts on a circle (public ones filled), an arrow per edge with its
    endpoint count. ``graph`` is the API's answer (``hosts``: name → numEndpoints, isPublic;
    ``edges``: srcHost, dstHost, numEndpoints)."""
    names = sorted(graph["hosts"])
    # Room on both sides for the names (up to about 35 characters) of the hosts left and right.
    center, middle, radius = width / 2, height / 2, height / 2 - 50
    position = {}
    for index, name in enumerate(names):
        angle = 2 * math.pi * index / max(1, len(names)) - math.pi / 2
        position[name] = (center + radius * math.cos(angle), middle + radius * math.sin(angle))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             'class="console-graph" aria-label="hosts graph">'
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#777"/></marker></defs>']
    for edge in graph["edges"]:
        (x1, y1), (x2, y2) = position[edge["srcHost"]], position[edge["dstHost"]]
        length = math.hypot(x2 - x1, y2 - y1) or 1
        # Stop short of the target node's circle.
        ex, ey = x2 - (x2 - x1) * 14 / length, y2 - (y2 - y1) * 14 / length
        parts.append(f'<g class="edge"><line x1="{x1:.1f}" y1="{y1:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" '
                     f'stroke="#777" marker-end="url(#arrow)"/><text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2:.1f}" '
                     f'font-size="10" fill="#555">{edge["numEndpoints"]}</text>'
                     f'<title>{escape(edge["srcHost"])} → {escape(edge["dstHost"])}: '
                     f'{edge["numEndpoints"]} endpoint(s)</title></g>')
    for name in names:
        x, y = position[name]
        host = graph["hosts"][name]
        fill = SERIES[0] if host["isPublic"] else "#fff"
        anchor = "start" if x >= center else "end"
        dx = 16 if x >= center else -16
        parts.append(f'<g class="node"><circle cx="{x:.1f}" cy="{y:.1f}" r="12" fill="{fill}" stroke="{SERIES[0]}" '
                     f'stroke-width="2"/><text x="{x + dx:.1f}" y="{y + 4:.1f}" text-anchor="{anchor}" '
                     f'font-size="12">{escape(name)} ({host["numEndpoints"]})</text></g>')
    parts.append("</svg>")
    return mark_safe("".join(parts))
