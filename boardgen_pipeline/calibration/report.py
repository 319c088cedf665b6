"""Report C and diagnostics D of one row, with the advisor's reading (SPEC 7
"report C", "diagnostics D", 7.1 "facts for tuning"; seed 001 F4).
"""

from __future__ import annotations

from boardgen_pipeline.calibration import advisor
from boardgen_pipeline.calibration.batch import FAIRNESS_FIGURES, RowReport
from boardgen_pipeline.calibration.seeds import SeedBatch
from boardgen_pipeline.tables.board_gen import REPORTED_PARAMETERS


def row_advice(batch: SeedBatch, records: list[dict], report: RowReport) -> advisor.Advice:
    """The advisor's reading of a row: measured pass rate and its
    interval always; the searches only for rows failing A or A' or passing
    with little margin. Probes scale with the batch (tests use small N)."""
    failing = not (report.assertion_a and report.assertion_a1)
    probes = min(advisor.DEFAULT_PROBES, max(32, batch.samples))
    return advisor.advise(batch.row, batch.spawn_side, records, failing=failing, samples=probes,
                          master_seed=batch.master_seed)


# The row's table parameters, next to its figures (one query shows cause and effect); its
# target is among report C's figures already (RowReport.as_dict).
TABLE_PARAMETERS = tuple(name for name in REPORTED_PARAMETERS if name != "inferability_target")
# Columns that may be empty, with the type they hold when they are not (a file whose only
# record has None there would otherwise get an untyped "null" column).
NULLABLE_TYPES = {"advice_density": "double", "advice_r0_max_cap": "int64", "advice_target": "double",
                  "worst_scope": "int64", "assertion_b": "bool", "assertion_b1": "bool",
                  "assertion_f": "bool", "min_mean_survival": "double",
                  # the perfect player's figures: null where no board of the row was analysed
                  **{name: "int64" if name in ("fairness_boards", "fairness_not_analysed") else "double"
                     for name in FAIRNESS_FIGURES}}


def report_record(batch: SeedBatch, report: RowReport, records: list[dict] | None = None,
                  advice: advisor.Advice | None = None) -> dict:
    """Report C and diagnostics D of one row, with the fingerprints it came from
    (and the advisor's figures when the records are given). ``advice``: the
    row's reading (``row_advice`` of these records) when the caller has it
    already, e.g. from the row's checks: a failing row's searches generate
    thousands of probe boards, once."""
    extra = {}
    if records is not None:
        advice = advice or row_advice(batch, records, report)
        extra = {k: v for k, v in advice.as_dict().items() if k not in ("level_index", "node_depth")}
    row = batch.row
    return {
        **report.as_dict(),
        **{name: getattr(row, name) for name in TABLE_PARAMETERS if hasattr(row, name)},
        **extra,
        "cap_rejections": report.cap_rejections,
        "boss_row": batch.boss,
        "monotone_warnings": len(batch.monotone_findings),
        "row_fingerprint": batch.row_fingerprint,
        "batch_fingerprint": batch.batch_fingerprint,
    }


def report_schema(record: dict):
    """The report file's schema: each column's type from its value, and the
    declared type for the columns that may be empty (``NULLABLE_TYPES``)."""
    import pyarrow as pa

    fields = []
    for name, value in record.items():
        if name in ("level_index", "node_depth"):
            continue  # hive keys: in the path
        declared = NULLABLE_TYPES.get(name)
        fields.append(pa.field(name, pa.type_for_alias(declared) if declared else _value_type(value)))
    return pa.schema(fields)


def _value_type(value):
    """The type ``pa.array([value])`` infers, read off a plain Python value
    (bool, int in int64's range, float, str, None) without building an array
    a column; any other value goes through ``pa.array``."""
    import pyarrow as pa

    kind = type(value)
    if kind is bool:
        return pa.bool_()
    if kind is int and -(2**63) <= value < 2**63:
        return pa.int64()
    if kind is float:
        return pa.float64()
    if kind is str:
        return pa.string()
    if value is None:
        return pa.null()
    return pa.array([value]).type
