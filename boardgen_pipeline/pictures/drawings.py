"""Pictures for the calibration checks (SPEC 9 "a picture (markdown board
drawing or histogram)").

Plain functions, no Dagster: they take metrics records (SPEC 2.6) and return
markdown text that the Dagster UI renders in a check's metadata, and that a
terminal prints as is.

- :func:`draw_board`: one board with R0 and R∞ marked, recomputed from its
  layout by the reference solver (``solver.closures``), so the picture is
  independent of the compiled generator that produced the record.
- :func:`inferability_histogram`: the row's inferability distribution (the
  lower of inferability and inferability_core, what assertion A judges) with
  the target marked. Bin edges are aligned on the target and membership is decided
  on the exact integer pair ``(revealed, safe_count)``, so a board exactly on
  the target always counts as meeting it (SPEC 2.3: integers, never floats).
"""

from __future__ import annotations

from fractions import Fraction

from boardgen_pipeline.board.geometry import numbers_of, parse_layout
from boardgen_pipeline.board.solver import closures

MINE, R0_CELL, DEDUCED, STUCK, FOG = "*", "o", "+", "?", "f"


LEGEND = (
    f"`{MINE}` mine, `{R0_CELL}` R0 (spawn + free flood), `{DEDUCED}` R∞ - R0 (deduced by the solver), "
    f"`{STUCK}` safe but outside R∞ (the player must guess); numbers: `{FOG}` fog cell (no number shown)"
)


def board_regions(layout: str, spawn_side: int) -> tuple[list[str], dict]:
    """The region grid of a layout (one string per row) and its counts."""
    width, height, mines, fog = parse_layout(layout)
    c = closures(mines, width, height, spawn_side, fog=fog)
    rows = []
    for y in range(height):
        line = []
        for x in range(width):
            cell = y * width + x
            if mines[cell]:
                line.append(MINE)
            elif cell in c.r0:
                line.append(R0_CELL)
            elif cell in c.r_infinity:
                line.append(DEDUCED)
            else:
                line.append(STUCK)
        rows.append("".join(line))
    safe = sum(1 for m in mines if not m)
    counts = {"r0": len(c.r0), "r_infinity": len(c.r_infinity), "safe": safe, "mines": sum(mines)}
    return rows, counts


def number_grid(layout: str) -> list[str]:
    """The numbers a player would see (``*`` mine, ``f`` fog: a fog cell shows
    no number), one string per row."""
    width, height, mines, fog = parse_layout(layout)
    nums = numbers_of(mines, width, height)
    fog = set(fog)

    def cell(c):
        return MINE if mines[c] else (FOG if c in fog else str(nums[c]))

    return ["".join(cell(y * width + x) for x in range(width)) for y in range(height)]


def draw_board(record: dict, spawn_side: int, title: str = "worst board") -> str:
    """Markdown: a header line with the record's figures, the region grid
    (R0 / R∞ marked) and the number grid side by side in one code block."""
    regions, counts = board_regions(record["layout"], spawn_side)
    numbers = number_grid(record["layout"])
    head = (
        f"**{title}**: scope `{record['scope']}` (row {record.get('row_key', '?')}, master seed "
        f"{record.get('master_seed', 0)}), exit `{record['exit']}`, attempts {record['attempts_used']}, "
        f"inferability {counts['r_infinity']}/{counts['safe']} = {counts['r_infinity'] / max(1, counts['safe']):.3f} "
        f"(target {record.get('inferability_target', '?')}), R0 {counts['r0']}"
    )
    gap = "   "
    body = [f"{'regions'.ljust(len(regions[0]))}{gap}numbers"]
    body += [f"{r}{gap}{n}" for r, n in zip(regions, numbers)]
    return "\n".join([head, "", "```", *body, "```", "", LEGEND, "", f"reproduce: `{reproduce_command(record)}`"])


def reproduce_command(record: dict) -> str:
    """The command that rebuilds a record's board (``boardgen generate``)."""
    seed = record.get("master_seed", 0)
    return (f"boardgen generate --level {record.get('level_index', 'L')} --depth {record.get('node_depth', 'D')} "
            f"--seed {record['scope']}" + (f" --master-seed {seed}" if seed else ""))


def _bins(records: list[dict], t: Fraction, step: Fraction) -> list[int]:
    """Each board's bin ``k``, ``t + k*step <= v < t + (k+1)*step``, of the
    value assertion A judges: inferability, or inferability_core where it is
    lower (fog rows, seed 001 F5), ``v = a / b`` exactly: ``floor((a/b - t)
    / step)`` in integers (a Fraction a board cost more than the
    rest of the row's checks)."""
    tn, td, sn, sd = t.numerator, t.denominator, step.numerator, step.denominator
    out = []
    for r in records:
        a, b = r["revealed"], max(1, r["safe_count"])
        core, safe_core = r.get("revealed_core"), r.get("safe_core")
        if core is not None and safe_core and core * b < a * safe_core:
            a, b = core, safe_core
        out.append(((a * td - tn * b) * sd) // (b * td * sn))
    return out


def inferability_histogram(records: list[dict], target: float, width: float = 0.025, bar: int = 40) -> str:
    """Markdown: a text histogram of inferability, bins of ``width`` aligned on
    ``target``, a marker line at the target, bins below it flagged ``!``."""
    step = Fraction(width).limit_denominator(1000)
    t = Fraction(target).limit_denominator(10**6)
    if not records:
        return "_no boards_"
    # bins from the lowest board's (or the target's) up to the bin holding 1
    bins = _bins(records, t, step)
    tn, td, sn, sd = t.numerator, t.denominator, step.numerator, step.denominator
    k_lo = min(min(bins), 0)
    k_hi = max(((td - tn) * sd) // (td * sn), k_lo)
    counts = {k: 0 for k in range(k_lo, k_hi + 1)}
    for k in bins:
        counts[min(k, k_hi)] += 1
    peak = max(counts.values())
    target_text = f"{tn / td:.3f}"
    lines = ["inferability      boards"]
    for k in sorted(counts):
        # the edges t + k*step and t + (k+1)*step, as the quotient of two integers (the float of the fraction)
        a, b = (tn * sd + k * sn * td) / (td * sd), (tn * sd + (k + 1) * sn * td) / (td * sd)
        if k == 0:
            lines.append(f"{'-' * 14} target {target_text} {'-' * 14}")
        n = counts[k]
        hashes = "#" * (round(bar * n / peak) if n else 0)
        if n and not hashes:
            hashes = "#"
        hi = "1.000]" if k == k_hi else f"{b:.3f})"
        flag = " !" if k < 0 and n else ""
        lines.append(f"[{a:.3f}, {hi} {hashes:<{bar}} {n}{flag}")
    below = sum(n for k, n in counts.items() if k < 0)
    summary = f"{len(bins)} boards, {below} below target {target_text} (`!`)"
    return "\n".join(["```", *lines, "```", summary])


ROWS_SHOWN = 60  # rows a table drawing lists (the rest: `boardgen sql`)


def rows_table(table, shown: int = ROWS_SHOWN) -> str:
    """Markdown: the validated rows of a ``board_gen`` table with their
    fingerprints, the first ``shown`` of them (a picture, not the table)."""
    lines = [
        "| row | board | density | target | attempts | cap | shave | type | boss | fingerprint |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = table.keys()
    for key in keys[:shown]:
        r = table.rows[key]
        lines.append(
            f"| {r.key_text} | {r.board_width}x{r.board_height} | {r.mine_density} | {r.inferability_target} | "
            f"{r.max_gen_attempts} | {r.r0_max_cap} | {r.shave_ring_radius} | {r.board_type} | "
            f"{'yes' if table.is_boss_row(key) else ''} | `{table.row_fingerprint(key)}` |"
        )
    if len(keys) > shown:
        lines.append(f"\n{len(keys) - shown} more rows: `boardgen sql \"select * from calibration_report\"`")
    return "\n".join(lines)
