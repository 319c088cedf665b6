"""Check outcomes as Dagster check results, and the F4 assertions' specs
(SPEC 7, 9; issue 3 "Asset checks").

The F4 checks are evaluated by the row's chain on the batch it just
generated and *before* it is published (SPEC 10: a blocking check that fails
after the write would not un-write it), and recorded right after the row's
materialization. Each spec carries the asset's ``partitions_def``, so every
result belongs to one row's partition.

- A   ``a_no_board_below_target``   error
- A'' ``a_double_prime_target_floor`` error
- A'  ``a_prime_no_illegal_board``  error, blocking: downstream assets do not
  run, and the batch is written to ``_rejected/`` instead of ``boards/``
- B   ``b_fog_regions_placed``      error (fog rows; not applicable otherwise)
- B'  ``b_prime_no_fog_on_fogless_row`` error (rows without fog)
- E   ``e_monotone_in_depth``       warning (advisory)

The logic is ``boardgen_pipeline.calibration.assertions``; this module only
turns plain outcomes into Dagster results. The overlay, node-map and strata
checks use the same helpers (``check_specs``, ``evaluation``,
``to_check_result``) over ``variants.outcomes``, ``steps.draw_node_maps`` and
``steps.stratify``.
"""


import dagster as dg

from boardgen_pipeline import outcomes
from boardgen_pipeline.calibration import assertions

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
def check_specs(asset_key: str, names, descriptions: dict, blocking=(), partitions_def=None
                ) -> list[dg.AssetCheckSpec]:
    """One spec per check name; ``partitions_def`` is the asset's (per-partition
    checks, SPEC 10) or None for an unpartitioned asset."""
    return [
        dg.AssetCheckSpec(name, asset=asset_key, description=descriptions[name], blocking=name in blocking,
                          partitions_def=partitions_def)
        for name in names
    ]


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


def to_check_result(outcome: outcomes.CheckOutcome, asset_key: str | None = None) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=asset_key,
        check_name=outcome.name,
        passed=outcome.passed,
        severity=_severity(outcome),
        description=_description(outcome),
        metadata=_metadata(outcome),
    )


def check_outputs(context: dg.AssetExecutionContext, besides=()):
    """The step's output for each selected check but those of the assets
    ``besides`` (whose ``MaterializeResult`` carries its check results). The
    verdicts themselves are ``AssetCheckEvaluation`` events (:func:`evaluation`),
    one per row partition and check: Dagster's ``AssetCheckResult`` takes the
    partition from a single-partition step only."""
    for key in sorted(context.selected_asset_check_keys, key=lambda k: (k.asset_key.to_user_string(), k.name)):
        if key.asset_key.to_user_string() not in besides:
            yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(key))


def evaluation(outcome: outcomes.CheckOutcome, asset_key: str, partition: str | None, target,
               blocking: bool, overview: bool = False) -> dg.AssetCheckEvaluation:
    """One check result as an event: for a row partition (its figures in one
    JSON entry, its description one line) against the materialization
    ``target`` it judges, or unpartitioned (``overview``: the description
    leads with the failing rows' pictures)."""
    return dg.AssetCheckEvaluation(
        asset_key=dg.AssetKey(asset_key), check_name=outcome.name, passed=outcome.passed,
        metadata=_metadata(outcome, per_row=partition is not None), severity=_severity(outcome),
        description=_description(outcome) if overview else outcome.description, blocking=blocking,
        partition=partition, target_materialization_data=target)
