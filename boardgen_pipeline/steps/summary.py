"""The nightly's closing verdict (SPEC 7 "assertions", SPEC 8 ``make run``;
seed 001 F4): which checks failed, which only warn, which runs failed for
another reason, the exit code they add up to, and the lines a person reads.

:class:`Tally` sums up the rows a run records as they go by (checks evaluated
and failed per check, the failing ones with their words, the figures of the
rows worth printing, overlay totals): the row step records it in the run's
log, so the nightly reads one event, not every event of the run (issue 22:
nothing grows with the rows). Plain data in, plain text out (with ``rich``
markup). A check of severity ``WARN`` (assertion E) never fails the run.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from boardgen_pipeline.calibration import assertions
from boardgen_pipeline.steps import draw_node_maps, stratify
from boardgen_pipeline.steps.chain import RowResult
from boardgen_pipeline.variants import outcomes as overlay_checks

EXIT_OK, EXIT_TABLE, EXIT_CHECK, EXIT_RUN = 0, 1, 3, 4
# a warehouse/storage fault (disk full, read-only, damaged file, corrupt runs.db;
# issue 14): ``errors.WarehouseError``
EXIT_STORAGE = 5

OK, FAIL, WARN = "[green]ok[/]", "[red]FAIL[/]", "[yellow]warn[/]"

OVERLAY_LABELS = {overlay_checks.CHECK_DOMAIN: "cells safe/outside R0", overlay_checks.CHECK_PACKS: "packs",
                  overlay_checks.CHECK_ONE_TYPE: "one type", overlay_checks.CHECK_BOSS: "Boss rule",
                  overlay_checks.CHECK_SKEW: "skew"}
NODE_MAP_LABELS = {draw_node_maps.CHECK_TEMPLATES: "templates valid",
                   draw_node_maps.CHECK_DETERMINISTIC: "deterministic",
                   draw_node_maps.CHECK_UNIFORM: "uniform", draw_node_maps.CHECK_PROCEDURAL: "step-3 maps valid"}
STRATA_LABELS = {stratify.CHECK_COMPLETE: "complete"}

ROW_COLUMNS = ("row", "target", "p10 p50 p90", "exits p/b/l", "retry", "F4", "ovl", "pub")
F4_SHORT = ((assertions.CHECK_A, "A"), (assertions.CHECK_A2, "A''"), (assertions.CHECK_A1, "A'"),
            (assertions.CHECK_B, "B"), (assertions.CHECK_B1, "B'"))
POOL_CHECKS = frozenset((*draw_node_maps.CHECKS, stratify.CHECK_COMPLETE))
SHOW_ALL_ROWS = 60  # a larger run lists only its rows that fail or warn (the rest: `boardgen sql`)
LISTED_MAX = 200  # rows and failures a tally keeps words for (the counts are always complete)
ROW_FIGURES = ("target", "p10", "p50", "p90", "exit_passed", "exit_best_legal", "exit_least_bad", "retry_rate",
               "published")
TALLY_MESSAGE = "boardgen rows recorded"


@dataclass
class Tally:
    """A run's rows, summed up (module docstring). ``list_all``: keep every
    row's figures (a run of at most :data:`SHOW_ALL_ROWS` rows)."""

    list_all: bool = True
    rows: int = 0
    evaluated: Counter = field(default_factory=Counter)
    failed: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)  # (row, check, severity, description), the first LISTED_MAX
    listed: dict = field(default_factory=dict)  # row -> {"boards": figures, "checks": {name: verdict}}
    variant_cells: int = 0
    whole_board_boards: int = 0
    generation_seconds: float = 0.0

    def add(self, result: RowResult, recorded=None) -> None:
        """One recorded row; ``recorded``: the names of the checks recorded
        (default: all of the row's outcomes)."""
        partition, figures = result.partition_key, result.figures
        self.rows += 1
        checks = {}
        for o in (o for found in result.outcomes.values() for o in found):
            if recorded is not None and o.name not in recorded:
                continue
            self.evaluated[o.name] += 1
            checks[o.name] = {"passed": o.passed, "severity": "WARN" if o.severity == "warning" else "ERROR"}
            if not o.passed:
                self.failed[o.name] += 1
                if len(self.failures) < LISTED_MAX:
                    self.failures.append((partition, o.name, checks[o.name]["severity"], o.description))
        overlays = figures.get("variant_overlays") or {}
        self.variant_cells += int(overlays.get("variant_cells", 0))
        self.whole_board_boards += int(overlays.get("whole_board_boards", 0))
        boards = figures.get("boards") or {}
        self.generation_seconds += result.seconds.get("generate", 0.0)
        if (self.list_all or not all(c["passed"] for c in checks.values())) and len(self.listed) < LISTED_MAX:
            self.listed[partition] = {"boards": {k: boards[k] for k in ROW_FIGURES if k in boards}, "checks": checks}

    def as_dict(self) -> dict:
        return {"list_all": self.list_all, "rows": self.rows, "evaluated": dict(self.evaluated),
                "failed": dict(self.failed), "failures": [list(f) for f in self.failures], "listed": self.listed,
                "variant_cells": self.variant_cells, "whole_board_boards": self.whole_board_boards,
                "generation_seconds": round(self.generation_seconds, 3)}

    @classmethod
    def from_dict(cls, data: dict) -> Tally:
        return cls(list_all=data["list_all"], rows=data["rows"], evaluated=Counter(data["evaluated"]),
                   failed=Counter(data["failed"]), failures=[tuple(f) for f in data["failures"]],
                   listed=data["listed"], variant_cells=data["variant_cells"],
                   whole_board_boards=data["whole_board_boards"], generation_seconds=data["generation_seconds"])

    def merge(self, other: Tally) -> None:
        """Another step's rows (a run may record rows in more than one step)."""
        self.list_all = self.list_all and other.list_all
        self.rows += other.rows
        self.evaluated.update(other.evaluated)
        self.failed.update(other.failed)
        self.failures = (self.failures + other.failures)[:LISTED_MAX]
        self.listed.update(dict(list(other.listed.items())[:max(0, LISTED_MAX - len(self.listed))]))
        self.variant_cells += other.variant_cells
        self.whole_board_boards += other.whole_board_boards
        self.generation_seconds += other.generation_seconds

    @property
    def checks_evaluated(self) -> int:
        return sum(self.evaluated.values())


@dataclass
class Verdict:
    """Failed checks, warnings and failed runs, each ``(key, name or run id, text)``."""

    failed_checks: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    failed_runs: list = field(default_factory=list)

    def add_tally(self, tally: Tally) -> None:
        """The rows' failed checks (words for the first ``LISTED_MAX``; the
        rest counted in one line)."""
        for row, name, severity, text in tally.failures:
            (self.warnings if severity == "WARN" else self.failed_checks).append((row, name, text))
        unlisted = sum(tally.failed.values()) - len(tally.failures)
        if unlisted > 0:
            self.failed_checks.append(("...", f"{unlisted} more", "failed checks not listed (boardgen sql)"))

    def add_run(self, key: str, run_id: str, success: bool, collected: dict) -> None:
        """One run's checks; the run itself counts as failed only when it
        failed without a failed check to say why."""
        for name, c in collected["checks"].items():
            if not c["passed"]:
                (self.warnings if c["severity"] == "WARN" else self.failed_checks).append(
                    (key, name, c["description"]))
        if not success and not any(k == key for k, _, _ in self.failed_checks):
            self.failed_runs.append((key, run_id, collected.get("failure", "")))

    @property
    def exit_code(self) -> int:
        if self.failed_checks:
            return EXIT_CHECK
        if self.failed_runs:
            return EXIT_RUN
        return EXIT_OK

    def lines(self, checks_evaluated: int) -> list[str]:
        out = [f"checks: {checks_evaluated} evaluated, {len(self.failed_checks)} failed, "
               f"{len(self.warnings)} warning(s)"]
        out += [f"  {FAIL} {key} {name}: {text}" for key, name, text in self.failed_checks]
        out += [f"  {WARN} {key} {name}: {text}" for key, name, text in self.warnings]
        out += [f"  [red]run failed[/] {key} (run {run_id}): {text}" for key, run_id, text in self.failed_runs]
        return out


def _short(value: float) -> str:
    """``.912`` for 0.912, ``1.00`` for 1: three figures in four characters."""
    return f"{value:.3f}"[1:] if 0 <= value < 1 else f"{value:.2f}"


def row_cells(key: str, info: dict) -> tuple[str, ...]:
    """One row of the F4 table (:data:`ROW_COLUMNS`, 80 columns) from a row's results."""
    b, checks = info.get("boards") or {}, info["checks"]
    failed = [short for name, short in F4_SHORT if name in checks and not checks[name]["passed"]]
    e_warn = assertions.CHECK_E in checks and not checks[assertions.CHECK_E]["passed"]
    f4 = (f"[red]{' '.join(failed)}[/]" if failed else OK if checks else "-") + (" [yellow]E[/]" if e_warn else "")
    overlay = [checks[n]["passed"] for n in overlay_checks.CHECKS if n in checks]
    quantiles = " ".join(_short(float(b.get(q, 0.0))) for q in ("p10", "p50", "p90")) if b else "-"
    exits = "/".join(str(b.get(f"exit_{e}", "-")) for e in ("passed", "best_legal", "least_bad")) if b else "-"
    return (
        key, f"{float(b.get('target', 0)):.2f}" if b else "-", quantiles, exits,
        f"{float(b.get('retry_rate', 0)):.2f}" if b else "-", f4,
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


def group_line(label: str, checks: list, names, short: dict, detail: str = "") -> str:
    """One line for a check group: each check's short name with ok/FAIL/warn
    (counted over the runs that evaluated it). ``checks``: ``(name, result)``."""
    parts = []
    for name in names:
        results = [c for c in checks if c[0] == name]
        if not results:
            parts.append(f"{short[name]} -")
            continue
        bad = [c for c in results if not c[1]["passed"]]
        warn = bad and all(c[1]["severity"] == "WARN" for c in bad)
        mark = OK if not bad else (WARN if warn else FAIL)
        count = f" ({len(results) - len(bad)}/{len(results)})" if len(results) > 1 else ""
        parts.append(f"{short[name]} {mark}{count}")
    return f"{label}: " + ", ".join(parts) + (f"; {detail}" if detail else "")


def group_lines(tally: Tally, pools: dict | None) -> list[str]:
    """A line per check group beyond the F4 table: overlays (per row), node
    maps and strata (the pools run), with the numbers that matter."""
    parts = []
    for name in overlay_checks.CHECKS:
        n, bad = tally.evaluated.get(name, 0), tally.failed.get(name, 0)
        mark = "-" if not n else (OK if not bad else FAIL)
        parts.append(f"{OVERLAY_LABELS[name]} {mark}" + (f" ({n - bad}/{n})" if n > 1 else ""))
    out = ["overlay checks: " + ", ".join(parts)
           + f"; {tally.variant_cells} variant cells, {tally.whole_board_boards} whole-board boards"]
    if pools is None:
        return [*out, "node-map checks: - (pools run not started)"]
    checks = list(pools["checks"].items())
    uniform = pools["checks"].get(draw_node_maps.CHECK_UNIFORM, {}).get("metadata", {})
    stats = uniform.get("statistics") or {}
    detail = ", ".join(f"L{lv} chi2 {stats[lv]:.2f} p {uniform['p_values'][lv]:.3f}" for lv in sorted(stats))
    draws = pools.get("node_map_draws") or {}
    dof = next(iter((uniform.get("dof") or {}).values()), "-")
    out.append(group_line("node-map checks", checks, draw_node_maps.CHECKS, NODE_MAP_LABELS,
                          f"{draws.get('adventures', 0)} adventures x 2 branches"
                          + (f"; {detail} (dof {dof})" if detail else "")))
    st = pools.get("calibration_strata") or {}
    p50 = st.get("pool_p50") or {}
    pool_p50 = ", ".join(f"L{lv} {v:.3f}" if v is not None else f"L{lv} -" for lv, v in sorted(p50.items()))
    out.append(group_line("strata", checks, (stratify.CHECK_COMPLETE,), STRATA_LABELS,
                          f"{st.get('templates', 0)} templates, pool p50 " + (pool_p50 or "-")))
    return out
