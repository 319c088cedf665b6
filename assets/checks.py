"""Check outcomes as Dagster check results (SPEC 9 "asset checks";
a failing row's pictures first; the checks are table-wide).

The logic is the library's (``steps.table_check`` over every row's stored
verdicts, ``steps.stratify``, ``steps.draw_node_maps``); this module only
turns a plain ``CheckOutcome`` into an ``AssetCheckResult``: the verdict line
as its description (for the table-wide F4 check, followed by the failing
rows' pictures, which the UI shows at the top of the check's page), its
numbers as metadata, its pictures as Markdown entries.
"""

import dagster as dg

from boardgen_pipeline import outcomes

OVERVIEW = "overview"


def check_specs(asset_key: str, names, descriptions: dict) -> list[dg.AssetCheckSpec]:
    """One spec per check name, on ``asset_key``, table-wide (unpartitioned)."""
    return [dg.AssetCheckSpec(name, asset=asset_key, description=descriptions[name]) for name in names]


def _metadata_value(value):
    if isinstance(value, (list, tuple, dict)):
        return dg.MetadataValue.json(list(value) if isinstance(value, tuple) else value)
    if value is None:
        return dg.MetadataValue.null()
    return value


def check_result(outcome: outcomes.CheckOutcome, asset_key: str, overview: bool = False) -> dg.AssetCheckResult:
    """``outcome`` as the result of the check of that name on ``asset_key``;
    ``overview``: the description leads with the outcome's overview picture."""
    metadata = {k: dg.MetadataValue.md(v) for k, v in outcome.pictures.items() if k != OVERVIEW}
    metadata.update({k: _metadata_value(v) for k, v in outcome.metadata.items()})
    metadata["assertion"] = outcome.assertion
    text = outcome.description
    if overview and outcome.pictures.get(OVERVIEW):
        text = f"{text}\n\n{outcome.pictures[OVERVIEW]}"
    return dg.AssetCheckResult(
        asset_key=asset_key, check_name=outcome.name, passed=outcome.passed, description=text, metadata=metadata,
        severity=dg.AssetCheckSeverity.WARN if outcome.severity == "warning" else dg.AssetCheckSeverity.ERROR)
