"""The corridor as the warehouse holds the calibration (SPEC 12: "a corridor
the nightly checks"; SPEC 9 asset checks): each targeted row's figure from
its stored report (report C's value, as ``boardgen curve`` exports it) and
its interval from its stored boards, judged by ``corridor``.

A row is judged only on its current batch (its stored report's batch
fingerprint is the table's now, at the night's N and master seed); a row
without one is named as not calibrated, not judged: a stale report is
another row version's curve.
"""

from __future__ import annotations

from pathlib import Path

from boardgen_pipeline.calibration.fingerprints import fingerprints_now, partition_key
from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.tables.board_gen import BoardGenTable
from boardgen_pipeline.tables.curve_targets import FIGURES, CurveTargets
from boardgen_pipeline.tuning import corridor, figures
from boardgen_pipeline.warehouse import publish

REPORT, BOARDS = "calibration_report", "boards"


def verdicts(root: Path, table: BoardGenTable, targets: CurveTargets, samples: int,
             master_seed: int = 0) -> tuple[list[corridor.Verdict], list[str]]:
    """Every targeted row's verdict on its stored current batch, and the
    targeted rows that have none (module docstring)."""
    now = fingerprints_now(table, samples, master_seed)
    keys = [k for k in targets.keys() if k in table.rows]
    columns = sorted({FIGURES[t.figure].report for t in targets.rows.values()} | {"batch_fingerprint"})
    reports = publish.read_row_records(root, REPORT, keys, columns=columns)
    current = [k for k in keys if (reports.get(k) or [{}])[0].get("batch_fingerprint") == now[partition_key(k)]]
    fields = sorted({figures.KINDS[t.figure].field for t in targets.rows.values()} | {"won"})
    boards = publish.read_row_records(root, BOARDS, current, columns=fields)
    out, missing = [], [partition_key(k) for k in keys if k not in current]
    for key in current:
        target = targets.rows[key]
        records = boards.get(key)
        if not records:
            missing.append(partition_key(key))
            continue
        out.append(corridor.judge(target, figures.estimate(target.figure, records, reports[key][0])))
    return out, sorted(missing)


def outcome(root: Path, table: BoardGenTable, targets: CurveTargets | None, samples: int,
            master_seed: int = 0) -> CheckOutcome:
    """The nightly's corridor check over the warehouse at ``root``."""
    if targets is None:
        return corridor.outcome(None, [])
    judged, missing = verdicts(Path(root), table, targets, samples, master_seed)
    return corridor.outcome(targets, judged, missing)
