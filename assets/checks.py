"""Check outcomes as Dagster check evaluations (SPEC 9 "asset checks";
a failing row's pictures first; the checks are table-wide).

The logic is the library's (``steps.table_check`` over every row's stored
verdicts, ``steps.stratify``, ``steps.draw_node_maps``); this module only
turns a plain ``CheckOutcome`` into an ``AssetCheckEvaluation``: the verdict
line as its description (for the table-wide F4 check, followed by the failing
rows' pictures, which the UI shows at the top of the check's page), its
numbers as metadata (rounded for reading: ``words.rounded``), its pictures as
Markdown entries.

**Never "not evaluated" after a run that judged the rows.** The UI shows a
check's latest execution when it targets the asset's latest materialization.
An ``AssetCheckResult`` targets what the engine finds: in a step without a
partition (the table run, a range), the asset's latest materialization, which
matches; in a step of one row partition, *that row's* latest
materialization. When the run did not materialize the row (an illegal batch,
a failing row: docs/decisions/partition-verdicts.md), that is an older one
than the asset's latest, and every check of ``boards`` read "Not evaluated".
There (``now=True``) the check is an ``AssetCheckEvaluation`` with no target,
which the UI takes as evaluated after the asset's latest materialization (by
the time of the check's planned row: one-second resolution on SQLite, so an
``AssetCheckResult``, which names its target exactly, is kept everywhere
else: a table run planned within the second of the rows run's last
materialization read "Not evaluated" otherwise).
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


def check_result(outcome: outcomes.CheckOutcome, asset_key: str, overview: bool = False,
                 now: bool = False) -> dg.AssetCheckResult | dg.AssetCheckEvaluation:
    """``outcome`` as the result of the check of that name on ``asset_key``;
    ``overview``: the description leads with the outcome's overview picture;
    ``now``: an evaluation of the warehouse as it stands, with no target
    materialization (module docstring: a row partition the run did not
    materialize)."""
    if now:
        return dg.AssetCheckEvaluation(asset_key=dg.AssetKey(asset_key), blocking=False, **_fields(outcome, overview))
    return dg.AssetCheckResult(asset_key=asset_key, **_fields(outcome, overview))
