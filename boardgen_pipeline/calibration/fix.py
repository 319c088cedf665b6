"""The advisor's fix of a failing row, as one change of the table
(``boardgen advise --row L,D --apply``): the smallest change that passes,
the largest passing ``mine_density``, else the smallest passing
``r0_max_cap``, else the largest passing ``inferability_target`` within the
A'' floor; seed 001 F4).

A row fails when its F4 batch (the boards ``boardgen calibrate --samples N``
draws) fails A, A'', A', B or B'. A candidate passes twice: for the advisor
(a pass chance >= 99.9% on its own probe boards, ``calibration.advisor``,
whose target search stays in [0.85, 1]) and then on the row's F4 batch with
the candidate in place, so the fix written is one the next calibration of
the row at that sample count confirms (a value equal to the row's is thus
never a fix: the row as it is fails its batch).

:func:`apply_command` is the command line that applies the fix, which the
checks' descriptions name (the UI's path to the same fix).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from boardgen_pipeline.calibration import advisor, batch
from boardgen_pipeline.calibration.advisor import Advice
from boardgen_pipeline.tables.board_gen import BoardGenRow, BoardGenTable
from boardgen_pipeline.tables.edit import RowChange

FIX_ORDER = ("mine_density", "r0_max_cap", "inferability_target")

REPO_TABLES = Path(__file__).resolve().parents[2] / "tables"  # `boardgen`'s default without $BOARDGEN_TABLES


def failing_assertions(report: batch.RowReport) -> tuple[str, ...]:
    """The F4 assertions a row's batch fails (B and B' are None where they do not apply)."""
    flags = (("A", report.assertion_a), ("A''", report.assertion_a2), ("A'", report.assertion_a1),
             ("B", report.assertion_b), ("B'", report.assertion_b1))
    return tuple(name for name, holds in flags if holds is False)


@dataclass(frozen=True)
class RowFix:
    """One row's verdict on its F4 batch and, when it fails, the advice and
    the change that makes it pass (None: no fix in the domain)."""

    key: tuple[int, int]
    samples: int
    failing: tuple[str, ...]
    advice: Advice | None = None
    change: RowChange | None = None

    @property
    def passes(self) -> bool:
        return not self.failing

    def text(self) -> str:
        row = f"row ({self.key[0]},{self.key[1]})"
        if self.passes:
            return f"{row} already passes F4 on its {self.samples} calibration boards: nothing to apply"
        fails = f"{row} fails {', '.join(self.failing)} on its {self.samples} calibration boards"
        if self.change is None:
            return (f"{fails}: no mine_density, r0_max_cap or inferability_target in the domain makes it pass; "
                    "nothing to apply")
        c = self.change
        return f"{fails}: {c.field} {c.old} -> {c.new} makes it pass"


def _verdict(table: BoardGenTable, row: BoardGenRow, samples: int, master_seed: int) -> tuple[tuple[str, ...], list]:
    """The F4 assertions ``row`` fails on its batch, and the batch's records."""
    records = batch.run_row(replace(table, rows={**table.rows, row.key: row}), row.key, samples, master_seed)
    return failing_assertions(batch.evaluate_row(row, records)), records


def choose_change(table: BoardGenTable, row: BoardGenRow, advice: Advice, samples: int,
                  master_seed: int = 0) -> RowChange | None:
    """The first of the advice's values, in :data:`FIX_ORDER`, that changes
    the row and makes its F4 batch pass."""
    values = {"mine_density": advice.density, "r0_max_cap": advice.cap, "inferability_target": advice.target}
    for field in FIX_ORDER:
        value, old = values[field], getattr(row, field)
        if value is None:
            continue
        if not _verdict(table, row.model_copy(update={field: value}), samples, master_seed)[0]:
            return RowChange(row.key, field, old, value)
    return None


def fix_row(table: BoardGenTable, key: tuple[int, int], samples: int, probes: int = advisor.DEFAULT_PROBES,
            master_seed: int = 0) -> RowFix:
    """The row's verdict on ``samples`` boards and, if it fails, its fix."""
    row = table.rows[key]
    failing, records = _verdict(table, row, samples, master_seed)
    if not failing:
        return RowFix(key, samples, ())
    advice = advisor.advise(row, table.spawn_side, records, failing=True, samples=probes, master_seed=master_seed)
    return RowFix(key, samples, failing, advice, choose_change(table, row, advice, samples, master_seed))


def apply_command(keys: list[tuple[int, int]] | None, table_path: str | Path, samples: int,
                  master_seed: int = 0) -> str:
    """``boardgen advise --row ... --apply`` for ``keys`` (``--all`` for
    None), checked on the batch the caller judged (``--samples``) of the
    table at ``table_path`` (``--tables`` unless it
    is the repository's)."""
    parts = ["boardgen", "advise"]
    if keys is None:
        parts += ["--all", "--apply"]
    else:
        parts += ["--row", shlex.quote(" ".join(f"{level},{depth}" for level, depth in keys)), "--apply"]
    folder = Path(table_path).parent
    if folder.resolve() != REPO_TABLES:
        parts += ["--tables", shlex.quote(str(folder))]
    parts += ["--samples", str(samples)]
    if master_seed:
        parts += ["--master-seed", str(master_seed)]
    return " ".join(parts)
