"""What a table edit did to each row it changed, for the edit run's check
metadata (SPEC 9 "asset checks ... metadata carries the numbers"; seed 001
P2 "C3 全行审计"; seed 004 on attribution; docs/review.md "In the UI").

:func:`markdown_against_previous` gives, for each edited row, a markdown
table of its report figures against the row's previous version in
``calibration_history``, the figures that moved marked.

**Paired where it can be, and it says which.** The previous version's
boards are not kept (a row's boards file holds its current batch only), but
they are a pure function of the row, the master seed and the scopes: when
the history version's parameters, under today's header, give back its row
fingerprint exactly, its boards are generated again on the same scopes and
the two versions are compared paired, as ``boardgen diff`` does (a row
costs about its calibration again, ~0.1-1 s, so the first
:data:`PAIRED_ROWS` edited rows fit the 8 s edit budget). Otherwise (the
version cannot be rebuilt: a header field the history does not keep
changed; or more rows were edited) the table compares the two *reports'*
figures, **unpaired**: no interval, a figure marked when it moved by more
than its margin, and the table says so.
"""

from __future__ import annotations

from pathlib import Path

from boardgen_pipeline.review import diff, render, sources
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.steps import history

PAIRED_ROWS = 4
MOVED = "⚑ moved"
# report C's columns and the figure of the diff whose margin they take
REPORT_FIGURES = (("pass_rate", None), ("p10", "inferability_p10"), ("p50", "inferability_p50"),
                  ("p90", "inferability_p90"), ("retry_rate", "retry_rate"), ("mean_attempts", "mean_attempts"),
                  ("win_rate", "win_rate"), ("no_guess_share", "no_guess_share"), ("mean_guesses", "mean_guesses"),
                  ("mean_survival", "mean_survival"), ("bbbv_p50", "bbbv_p50"), ("below_target", None),
                  ("illegal", None))
PASS_RATE_MARGIN = 0.05


def previous_version(path: history.Trajectory) -> tuple[dict | None, dict | None]:
    """``(current, previous)``: the version the row's report is now, and the
    other version published last (None when there is none)."""
    current = next((v for v in path.versions if v["version"] == path.current), None)
    others = [v for v in path.versions if v["version"] != path.current]
    return current, (max(others, key=lambda v: v["published_at"]) if others else None)


def markdown_against_previous(root, catalog, keys, samples: int, master_seed: int = 0) -> dict[str, str]:
    """For each row of ``keys`` (``"L-D"`` -> markdown): its figures against
    its previous version (module docstring: paired when the previous
    version can be rebuilt, for the first ``PAIRED_ROWS`` rows; unpaired
    otherwise, and the text says which)."""
    root = Path(root)
    table = catalog.board_gen
    out, paired = {}, 0
    for key in sorted(keys):
        name = f"{key[0]}-{key[1]}"
        current, previous = previous_version(history.of_row(root, key))
        if current is None or previous is None:
            out[name] = (f"**Row ({key[0]},{key[1]})**: no previous version in `calibration_history` to compare with "
                         "(its first calibration, or its report is not current)")
            continue
        row, exact = sources.rebuild_row(previous, key, table.rows.get(key), table.header, previous["row_fingerprint"])
        if exact and paired < PAIRED_ROWS and key in table.rows:
            paired += 1
            out[name] = _paired(root, catalog, key, row, previous, min(samples, previous["samples"]), master_seed)
        else:
            why = ("more rows were edited than the edit budget pairs" if exact
                   else "the previous version's boards cannot be rebuilt from what the history keeps")
            out[name] = _unpaired(key, previous, current, why)
    return out


def _paired(root: Path, catalog, key, row, previous: dict, samples: int, master_seed: int) -> str:
    head = sources.of_catalog("working tables", "folder", "now", catalog, {})
    head.rows = {key: head.rows[key]}
    base = sources.Source("calibration_history", "history", f"version {previous['version']}",
                          {key: sources.SourceRow(key, row, previous["row_fingerprint"])}, catalog.board_gen.header)
    result = diff.compare(base, head, diff.Settings(samples, master_seed), root)
    [found] = result.rows
    when = previous["published_at"].strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"**Row ({key[0]},{key[1]}) against its previous version** ({previous['version']}, first published "
             f"{when}): **paired** on the same {found.samples} scopes, both versions' boards; "
             f"{render.f4_text(found.base_verdicts)} -> {render.f4_text(found.head_verdicts)}", "",
             f"changed: {', '.join(found.changes)}" if found.state == diff.MODIFIED else "changed: nothing that "
             "decides its boards", ""]
    if found.state != diff.MODIFIED:
        return "\n".join(lines + ["every figure equal: the same boards"])
    lines += ["| figure | previous | now | Δ | 95% interval | q | |", "|---|---|---|---|---|---|---|"]
    for f in found.figures.values():
        if f.kind == F.CATEGORIES:
            lines.append(f"| {f.name} | | | {render.exit_moves(f)} | | {render.q_text(f.q)} | "
                         f"{MOVED if f.flagged else ''} |")
            continue
        lines.append(f"| {f.name} | {render.number(f.base)} | {render.number(f.head)} | {render.signed(f.delta)} | "
                     f"{render.interval(f.ci)} | {render.q_text(f.q)} | {MOVED if f.flagged else ''} |")
    lines += ["", f"{MOVED}: significant after Benjamini-Hochberg over this edit's rows and beyond the figure's "
                  f"margin; {found.identical_boards:.0%} of the pairs are the same board"]
    return "\n".join(lines)


def _unpaired(key, previous: dict, current: dict, why: str) -> str:
    lines = [f"**Row ({key[0]},{key[1]}) against its previous version** ({previous['version']}): **unpaired** ({why}): "
             "the two reports' figures, no interval", "",
             f"changed: {', '.join(history.changes(previous, current)) or 'no parameter the history keeps'}", "",
             "| figure | previous | now | Δ | margin | |", "|---|---|---|---|---|---|"]
    for column, figure in REPORT_FIGURES:
        before, now = previous.get(column), current.get(column)
        if before is None or now is None:
            continue
        margin = F.DEFAULT_MARGINS[figure] if figure else (PASS_RATE_MARGIN if column == "pass_rate" else 0)
        moved = abs(now - before) > margin
        lines.append(f"| {column} | {render.number(before)} | {render.number(now)} | {render.signed(now - before)} | "
                     f"{render.number(margin)} | {MOVED if moved else ''} |")
    lines += ["", f"{MOVED}: moved by more than the figure's margin (docs/review.md); unpaired, so a move within "
                  "sampling noise can be marked"]
    return "\n".join(lines)

