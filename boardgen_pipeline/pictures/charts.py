"""Pictures a designer reads at a glance (SPEC 9: each
check's metadata carries "a picture"): the inferability histogram of a row
with its target, the worst board with R0 and R∞ shaded, the per-row
p10/p50/p90 chart of the calibration report, and the difficulty curve of
each level across depth (3BV, 3BV per safe cell, subset steps,
share solvable by complete logic).

Plain functions returning PNG bytes (matplotlib, headless Agg backend), and
a helper that embeds a PNG in markdown as a data URI, which the Dagster UI
renders inside check metadata. Figures carry no timestamp, so the same data
gives the same bytes.
"""

from __future__ import annotations

import base64
import io
from functools import cache

from boardgen_pipeline.board.geometry import parse_layout
from boardgen_pipeline.board.solver import closures


@cache
def _pyplot():
    # matplotlib is imported when a picture is drawn, not with the module: most processes that
    # import the checks (a row's worker, the CLI) never draw one, and the import costs ~1 s, ~40 MB
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_PNG_META = {"Software": None}


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata=_PNG_META, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def inferability_histogram_png(values: list[float], target: float, title: str = "",
                               size: tuple[float, float] = (6, 3), below: int | None = None) -> bytes:
    """Histogram of a row's board inferabilities (on fog rows the lower of
    inferability and its core: ``batch.judged_inferability``), the target as
    a red line; ``below``: the verdict's count of boards below target."""
    fig, ax = _pyplot().subplots(figsize=size)
    lo = min([target, *values]) if values else target
    bins = [lo + (1.0 - lo) * i / 20 for i in range(21)] if lo < 1.0 else 20
    ax.hist(values, bins=bins, color="#4c78a8", edgecolor="white")
    ax.axvline(target, color="#d62728", linewidth=2, label=f"target {target:g}")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(5))  # readable tick labels at any size
    below = sum(1 for v in values if v < target) if below is None else below
    ax.set_xlabel("inferability |R∞| / |S| (fog rows: the lower of it and the core's)")
    ax.set_ylabel("boards")
    ax.set_title(title or f"{len(values)} boards, {below} below target")
    ax.legend(loc="upper left")
    return _png(fig)


def board_png(layout: str, spawn_side: int = 3, title: str = "", cell_inches: float = 0.35) -> bytes:
    """A board drawn as a designer sees it after the solver: mines dark, R0
    (free opening) light green, R∞ - R0 (proved) green, fog blue when opened
    and grey when not (marked f), closed safe cells white; numbers shown."""
    w, h, mines, fog = parse_layout(layout)
    c = closures(mines, w, h, spawn_side, fog=frozenset(fog))
    fogset = set(fog)
    grid = []
    for y in range(h):
        row = []
        for x in range(w):
            i = y * w + x
            row.append(0 if mines[i] else (5 if i in c.r_infinity else 4) if i in fogset else
                       1 if i in c.r0 else 2 if i in c.r_infinity else 3)
        grid.append(row)
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["#222222", "#c7e9c0", "#41ab5d", "#ffffff", "#bdbdbd", "#9ecae1"])
    side = 3 * cell_inches / 0.35  # the smallest side, in proportion to the cell size
    fig, ax = _pyplot().subplots(figsize=(max(side, w * cell_inches), max(side, h * cell_inches)))
    ax.imshow(grid, cmap=cmap, vmin=0, vmax=5, interpolation="nearest")
    for y in range(h):
        for x in range(w):
            i = y * w + x
            n = sum(mines[yy * w + xx] for yy in range(max(0, y - 1), min(h, y + 2))
                    for xx in range(max(0, x - 1), min(w, x + 2)) if (xx, yy) != (x, y))
            if i in fogset:
                ax.text(x, y, "f", ha="center", va="center", fontsize=7, color="#08306b")
            elif not mines[i] and n:
                ax.text(x, y, str(n), ha="center", va="center", fontsize=7)
    ax.set_xticks([])
    ax.set_yticks([])
    counts = f"R0 {len(c.r0)}, R∞ {len(c.r_infinity)} of {w * h - sum(mines)} safe"
    ax.set_title(f"{title}\n{counts}" if title else counts, fontsize=9)
    # A legend for every colour: a designer reads the board without the docs.
    from matplotlib.patches import Patch

    names = ["mine", "R0: free opening", "R∞: proved safe", "needs a guess", "fog, not proved", "fog, proved"]
    used = sorted({v for row in grid for v in row})
    ax.legend(handles=[Patch(facecolor=cmap.colors[v], edgecolor="#888888", label=names[v]) for v in used],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    return _png(fig)


def report_chart_png(rows: list[dict]) -> bytes:
    """Per row: the p10-p90 range as a bar, p50 as a dot, the target as a red
    tick; rows whose p10 is under target stand out in red."""
    labels = [f"({r['level_index']},{r['node_depth']})" for r in rows]
    fig, ax = _pyplot().subplots(figsize=(max(6, len(rows) * 0.5), 3.5))
    for i, r in enumerate(rows):
        bad = r["p10"] < r["inferability_target"] or not r.get("green", True)
        ax.plot([i, i], [r["p10"], r["p90"]], color="#d62728" if bad else "#4c78a8", linewidth=6,
                solid_capstyle="butt")
        ax.plot(i, r["p50"], "o", color="black", markersize=4)
        ax.plot([i - 0.3, i + 0.3], [r["inferability_target"]] * 2, color="#d62728", linewidth=2)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=45, fontsize=8)
    ax.set_ylabel("inferability")
    ax.set_ylim(min([0.8] + [r["p10"] for r in rows]) - 0.02, 1.01)
    ax.set_title("p10-p90 (bar), p50 (dot), target (red tick) per row")
    return _png(fig)


def png_markdown(png: bytes, alt: str = "chart") -> str:
    """Markdown showing a PNG inline (data URI)."""
    return f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"


REPORT_CHART = "calibration_report.png"


DIFFICULTY_CHART = "difficulty_curve.png"


# The panels of the difficulty curve: (report C column stem, axis label);
# a stem with _p10/_p50/_p90 columns is drawn as a band around its median.
DIFFICULTY_PANELS = (("bbbv", "3BV"), ("bbbv_per_safe", "3BV per safe cell"),
                     ("subset_steps", "subset steps"), ("solvable_full_logic_share", "share solvable by full logic"))


def difficulty_curve_png(rows: list[dict]) -> bytes:
    """One line of panels per level, depth on the x axis: the p10-p90 band
    and the median of 3BV, 3BV per safe cell and subset steps, and the share
    of boards complete logic solves. Rows without difficulty columns are
    left out."""
    rows = sorted((r for r in rows if r.get("bbbv_p50") is not None),
                  key=lambda r: (r["level_index"], r["node_depth"]))
    levels = sorted({r["level_index"] for r in rows}) or [None]
    fig, axes = _pyplot().subplots(len(levels), len(DIFFICULTY_PANELS), squeeze=False,
                             figsize=(3.2 * len(DIFFICULTY_PANELS), 2.4 * len(levels)))
    for li, level in enumerate(levels):
        mine = [r for r in rows if r["level_index"] == level]
        depth = [r["node_depth"] for r in mine]
        for pi, (stem, label) in enumerate(DIFFICULTY_PANELS):
            ax = axes[li][pi]
            if f"{stem}_p50" in (mine[0] if mine else {}):
                ax.fill_between(depth, [r[f"{stem}_p10"] for r in mine], [r[f"{stem}_p90"] for r in mine],
                                color="#9ecae1", label="p10-p90")
                ax.plot(depth, [r[f"{stem}_p50"] for r in mine], "o-", color="#08519c", label="p50")
            elif mine:
                ax.plot(depth, [r[stem] for r in mine], "o-", color="#08519c")
                ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"level {level}: {label}" if level is not None else "no difficulty figures", fontsize=9)
            ax.set_xlabel("node depth", fontsize=8)
            ax.set_xticks(depth)
            ax.tick_params(labelsize=7)
    return _png(fig)


def curve_level_png(level: int, rows: list[dict], panels) -> bytes:
    """One level of the difficulty curve (the curve export, docs/review.md):
    a panel per figure against depth, ``panels`` as ``(title, column, band)``
    with ``band`` the columns of its interval or its p10-p90 (None: none);
    the Boss row starred. Panels whose figure no row has are left out."""
    drawn = [p for p in panels if any(r.get(p[1]) is not None for r in rows)]
    columns = 4
    lines = max(1, -(-len(drawn) // columns))
    fig, axes = _pyplot().subplots(lines, columns, squeeze=False, figsize=(3.2 * columns, 2.4 * lines))
    depth = [r["node_depth"] for r in rows]
    for ax, (title, column, band) in zip(axes.flat, drawn):
        values = [r.get(column) for r in rows]
        if band is not None:
            low, high = [r.get(band[0]) for r in rows], [r.get(band[1]) for r in rows]
            if None not in low + high:
                ax.fill_between(depth, low, high, color="#9ecae1")
        ax.plot(depth, [float("nan") if v is None else v for v in values], "o-", color="#08519c")
        boss = [(r["node_depth"], r.get(column)) for r in rows if r.get("boss_row") and r.get(column) is not None]
        if boss:
            ax.plot(*zip(*boss), "*", color="#d62728", markersize=12, label="Boss row")
        ax.set_title(f"level {level}: {title}", fontsize=9)
        ax.set_xlabel("node depth", fontsize=8)
        ax.set_xticks(depth)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(drawn):]:
        ax.set_visible(False)
    fig.tight_layout()
    return _png(fig)


def _write_atomic(path, data: bytes):
    """A chart file, written as every warehouse file is (``files.atomic_write``)."""
    from pathlib import Path

    from boardgen_pipeline import files

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return files.atomic_write(path, data)


def write_report_chart(root, rows: list[dict]):
    """Write the per-row chart to ``<root>/calibration_report.png`` and return its path."""
    from pathlib import Path

    rows = sorted(rows, key=lambda r: (r["level_index"], r["node_depth"]))
    return _write_atomic(Path(root) / REPORT_CHART, report_chart_png(rows))


def write_difficulty_chart(root, rows: list[dict]):
    """Write the difficulty curves to ``<root>/difficulty_curve.png`` and return its path."""
    from pathlib import Path

    return _write_atomic(Path(root) / DIFFICULTY_CHART, difficulty_curve_png(rows))
