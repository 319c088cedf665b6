"""A failing row's two pictures drawn to fit the panel that shows them
(each picture whole on the check page; the failures in front).

The Dagster UI (1.13) shows the latest evaluation's description of a check in
a panel 260 px high (``overflow: hidden``; a "Show more" button covers its
bottom when the text is longer). The table-wide check's description holds
the verdict, the failing row's fix and these two pictures, so the pictures
have a fixed pixel size, small enough for the text above them, narrow enough
to sit side by side in the panel of a 1280 px wide window (about 700 px):

- :func:`histogram_thumbnail`: the row's inferability histogram, the target
  as a red line;
- :func:`board_thumbnail`: the worst board in the colours of
  ``charts.board_png`` (R0, R∞, guesses, fog, mines), its legend beside it;
  the cell numbers only where a cell is large enough to read them (the
  full-size picture with numbers is in the row's own check).

Each PNG is exactly the size asked for (no tight bounding box, which grows
with the labels), and the same data gives the same bytes.
"""

from __future__ import annotations

import io

from boardgen_pipeline.board.geometry import numbers_of, parse_layout
from boardgen_pipeline.pictures.drawings import DEDUCED, MINE, R0_CELL, board_regions

HEIGHT_PX = 120  # both pictures: the panel's 260 px leave this much under ~7 lines of text
HISTOGRAM_WIDTH_PX = 280
GRID_WIDTH_PX = 220  # the widest board grid; with its legend the two pictures take ~650 px
LEGEND_PX = 150
NUMBERS_FROM_PX = 11  # a cell smaller than this carries no number: the digits would overlap
DPI = 100
FONT = 6.5  # points

# The kinds of cell, in the colours and words of charts.board_png.
KINDS = (("#222222", "mine"), ("#c7e9c0", "R0: free opening"), ("#41ab5d", "R∞: proved safe"),
         ("#ffffff", "needs a guess"), ("#bdbdbd", "fog, not proved"), ("#9ecae1", "fog, proved"))
_KIND_OF_REGION = {MINE: 0, R0_CELL: 1, DEDUCED: 2}  # anything else: safe, needs a guess (3)


def _figure(width_px: int, height_px: int):
    from boardgen_pipeline.pictures.charts import _pyplot

    return _pyplot().figure(figsize=(width_px / DPI, height_px / DPI), dpi=DPI)


def _png(fig) -> bytes:
    from boardgen_pipeline.pictures.charts import _pyplot

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})  # no bbox: the size asked for
    _pyplot().close(fig)
    return buf.getvalue()


def histogram_thumbnail(values: list[float], target: float, width_px: int = HISTOGRAM_WIDTH_PX,
                        height_px: int = HEIGHT_PX, below: int | None = None) -> bytes:
    """The row's inferabilities in 20 bins from the lowest (or the target) to
    1, the target a red line; ``width_px`` x ``height_px`` exactly."""
    from matplotlib.ticker import MaxNLocator

    fig = _figure(width_px, height_px)
    fig.set_layout_engine("constrained", w_pad=2 / DPI, h_pad=2 / DPI)  # labels inside the picture
    ax = fig.add_subplot()
    lo = min([target, *values]) if values else target
    bins = [lo + (1.0 - lo) * i / 20 for i in range(21)] if lo < 1.0 else 20
    ax.hist(values, bins=bins, color="#4c78a8", edgecolor="white")
    ax.axvline(target, color="#d62728", linewidth=1.5)
    below = sum(1 for v in values if v < target) if below is None else below  # the verdict's count, given
    ax.set_title(f"{len(values)} boards, {below} below target {target:g} (red)", fontsize=FONT + 0.5, pad=2)
    ax.set_xlabel("inferability |R∞| / |S|", fontsize=FONT, labelpad=1)
    ax.set_ylabel("boards", fontsize=FONT, labelpad=1)
    ax.xaxis.set_major_locator(MaxNLocator(4))
    ax.yaxis.set_major_locator(MaxNLocator(3, integer=True))
    ax.tick_params(labelsize=FONT, length=2, pad=1)
    return _png(fig)


def board_kinds(layout: str, spawn_side: int) -> tuple[list[list[int]], dict]:
    """Each cell's kind (an index of :data:`KINDS`), from the reference
    solver's closures: a fog cell is proved or not, whatever else it is; and
    the counts of ``drawings.board_regions``."""
    width, _, _, fog = parse_layout(layout)
    regions, counts = board_regions(layout, spawn_side)
    fog = set(fog)
    kinds = []
    for y, row in enumerate(regions):
        line = []
        for x, region in enumerate(row):
            if y * width + x in fog and region != MINE:
                line.append(5 if region in (R0_CELL, DEDUCED) else 4)
            else:
                line.append(_KIND_OF_REGION.get(region, 3))
        kinds.append(line)
    return kinds, counts


def board_thumbnail(layout: str, spawn_side: int = 3, title: str = "", height_px: int = HEIGHT_PX,
                    grid_width_px: int = GRID_WIDTH_PX) -> bytes:
    """The board's cells shaded by kind, square, whole pixels each, in at most
    ``grid_width_px`` x ``height_px``; the legend (with ``title`` and the
    R0/R∞ counts) to its right. ``height_px`` high, the grid's width plus
    :data:`LEGEND_PX` wide."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    w, h, mines, fog = parse_layout(layout)
    kinds, counts = board_kinds(layout, spawn_side)
    cell = max(1, min(height_px // h, grid_width_px // w))
    grid_w, grid_h = cell * w, cell * h
    fig = _figure(grid_w + LEGEND_PX, height_px)
    fig_w = grid_w + LEGEND_PX
    ax = fig.add_axes((0, 1 - grid_h / height_px, grid_w / fig_w, grid_h / height_px))
    ax.imshow(kinds, cmap=ListedColormap([c for c, _ in KINDS]), vmin=0, vmax=len(KINDS) - 1,
              interpolation="nearest", aspect="auto")
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_linewidth(0.5)
    if cell >= NUMBERS_FROM_PX:
        numbers, fogset = numbers_of(mines, w, h), set(fog)
        for i in range(w * h):
            shown = "f" if i in fogset else (str(numbers[i]) if not mines[i] and numbers[i] else "")
            if shown:
                ax.text(i % w, i // w, shown, ha="center", va="center", fontsize=cell * 0.6 * 72 / DPI)
    used = sorted({k for row in kinds for k in row})
    heading = f"{title}\n" if title else ""
    fig.legend(handles=[Patch(facecolor=KINDS[k][0], edgecolor="#888888", label=KINDS[k][1]) for k in used],
               loc="upper left", bbox_to_anchor=((grid_w + 6) / fig_w, 1.0), fontsize=FONT, frameon=False,
               title=f"{heading}R0 {counts['r0']}, R∞ {counts['r_infinity']} of {counts['safe']} safe",
               title_fontsize=FONT, alignment="left", handlelength=1.2, handleheight=0.9, borderaxespad=0,
               borderpad=0.2, labelspacing=0.25)
    return _png(fig)
