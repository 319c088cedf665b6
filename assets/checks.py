"""The F4 assertions as per-partition asset checks on ``boards`` (SPEC 7, 9;
issue 3 "Asset checks").

The checks are evaluated inside the ``boards`` step, on the batch it just
generated and *before* it is published (SPEC 10: a blocking check that fails
after the write would not un-write it), and returned with the
materialization. Each spec carries the asset's ``partitions_def``, so every
result belongs to one row's partition.

- A   ``a_no_board_below_target``   error
- A'' ``a_double_prime_target_floor`` error
- A'  ``a_prime_no_illegal_board``  error, blocking: downstream assets do not
  run, and the batch is written to ``_rejected/`` instead of ``boards/``
- B   ``b_fog_regions_placed``      error (fog rows; not applicable otherwise)
- B'  ``b_prime_no_fog_on_fogless_row`` error (rows without fog)
- E   ``e_monotone_in_depth``       warning (advisory)

The logic is ``boardgen_pipeline.calibration.assertions.check_outcomes``; this module only
turns its plain outcomes into Dagster results. The overlay, node-map and
strata checks use the same two helpers (``check_specs``, ``to_check_result``)
over ``steps.overlay_row``, ``steps.draw_node_maps`` and ``steps.stratify``.
"""


import dagster as dg

from boardgen_pipeline import outcomes
from boardgen_pipeline.calibration import assertions

from .partitions import board_rows

DESCRIPTIONS = {
    assertions.CHECK_A: "A: no board of the row below its inferability target (SPEC 7).",
    assertions.CHECK_A2: "A'': the row's inferability_target >= 0.85 (SPEC 7).",
    assertions.CHECK_A1: "A': no illegal board (exit least_bad). Blocking: an illegal batch is not published "
                          "and nothing downstream consumes it.",
    assertions.CHECK_B: "B: on a fog row, all fog regions placed on >= 95% of boards (SPEC 7); "
                         "passes as not applicable on rows without fog.",
    assertions.CHECK_B1: "B': no board carries fog on a row without fog (SPEC 7); passes as not applicable "
                          "on fog rows.",
    assertions.CHECK_E: "E: the fields the table declares monotone_in_depth do not decrease with depth "
                         "(advisory, warning severity).",
}
BLOCKING = {assertions.CHECK_A1}


def check_specs(asset_key: str, names, descriptions: dict, blocking=(), partitions_def=None
                ) -> list[dg.AssetCheckSpec]:
    """One spec per check name; ``partitions_def`` is the asset's (per-partition
    checks, SPEC 10) or None for an unpartitioned asset."""
    return [
        dg.AssetCheckSpec(name, asset=asset_key, description=descriptions[name], blocking=name in blocking,
                          partitions_def=partitions_def)
        for name in names
    ]


def board_check_specs(asset_key: str = "boards") -> list[dg.AssetCheckSpec]:
    return check_specs(asset_key, assertions.CHECKS, DESCRIPTIONS, BLOCKING, board_rows)


def _metadata_value(value):
    if isinstance(value, (list, tuple, dict)):
        return dg.MetadataValue.json(list(value) if isinstance(value, tuple) else value)
    if value is None:
        return dg.MetadataValue.null()
    return value


def _metadata(outcome: outcomes.CheckOutcome, per_row: bool = False) -> dict:
    """The check's metadata. ``per_row``: the numbers go into one JSON entry,
    ``figures``, because Dagster plots every numeric entry as one series over
    the evaluations, which across row partitions zig-zags from row to row
    (issue 13)."""
    metadata = {k: dg.MetadataValue.md(v) for k, v in outcome.pictures.items() if k != OVERVIEW}
    numbers = {k: v for k, v in outcome.metadata.items()
               if per_row and isinstance(v, (int, float)) and not isinstance(v, bool)}
    metadata.update({k: _metadata_value(v) for k, v in outcome.metadata.items() if k not in numbers})
    if numbers:
        metadata["figures"] = dg.MetadataValue.json(numbers)
    metadata["assertion"] = outcome.assertion
    return metadata


OVERVIEW = "overview"


def _description(outcome: outcomes.CheckOutcome) -> str:
    """The verdict line, then the outcome's overview when it has one (the
    table-wide check: each failing row's fix and pictures). The UI renders an
    unpartitioned check's latest description as Markdown at the top of the
    check's page, so the pictures are what a person sees first (issue 13);
    the verdict line alone is the first paragraph (the terminal prints only
    that). A row partition's description stays one line: the Partitions pane
    shows it as plain text."""
    overview = outcome.pictures.get(OVERVIEW)
    return f"{outcome.description}\n\n{overview}" if overview else outcome.description


def _severity(outcome: outcomes.CheckOutcome) -> dg.AssetCheckSeverity:
    return dg.AssetCheckSeverity.WARN if outcome.severity == "warning" else dg.AssetCheckSeverity.ERROR


def to_check_result(outcome: outcomes.CheckOutcome) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        check_name=outcome.name,
        passed=outcome.passed,
        severity=_severity(outcome),
        description=_description(outcome),
        metadata=_metadata(outcome),
    )


def _targets(context: dg.AssetExecutionContext, asset_key: dg.AssetKey, partitions: list[str]) -> dict:
    """The materialization each partition's evaluation is about: the newest one
    of that partition (this step's own, written just before)."""
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=partitions), limit=len(partitions)).records
    out = {}
    for rec in records:
        partition = rec.partition_key
        if partition not in out:
            out[partition] = AssetCheckEvaluationTargetMaterializationData(
                storage_id=rec.storage_id, run_id=rec.run_id, timestamp=rec.timestamp)
    return out


def partition_check_events(context: dg.AssetExecutionContext, asset_key: str, by_partition: dict,
                           extra: list | None = None):
    """The check results of a step that covers a range of row partitions
    (``BackfillPolicy.single_run``): one evaluation per (partition, check),
    each recorded against its own partition, so the UI shows every row's
    checks as if each row had had its own run (Dagster's ``AssetCheckResult``
    takes the partition from a single-partition step only).

    Yield these *after* the ``MaterializeResult``: each evaluation then targets
    its partition's new materialization. Blocking (A') acts as Dagster's
    blocking check when the step covers one partition; over a range, the
    library withholds the failing row's batch and the steps downstream skip
    that row, so one illegal row does not stop the other rows (docs/decisions.md).
    ``extra``: unpartitioned outcomes on the same asset (the summary check)."""
    key = dg.AssetKey(asset_key)
    selected = {k.name for k in context.selected_asset_check_keys if k.asset_key == key}
    for name in sorted(selected):
        yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(
            dg.AssetCheckKey(key, name)))
    single = len(by_partition) == 1
    targets = _targets(context, key, list(by_partition))
    for partition, outcome_list in by_partition.items():
        for outcome in outcome_list:
            if outcome.name not in selected:
                continue
            yield dg.AssetCheckEvaluation(
                asset_key=key, check_name=outcome.name, passed=outcome.passed,
                metadata=_metadata(outcome, per_row=True), severity=_severity(outcome),
                description=outcome.description, blocking=outcome.blocking and single, partition=partition,
                target_materialization_data=targets.get(partition))
    for outcome in extra or ():
        if outcome.name in selected:
            yield dg.AssetCheckEvaluation(
                asset_key=key, check_name=outcome.name, passed=outcome.passed, metadata=_metadata(outcome),
                severity=_severity(outcome), description=_description(outcome), blocking=False)
