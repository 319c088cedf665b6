"""One row's calibration as plain steps: seed batch -> boards -> F4 checks ->
report (SPEC 7, 9; seed 001 "F4 批量统计断言"; issue 3).

The Dagster assets in ``assets/`` are thin wiring over these functions; the
CLI (``boardgen calibrate``) and the tests can call them without Dagster.

- :func:`seed_batch`: the row's batch plan, ``derive_at("board_gen",
  sigma(L, D) + i)`` for ``i < N``, with everything that decides its boards
  (row fields, spawn side, N, master seed) and their fingerprint.
- :func:`generate_batch`: the boards of a batch (``calibration.batch.run_row``), each record
  tagged with the fingerprints, so the warehouse says which row version made it.
- :func:`check_outcomes`: assertions A, A'', A', B, B' and E of one row as values with
  the numbers a designer needs and the pictures (``pictures``).
- :func:`report_record`: report C and diagnostics D of one row (one record of
  the ``calibration_report`` dataset).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boardgen_pipeline.calibration.assertions import CHECK_A1, check_outcomes
from boardgen_pipeline.calibration.batch import RowReport, evaluate_row
from boardgen_pipeline.calibration.seeds import SeedBatch, generate_batch
from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.warehouse import publish


@dataclass
class RowResult:
    """What one row's calibration produced: its boards, report, check outcomes,
    and where the boards went (published, or rejected for illegal boards)."""

    batch: SeedBatch
    records: list[dict]
    report: RowReport
    outcomes: list[CheckOutcome]
    published: bool
    path: str
    seconds: dict = field(default_factory=dict)  # wall time per stage, for the run's metadata only

    def outcome(self, name: str) -> CheckOutcome:
        return next(o for o in self.outcomes if o.name == name)

    def summary(self) -> dict:
        r = self.report
        return {
            "row": self.batch.row.key_text,
            "samples": r.samples,
            "target": r.target,
            "p10": r.p10,
            "p50": r.p50,
            "p90": r.p90,
            "exit_passed": r.exits.get("passed", 0),
            "exit_best_legal": r.exits.get("best_legal", 0),
            "exit_least_bad": r.exits.get("least_bad", 0),
            "retry_rate": r.retry_rate,
            "mean_attempts": r.mean_attempts,
            "cap_rejections": r.cap_rejections,
            "below_target": len(r.below_target_scopes),
            "illegal": len(r.illegal_scopes),
            "published": self.published,
            "row_fingerprint": self.batch.row_fingerprint,
            "batch_fingerprint": self.batch.batch_fingerprint,
        }


def run_batch(root, batch: SeedBatch, client=None) -> RowResult:
    """Generate a row's boards, evaluate its checks, then publish them, or,
    when any board is illegal (assertion A', blocking), reject them: validate
    before publishing (SPEC 10)."""
    from time import perf_counter


    t0 = perf_counter()
    records = generate_batch(batch, client)
    t1 = perf_counter()
    report = evaluate_row(batch.row, records)
    outcomes = check_outcomes(batch, records, report)
    t2 = perf_counter()
    legal = next(o for o in outcomes if o.name == CHECK_A1).passed
    if legal:
        path = publish.publish_boards(root, batch.key, records)
    else:
        path = publish.reject_boards(root, batch.key, records)
    seconds = {"generate": t1 - t0, "checks": t2 - t1, "write": perf_counter() - t2}
    return RowResult(batch, records, report, outcomes, legal, str(path), seconds)
