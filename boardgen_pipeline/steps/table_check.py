"""The table-wide F4 verdict: every row of the table, as the warehouse holds
it, passes F4 (SPEC 7 "assertions"; seed 001 "F4 批量统计断言";
the failures in front).

Evaluated by every run of the report (a full nightly, a sensor run of one
row, a click in the UI) over every row of the table: a rejected current
batch fails A'; a row without a current report is "not calibrated". Each
failing row leads with its verdict, the advisor's fix and its pictures; the
verdict line names the command that writes the fix into the table.
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.check_names import CHECK_EVERY_ROW
from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.warehouse import publish

EVERY_ROW_DESCRIPTION = ("Every row of the table passes F4 (A, A'', A', B, B') with its current batch, and no row "
                         "is left uncalibrated: the failing rows and checks are named here, with the first ones' "
                         "fix and pictures; each row's verdicts are in the view row_checks.")
F4_DESCRIPTIONS = {
    "a_no_board_below_target": "A: no board of any row below its inferability target (SPEC 7).",
    "a_double_prime_target_floor": "A'': every row's inferability_target >= 0.85 (SPEC 7).",
    "a_prime_no_illegal_board": "A': no illegal board (exit least_bad) in any row. An illegal batch is withheld "
                                "(not published: the row reads as failed) and nothing downstream is made from it.",
    "b_fog_regions_placed": "B: on every fog row, all fog regions placed on >= 95% of boards (SPEC 7); rows "
                            "without fog pass as not applicable.",
    "b_prime_no_fog_on_fogless_row": "B': no board carries fog on a row without fog (SPEC 7); fog rows pass as "
                                     "not applicable.",
    "e_monotone_in_depth": "E: the fields the table declares monotone_in_depth do not decrease with depth "
                           "(advisory, warning severity).",
    "f_mean_survival": "F: on every row that sets min_mean_survival, a perfect player's mean survival (the chance "
                       "its guesses all land safe) reaches it (a warning unless the header sets "
                       "survival_is_criterion).",
}
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
    # every report at once; a missing or unreadable one (a damaged file) is left out
    # F counts where the table makes it a criterion; its report column is null on rows with no floor
    flags = F4_FLAGS + ((("assertion_f", "F"),) if table.header.survival_is_criterion else ())
    reports = publish.read_row_records(root, "calibration_report", [row_key(pk) for pk in now],
                                       columns=["batch_fingerprint", *(flag for flag, _ in flags)])
    for pk, fp in now.items():
        key = row_key(pk)
        record = (reports.get(key) or [None])[0]
        if record is not None and record.get("batch_fingerprint") == fp:
            out[pk] = [name for flag, name in flags if record.get(flag) is False]
        elif key not in published and currency.stored_fingerprint(root, key) == fp:
            out[pk] = rejected_verdicts(root, key, fp, flags)
        else:
            out[pk] = ["not calibrated"]
    return out


def rejected_verdicts(root, key: tuple[int, int], fingerprint: str, flags=F4_FLAGS) -> list[str]:
    """The F4 assertions a row's rejected batch fails, in their order: A' and
    the others its stored verdicts name (an illegal batch is often below
    target too), read from its ``row_checks`` file; ``["A'"]`` when that is
    gone."""
    from boardgen_pipeline.steps import row_checks

    names = {name for _, name in flags}
    records = publish.read_row_records(root, row_checks.DATASET, [key]).get(key, [])
    failed = [r["assertion"] for r in records if r["fingerprint"] == fingerprint and r["asset"] == "boards"
              and not r["passed"] and r["severity"] == "error" and r["assertion"] in names]
    return [a for _, a in flags if a in failed or a == "A'"]


OVERVIEW_ROWS = 3  # failing rows drawn in the table-wide check (the rest are named)


def _row_records(root, key: tuple[int, int]) -> list[dict]:
    """The row's boards: published, else its rejected batch, else none."""
    for base in (root, publish.rejected_root(root)):
        try:
            return publish.read_partition(base, "boards", key)
        except (OSError, ValueError):
            continue
    return []


def _rejected_advice(root, key: tuple[int, int]) -> dict | None:
    """The advisor's reading of a row whose batch A' withheld (it has no
    report): the figures its failing A' verdict stored."""
    import json

    from boardgen_pipeline.check_names import CHECK_A1
    from boardgen_pipeline.steps import row_checks

    for r in publish.read_row_records(root, row_checks.DATASET, [key]).get(key, []):
        if r["check"] == CHECK_A1 and not r["passed"]:
            return json.loads(r["figures"] or "{}")
    return None


def failing_row_overview(root, pk: str, names: list[str], spawn_side: int, fitted: bool = False,
                         hint: str = "") -> str:
    """What a person reads first about a failing row: its verdict, what an
    edit changed in it (``hint``: ``history.edit_hint``), the advisor's fix,
    the inferability histogram with the target, and the worst board with R0
    and R∞ shaded (Markdown, PNGs inline). ``fitted``: the pictures are
    ``thumbnails``, which fit whole under the text in the check's description
    panel; else full size, numbers shown."""
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
    out = [head + (f"  \n{hint}" if hint else "")]
    advice = report if report is not None else _rejected_advice(root, key)
    if advice is not None:  # the advisor's fix, in one line under the verdict
        fix = [f"advisor: {advice.get('advice_status')}, pass rate per attempt "
               f"{advice.get('pass_rate_per_attempt') or 0:.3f} (needs {advice.get('required_rate_per_attempt') or 0:.3f})"]
        for field, label in (("advice_density", "largest mine_density that passes"),
                             ("advice_r0_max_cap", "smallest r0_max_cap that passes"),
                             ("advice_target", "largest inferability_target")):
            if field in advice:
                value = advice[field]
                fix.append(f"{label}: {'none in the domain' if value is None else value}")
        out[0] += "  \n" + " · ".join(fix)
    if records:
        pictures = []
        if report is not None:
            from boardgen_pipeline.calibration.batch import judged_inferability

            # what A judges (the core too, on fog rows) and A's own count
            values, below = [judged_inferability(r) for r in records], report["below_target"]
            png = (thumbnails.histogram_thumbnail(values, report["inferability_target"], below=below) if fitted else
                   charts.inferability_histogram_png(values, report["inferability_target"],
                                                     f"row {pk}: {len(values)} boards, {below} below target",
                                                     size=(3.6, 1.9), below=below))
            pictures.append(charts.png_markdown(png, "inferability histogram"))
        worst = min(records, key=lambda r: (r["inferability"], r["scope"]))
        png = (thumbnails.board_thumbnail(worst["layout"], spawn_side, title=f"worst board\nscope {worst['scope']}")
               if fitted else charts.board_png(worst["layout"], spawn_side, cell_inches=0.16,
                                               title=f"worst board, scope {worst['scope']}"))
        pictures.append(charts.png_markdown(png, "worst board"))
        out.append(" ".join(pictures))
    return "\n\n".join(out)


NAMED_ROWS = 8  # failing rows the verdict line names: it stays short above the pictures


def edit_hints(root, table, pks) -> dict[str, str]:
    """``{partition: history.edit_hint}`` of the rows ``pks`` that were
    edited since their last calibration: what the edit changed, and the value
    to restore (one history folder read a row)."""
    from boardgen_pipeline.calibration.fingerprints import row_key
    from boardgen_pipeline.steps import history

    named = {row_key(pk): pk for pk in pks}
    return {named[key]: hint for key, hint in history.edit_hints(root, table, named).items()}


def _named(order: list[str], failing: dict[str, list[str]], hints: dict[str, str] | None = None) -> str:
    """The first :data:`NAMED_ROWS` failing rows with their assertions (and
    what an edit changed in them); the rest counted (every one is in the
    metadata entry ``failing``)."""
    hints = hints or {}
    named = "; ".join(f"{pk} ({', '.join(failing[pk])}" + (f"; {hints[pk]}" if pk in hints else "") + ")"
                      for pk in order[:NAMED_ROWS])
    more = len(order) - NAMED_ROWS
    return named + (f"; {more} more (metadata `failing`)" if more > 0 else "")


DID_NOT_FINISH = "did not finish tonight"


def every_row_outcome(root, table, samples: int, master_seed: int = 0, unfinished=()) -> CheckOutcome:
    """The table-wide F4 verdict: one failing row turns the report red in the
    asset graph, whichever run evaluated it. ``unfinished``: the rows whose
    run failed tonight before recording them (named, whatever their files
    hold from an earlier night)."""
    from boardgen_pipeline.calibration.fingerprints import row_key
    from boardgen_pipeline.calibration.fix import apply_command

    verdicts = row_verdicts(root, table, samples, master_seed)
    for pk in unfinished:
        if pk in verdicts:
            verdicts[pk] = [DID_NOT_FINISH, *verdicts[pk]]
    failing = {pk: names for pk, names in verdicts.items() if names}
    order = sorted(failing, key=row_key)
    fixable = [row_key(pk) for pk in order if not set(failing[pk]) <= {"not calibrated", DID_NOT_FINISH}]
    hints = edit_hints(root, table, [pk for pk in order[:NAMED_ROWS] if row_key(pk) in fixable])
    lines = "\n".join(f"- row {pk}: {', '.join(failing[pk])}" + (f"; {hints[pk]}" if pk in hints else "")
                      for pk in order)
    command = apply_command(fixable if len(fixable) <= OVERVIEW_ROWS else None, table.path, samples,
                            master_seed) if fixable else None
    outcome = CheckOutcome(
        name=CHECK_EVERY_ROW,
        assertion="F4",
        passed=not failing,
        severity="error",
        blocking=False,
        description=(f"{len(failing)} of {len(verdicts)} rows fail F4: "
                     + _named(order, failing, hints)
                     + (f"; the advisor's fix, written into the table: `{command}`" if command else "")
                     if failing else f"all {len(verdicts)} rows pass F4 (A, A'', A', B, B')"),
        metadata={"rows": len(verdicts), "failing_rows": order, "failing": {pk: failing[pk] for pk in order},
                  **({"edited": hints} if hints else {}), **({"fix_command": command} if command else {})},
        pictures={"failing_rows": lines or "_every row passes_"},
    )
    shown = [pk for pk in order if not set(failing[pk]) <= {"not calibrated", DID_NOT_FINISH}][:OVERVIEW_ROWS]
    if shown:
        # The description panel holds one row whole: the first, its pictures fitted. The
        # entry failing_row_pictures (a dialog that scrolls) holds each shown row, pictures full size.
        outcome.pictures["overview"] = failing_row_overview(root, shown[0], failing[shown[0]], table.spawn_side,
                                                            fitted=True, hint=hints.get(shown[0], ""))
        outcome.pictures["failing_row_pictures"] = "\n\n".join(
            failing_row_overview(root, pk, failing[pk], table.spawn_side, hint=hints.get(pk, "")) for pk in shown)
    return outcome


# --- every check, table-wide, from the rows' stored verdicts (fewer, richer events) -----------------

ROWS_LISTED = 50  # failing rows a table-wide check lists in its metadata (the count is always complete)


@dataclass(frozen=True)
class TableVerdicts:
    """The table-wide outcome of every row check, by the asset it judges
    (``boards``: F4; ``variant_overlays``: the overlay checks)."""

    outcomes: dict[str, list[CheckOutcome]]
    rows: int
    current: dict[str, dict]  # partition -> {check: its current record}, E judged on the table now

    def all(self) -> list[tuple[str, CheckOutcome]]:
        return [(asset, o) for asset, found in self.outcomes.items() for o in found]


def _current_checks(root, catalog, samples: int, master_seed: int) -> tuple[dict, dict]:
    """``({partition: {check: record}}, {partition: why not calibrated})``:
    each table row's stored verdicts whose fingerprint is the one now (F4:
    the batch; overlay checks: the overlays), and the verdicts that read
    other rows (E) judged on the table now (``row_checks.cross_row_records``)."""
    from boardgen_pipeline.calibration.fingerprints import fingerprints_now, overlay_fingerprints_now, row_key
    from boardgen_pipeline.steps import row_checks

    table = catalog.board_gen
    batches = fingerprints_now(table, samples, master_seed)
    overlays = overlay_fingerprints_now(catalog, samples, master_seed)
    stored = publish.read_row_records(root, row_checks.DATASET, [row_key(pk) for pk in batches])
    cross = row_checks.cross_row_records(table, batches)
    current, missing = {}, {}
    for pk, batch_fp in batches.items():
        want = {"boards": batch_fp, "variant_overlays": overlays.get(pk, "")}
        found = {r["check"]: r for r in stored.get(row_key(pk), []) if want.get(r["asset"]) == r["fingerprint"]
                 and r["check"] not in row_checks.CROSS_ROW}
        if not any(r["asset"] == "boards" for r in found.values()):
            missing[pk] = "not calibrated"
        current[pk] = {**found, **cross.get(pk, {})}
    return current, missing


def _table_outcome(name: str, asset: str, rows: dict, missing: dict, applicable) -> CheckOutcome:
    """One check over every row: it fails when a calibrated row's verdict
    fails; rows without a current verdict are counted and named (the check
    ``every_row_passes_f4`` fails on them)."""
    from boardgen_pipeline.calibration.fingerprints import row_key
    from boardgen_pipeline.steps import row_checks

    judged = {pk: found[name] for pk, found in rows.items() if name in found}
    failing = sorted((pk for pk, r in judged.items() if not r["passed"]), key=row_key)
    unjudged = sorted((pk for pk in rows if name not in rows[pk] and applicable(pk)), key=row_key)
    first = row_checks.outcome_of(judged[failing[0]]) if failing else None
    severity = first.severity if first else next((r["severity"] for r in judged.values()), "error")
    named = "; ".join(f"{pk}: {judged[pk]['description']}" for pk in failing[:NAMED_ROWS])
    more = len(failing) - NAMED_ROWS
    if failing:
        text = (f"{len(failing)} of {len(judged)} rows fail: {named}" + (f"; {more} more (metadata `failing`)"
                                                                         if more > 0 else ""))
    else:
        text = f"all {len(judged)} rows pass" + (f" ({len(unjudged)} rows have no current verdict)" if unjudged else "")
    metadata = {"rows": len(rows), "judged": len(judged), "failing_count": len(failing),
                "failing": {pk: judged[pk]["description"] for pk in failing[:ROWS_LISTED]},
                "no_current_verdict": len(unjudged), "no_current_verdict_first": unjudged[:ROWS_LISTED]}
    if first is not None:  # the first failing row's own numbers, as its check recorded them
        metadata["first_failing_row"] = failing[0]
        metadata["first_failing_figures"] = first.metadata
    pictures = {f"{failing[0]} {k}": v for k, v in first.pictures.items()} if first else {}
    return CheckOutcome(name=name, assertion=(first.assertion if first else next(
        (r["assertion"] for r in judged.values()), name)), passed=not failing, severity=severity, blocking=False,
                        description=text, metadata=metadata, pictures=pictures)


def _descriptions() -> dict[str, str]:
    from boardgen_pipeline.variants import outcomes as overlay_checks

    return {**F4_DESCRIPTIONS, **{name: f"Every row's overlays: {text}" for name, text in
                                  overlay_checks.DESCRIPTIONS.items()}}


def table_verdicts(root, catalog, samples: int, master_seed: int = 0) -> TableVerdicts:
    """Every F4 and overlay check over every row of the table, from the rows'
    ``row_checks`` files (one scan): what the Dagster checks record."""
    from boardgen_pipeline.calibration import assertions
    from boardgen_pipeline.variants import outcomes as overlay_checks

    rows, missing = _current_checks(root, catalog, samples, master_seed)
    has_boards = {pk for pk in rows if pk not in missing}
    outcomes = {
        "boards": [_table_outcome(n, "boards", rows, missing, lambda pk: True) for n in assertions.CHECKS],
        # a row whose batch A' rejected has no overlays to check
        "variant_overlays": [_table_outcome(n, "variant_overlays", rows, missing, lambda pk: pk in has_boards
                                            and "a_prime_no_illegal_board" in rows[pk]
                                            and rows[pk]["a_prime_no_illegal_board"]["passed"])
                             for n in overlay_checks.CHECKS],
    }
    return TableVerdicts(outcomes, len(rows), rows)


DESCRIPTIONS = _descriptions()  # each table-wide check's spec description, by check name
