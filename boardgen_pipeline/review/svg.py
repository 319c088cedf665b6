"""Small line charts as inline SVG text, for the self-contained HTML pages of
the curve export and the calibration diff (docs/review.md "Outputs").

A page of a 600-row table draws a few hundred panels: SVG written as text
costs microseconds a panel where a matplotlib figure costs a tenth of a
second (the diff's HTML must render in at most twice the diff's own time),
and it scales with the page and carries no font or image file.

What a panel shows, and what each mark means (the pages' legend,
:data:`LEGEND`):

- a y axis with its ticks and its unit (``share``, ``boards``, ...);
- each series' uncertainty band with area: a polygon over consecutive depths
  that have one, a bar :data:`BAR` px wide at a depth alone, and never
  thinner than :data:`MIN_BAND` px (a band of two points at one depth, as a
  diff's only modified row gave, was a polygon of zero area: drawn, unseen);
- the target line where the figure has one (the row's inferability target),
  dashed dark red;
- flagged points circled in red; the Boss row as a purple diamond, a mark of
  its own (it was the same red circle as a flagged point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

WIDTH, HEIGHT = 240, 130
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 20, 16  # the plot area's margins: the y axis and its unit on the left
BAR, MIN_BAND = 8.0, 2.0  # px: a band at a depth alone is a bar this wide; no band thinner than MIN_BAND
FLAGGED, BOSS, TARGET = "#d62728", "#6a3d9a", "#8b1a1a"
LEGEND = (f'<span style="color:{FLAGGED}">&#9675; red circle</span>: flagged; '
          f'<span style="color:{BOSS}">&#9671; purple diamond</span>: the Boss row; '
          f'<span style="color:{TARGET}">- - dark red dashes</span>: the target; shaded: the band (interval)')


@dataclass
class Series:
    label: str
    color: str
    points: list[tuple[float, float | None]]  # (x, y); y None: no value there
    dashed: bool = False
    band: list[tuple[float, float, float]] = field(default_factory=list)  # (x, low, high)


def _finite(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _runs(band: list[tuple[float, float, float]], xs: list[float]) -> list[list[tuple[float, float, float]]]:
    """The band cut where a depth of the panel has no band value: each run
    covers consecutive depths of ``xs``."""
    index = {x: i for i, x in enumerate(xs)}
    runs: list[list] = []
    for point in sorted(band):
        if runs and index[point[0]] == index[runs[-1][-1][0]] + 1:
            runs[-1].append(point)
        else:
            runs.append([point])
    return runs


def _tick(v: float) -> str:
    return f"{v:.3g}"


def panel(title: str, series: list[Series], marks: list[tuple[float, float]] = (), width: int = WIDTH,
          height: int = HEIGHT, unit: str = "", targets: list[tuple[float, float | None]] = (),
          boss: list[tuple[float, float | None]] = ()) -> str:
    """One panel (module docstring): the series against x with their bands,
    ``targets`` as a dashed line, ``marks`` (flagged points) circled in red,
    ``boss`` (the Boss row's points) as purple diamonds, a y axis in ``unit``."""
    targets = [(x, y) for x, y in targets if _finite(y)]
    xs = sorted({x for s in series for x, y in s.points if _finite(y)})
    ys = ([y for s in series for _, y in s.points if _finite(y)]
          + [v for s in series for _, lo, hi in s.band for v in (lo, hi) if _finite(v)] + [y for _, y in targets])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img"><title>{escape(title)}</title>',
           f'<text x="4" y="12" font-size="10" font-family="sans-serif">{escape(title)}</text>']
    if not xs:
        out.append('<text x="4" y="40" font-size="9" fill="#888" font-family="sans-serif">no values</text></svg>')
        return "".join(out)
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if y1 == y0:
        y0, y1 = y0 - (abs(y0) * 0.05 or 0.5), y1 + (abs(y1) * 0.05 or 0.5)
    bottom = height - BOTTOM

    def px(x):
        return LEFT + (x - x0) / (x1 - x0) * (width - LEFT - RIGHT)

    def py(y):
        return bottom - (y - y0) / (y1 - y0) * (bottom - TOP)

    # the y axis: its line, three ticks, its unit along it
    out.append(f'<line class="y-axis" x1="{LEFT - 2}" y1="{TOP}" x2="{LEFT - 2}" y2="{bottom}" stroke="#999"/>')
    for v in (y0, (y0 + y1) / 2, y1):
        out.append(f'<text x="{LEFT - 4}" y="{py(v) + 3:.1f}" font-size="8" text-anchor="end" fill="#666" '
                   f'font-family="sans-serif">{_tick(v)}</text>')
    if unit:
        out.append(f'<text class="y-unit" x="9" y="{(TOP + bottom) / 2:.1f}" font-size="8" fill="#444" '
                   f'text-anchor="middle" font-family="sans-serif" transform="rotate(-90 9 {(TOP + bottom) / 2:.1f})">'
                   f'{escape(unit)}</text>')
    for x in xs:
        out.append(f'<text x="{px(x):.1f}" y="{height - 3}" font-size="8" text-anchor="middle" fill="#666" '
                   f'font-family="sans-serif">{x:g}</text>')
    for s in series:
        band = [(x, lo, hi) for x, lo, hi in s.band if _finite(lo) and _finite(hi) and x in xs]
        for run in _runs(band, xs):
            out.append(_band(run, px, py, s.color))
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points if _finite(y))
        dash = ' stroke-dasharray="4 3"' if s.dashed else ""
        out.append(f'<polyline points="{line}" fill="none" stroke="{s.color}" stroke-width="1.5"{dash}>'
                   f'<title>{escape(s.label)}</title></polyline>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2" fill="{s.color}"/>' for x, y in s.points
                if _finite(y)]
    if targets:
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in sorted(targets))
        out.append(f'<polyline class="target" points="{line}" fill="none" stroke="{TARGET}" stroke-width="1" '
                   f'stroke-dasharray="2 2"><title>target</title></polyline>')
    out += [f'<circle class="flagged" cx="{px(x):.1f}" cy="{py(y):.1f}" r="5" fill="none" stroke="{FLAGGED}" '
            f'stroke-width="2"><title>flagged</title></circle>' for x, y in marks if _finite(y)]
    for x, y in boss:
        if _finite(y):
            cx, cy = px(x), py(y)
            out.append(f'<polygon class="boss" points="{cx:.1f},{cy - 6:.1f} {cx + 6:.1f},{cy:.1f} {cx:.1f},'
                       f'{cy + 6:.1f} {cx - 6:.1f},{cy:.1f}" fill="none" stroke="{BOSS}" stroke-width="1.5">'
                       f"<title>Boss row</title></polygon>")
    out.append("</svg>")
    return "".join(out)


def _band(run: list[tuple[float, float, float]], px, py, color: str) -> str:
    """One run of a band as a shape with area: a polygon over two depths or
    more, a bar at a depth alone; at least ``MIN_BAND`` px from low to high."""
    edges = []
    for x, lo, hi in run:
        top, low = py(hi), py(lo)
        if low - top < MIN_BAND:
            mid = (top + low) / 2
            top, low = mid - MIN_BAND / 2, mid + MIN_BAND / 2
        edges.append((px(x), top, low))
    if len(edges) == 1:
        x, top, low = edges[0]
        return (f'<rect class="band" x="{x - BAR / 2:.1f}" y="{top:.1f}" width="{BAR:.1f}" height="{low - top:.1f}" '
                f'fill="{color}" fill-opacity="0.2" stroke="none"/>')
    points = [f"{x:.1f},{top:.1f}" for x, top, _ in edges] + [f"{x:.1f},{low:.1f}" for x, _, low in reversed(edges)]
    return f'<polygon class="band" points="{" ".join(points)}" fill="{color}" fill-opacity="0.2" stroke="none"/>'


def page(title: str, body: list[str]) -> str:
    """A self-contained HTML page: inline style, inline SVG, no external file."""
    style = ("body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
             ".flag{color:#d62728;font-weight:bold}.worse{background:#fde0e0}.better{background:#e0f5e0}"
             ".level{display:flex;flex-wrap:wrap;gap:4px}h2{margin-top:1.2em}")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
