"""The calibration diff for the people and machines that review it (seed 001
P2 "C3 全行审计"; docs/review.md "Outputs" and "JSON schema").

- :func:`terminal`: a table that fits 80 columns;
- :func:`markdown`: a pull-request comment of at most :data:`COMMENT_LIMIT`
  characters: the verdict changes and the flagged rows first, the rest in a
  collapsed block, and past the limit a sentence that says so and points to
  the full report;
- :func:`html`: one self-contained page, each level's curve, base against
  head, the flagged points circled;
- :func:`json_text`: one object (the schema is ``diff.CalibrationDiff.to_json``).

Verdict changes always come before any statistic: they decide the exit
code. The overlays (``overlay_diff``) and the strata (``strata_diff``) follow
the rows in every format, each figure marked paired or exact.
"""

from __future__ import annotations

import json
import math
from html import escape

from boardgen_pipeline.review import figures as F
from boardgen_pipeline.review import svg
from boardgen_pipeline.review.diff import ADDED, ASSERTIONS, MODIFIED, REMOVED, WARNINGS, CalibrationDiff, RowDiff
from boardgen_pipeline.review.diff import VERDICT_WORDS as diff_words
from boardgen_pipeline.review.overlay_diff import OverlayDiff
from boardgen_pipeline.review.paired import BEYOND, FLAG_RULE, MAY_BE_WITHIN, FigureDiff
from boardgen_pipeline.review.strata_diff import LevelStrata
from boardgen_pipeline.tables import board_gen
from boardgen_pipeline.words import count

COMMENT_LIMIT = 65_536  # GitHub's largest issue or pull-request comment
WIDTH = 80


def number(x) -> str:
    """A figure's value in a few characters."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.3f}"


def signed(x) -> str:
    text = number(x)
    return text if text.startswith("-") or text == "-" else "+" + text


def q_text(q) -> str:
    if q is None:
        return "-"
    return "<0.001" if q < 0.001 else f"{q:.3f}"


def q_of(f: FigureDiff) -> str:
    """A figure's q-value as the tables show it ("untested" when no test
    could be computed: never a p of 1)."""
    return "untested" if f.untested else q_text(f.q)


def p_of(f: FigureDiff) -> str:
    return "untested" if f.untested else q_text(f.p)


def mark(f: FigureDiff) -> str:
    """A flag's mark (``FLAG_LEGEND``): ``*`` the interval lies beyond the
    margin, ``*?`` it reaches inside it (or there is none)."""
    if not f.flagged:
        return ""
    return " *" if f.beyond_margin else " *?"


# What the marks say, beside every flag (docs/review.md "The flag rule").
FLAG_LEGEND = [f"* {FLAG_RULE}; {BEYOND}",
               f"*? flagged, but {MAY_BE_WITHIN} (the categories have no interval)",
               "untested: no test could be computed (no board to compare), not 'no evidence'"]


def interval(ci) -> str:
    return "-" if ci is None else f"[{number(ci[0])}, {number(ci[1])}]"


key_text = board_gen.key_text  # the diff's tables name rows as every message does


def headline(diff: CalibrationDiff) -> list[str]:
    c, s = diff.counts(), diff.settings
    stop = ", until decided" if s.until_decided else ""
    return [f"calibration diff: {diff.base.label} -> {diff.head.label}",
            f"{s.samples} boards a row on the same scopes (paired), master seed {s.master_seed}, "
            f"FDR {s.alpha:g} (Benjamini-Hochberg){stop}",
            f"rows: {c[MODIFIED]} modified, {c[ADDED]} added, {c[REMOVED]} removed, {c['identical']} identical; "
            f"{count(c['flagged_figures'], 'flagged figure')} in {count(c['flagged_rows'], 'row')}"
            + (f"; overlays of {count(c['overlay_rows'], 'row')} compared, {c['flagged_overlay_figures']} flagged"
               if c["overlay_rows"] else "")
            + (f"; strata of {count(c['strata_levels'], 'level')} compared, {c['flagged_strata_figures']} flagged"
               if c["strata_levels"] else "")]


def shown(row: RowDiff) -> list[FigureDiff]:
    """The figures worth a line: flagged, moved, or untested."""
    return tested(row.figures)


def f4_text(verdicts: dict | None) -> str:
    """A version's F4 verdict in a few words."""
    if not verdicts or all(verdicts.get(a) is None for a in ASSERTIONS if a not in WARNINGS):
        return "F4 not evaluated"
    failing = [a for a in ASSERTIONS if verdicts.get(a) is False and a not in WARNINGS]
    warned = [a for a in WARNINGS if verdicts.get(a) is False]
    said = "F4 passes" if not failing else f"F4 FAILS ({', '.join(failing)})"
    return said + "".join(f", {a} warns" for a in warned)


def exit_moves(f: FigureDiff, short: bool = False) -> str:
    """The exits whose share moved, e.g. ``passed -0.108, least_bad +0.050``."""
    said = {"passed": "pass", "best_legal": "best", "least_bad": "least"} if short else {}
    return ", ".join(f"{said.get(k, k)} {signed(v)}" for k, v in f.delta.items() if v) or "none"


def _row_title(row: RowDiff) -> str:
    if row.state == MODIFIED:
        pairs = "" if row.identical_boards is None else f"; {row.identical_boards:.0%} of pairs the same board"
        return (f"{key_text(row.key)} modified: {', '.join(row.changes)}; {f4_text(row.head_verdicts)}{pairs}; "
                f"{row.samples} boards")
    if row.state == ADDED:
        return f"{key_text(row.key)} added: {f4_text(row.head_verdicts)} on {row.samples} boards"
    return f"{key_text(row.key)} removed"


def _wrap(text: str, indent: str = "  ") -> list[str]:
    import textwrap

    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False) or [""]


def terminal(diff: CalibrationDiff) -> str:
    """The diff as text that fits 80 columns."""
    lines = [w for line in headline(diff) for w in _wrap(line)]
    changes = diff.verdict_changes
    lines.append("F4 verdict changes:" + (" none" if not changes else ""))
    lines += [f"  {v.text()}{'   WORSE' if v.worse else '   worse (a warning)' if v.worsened else ''}"
              for v in changes]
    for t in diff.tables:
        lines.append(f"table {t['table']}: {t['change']}")
    for note in diff.notes:
        lines += _wrap(f"note: {note}")
    head = f"  {'figure':<22}{'base':>8}{'head':>8}{'delta':>9}  {'interval':<19}{'q':>8}"
    for row in sorted(diff.rows, key=lambda r: (not r.flagged, r.key)):
        if row.state not in (MODIFIED, ADDED, REMOVED):
            lines += [w for note in row.notes for w in _wrap(f"{key_text(row.key)} identical: {note}")]
            continue
        lines.append("")
        lines += _wrap(_row_title(row))
        lines += [w for note in row.notes for w in _wrap(f"  note: {note}", "    ")]
        if row.state != MODIFIED:
            continue
        figures = shown(row)
        if not figures:
            lines.append("  every figure equal: no board's figures moved")
            continue
        lines.append(head)
        lines += [_figure_line(f, f.name) for f in figures]
    lines += _terminal_overlays(diff, head)
    lines += _terminal_strata(diff, head)
    lines.append("")
    lines += [w for line in FLAG_LEGEND for w in _wrap(line)]
    lines.append("(docs/review.md \"The flag rule\")")
    return "\n".join(lines) + "\n"


def label(name: str) -> str:
    """A figure's name within its section (the section says overlay or strata)."""
    return name.removeprefix("overlay_").removeprefix("strata_").replace("solvable_full_logic", "full_logic")


def _figure_line(f: FigureDiff, name: str | None = None) -> str:
    """One figure's line of the terminal table (``name``: as shown; its
    label within an overlay or strata section by default)."""
    name = (label(f.name) if name is None else name) + mark(f)
    if f.kind == F.CATEGORIES:
        return f"  {name:<22}{exit_moves(f, short=True):<44}{q_of(f):>8}"
    return f"  {name:<22}{number(f.base):>8}{number(f.head):>8}{signed(f.delta):>9}  {interval(f.ci):<19}{q_of(f):>8}"


def overlay_title(o: OverlayDiff) -> str:
    return f"{key_text(o.key)} overlays ({o.state} row) on {o.samples} boards, paired: {', '.join(o.causes)}"


def _terminal_overlays(diff: CalibrationDiff, head: str) -> list[str]:
    lines = []
    for o in sorted(diff.overlays, key=lambda o: (not o.flagged, o.key)):
        lines.append("")
        lines += _wrap(overlay_title(o))
        lines += [w for note in o.notes for w in _wrap(f"  note: {note}", "    ")]
        figures = tested(o.figures)
        if o.figures and not figures:
            lines.append("  every overlay figure equal: no board's overlay moved")
        elif figures:
            lines.append(head)
            lines += [_figure_line(f) for f in figures]
    return lines


def tested(figures: dict[str, FigureDiff]) -> list[FigureDiff]:
    """The figures worth a line: flagged, tested on a difference (not all
    equal), or untested (a test that could not be computed is said)."""
    return [f for f in figures.values() if f.flagged or f.untested or (f.p is not None and f.size > 0)]


def moved_exact(figures: dict[str, dict]) -> list[tuple[str, dict]]:
    """The exact (not paired) figures whose value moved or exists on one side only."""
    return [(name, v) for name, v in figures.items() if (v["base"] is None) != (v["head"] is None)
            or (v["delta"] is not None and v["delta"] != 0)]


def strata_title(lv: LevelStrata) -> str:
    if lv.adventures:
        pairing = f"{lv.adventures} adventures' drawn maps paired by adventure"
    else:
        pairing = "nothing paired"
    return f"level {lv.level} strata (pool {lv.state}): {pairing}; every row at HEAD's figures"


def _terminal_strata(diff: CalibrationDiff, head: str) -> list[str]:
    lines = []
    for note in diff.strata.notes:
        lines += _wrap(f"strata note: {note}")
    for lv in diff.strata.levels:
        lines.append("")
        lines += _wrap(strata_title(lv))
        lines += [w for note in lv.notes for w in _wrap(f"  note: {note}", "    ")]
        moved = tested(lv.figures)
        if moved:
            lines.append(head)
            lines += [_figure_line(f) for f in moved]
        elif lv.figures:
            lines.append("  every drawn map's figures equal")
        for title, figures in (("pool figure", lv.pool), ("first adventure", lv.first_adventure)):
            exact = moved_exact(figures)
            if exact:
                lines.append(f"  {title} (exact, paired: false):")
                lines += [f"  {label(n):<22}{number(v['base']):>8}{number(v['head']):>8}{signed(v['delta']):>9}"
                          for n, v in exact]
        for t in lv.templates:
            moves = ", ".join(f"{label(n)} {number(v['base'])}->{number(v['head'])}" for n, v in moved_exact(t["figures"]))
            lines += _wrap(f"  template {t['template_id']} {t['change']} (exact, paired: false)"
                           + (f": {moves}" if moves else ""), "    ")
    return lines


# --- markdown ---------------------------------------------------------------------------------------------------

MD_HEAD = ["| row | figure | base | head | Δ | interval | q | boards same |", "|---|---|---|---|---|---|---|---|"]


def _md_figure_line(where: str, f: FigureDiff, same: str = "") -> str:
    """One figure's line of the markdown table (:data:`MD_HEAD`'s columns)."""
    name = (f"**{f.name}** {'⚑' if f.beyond_margin else '⚑?'}") if f.flagged else f.name
    if f.kind == F.CATEGORIES:
        return f"| {where} | {name} | | | {exit_moves(f)} | | {q_of(f)} | {same} |"
    return (f"| {where} | {name} | {number(f.base)} | {number(f.head)} | {signed(f.delta)} | "
            f"{interval(f.ci)} | {q_of(f)} | {same} |")


def _md_section_lines(where: str, figures: list[FigureDiff]) -> list[str]:
    """Figure lines of an overlay or strata comparison, in the rows' table's columns."""
    return [_md_figure_line(where, f) for f in figures]


def _md_exact(where: str, figures: dict[str, dict]) -> list[str]:
    return [f"| {where} | {name} | {number(v['base'])} | {number(v['head'])} | {signed(v['delta'])} | "
            "exact, paired: false | - | |" for name, v in moved_exact(figures)]


def _md_overlays_and_strata(diff: CalibrationDiff) -> list[list[str]]:
    """The overlays' and the strata's sections (none when nothing was compared)."""
    out = []
    if diff.overlays:
        lines = ["", f"#### Overlays ({count(len(diff.overlays), 'row')}, paired on the same boards)", ""]
        for o in diff.overlays:
            lines += [f"- {overlay_title(o)}"] + [f"  - note: {n}" for n in o.notes]
        moved = [line for o in diff.overlays for line in _md_section_lines(f"{key_text(o.key)}", tested(o.figures))]
        lines += ["", *MD_HEAD, *moved] if moved else ["", "No overlay figure moved."]
        out.append(lines + [""])
    if diff.strata.compared:
        lines = ["", f"#### Strata (node-map pools; {diff.strata.adventures} adventures, row figures HEAD's)", ""]
        lines += [f"- note: {n}" for n in diff.strata.notes]
        table = []
        for lv in diff.strata.levels:
            lines += [f"- {strata_title(lv)}"] + [f"  - note: {n}" for n in lv.notes]
            where = f"level {lv.level}"
            table += _md_section_lines(f"{where} drawn", tested(lv.figures))
            table += _md_exact(f"{where} pool", lv.pool) + _md_exact(f"{where} first adventure", lv.first_adventure)
            for t in lv.templates:
                table += _md_exact(f"{where} `{t['template_id']}` ({t['change']})", t["figures"])
        lines += ["", *MD_HEAD, *table] if table else ["", "No stratified figure moved."]
        out.append(lines + [""])
    return out


def _md_figures(rows: list[tuple[RowDiff, FigureDiff]]) -> list[str]:
    out = list(MD_HEAD)
    for row, f in rows:
        same = "-" if row.identical_boards is None else f"{row.identical_boards:.0%}"
        out.append(_md_figure_line(key_text(row.key), f, same))
    return out


def _md_row(row: RowDiff) -> list[str]:
    lines = [f"**{_row_title(row)}**", ""]
    lines += [f"- {note}" for note in row.notes]
    if row.state == MODIFIED:
        figures = shown(row)
        lines += _md_figures([(row, f) for f in figures]) if figures else ["every figure equal: no board's figures moved"]
    lines.append("")
    return lines


LEGEND = ["", "<sub>⚑ flagged: q ≤ FDR level (a change, not noise) and |Δ| > the figure's margin (the estimate "
          "beyond it), its interval beyond the margin too: the change exceeds it. ⚑? flagged, but its interval "
          "reaches inside the margin (the categories have none): the change may be smaller than the margin. "
          "untested: no test could be computed. Intervals paired (bootstrap over boards); a figure's p is never "
          "below its interval's own, so a flagged figure's interval leaves out zero. docs/review.md, "
          "\"The flag rule\"</sub>", ""]
RESERVE = 400  # characters kept for the closing tag and the sentence that says where the comment stops


def markdown(diff: CalibrationDiff, full_report: str = "", limit: int = COMMENT_LIMIT) -> str:
    """The pull-request comment (module docstring). ``full_report``: where the
    whole report is (a URL, an artifact, a command), named past the limit.

    The comment is made of blocks in the order a reviewer needs them (the
    counts, each verdict change, each flagged change, then each changed row
    in the collapsed block); it takes them while they fit and, at the first
    that does not, stops with a sentence saying what is left out and where
    the full report is."""
    c = diff.counts()
    head = [f"### Calibration diff: `{diff.base.label}` → `{diff.head.label}`", "", f"{headline(diff)[1]}.", "",
            f"**{c[MODIFIED]} modified**, {c[ADDED]} added, {c[REMOVED]} removed, {c['identical']} identical · "
            f"**{count(c['flagged_figures'], 'flagged figure')} in {count(c['flagged_rows'], 'row')}** · "
            f"F4 verdicts worse: **{c['verdicts_worse']}**", "", "#### F4 verdict changes"]
    blocks: list[tuple[str, list[str]]] = [("", head)]
    changes = diff.verdict_changes
    said = {**VERDICT_WORDS, False: f"**{VERDICT_WORDS[False]}**"}
    if changes:
        blocks.append(("", ["| row | assertion | base | head | |", "|---|---|---|---|---|"]))
        blocks += [("verdict change", [f"| {key_text(v.key)} | {v.assertion} | {said[v.base]} | {said[v.head]} | "
                                       f"{v.direction} |"]) for v in changes]
    else:
        blocks.append(("", ["None."]))
    flagged = [(r, f) for r in diff.flagged_rows for f in r.figures.values() if f.flagged]
    blocks.append(("", ["", "#### Flagged changes"]))
    others = [line for o in diff.overlays for line in _md_section_lines(f"{key_text(o.key)} overlays",
                                                                         [f for f in o.figures.values() if f.flagged])]
    others += [line for lv in diff.strata.levels for line in _md_section_lines(
        f"level {lv.level} strata", [f for f in lv.figures.values() if f.flagged])]
    if flagged or others:
        table = _md_figures(flagged) if flagged else MD_HEAD
        blocks.append(("", table[:2]))
        blocks += [("flagged change", [line]) for line in table[2:] + others]
    else:
        blocks.append(("", ["None: no change is both significant and estimated beyond its margin."]))
    blocks.append(("", ["", *(f"- table `{t['table']}`: {t['change']}" for t in diff.tables),
                       *(f"- note: {n}" for n in diff.notes), ""]))
    blocks += [("", lines) for lines in _md_overlays_and_strata(diff)]
    listed = [r for r in diff.rows if r.state in (MODIFIED, ADDED, REMOVED) or r.notes]
    blocks.append(("", [f"<details><summary>Every changed row ({len(listed)})</summary>", ""]))
    blocks += [("row", _md_row(row) if row.state != "identical" else
                [f"{key_text(row.key)} identical: {n}" for n in row.notes] + [""]) for row in listed]
    where = f": {full_report}" if full_report else " (`boardgen diff ... --format html` or `--format json`)"
    room = limit - len("\n".join(LEGEND)) - RESERVE
    out, used = [], 0
    for i, (_, lines) in enumerate(blocks):
        size = len("\n".join(lines)) + 1
        if i and used + size > room:  # the head always: it says what the diff is
            left = [k for k, _ in blocks[i:] if k]
            counts = ", ".join(count(left.count(k), k) for k in dict.fromkeys(left))
            out.append(f"\n**The comment stops here: {counts or 'the rest'} more would exceed GitHub's {limit:,}-character "
                       f"limit. The full report{where}.**\n")
            break
        out += lines
        used += size
    opened = any(line.startswith("<details>") for line in out)
    return "\n".join(out + (["</details>"] if opened else []) + LEGEND)


# --- json -------------------------------------------------------------------------------------------------------

def plain(value):
    """``value`` with NaN as null (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def json_text(diff: CalibrationDiff) -> str:
    return json.dumps(plain(diff.to_json()), indent=1, allow_nan=False) + "\n"


# --- html -------------------------------------------------------------------------------------------------------

# Panels of a level's curve: the figure, and the report column that holds it for a row not recomputed
# (``sources.report_columns(root, REPORT_COLUMNS)`` reads them).
CURVE_PANELS = (("win_rate", "win_rate"), ("inferability_p10", "p10"), ("inferability_p50", "p50"),
                ("mean_survival", "mean_survival"), ("mean_guesses", "mean_guesses"), ("no_guess_share", "no_guess_share"),
                ("retry_rate", "retry_rate"), ("mean_attempts", "mean_attempts"), ("bbbv_p50", "bbbv_p50"))
REPORT_COLUMNS = (*(column for _, column in CURVE_PANELS), "row_fingerprint")
# each panel's y unit, and the panels a row's inferability target is drawn on
UNITS = {"win_rate": "share of boards", "inferability_p10": "share of safe cells",
         "inferability_p50": "share of safe cells", "mean_survival": "probability", "mean_guesses": "guesses a board",
         "no_guess_share": "share of boards", "retry_rate": "share of boards", "mean_attempts": "attempts a board",
         "bbbv_p50": "3BV (clicks)"}
TARGETED = ("inferability_p10", "inferability_p50")
VERDICT_WORDS = {**diff_words, None: "(new row)"}  # an added row has no base verdict


def verdict_cells(v) -> str:
    """One F4 verdict change as the HTML table's cells, in the words the
    terminal and the markdown use: ``pass``, ``FAIL``, ``pass -> FAIL (worse)``
    (``VerdictChange.direction``: a warning's, E, says it moves no exit code)."""
    change = f"{VERDICT_WORDS[v.base]} -> {VERDICT_WORDS[v.head]} ({v.direction})"
    return (f"<td>{key_text(v.key)}</td><td>{escape(v.assertion)}</td><td>{VERDICT_WORDS[v.base]}</td>"
            f"<td>{VERDICT_WORDS[v.head]}</td><td>{escape(change)}</td>")
BASE_COLOR, HEAD_COLOR = "#7f7f7f", "#1f77b4"


def _values(diff: CalibrationDiff, reports: dict) -> dict:
    """``{(key, figure): (base, head, flagged, ci)}`` for every row the page
    draws: the diff's own for modified and added rows; for the rows it did
    not recompute, the stored report where it is of that very version (an
    identical row's on both sides, a removed row's on the base side)."""
    out = {}
    for row in diff.rows:
        if row.state in (MODIFIED, ADDED):
            for name, f in row.figures.items():
                if f.kind != F.CATEGORIES:
                    out[(row.key, name)] = (f.base, f.head, f.flagged, f.ci)
            continue
        # a row not recomputed: its stored report, where it is of this very version
        version = (diff.head if row.state == "identical" else diff.base).rows[row.key]
        report = reports.get(row.key)
        if report is None or report.get("row_fingerprint") != version.fingerprint:
            continue
        for name, column in CURVE_PANELS:
            out[(row.key, name)] = (report.get(column), report.get(column) if row.state == "identical" else None,
                                    False, None)
    return out


def html(diff: CalibrationDiff, reports: dict | None = None) -> str:
    """The self-contained page (module docstring); ``reports``: the
    warehouse's stored reports by row key, which draw the rows the diff did
    not recompute."""
    values = _values(diff, reports or {})
    body = [f"<h1>{escape(headline(diff)[0])}</h1>"] + [f"<p>{escape(line)}</p>" for line in headline(diff)[1:]]
    changes = diff.verdict_changes
    body.append("<h2>F4 verdict changes</h2>")
    if changes:
        body.append("<table><tr><th>row</th><th>assertion</th><th>base</th><th>head</th><th>change</th></tr>")
        body += [f'<tr class="{"worse" if v.worsened else "better"}">{verdict_cells(v)}</tr>' for v in changes]
        body.append("</table>")
    else:
        body.append("<p>None.</p>")
    body += [f"<p>table {escape(t['table'])}: {t['change']}</p>" for t in diff.tables]
    body += [f"<p>note: {escape(n)}</p>" for n in diff.notes]
    body.append(f'<h2>Curves, base (<span style="color:{BASE_COLOR}">grey, dashed</span>) against head '
                f'(<span style="color:{HEAD_COLOR}">blue</span>)</h2><p>{svg.LEGEND}; the band: the head\'s 95% '
                "interval (base + the paired interval of the change)</p>")
    keys = sorted({row.key for row in diff.rows})
    for level in sorted({k[0] for k in keys}):
        depths = [k[1] for k in keys if k[0] == level]
        rows = {d: diff.head.rows.get((level, d)) or diff.base.rows.get((level, d)) for d in depths}
        panels = []
        for name, _ in CURVE_PANELS:
            got = [(d, values.get(((level, d), name))) for d in depths]
            base = svg.Series("base", BASE_COLOR, [(d, v[0] if v else None) for d, v in got], dashed=True)
            head = svg.Series("head", HEAD_COLOR, [(d, v[1] if v else None) for d, v in got],
                              band=[(d, v[0] + v[3][0], v[0] + v[3][1]) for d, v in got if v and v[3] and v[0] is not None])
            marks = [(d, v[1]) for d, v in got if v and v[2]]
            shown_at = [(d, v[1] if v[1] is not None else v[0]) for d, v in got if v]
            boss = [(d, y) for d, y in shown_at if rows[d] is not None and rows[d].boss]
            targets = [(d, rows[d].row.inferability_target) for d in depths if rows[d] is not None] \
                if name in TARGETED else []
            panels.append(svg.panel(name, [base, head], marks, unit=UNITS.get(name, ""), targets=targets, boss=boss))
        body.append(f"<h3>level {level}</h3><div class=\"level\">{''.join(panels)}</div>")
    body.append("<h2>Changed rows</h2>")
    body.append(f"<p class=\"legend\">{escape(FLAG_RULE)}. The flag column says whether the interval lies beyond "
                "the margin too (the change exceeds it) or reaches inside it (the change may be smaller than the "
                "margin). &ldquo;untested&rdquo;: no test could be computed. A figure's p is never below its "
                "interval's own, so a flagged figure's interval leaves out zero (docs/review.md).</p>")
    for row in sorted(diff.rows, key=lambda r: (not r.flagged, r.key)):
        if row.state not in (MODIFIED, ADDED, REMOVED):
            continue
        body.append(f"<h3>{escape(_row_title(row))}</h3>")
        body += [f"<p>note: {escape(n)}</p>" for n in row.notes]
        figures = shown(row) if row.state == MODIFIED else []
        if figures:
            body.append(_html_table(figures))
    body += _html_overlays_and_strata(diff)
    return svg.page(headline(diff)[0], body)


def _html_table(figures: list[FigureDiff], exact: list[tuple[str, dict]] = ()) -> str:
    rows = ["<table><tr><th>figure</th><th>base</th><th>head</th><th>delta</th><th>interval</th><th>p</th><th>q</th>"
            "<th>margin</th><th>flag</th></tr>"]
    for f in figures:
        cls = ' class="flag"' if f.flagged else ""
        flag = escape(f"⚑ {f.flag_reading}") if f.flagged else ""
        if f.kind == F.CATEGORIES:
            rows.append(f"<tr{cls}><td>{f.name}</td><td colspan=4>{escape(exit_moves(f))}</td><td>{p_of(f)}</td>"
                        f"<td>{q_of(f)}</td><td>{number(f.margin)}</td><td>{flag}</td></tr>")
            continue
        rows.append(f"<tr{cls}><td>{f.name}</td><td>{number(f.base)}</td><td>{number(f.head)}</td>"
                    f"<td>{signed(f.delta)}</td><td>{interval(f.ci)}</td><td>{p_of(f)}</td>"
                    f"<td>{q_of(f)}</td><td>{number(f.margin)}</td><td>{flag}</td></tr>")
    for name, v in exact:
        rows.append(f"<tr><td>{escape(name)}</td><td>{number(v['base'])}</td><td>{number(v['head'])}</td>"
                    f"<td>{signed(v['delta'])}</td><td colspan=5>exact, paired: false</td></tr>")
    return "".join(rows) + "</table>"


def _html_overlays_and_strata(diff: CalibrationDiff) -> list[str]:
    body = []
    if diff.overlays:
        body.append("<h2>Overlays, paired on the same boards</h2>")
        for o in diff.overlays:
            body.append(f"<h3>{escape(overlay_title(o))}</h3>")
            body += [f"<p>note: {escape(n)}</p>" for n in o.notes]
            figures = tested(o.figures)
            body.append(_html_table(figures) if figures else "<p>No overlay figure moved.</p>")
    if diff.strata.compared:
        body.append("<h2>Strata (node-map pools), row figures HEAD's</h2>")
        body += [f"<p>note: {escape(n)}</p>" for n in diff.strata.notes]
        for lv in diff.strata.levels:
            body.append(f"<h3>{escape(strata_title(lv))}</h3>")
            body += [f"<p>note: {escape(n)}</p>" for n in lv.notes]
            exact = [(f"pool {n}", v) for n, v in moved_exact(lv.pool)]
            exact += [(f"first adventure {n}", v) for n, v in moved_exact(lv.first_adventure)]
            exact += [(f"template {t['template_id']} ({t['change']}) {n}", v) for t in lv.templates
                      for n, v in moved_exact(t["figures"])]
            body.append(_html_table(tested(lv.figures), exact))
    return body


RENDERERS = {"terminal": terminal, "markdown": markdown, "json": json_text, "html": html}
SUFFIXES = {".txt": "terminal", ".md": "markdown", ".json": "json", ".html": "html", ".htm": "html"}
