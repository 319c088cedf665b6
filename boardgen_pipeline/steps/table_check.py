"""The table-wide F4 verdict: every row of the table, as the warehouse holds
it, passes F4 (SPEC 7 "assertions"; seed 001 "F4 批量统计断言"; issue 13
"Failures in front").

Evaluated by every run of the report (a full nightly, a sensor run of one
row, a click in the UI) over every row of the table: a rejected current
batch fails A'; a row without a current report is "not calibrated". Each
failing row leads with its verdict, the advisor's fix and its pictures; the
verdict line names the command that writes the fix into the table (issue 23).
"""

from __future__ import annotations

from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.warehouse import publish

CHECK_EVERY_ROW = "every_row_passes_f4"
EVERY_ROW_DESCRIPTION = ("Every row of the table passes F4 (A, A'', A', B, B') with its current batch: the "
                         "failing rows and checks are named here; each row's own checks are one click away "
                         "(boards -> Checks -> Partitions).")
F4_FLAGS = (("assertion_a", "A"), ("assertion_a2", "A''"), ("assertion_a1", "A'"), ("assertion_b", "B"),
            ("assertion_b1", "B'"))


def row_verdicts(root, table, samples: int, master_seed: int = 0) -> dict[str, list[str]]:
    """``{partition: failing F4 assertions}`` of every row of the table, read
    from the warehouse: a rejected current batch fails A'; a row without a
    current report (never run, or run for another table version) is
    ``["not calibrated"]``; a green row maps to ``[]``."""
    from boardgen_pipeline.calibration.fingerprints import fingerprints_now, row_key
    from boardgen_pipeline.steps import currency

    out = {}
    published = publish.keys_in(root, "boards")  # once, not a folder walk per row
    now = fingerprints_now(table, samples, master_seed)
    # every report at once; a missing or unreadable one (a damaged file: issue 14) is left out
    reports = publish.read_row_records(root, "calibration_report", [row_key(pk) for pk in now],
                                       columns=["batch_fingerprint", *(flag for flag, _ in F4_FLAGS)])
    for pk, fp in now.items():
        key = row_key(pk)
        record = (reports.get(key) or [None])[0]
        if record is not None and record.get("batch_fingerprint") == fp:
            out[pk] = [name for flag, name in F4_FLAGS if record.get(flag) is False]
        elif key not in published and currency.stored_fingerprint(root, key) == fp:
            out[pk] = ["A'"]
        else:
            out[pk] = ["not calibrated"]
    return out


OVERVIEW_ROWS = 3  # failing rows drawn in the table-wide check (the rest are named)


def _row_records(root, key: tuple[int, int]) -> list[dict]:
    """The row's boards: published, else its rejected batch, else none."""
    for base in (root, publish.rejected_root(root)):
        try:
            return publish.read_partition(base, "boards", key)
        except (OSError, ValueError):
            continue
    return []


def failing_row_overview(root, pk: str, names: list[str], spawn_side: int, fitted: bool = False) -> str:
    """What a person reads first about a failing row (issue 13): its verdict,
    the advisor's fix, the inferability histogram with the target, and the
    worst board with R0 and R∞ shaded (Markdown, PNGs inline). ``fitted``:
    the pictures are ``thumbnails``, which fit whole under the text in the
    check's description panel (issue 23); else full size, numbers shown."""
    from boardgen_pipeline.calibration.fingerprints import row_key
    from boardgen_pipeline.pictures import charts, thumbnails

    key = row_key(pk)
    try:
        report = publish.read_partition(root, "calibration_report", key)[0]
    except (IndexError, OSError, ValueError):
        report = None
    records = _row_records(root, key)
    # the verdict and the fix in two lines, then the two pictures side by side (small: the UI shows
    # the top of a long description first)
    if report is not None:
        head = (f"**row {pk} fails {', '.join(names)}: {report['below_target']} of {report['samples']} boards below "
                f"target {report['inferability_target']}, {report['illegal']} illegal** (p10 {report['p10']:.3f}, "
                f"p50 {report['p50']:.3f})")
    else:
        illegal = sum(1 for r in records if r.get("illegal"))
        head = f"**row {pk} fails {', '.join(names)}: batch rejected, {illegal} of {len(records)} boards illegal**"
    out = [head]
    if report is not None:  # the advisor's fix, in one line under the verdict
        fix = [f"advisor: {report.get('advice_status')}, pass rate per attempt "
               f"{report.get('pass_rate_per_attempt', 0):.3f} (needs {report.get('required_rate_per_attempt', 0):.3f})"]
        for field, label in (("advice_density", "largest mine_density that passes"),
                             ("advice_r0_max_cap", "smallest r0_max_cap that passes"),
                             ("advice_target", "largest inferability_target")):
            if field in report:
                value = report[field]
                fix.append(f"{label}: {'none in the domain' if value is None else value}")
        out[0] += "  \n" + " · ".join(fix)
    if records:
        pictures = []
        if report is not None:
            values = [r["inferability"] for r in records]
            png = (thumbnails.histogram_thumbnail(values, report["inferability_target"]) if fitted else
                   charts.inferability_histogram_png(values, report["inferability_target"],
                                                     f"row {pk}: {len(values)} boards", size=(3.6, 1.9)))
            pictures.append(charts.png_markdown(png, "inferability histogram"))
        worst = min(records, key=lambda r: (r["inferability"], r["scope"]))
        png = (thumbnails.board_thumbnail(worst["layout"], spawn_side, title=f"worst board\nscope {worst['scope']}")
               if fitted else charts.board_png(worst["layout"], spawn_side, cell_inches=0.16,
                                               title=f"worst board, scope {worst['scope']}"))
        pictures.append(charts.png_markdown(png, "worst board"))
        out.append(" ".join(pictures))
    return "\n\n".join(out)


NAMED_ROWS = 8  # failing rows the verdict line names: it stays short above the pictures (issue 23)


def _named(order: list[str], failing: dict[str, list[str]]) -> str:
    """The first :data:`NAMED_ROWS` failing rows with their assertions; the
    rest counted (every one is in the metadata entry ``failing``)."""
    named = "; ".join(f"{pk} ({', '.join(failing[pk])})" for pk in order[:NAMED_ROWS])
    more = len(order) - NAMED_ROWS
    return named + (f"; {more} more (metadata `failing`)" if more > 0 else "")


def every_row_outcome(root, table, samples: int, master_seed: int = 0) -> CheckOutcome:
    """The table-wide F4 verdict (issue 13: one failing row turns the report red
    in the asset graph, whichever run evaluated it)."""
    from boardgen_pipeline.calibration.fingerprints import row_key
    from boardgen_pipeline.calibration.fix import apply_command

    verdicts = row_verdicts(root, table, samples, master_seed)
    failing = {pk: names for pk, names in verdicts.items() if names}
    order = sorted(failing, key=row_key)
    lines = "\n".join(f"- row {pk}: {', '.join(failing[pk])}" for pk in order)
    fixable = [row_key(pk) for pk in order if failing[pk] != ["not calibrated"]]
    command = apply_command(fixable if len(fixable) <= OVERVIEW_ROWS else None, table.path, samples,
                            master_seed) if fixable else None
    outcome = CheckOutcome(
        name=CHECK_EVERY_ROW,
        assertion="F4",
        passed=not failing,
        severity="error",
        blocking=False,
        description=(f"{len(failing)} of {len(verdicts)} rows fail F4: "
                     + _named(order, failing)
                     + (f"; the advisor's fix, written into the table: `{command}`" if command else "")
                     if failing else f"all {len(verdicts)} rows pass F4 (A, A'', A', B, B')"),
        metadata={"rows": len(verdicts), "failing_rows": order, "failing": {pk: failing[pk] for pk in order},
                  **({"fix_command": command} if command else {})},
        pictures={"failing_rows": lines or "_every row passes_"},
    )
    shown = [pk for pk in order if failing[pk] != ["not calibrated"]][:OVERVIEW_ROWS]
    if shown:
        # The description panel holds one row whole (issue 23): the first, its pictures fitted. The
        # entry failing_row_pictures (a dialog that scrolls) holds each shown row, pictures full size.
        outcome.pictures["overview"] = failing_row_overview(root, shown[0], failing[shown[0]], table.spawn_side,
                                                            fitted=True)
        outcome.pictures["failing_row_pictures"] = "\n\n".join(
            failing_row_overview(root, pk, failing[pk], table.spawn_side) for pk in shown)
    return outcome
