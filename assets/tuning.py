"""The target curve in the Dagster code location (SPEC 12; SPEC 9 asset
checks): the corridor as a table-wide check of the calibration report,
evaluated by the nightly's table run and by every edit run, and the ``tune``
job the UI launches (not part of the nightly).

Wiring only: the corridor's rule is ``tuning.corridor`` and its reading of
the warehouse ``tuning.stored``; the search and its proof are
``tuning.run``; the calibration diff of a proposal ``review.proposal``.

- ``curve_within_corridor`` (on ``calibration_report``): red, at the
  targets file's severity (warning by default), when a targeted row's
  figure is out of its corridor; its description names the rows and how
  far; a table of every targeted row in its metadata.
- ``tuned_rows`` (one partition per row) and ``curve_proposal``: a run of
  ``curve_tune_job`` over a range of rows (every targeted row without one)
  tunes them on the run's workers, recording one ``tuned_rows``
  materialization per row as it arrives (its proposal: the Partitions tab
  shows which rows a run tuned) and then ``curve_proposal``, whose markdown
  metadata holds the proposal, the table edit it would make and the
  ``boardgen diff`` of that edit. Nothing is written into the tables: the
  table files are the designers', edited in their editor and their version
  control (``boardgen tune --apply`` writes them). Both are in the
  calibration group: one group, drawn whole on the lineage page.
"""

import dagster as dg

from boardgen_pipeline.check_names import CHECK_CORRIDOR
from boardgen_pipeline.tuning import corridor, stored

from .checks import check_result
from .names import PROPOSAL, REPORT, TUNE_JOB, TUNED
from .partitions import board_rows
from .resources import BoardgenSettings, RowWorkers
from .tables import GROUP, load_catalog_or_fail, validated_rows


@dg.asset_check(asset=REPORT, name=CHECK_CORRIDOR, description=corridor.DESCRIPTION, blocking=False)
def curve_within_corridor(settings: BoardgenSettings) -> dg.AssetCheckResult:
    found = settings.resolved()
    catalog = load_catalog_or_fail(found)
    outcome = stored.outcome(found.warehouse, catalog.board_gen, catalog.targets, found.samples, found.master_seed)
    return check_result(outcome, REPORT)


def _rows(context: dg.AssetExecutionContext, catalog) -> list[tuple[int, int]] | None:
    """The run's rows (its partition or range), or None: every targeted row."""
    from boardgen_pipeline.calibration.fingerprints import row_key

    try:
        return [row_key(pk) for pk in context.partition_keys]
    except Exception:  # a run without a partition: Dagster says so by raising
        return None


@dg.multi_asset(
    name="tune",
    specs=[
        dg.AssetSpec(TUNED, deps=[validated_rows], group_name=GROUP, partitions_def=board_rows, skippable=True,
                     description="A row tuned toward the target curve (tables/curve_targets.toml): its proposal "
                                 "(the knob's new value, the figure on probe boards and on its calibration batch), "
                                 "recorded as the row is done. Made by curve_tune_job only, never by the nightly."),
        dg.AssetSpec(PROPOSAL, deps=[validated_rows], group_name=GROUP, skippable=True,
                     description="The tuning run's proposal: every tuned row, the table edit it would make, and the "
                                 "boardgen diff of that edit (markdown metadata). `boardgen tune --apply` writes it."),
    ],
    can_subset=True,
)
def tune(context: dg.AssetExecutionContext, settings: BoardgenSettings, workers: RowWorkers):
    from boardgen_pipeline.review import proposal as review_proposal
    from boardgen_pipeline.review import render as review_render
    from boardgen_pipeline.tables import edit
    from boardgen_pipeline.tuning import render, run

    found = settings.resolved()
    catalog = load_catalog_or_fail(found)
    if catalog.targets is None:
        raise dg.Failure(description=f"no target curve: {found.tables}/curve_targets.toml does not exist "
                                     "(docs/designer.md \"Aim the curve\")", allow_retries=False)
    keys = _rows(context, catalog)
    work = run.tasks(catalog, keys, found.samples, found.master_seed)
    tuning = run.Tuning(catalog.targets.path, catalog.board_gen.path, found.samples, found.master_seed)
    selected = {k.to_user_string() for k in context.selected_asset_keys}
    with workers.pool(len(work)) as pool:
        context.log.info(f"tuning {len(work)} targeted rows on {pool.describe()}")
        for done, (task, proposal, error) in enumerate(run.run(work, pool), start=1):
            tuning.add(task, proposal, error)
            pk = f"{task.key[0]}-{task.key[1]}"
            if error is not None:
                context.log.error(f"row {pk} ({done}/{len(work)}): {type(error).__name__}: {error}")
                continue
            context.log.info(f"row {pk} ({done}/{len(work)}): {render.line(proposal)}")
            if TUNED in selected:
                yield dg.AssetMaterialization(TUNED, partition=pk, metadata={
                    "proposal": dg.MetadataValue.md(render.line(proposal).replace("\n", "  \n")),
                    "state": proposal.state, "boards": proposal.boards,
                    "row": dg.MetadataValue.json(proposal.as_dict())})
    tuning.proposals.sort(key=lambda p: p.key)
    metadata = {"proposal": dg.MetadataValue.md(render.markdown(tuning)),
                "summary": dg.MetadataValue.json(tuning.summary())}
    if tuning.changes:
        table_edit = edit.apply_changes(catalog.board_gen.path, tuning.changes, based_on=catalog.board_gen,
                                        dry_run=True)
        metadata["table_diff"] = dg.MetadataValue.md(f"```diff\n{table_edit.diff}```")
        result = review_proposal.calibration_diff(catalog.tables_dir, tuning.changes, catalog.board_gen,
                                                  found.samples, found.master_seed, found.warehouse)
        metadata["calibration_diff"] = dg.MetadataValue.md(review_render.markdown(result))
    if PROPOSAL in selected:
        yield dg.MaterializeResult(asset_key=PROPOSAL, metadata=metadata)
    if tuning.errors:
        raise dg.Failure(description=f"{len(tuning.errors)} rows failed to tune: " + "; ".join(
            f"{k[0]}-{k[1]}: {e}" for k, e in sorted(tuning.errors.items())), allow_retries=False)


tune_job = dg.define_asset_job(
    TUNE_JOB, selection=dg.AssetSelection.assets(TUNED, PROPOSAL), executor_def=dg.in_process_executor,
    description="Tune the target curve's rows (all of them, or the run's range of row partitions): each row's "
                "proposal as it is done, then the proposal with its table edit and boardgen diff. Writes no table; "
                "not part of the nightly.")
