"""A row's ``calibration_report`` record, computed from its published boards
(SPEC 7 "report C", "diagnostics D"; seed 001 F4; issue 3)."""

from __future__ import annotations

from boardgen_pipeline.calibration.batch import evaluate_row
from boardgen_pipeline.calibration.report import report_record
from boardgen_pipeline.calibration.seeds import SeedBatch
from boardgen_pipeline.warehouse import publish


def write_row_report(root, batch: SeedBatch) -> tuple[dict, str]:
    """Report C and diagnostics D of a row, computed from its *published*
    boards (a rejected batch has none: FileNotFoundError), written to the
    ``calibration_report`` dataset."""

    records = publish.read_partition(root, "boards", batch.key)
    fps = {r.get("batch_fingerprint") for r in records}
    if fps != {batch.batch_fingerprint}:
        raise ValueError(f"published boards of row {batch.row.key_text} were made from batch {sorted(map(str, fps))}, "
                         f"not {batch.batch_fingerprint}: regenerate the boards first")
    record = report_record(batch, evaluate_row(batch.row, records), records)
    path = publish.write_report(root, batch.key, record)
    return record, str(path)
