"""What a table edit did to each row it changed, for the edit run's check
metadata (SPEC 9 "asset checks ... metadata carries the numbers"; seed 001
P2 "C3 全行审计"; seed 004 on attribution; docs/review.md "In the UI").

:func:`markdown_against_previous` gives, for each edited row, first the
fields the edit changed (``max_gen_attempts 32 -> 1``), then its F4 verdict
before and after and the figures that moved, then the table of its figures
against the row's previous version in ``calibration_history``, the figures
that moved marked. The previous version is the row's last calibration before
it became what it is now (``history.before_edit``): the night's version of a
row the designer then edited, whether the edit published a report or its
batch was withheld (A'), whose figures are then its rejected boards'.
"No previous version" is said only when the history holds no other version.

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

from boardgen_pipeline.calibration.fingerprints import partition_key
from boardgen_pipeline.review import diff, render, sources
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.steps import history
from boardgen_pipeline.steps.summary import rejected_report
from boardgen_pipeline.steps.table_check import F4_FLAGS
from boardgen_pipeline.tables.board_gen import key_text

PAIRED_ROWS = 4
MOVED = "⚑ moved"
# report C's columns and the figure of the diff whose margin they take
REPORT_FIGURES = (("pass_rate", None), ("p10", "inferability_p10"), ("p50", "inferability_p50"),
                  ("p90", "inferability_p90"), ("retry_rate", "retry_rate"), ("mean_attempts", "mean_attempts"),
                  ("win_rate", "win_rate"), ("no_guess_share", "no_guess_share"), ("mean_guesses", "mean_guesses"),
                  ("mean_survival", "mean_survival"), ("bbbv_p50", "bbbv_p50"), ("below_target", None),
                  ("illegal", None))
PASS_RATE_MARGIN = 0.05
COUNTS = ("below_target", "illegal")  # boards, not shares: shown as whole numbers


def _count(value) -> str:
    return str(int(value))


def previous_version(path: history.Trajectory, row=None) -> tuple[dict | None, dict | None]:
    """``(current, previous)``: the version the row's report is now (None:
    no current report, e.g. a batch A' withheld), and the version it is
    compared with: the row's last calibration before it became what ``row``
    (its fields now) is (``history.before_edit``); when no version differs
    from the row (N, the master seed or the generator changed), the other
    version published last. None only when the history holds nothing else."""
    current = next((v for v in path.versions if v["version"] == path.current), None)
    previous = history.before_edit(path, row) if row is not None else None
    if previous is None:
        others = [v for v in path.versions if v["version"] != path.current]
        previous = max(others, key=lambda v: (v["published_at"], v["version"])) if others else None
    return current, previous


def changed_fields(previous: dict | None, row) -> str:
    """The fields of ``row`` (now) that differ from ``previous`` (a history
    version): ``max_gen_attempts 32 -> 1, ...``; empty when none."""
    if previous is None or row is None:
        return ""
    return history.edit_text(history.parameter_changes(previous, history.row_parameters(row)))


def edited_rows(root, catalog, keys) -> dict[str, str]:
    """``{"L-D": "max_gen_attempts 32 -> 1, ..."}``: what the edit changed in
    each row of ``keys``, against its last calibration (rows with no earlier
    version, or nothing changed, left out). Reads one history folder a row."""
    out = {}
    for key in keys:
        row = catalog.board_gen.rows.get(key)
        text = changed_fields(history.before_edit(history.trajectory(root, key), row), row) if row is not None else ""
        if text:
            out[partition_key(key)] = text
    return out


def markdown_against_previous(root, catalog, keys, samples: int, master_seed: int = 0) -> dict[str, str]:
    """For each row of ``keys`` (``"L-D"`` -> markdown): what the edit
    changed, then its verdict and figures against its previous version
    (module docstring: paired when the previous version can be rebuilt, for
    the first ``PAIRED_ROWS`` rows; unpaired otherwise, and the text says
    which)."""
    root = Path(root)
    table = catalog.board_gen
    out, paired = {}, 0
    for key in sorted(keys):
        name = partition_key(key)
        path = history.of_row(root, key)
        row = table.rows.get(key)
        current, previous = previous_version(path, row)
        if previous is None:
            out[name] = (f"**Row {key_text(key)}**: no previous version in `calibration_history` to compare with: "
                         + ("this is its first calibration" if not path.versions else
                            "its only version is the row as it is now"))
            continue
        base_row, exact = sources.rebuild_row(previous, key, row, table.header, previous["row_fingerprint"])
        if exact and paired < PAIRED_ROWS and row is not None:
            paired += 1
            out[name] = _paired(root, catalog, key, base_row, previous, min(samples, previous["samples"]), master_seed)
        else:
            why = ("more rows were edited than the edit budget pairs" if exact
                   else "the previous version's boards cannot be rebuilt from what the history keeps")
            now = current or _rejected_figures(root, key, row)
            out[name] = (_unpaired(key, previous, now, row, why) if now is not None else
                         f"**Row {key_text(key)} edited: {changed_fields(previous, row) or 'nothing'}**; "
                         "its new batch left no figures to compare")
    return out


def _rejected_figures(root: Path, key, row) -> dict | None:
    """The figures of a row's batch that A' withheld (no report, no version):
    its rejected boards evaluated as a report would be."""
    report = rejected_report(root, key, row) if row is not None else None
    return None if report is None else {**report, "pass_rate": history.pass_rate(report["passed"], report["samples"])}


def _head(key, previous: dict, row) -> list[str]:
    """What every edit report leads with: the fields the edit changed."""
    return [f"**Row {key_text(key)} edited: {changed_fields(previous, row) or 'no field the history keeps'}**"]


def _paired(root: Path, catalog, key, row, previous: dict, samples: int, master_seed: int) -> str:
    head = sources.of_catalog("working tables", "folder", "now", catalog, {})
    head.rows = {key: head.rows[key]}
    base = sources.Source("calibration_history", "history", f"version {previous['version']}",
                          {key: sources.SourceRow(key, row, previous["row_fingerprint"])}, catalog.board_gen.header)
    result = diff.compare(base, head, diff.Settings(samples, master_seed), root)
    [found] = result.rows
    when = previous["published_at"].strftime("%Y-%m-%d %H:%M UTC")
    lines = _head(key, previous, catalog.board_gen.rows[key])
    lines += ["", f"F4: {render.f4_text(found.base_verdicts)} -> {render.f4_text(found.head_verdicts)}"]
    verdicts = [v.text() for v in found.verdict_changes]
    if verdicts:
        lines += ["", "verdict changes: " + "; ".join(verdicts)]
    if found.state != diff.MODIFIED:
        return "\n".join(lines + ["", f"against version {previous['version']} (first published {when}): every "
                                        "figure equal, the same boards"])
    flagged = [f for f in found.figures.values() if f.flagged]
    if flagged:
        lines += ["", "flagged: " + "; ".join(
            f"{f.name} {render.exit_moves(f)}" if f.kind == F.CATEGORIES else
            f"{f.name} {render.number(f.base)} -> {render.number(f.head)} ({render.signed(f.delta)})" for f in flagged)]
    lines += ["", f"against version {previous['version']} (first published {when}): **paired** on the same "
                  f"{found.samples} scopes, both versions' boards", "",
              "| figure | previous | now | Δ | 95% interval | q | |", "|---|---|---|---|---|---|---|"]
    for f in found.figures.values():
        if f.kind == F.CATEGORIES:
            lines.append(f"| {f.name} | | | {render.exit_moves(f)} | | {render.q_of(f)} | {_flag(f)} |")
            continue
        lines.append(f"| {f.name} | {render.number(f.base)} | {render.number(f.head)} | {render.signed(f.delta)} | "
                     f"{render.interval(f.ci)} | {render.q_of(f)} | {_flag(f)} |")
    lines += ["", *render.FLAG_LEGEND, f"{found.identical_boards:.0%} of the pairs are the same board"]
    return "\n".join(lines)


def _flag(f) -> str:
    """A paired figure's flag, with what its interval says of the margin (``render.mark``)."""
    return render.mark(f).strip()


def _verdict_changes(previous: dict, now: dict) -> list[str]:
    said = diff.VERDICT_WORDS
    return [f"{name}: {said[previous[col]]} -> {said[now[col]]}" for col, name in F4_FLAGS
            if previous.get(col) is not None and now.get(col) is not None and previous[col] != now[col]]


def _unpaired(key, previous: dict, now: dict, row, why: str) -> str:
    lines = _head(key, previous, row)
    verdicts = _verdict_changes(previous, now)
    if verdicts:
        lines += ["", "verdict changes: " + "; ".join(verdicts)]
    rows, moved = [], []
    for column, figure in REPORT_FIGURES:
        before, after = previous.get(column), now.get(column)
        if before is None or after is None:
            continue
        margin = F.DEFAULT_MARGINS[figure] if figure else (PASS_RATE_MARGIN if column == "pass_rate" else 0)
        flag = abs(after - before) > margin
        shown = _count if column in COUNTS else render.number
        if flag:
            moved.append(f"{column} {shown(before)} -> {shown(after)}")
        delta = f"{int(after - before):+d}" if column in COUNTS else render.signed(after - before)
        rows.append(f"| {column} | {shown(before)} | {shown(after)} | {delta} | {shown(margin)} | "
                    f"{MOVED if flag else ''} |")
    if moved:
        lines += ["", "moved: " + "; ".join(moved)]
    lines += ["", f"against version {previous['version']}: **unpaired** ({why}): the two reports' figures, no "
                  "interval", "", "| figure | previous | now | Δ | margin | |", "|---|---|---|---|---|---|", *rows]
    lines += ["", f"{MOVED}: moved by more than the figure's margin (docs/review.md); unpaired, so a move within "
                  "sampling noise can be marked"]
    return "\n".join(lines)
