"""Check outcomes as Dagster check evaluations (SPEC 9 "asset checks";
a failing row's pictures first; the checks are table-wide).

The logic is the library's (``steps.table_check`` over every row's stored
verdicts, ``steps.stratify``, ``steps.draw_node_maps``); this module only
turns a plain ``CheckOutcome`` into an ``AssetCheckEvaluation``: the verdict
line as its description (for the table-wide F4 check, followed by the failing
rows' pictures, which the UI shows at the top of the check's page), its
numbers as metadata (rounded for reading: ``words.rounded``), its pictures as
Markdown entries.

**Evaluated now, never "not evaluated".** A table-wide check judges the
warehouse as it is when the check runs, not one materialization. Yielded as an
``AssetCheckResult`` from a step of one row partition, Dagster ties the result
to that partition's latest materialization; when the run withheld the row (an
illegal batch, a failing row: docs/decisions/partition-verdicts.md), that is
an older materialization than the asset's latest, and the UI's Checks tab read
every check of ``boards`` as "Not evaluated". An ``AssetCheckEvaluation``
yielded as it is carries no target materialization, so the UI takes it as
evaluated after the asset's latest materialization, which it is.
"""

import dagster as dg

from boardgen_pipeline import outcomes
from boardgen_pipeline.words import rounded

OVERVIEW = "overview"


def check_specs(asset_key: str, names, descriptions: dict) -> list[dg.AssetCheckSpec]:
    """One spec per check name, on ``asset_key``, table-wide (unpartitioned)."""
    return [dg.AssetCheckSpec(name, asset=asset_key, description=descriptions[name]) for name in names]


def metadata_value(value):
    """A plain value as the metadata entry a person reads: floats rounded,
    lists and dicts as JSON, None as null."""
    value = rounded(value)
    if isinstance(value, (list, tuple, dict)):
        return dg.MetadataValue.json(list(value) if isinstance(value, tuple) else value)
    if value is None:
        return dg.MetadataValue.null()
    return value


def _fields(outcome: outcomes.CheckOutcome, overview: bool) -> dict:
    metadata = {k: dg.MetadataValue.md(v) for k, v in outcome.pictures.items() if k != OVERVIEW}
    metadata.update({k: metadata_value(v) for k, v in outcome.metadata.items()})
    metadata["assertion"] = outcome.assertion
    text = outcome.description
    if overview and outcome.pictures.get(OVERVIEW):
        text = f"{text}\n\n{outcome.pictures[OVERVIEW]}"
    return {"check_name": outcome.name, "passed": outcome.passed, "description": text, "metadata": metadata,
            "severity": dg.AssetCheckSeverity.WARN if outcome.severity == "warning" else dg.AssetCheckSeverity.ERROR}


def check_evaluation(outcome: outcomes.CheckOutcome, asset_key: str, overview: bool = False) -> dg.AssetCheckEvaluation:
    """``outcome`` as the evaluation of the check of that name on
    ``asset_key``, evaluated now (module docstring); ``overview``: the
    description leads with the outcome's overview picture."""
    return dg.AssetCheckEvaluation(asset_key=dg.AssetKey(asset_key), blocking=False, **_fields(outcome, overview))


def check_result(outcome: outcomes.CheckOutcome, asset_key: str) -> dg.AssetCheckResult:
    """``outcome`` as the result of a check returned with the materialization
    it judges (``node_map_draws``: the check and its asset, one step)."""
    return dg.AssetCheckResult(asset_key=asset_key, **_fields(outcome, False))
