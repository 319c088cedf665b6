"""The table files, observed by content hash, and the validated rows (SPEC 2.7,
9).

``table_files`` is an observable source asset: its data version is the hash
of every table file of the tables directory (``board_gen.toml`` and the
variant, resource and node-map tables that travel with it).
``validated_rows`` runs every load-time check, the same ones as ``boardgen
validate`` (``catalog.load_catalog``); a bad table fails here with the exact
message ``boardgen validate`` prints, and nothing downstream runs. It also
keeps the row partitions in step with the table: new rows get a partition,
removed rows lose theirs and their warehouse files.
"""

import dagster as dg

from boardgen_pipeline import catalog
from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.pictures import drawings
from boardgen_pipeline.steps import regen
from boardgen_pipeline.warehouse import publish, views

from .partitions import board_rows
from .resources import BoardgenSettings

GROUP = "calibration"


def load_catalog_or_fail(found):
    """The validated tables of the resolved settings ``found``, or a Failure
    whose description is exactly ``TableError.report()`` (what ``boardgen
    validate`` prints)."""
    try:
        return catalog.load_catalog(found.tables, shown_as=found.tables_source)
    except TableError as exc:
        raise dg.Failure(
            description=exc.report(),
            metadata={"violations": len(exc.violations), "tables": dg.MetadataValue.path(str(found.tables))},
            allow_retries=False,
        ) from None


def _first(keys: list, shown: int = 20) -> dict:
    return {"count": len(keys), "first": list(keys[:shown])}


@dg.observable_source_asset(
    name="table_files",
    group_name=GROUP,
    description="The tables directory (board_gen.toml and its sibling tables), observed: "
                "data version = hash of every file's bytes.",
)
def table_files(settings: BoardgenSettings) -> dg.ObserveResult:
    found = settings.resolved()
    digest, files = fingerprints.tables_digest(found.tables)
    return dg.ObserveResult(
        data_version=dg.DataVersion(digest),
        metadata={
            "tables_dir": dg.MetadataValue.path(str(found.tables)),
            "files": dg.MetadataValue.json(files),
            "board_gen_sha256": files.get("board_gen.toml", "missing"),
        },
    )


@dg.asset(
    group_name=GROUP,
    deps=[table_files],
    description="Every load-time check of the tables (boardgen validate); keeps one partition per board_gen row.",
)
def validated_rows(context: dg.AssetExecutionContext, settings: BoardgenSettings) -> dg.MaterializeResult:
    found = settings.resolved()
    table = load_catalog_or_fail(found).board_gen
    now = fingerprints.fingerprints_now(table, found.samples, found.master_seed)
    plan = regen.plan(now, {}, context.instance.get_dynamic_partitions(board_rows.name))
    if plan.add:
        context.instance.add_dynamic_partitions(board_rows.name, plan.add)
    for key in plan.remove:
        context.instance.delete_dynamic_partition(board_rows.name, key)
    pruned = publish.prune(found.warehouse, set(table.keys()))
    if pruned:
        views.refresh_views_atomic(found.warehouse)
    for w in table.warnings:
        context.log.warning(f"assertion E (warning): {w}")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(fingerprints.tables_digest(found.tables)[0]),
        metadata={
            "rows": len(table.rows),
            "levels": table.levels(),
            "spawn_side": table.spawn_side,
            # the first few keys and the count: a run's metadata does not grow with the table
            "partitions_added": _first(plan.add),
            "partitions_removed": _first(plan.remove),
            "pruned_from_warehouse": _first(pruned),
            "monotone_warnings": [str(w) for w in table.warnings],
            "table": dg.MetadataValue.md(drawings.rows_table(table)),
        },
    )
