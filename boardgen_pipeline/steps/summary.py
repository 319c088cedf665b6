"""The closing verdict of a calibration (SPEC 7 "assertions", SPEC 8 ``make
run``; seed 001 F4; the nightly's summary too): the
per-row table a person reads, which checks failed, which only warn, which
runs failed for another reason, the exit code they add up to.

Everything is read from the warehouse, the record of what was made: each
row's report (or its rejected batch) and its stored check verdicts
(``steps.row_checks``), and the table-wide verdicts built from them
(``steps.table_check``), so the nightly and ``boardgen calibrate`` print the
same table, and a table of any size costs one scan per dataset. A run that
failed is the engine's to say (the caller passes :class:`RunOutcome`
values). Plain data in, plain text out (with ``rich`` markup). A check of
severity warning (assertion E) never fails the verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from boardgen_pipeline.exits import Exit
from boardgen_pipeline.words import count

OK, FAIL, WARN = "[green]ok[/]", "[red]FAIL[/]", "[yellow]warn[/]"

ROW_COLUMNS = ("row", "target", "p10 p50 p90", "exits p/b/l", "retry", "F4", "ovl", "pub")
SHOW_ALL_ROWS = 60  # a larger table lists only its rows that fail or warn (the rest: `boardgen sql`)
LISTED_MAX = 200  # rows a summary lists at most (the counts are always complete)


@cache
def names():
    """The checks' names (``check_names``: no kernels load in a process that
    only prints them) and their short labels."""
    from types import SimpleNamespace

    from boardgen_pipeline import check_names as c

    return SimpleNamespace(
        overlay_checks=c.OVERLAYS, node_map_checks=c.NODE_MAPS, check_a1=c.CHECK_A1, check_e=c.CHECK_E,
        check_uniform=c.CHECK_UNIFORM, check_complete=c.CHECK_COMPLETE,
        overlay_labels={c.CHECK_DOMAIN: "cells safe/outside R0", c.CHECK_PACKS: "packs", c.CHECK_ONE_TYPE: "one type",
                        c.CHECK_BOSS: "Boss rule", c.CHECK_SKEW: "skew"},
        node_map_labels={c.CHECK_TEMPLATES: "templates valid", c.CHECK_DRAWS_DETERMINISTIC: "deterministic",
                         c.CHECK_UNIFORM: "uniform", c.CHECK_PROCEDURAL: "step-3 maps valid"},
        strata_labels={c.CHECK_COMPLETE: "complete"},
        f4_short=((c.CHECK_A, "A"), (c.CHECK_A2, "A''"), (c.CHECK_A1, "A'"), (c.CHECK_B, "B"), (c.CHECK_B1, "B'")))


REPORT_FIGURES = ("inferability_target", "p10", "p50", "p90", "passed", "best_legal", "least_bad", "retry_rate")


@dataclass(frozen=True)
class RunOutcome:
    """One run, as the engine recorded it: a label, its id, whether it
    succeeded, and what its failed steps said. ``verdict_only``: it failed
    only because rows it recorded fail their checks (each row's partition
    then reads as failed in the UI); those checks decide the exit code, not
    the run (docs/decisions/partition-verdicts.md)."""

    label: str
    run_id: str
    success: bool
    failure: str = ""
    verdict_only: bool = False


@dataclass
class Rows:
    """The rows worth printing: every row of a table of at most
    :data:`SHOW_ALL_ROWS`, else those that fail or warn (the first
    :data:`LISTED_MAX`), each ``{"boards": figures, "checks": {name: verdict}}``."""

    total: int = 0
    listed: dict = field(default_factory=dict)
    list_all: bool = True


def _figures(report: dict | None, published: bool) -> dict:
    if report is None:
        return {"published": published}
    r = {k: report.get(k) for k in REPORT_FIGURES}
    return {"target": r["inferability_target"], "p10": r["p10"], "p50": r["p50"], "p90": r["p90"],
            "exit_passed": r["passed"], "exit_best_legal": r["best_legal"], "exit_least_bad": r["least_bad"],
            "retry_rate": r["retry_rate"], "published": published}


def rejected_report(root, key: tuple[int, int], row) -> dict | None:
    """The report of a row's batch A' withheld (no report, no version): its
    rejected boards evaluated as a report would be; None when none is stored."""
    from boardgen_pipeline.calibration.batch import evaluate_row  # loads the kernels: only here
    from boardgen_pipeline.warehouse import publish

    try:
        records = publish.read_partition(publish.rejected_root(root), "boards", key)
    except (OSError, ValueError):
        return None
    return evaluate_row(row, records).as_dict()


def table_rows(root, catalog, samples: int, master_seed: int = 0, keys=None) -> Rows:
    """The rows of ``keys`` (default: every row of the table) as the
    warehouse holds them now: figures from the current report (a rejected
    batch has none: its boards are counted from its file), each check's
    verdict from the row's current ``row_checks`` (the verdicts that read
    other rows, E, judged on the table now: ``row_checks.cross_row_records``)."""
    from boardgen_pipeline.calibration.fingerprints import fingerprints_now, overlay_fingerprints_now, partition_key
    from boardgen_pipeline.steps import row_checks
    from boardgen_pipeline.warehouse import publish

    a1 = names().check_a1
    table = catalog.board_gen
    keys = list(keys if keys is not None else table.keys())
    now = fingerprints_now(table, samples, master_seed)
    overlays_now = overlay_fingerprints_now(catalog, samples, master_seed)
    reports = publish.read_row_records(root, "calibration_report", keys, columns=["batch_fingerprint", *REPORT_FIGURES])
    checks = publish.read_row_records(root, row_checks.DATASET, keys,
                                      columns=["asset", "check", "passed", "severity", "fingerprint"])
    out = Rows(total=len(keys), list_all=len(keys) <= SHOW_ALL_ROWS)
    cross = row_checks.cross_row_records(table, now)  # E reads the row's neighbours: judged on the table now
    for key in keys:
        pk = partition_key(key)
        want = {"boards": now.get(pk), "variant_overlays": overlays_now.get(pk)}
        stored = [r for r in checks.get(key, []) if want.get(r["asset"]) == r["fingerprint"]]
        if stored:
            stored = [r for r in stored if r["check"] not in row_checks.CROSS_ROW] + list(cross.get(pk, {}).values())
        verdicts = {r["check"]: {"passed": r["passed"], "severity": "WARN" if r["severity"] == "warning" else "ERROR"}
                    for r in stored}
        report = next((r for r in reports.get(key, []) if r.get("batch_fingerprint") == now.get(pk)), None)
        figures = _figures(report, True)
        if report is None and verdicts.get(a1, {}).get("passed") is False:  # a batch A' withheld: its figures
            rejected = rejected_report(root, key, table.rows[key])
            figures = _figures(rejected, False) if rejected is not None else {"published": False}
        failing = not all(v["passed"] for v in verdicts.values()) or not verdicts
        if (out.list_all or failing) and len(out.listed) < LISTED_MAX:
            out.listed[pk] = {"boards": figures if report is not None or not figures.get("published", True) else {},
                              "checks": verdicts}
    return out


@dataclass
class Verdict:
    """Failed checks, warnings and failed runs, each ``(key, name or run id, text)``."""

    failed_checks: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    failed_runs: list = field(default_factory=list)
    evaluated: int = 0

    def add_outcomes(self, key: str, outcomes) -> None:
        """Check outcomes (``outcomes.CheckOutcome``) judged together under ``key``."""
        for o in outcomes:
            self.evaluated += 1
            if not o.passed:
                (self.warnings if o.severity == "warning" else self.failed_checks).append((key, o.name, o.description))

    def add_checks(self, key: str, checks: dict) -> None:
        """Check results as the engine recorded them: ``{name: {passed,
        severity, description}}``."""
        for name, c in checks.items():
            self.evaluated += 1
            if not c["passed"]:
                (self.warnings if c["severity"] in ("WARN", "warning") else self.failed_checks).append(
                    (key, name, c["description"]))

    def add_runs(self, runs: list[RunOutcome]) -> None:
        for r in runs:
            if not r.success and not r.verdict_only:
                self.failed_runs.append((r.label, r.run_id, r.failure))

    @property
    def exit_code(self) -> int:
        """A failed run first (the calibration is incomplete: what its checks say
        of the missing rows follows from it), then a failed check."""
        if self.failed_runs:
            return Exit.RUN_FAILED
        if self.failed_checks:
            return Exit.CHECK_FAILED
        return Exit.OK

    def lines(self) -> list[str]:
        out = [f"checks: {self.evaluated} evaluated, {len(self.failed_checks)} failed, "
               f"{count(len(self.warnings), 'warning')}"]
        out += [f"  {FAIL} {key} {name}: {text}" for key, name, text in self.failed_checks]
        out += [f"  {WARN} {key} {name}: {text}" for key, name, text in self.warnings]
        out += [f"  [red]run failed[/] {key} (run {run_id}): {text}" for key, run_id, text in self.failed_runs]
        return out


def _short(value: float) -> str:
    """``.912`` for 0.912, ``1.00`` for 1: three figures in four characters."""
    return f"{value:.3f}"[1:] if 0 <= value < 1 else f"{value:.2f}"


def row_cells(key: str, info: dict) -> tuple[str, ...]:
    """One row of the F4 table (:data:`ROW_COLUMNS`, 80 columns) from a row's results."""
    n = names()
    b, checks = info.get("boards") or {}, info["checks"]
    failed = [short for name, short in n.f4_short if name in checks and not checks[name]["passed"]]
    e_warn = n.check_e in checks and not checks[n.check_e]["passed"]
    f4 = (f"[red]{' '.join(failed)}[/]" if failed else OK if checks else "-") + (" [yellow]E[/]" if e_warn else "")
    overlay = [checks[c]["passed"] for c in n.overlay_checks if c in checks]
    numbers = b and b.get("p10") is not None
    quantiles = " ".join(_short(float(b.get(q, 0.0))) for q in ("p10", "p50", "p90")) if numbers else "-"
    exits = "/".join(str(b.get(f"exit_{e}", "-")) for e in ("passed", "best_legal", "least_bad")) if numbers else "-"
    return (
        key, f"{float(b.get('target', 0)):.2f}" if numbers else "-", quantiles, exits,
        f"{float(b.get('retry_rate', 0)):.2f}" if numbers else "-", f4,
        ({True: OK, False: FAIL}[all(overlay)] if overlay else "-"),
        {True: "yes", False: "[red]no[/]"}.get(b.get("published"), "-"),
    )


def row_table(rows: dict, title: str):
    """The per-row F4 table (a ``rich`` Table that fits 80 columns), rows in key order."""
    from rich import box
    from rich.table import Table

    from boardgen_pipeline.calibration.fingerprints import row_key

    out = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1))
    for col in ROW_COLUMNS:
        out.add_column(col, justify="left" if col in ("row", "F4") else "right", no_wrap=True)
    for key in sorted(rows, key=row_key):
        out.add_row(*row_cells(key, rows[key]))
    return out


def rows_title(rows: Rows, samples: int) -> str:
    title = f"F4 calibration: {rows.total} rows x {samples} boards"
    return title if rows.list_all else f"{title}: the {len(rows.listed)} rows that fail or warn"


def print_rows(console, rows: Rows, samples: int) -> None:
    """The per-row table, and the count of rows not listed."""
    console.print(row_table(rows.listed, rows_title(rows, samples)))
    if not rows.list_all:
        console.print(f"{rows.total - len(rows.listed)} rows pass every check (not listed: {rows.total} > "
                      f"{SHOW_ALL_ROWS}; boardgen sql \"select * from calibration_report\")")


def group_line(label: str, checks: dict, names, short: dict, detail: str = "") -> str:
    """One line for a check group: each check's short name with ok/FAIL/warn
    (``-`` when not evaluated). ``checks``: ``{name: {passed, severity}}``."""
    parts = []
    for name in names:
        c = checks.get(name)
        if c is None:
            parts.append(f"{short[name]} -")
            continue
        mark = OK if c["passed"] else (WARN if c["severity"] in ("WARN", "warning") else FAIL)
        parts.append(f"{short[name]} {mark}")
    return f"{label}: " + ", ".join(parts) + (f"; {detail}" if detail else "")


def group_lines(overlays: dict, totals: dict, pools: dict | None) -> list[str]:
    """A line per check group beyond the F4 table: the overlay checks (over
    every row), node maps and strata, with the numbers that matter.
    ``overlays``: the overlay checks' table-wide verdicts; ``totals``: overlay
    totals; ``pools``: the node-map and strata checks and metadata."""
    n = names()
    out = [group_line("overlay checks", overlays, n.overlay_checks, n.overlay_labels,
                      f"{totals.get('variant_cells', 0)} variant cells, "
                      f"{totals.get('whole_board_boards', 0)} whole-board boards")]
    if pools is None:
        return [*out, "node-map checks: - (not run)"]
    checks = pools.get("checks", {})
    uniform = checks.get(n.check_uniform, {}).get("metadata", {})
    stats = uniform.get("statistics") or {}
    detail = ", ".join(f"L{lv} chi2 {stats[lv]:.2f} p {uniform['p_values'][lv]:.3f}" for lv in sorted(stats))
    draws = pools.get("node_map_draws") or {}
    dof = next(iter((uniform.get("dof") or {}).values()), "-")
    out.append(group_line("node-map checks", checks, n.node_map_checks, n.node_map_labels,
                          f"{draws.get('adventures', 0)} adventures x 2 branches"
                          + (f"; {detail} (dof {dof})" if detail else "")))
    st = pools.get("calibration_strata") or {}
    p50 = st.get("pool_p50") or {}
    pool_p50 = ", ".join(f"L{lv} {v:.3f}" if v is not None else f"L{lv} -" for lv, v in sorted(p50.items()))
    out.append(group_line("strata", checks, (n.check_complete,), n.strata_labels,
                          f"{st.get('templates', 0)} templates, pool p50 " + (pool_p50 or "-")))
    return out


def shown(path) -> str:
    """A path relative to the working directory when it is below it."""
    import os
    from pathlib import Path

    path = Path(path)
    return os.path.relpath(path) if path.absolute().is_relative_to(Path.cwd()) else str(path)


def print_nightly(console, root, catalog, samples: int, master_seed: int, checks: dict, runs: list[RunOutcome],
                  made: dict, timings: str, home, boardgen: str) -> int:
    """The nightly's closing summary (SPEC 8 ``make run``): the per-row table,
    a line per check group, the failed checks and runs, where to look;
    returns the exit code. ``checks``: the engine's check results of the
    batch; ``made``: the metadata of the table's assets it made."""
    from boardgen_pipeline.warehouse import datasets

    print_rows(console, table_rows(root, catalog, samples, master_seed), samples)
    verdict = Verdict()
    verdict.add_checks("table", checks)
    verdict.add_runs(runs)
    pools = {"checks": checks, "node_map_draws": made.get("node_map_draws"),
             "calibration_strata": made.get("calibration_strata")}
    for line in [*group_lines(checks, made.get("variant_overlays") or {}, pools), *verdict.lines()]:
        console.print(line)
    console.print(timings)
    console.print(f"warehouse:    {shown(root)}   Dagster home: {shown(home)}")
    console.print(f"charts:       {boardgen} chart   (the report chart and the difficulty curves, as PNG)")
    console.print("the UI:       make ui  ->  http://127.0.0.1:3000, Assets")
    console.print(f'SQL:          {boardgen} sql "select * from calibration_report"   '
                  f"(DuckDB file {shown(root / datasets.DB_NAME)})")
    return verdict.exit_code
