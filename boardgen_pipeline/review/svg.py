"""Small line charts as inline SVG text, for the self-contained HTML pages of
the curve export and the calibration diff (docs/review.md "Outputs").

A page of a 600-row table draws a few hundred panels: SVG written as text
costs microseconds a panel where a matplotlib figure costs a tenth of a
second (the diff's HTML must render in at most twice the diff's own time),
and it scales with the page and carries no font or image file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

WIDTH, HEIGHT, PAD = 220, 120, 26


@dataclass
class Series:
    label: str
    color: str
    points: list[tuple[float, float | None]]  # (x, y); y None: no value there
    dashed: bool = False
    band: list[tuple[float, float, float]] = field(default_factory=list)  # (x, low, high)


def _finite(v) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def panel(title: str, series: list[Series], marks: list[tuple[float, float]] = (), width: int = WIDTH,
          height: int = HEIGHT) -> str:
    """One panel: the series against x, their bands shaded, ``marks`` circled
    in red (flagged points), the y range in the corner."""
    xs = [x for s in series for x, y in s.points if _finite(y)]
    ys = [y for s in series for _, y in s.points if _finite(y)] + [v for s in series for _, lo, hi in s.band
                                                                  for v in (lo, hi) if _finite(v)]
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

    def px(x):
        return PAD + (x - x0) / (x1 - x0) * (width - PAD - 6)

    def py(y):
        return height - 14 - (y - y0) / (y1 - y0) * (height - 34)

    out.append(f'<text x="{width - 4}" y="12" font-size="8" text-anchor="end" fill="#666" '
               f'font-family="sans-serif">{y0:.3g}..{y1:.3g}</text>')
    for x in sorted(set(xs)):
        out.append(f'<text x="{px(x):.1f}" y="{height - 3}" font-size="8" text-anchor="middle" fill="#666" '
                   f'font-family="sans-serif">{x:g}</text>')
    for s in series:
        band = [(x, lo, hi) for x, lo, hi in s.band if _finite(lo) and _finite(hi)]
        if band:
            edge = [f"{px(x):.1f},{py(hi):.1f}" for x, _, hi in band] + [f"{px(x):.1f},{py(lo):.1f}"
                                                                         for x, lo, _ in reversed(band)]
            out.append(f'<polygon points="{" ".join(edge)}" fill="{s.color}" fill-opacity="0.15" stroke="none"/>')
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points if _finite(y))
        dash = ' stroke-dasharray="4 3"' if s.dashed else ""
        out.append(f'<polyline points="{line}" fill="none" stroke="{s.color}" stroke-width="1.5"{dash}>'
                   f'<title>{escape(s.label)}</title></polyline>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2" fill="{s.color}"/>' for x, y in s.points
                if _finite(y)]
    out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="5" fill="none" stroke="#d62728" stroke-width="2"/>'
            for x, y in marks if _finite(y)]
    out.append("</svg>")
    return "".join(out)


def page(title: str, body: list[str]) -> str:
    """A self-contained HTML page: inline style, inline SVG, no external file."""
    style = ("body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;font-size:13px}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
             ".flag{color:#d62728;font-weight:bold}.worse{background:#fde0e0}.better{background:#e0f5e0}"
             ".level{display:flex;flex-wrap:wrap;gap:4px}h2{margin-top:1.2em}")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")
