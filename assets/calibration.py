"""The calibration of the table's rows, one partition per parameter row (seed
batches, boards, variant overlays, report), and the stratified figures they
add up to, made by one step (SPEC 4 "Stratified measurement", SPEC 7, SPEC 9
order; issue 3 "Assets"; issue 12 one run over a range of rows; issue 22
"every core", "past one machine", "rows stream through").

``calibrate`` is one ``multi_asset`` over the four partitioned row assets and
the unpartitioned ``calibration_strata`` (the graph still draws five nodes
with their lineage; each can be selected alone: ``can_subset``). It hands
each row of its partition range to a pool of workers
(``resources.RowWorkers``: local processes or a Dask cluster), which run the
row's whole chain (``steps.chain.run_row``) and send back its files; the step
publishes each row as it arrives and records it at once: one materialization
per row and asset, tagged with the file's digest as data version and the
asset's code version, then that row's check results (F4 on ``boards``, the
overlay checks on ``variant_overlays``), each against the materialization it
judges. Nothing of a row is kept once it is recorded, so the step's memory
and its cost per row do not grow with the table: over a range, the rows'
events are written to the run's log as they are made rather than yielded,
since the engine keeps a step's yielded events until it ends (``emit``). (Dagster cannot take
per-partition results from a single-run backfill step's output,
dagster-io/dagster#21072: a partitioned output materializes every partition
of the range at the end, and its per-partition metadata costs a scan of the
partitions per row. Materialization events are what it records, so the step
yields those.) After the rows: the table-wide check ``every_row_passes_f4``,
then the stratified figures (``steps.stratify``), which read every row's
report, and their check.

A blocking A' acts as Dagster's blocking check when the run covers one row;
over a range the library withholds the row's batch (``steps.chain``) and the
other rows go on (docs/decisions.md "The nightly through the engine").
"""

import dagster as dg

from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.calibration import assertions, fingerprints, seeds
from boardgen_pipeline.errors import ClusterError
from boardgen_pipeline.steps import chain, publish_rows, stratify, summary, table_check
from boardgen_pipeline.variants import outcomes as overlay_checks
from boardgen_pipeline.warehouse import datasets, publish, views

from .checks import DESCRIPTIONS, check_outputs, check_specs, evaluation, to_check_result
from .metadata import row_metadata
from .nodemaps import node_map_draws
from .partitions import board_rows
from .resources import BoardgenSettings, RowWorkers
from .tables import GROUP, load_catalog_or_fail, validated_rows

# Bump when the generator's output for the same seed changes (the metric version does).
GENERATOR_CODE_VERSION = f"metric_v{METRIC_VERSION}"
OVERLAY_CODE_VERSION = f"overlay_v{fingerprints.OVERLAY_VERSION}"
SEED_BATCHES = "seed_batches"
STRATA = "calibration_strata"
ROW_ASSETS = (SEED_BATCHES, *chain.STAGES)
# Dagster's own tag names for what it writes on a materialization made from a step's output.
DATA_VERSION_TAG, CODE_VERSION_TAG = "dagster/data_version", "dagster/code_version"
CODE_VERSIONS = {chain.BOARDS: GENERATOR_CODE_VERSION, chain.OVERLAYS: OVERLAY_CODE_VERSION,
                 chain.REPORT: f"report_{GENERATOR_CODE_VERSION}"}

SPECS = [
    dg.AssetSpec(SEED_BATCHES, deps=[validated_rows], group_name=GROUP, partitions_def=board_rows, skippable=True,
                 description="The row's seed batch: scopes sigma(L, D) + i for i < N under the master seed (SPEC 7). "
                             "Recorded, not stored: a batch is a pure function of the table, N and the master seed."),
    dg.AssetSpec(chain.BOARDS, deps=[SEED_BATCHES], group_name=GROUP, partitions_def=board_rows, skippable=True,
                 code_version=GENERATOR_CODE_VERSION,
                 description="The row's N boards (metrics + layout), Parquet under <warehouse>/boards/ once "
                             "assertion A' holds (else <warehouse>/_rejected/boards/)."),
    dg.AssetSpec(chain.OVERLAYS, deps=[chain.BOARDS], group_name=GROUP, partitions_def=board_rows, skippable=True,
                 code_version=OVERLAY_CODE_VERSION,
                 description="The variant overlay of every published board of the row (type, scope, cells, packs, "
                             "shortfall, whole-board variant), Parquet under <warehouse>/variant_overlays/."),
    dg.AssetSpec(chain.REPORT, deps=[chain.BOARDS, chain.OVERLAYS], group_name=GROUP, partitions_def=board_rows,
                 skippable=True,
                 description="Report C (p10/p50/p90) and diagnostics D (retry rate, exits, cap rejections) of the "
                             "row, with the table parameters that produced them and the advisor's figures."),
    dg.AssetSpec(STRATA, deps=[chain.REPORT, node_map_draws], group_name=GROUP, skippable=True,
                 description="Calibration figures (p10/p50/p90, retry rate, mean attempts) per level x template and "
                             "per pool (draw-probability-weighted mean), from every row's current report. Parquet "
                             "<warehouse>/calibration_strata/strata.parquet."),
]
CHECK_SPECS = [
    *check_specs(chain.BOARDS, assertions.CHECKS, DESCRIPTIONS, {assertions.CHECK_A1}, board_rows),
    *check_specs(chain.OVERLAYS, overlay_checks.CHECKS, overlay_checks.DESCRIPTIONS, partitions_def=board_rows),
    *check_specs(chain.REPORT, (table_check.CHECK_EVERY_ROW,),
                 {table_check.CHECK_EVERY_ROW: table_check.EVERY_ROW_DESCRIPTION}),
    *check_specs(STRATA, (stratify.CHECK_COMPLETE,), {stratify.CHECK_COMPLETE: stratify.DESCRIPTION}),
]


def _targets(context: dg.AssetExecutionContext, partitions: list[str], assets) -> dict:
    """``{(asset, partition): materialization}`` just recorded for ``partitions``
    (what those rows' check results judge): one query per asset."""
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    out = {}
    for asset in assets:
        records = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=partitions),
            limit=len(partitions)).records
        for rec in records:  # newest first: the first one seen of a partition is its latest
            out.setdefault((asset, rec.partition_key), AssetCheckEvaluationTargetMaterializationData(
                storage_id=rec.storage_id, run_id=rec.run_id, timestamp=rec.timestamp))
    return out


def record_rows(context: dg.AssetExecutionContext, rows: list, selected: set, single: bool, tally: summary.Tally):
    """Published rows, recorded: their materializations, then their check
    results, each against the materialization it judges (the rows of a
    chunk share one query per asset for it)."""
    judged = []
    for task, result in rows:
        pk = result.partition_key
        if SEED_BATCHES in selected:
            yield dg.AssetMaterialization(SEED_BATCHES, partition=pk, metadata=row_metadata(task.batch.describe()))
        for dataset in chain.STAGES:
            if dataset not in selected:
                continue
            if dataset in result.skipped:
                if result.published:  # a rejected batch is logged once, below
                    context.log.warning(f"row {pk}: {dataset} skipped: {result.skipped[dataset]}")
                continue
            tags = {CODE_VERSION_TAG: CODE_VERSIONS[dataset]}
            if dataset in result.digests:
                tags[DATA_VERSION_TAG] = result.digests[dataset][:16]
            yield dg.AssetMaterialization(dataset, partition=pk, tags=tags, metadata=row_metadata(
                result.figures[dataset], result.written.get(dataset), result.seconds if dataset == chain.BOARDS else None))
            if dataset != chain.REPORT:
                judged.append((dataset, pk, result))
        if not result.published:
            context.log.error(f"row {pk}: {result.figures[chain.BOARDS]['illegal']} illegal boards; batch rejected to "
                              f"{result.written.get(chain.BOARDS)}, nothing downstream will consume it")
    checks = {k.name for k in context.selected_asset_check_keys}
    for _task, result in rows:
        tally.add(result, checks)
    if not judged:
        return
    targets = _targets(context, sorted({pk for _, pk, _ in judged}), sorted({d for d, _, _ in judged}))
    for dataset, pk, result in judged:
        for outcome in result.outcomes.get(dataset, ()):
            if outcome.name in checks:
                yield evaluation(outcome, dataset, pk, targets.get((dataset, pk)), blocking=outcome.blocking and single)


def emit(context: dg.AssetExecutionContext, events, single: bool):
    """The rows' events, into the run's log. One row's are yielded (the engine
    then acts on a failed blocking check). A range's are recorded by the same
    constructors the engine applies to a yielded event, which write the event
    to the run's log as they build it; yielded, each would stay in the
    engine's list of the step's events until the step ends (kept for hooks,
    ``dagster/_core/execution/plan/execute_plan.py``), ~60 KB a row, and the
    step's memory would grow with the table (issue 22 "bounded memory")."""
    if single:
        yield from events
        return
    from dagster._core.events import DagsterEvent

    step = context.get_step_execution_context()
    for event in events:
        if isinstance(event, dg.AssetCheckEvaluation):
            DagsterEvent.asset_check_evaluation(step, event)
        else:
            DagsterEvent.asset_materialization(step, event)


def report_tally(context: dg.AssetExecutionContext, tally: summary.Tally) -> None:
    """The step's rows summed up, as one event of the run's log (the nightly
    reads it instead of every row's events)."""
    from dagster._core.events import EngineEventData

    failed = sum(tally.failed.values())
    context.instance.report_engine_event(
        f"{summary.TALLY_MESSAGE}: {tally.rows} rows, {tally.checks_evaluated} checks, {failed} failed",
        context.run, EngineEventData(metadata={"tally": dg.MetadataValue.json(tally.as_dict())}))


CHUNK_MAX = 32  # rows recorded together; a small run records row by row (its progress bar moves per row)


@dg.multi_asset(
    name="calibrate",
    specs=SPECS,
    check_specs=CHECK_SPECS,
    backfill_policy=dg.BackfillPolicy.single_run(),
    can_subset=True,
)
def calibrate(context: dg.AssetExecutionContext, settings: BoardgenSettings, workers: RowWorkers):
    catalog = load_catalog_or_fail(settings)
    selected = {k.to_user_string() for k in context.selected_asset_keys}
    yield from check_outputs(context, besides={STRATA})
    if selected & set(ROW_ASSETS):
        yield from calibrate_rows(context, settings, workers, catalog, selected)
    if STRATA in selected:
        yield from strata(context, settings, catalog)
    views.refresh_views_atomic(settings.root)  # once, when the step made a dataset's first file


def calibrate_rows(context: dg.AssetExecutionContext, settings: BoardgenSettings, workers: RowWorkers, catalog,
                   selected: set):
    """The rows of the run's partition range, recorded as they are published,
    then the table-wide F4 check. A cluster that cannot take the rows fails
    the step in one sentence; the rows recorded before stay recorded."""
    try:
        yield from _calibrate_rows(context, settings, workers, catalog, selected)
    except ClusterError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None


def _calibrate_rows(context: dg.AssetExecutionContext, settings: BoardgenSettings, workers: RowWorkers, catalog,
                    selected: set):
    table = catalog.board_gen
    stages = selected & set(chain.STAGES)
    keys, missing = [], []
    for partition in context.partition_keys:
        key = fingerprints.row_key(partition)
        (keys if key in table.rows else missing).append(key)
    single = len(context.partition_keys) == 1
    if missing:
        text = [f"row ({k[0]},{k[1]}) is not in {table.path}" for k in missing]
        if single:
            raise dg.Failure(description=text[0], allow_retries=False)
        for line in text:  # a row removed from the table, still registered until validated_rows prunes it
            context.log.warning(f"skipped: {line}")
    failed, skipped, n_failed = [], [], 0
    if stages:
        chunk, pending = max(1, min(CHUNK_MAX, len(keys) // 20)), []
        tally = summary.Tally(list_all=len(keys) <= summary.SHOW_ALL_ROWS)
        with workers.pool(len(keys)) as pool:
            context.log.info(f"{len(keys)} rows on {pool.describe()}")
            for task, result, error in publish_rows.run_rows(settings.root, catalog, keys, settings.samples,
                                                             settings.master_seed, pool, stages):
                while pool.notes:
                    context.log.warning(pool.notes.pop(0))
                if error is not None:
                    text = f"row ({task.key[0]},{task.key[1]}): {type(error).__name__}: {error}"
                    context.log.error(text)
                    n_failed += 1
                    failed = (failed + [text])[:5]  # the first five, and the count
                    continue
                if len(skipped) < 8:  # a sample: the step's memory does not grow with the rows
                    skipped.extend(f"{result.partition_key}: {why}" for dataset, why in result.skipped.items()
                                   if dataset in stages and result.published)
                pending.append((task, result))
                if len(pending) >= chunk:
                    yield from emit(context, record_rows(context, pending, selected, single, tally), single)
                    pending = []
            yield from emit(context, record_rows(context, pending, selected, single, tally), single)
        report_tally(context, tally)
    elif SEED_BATCHES in selected:  # the seed batches alone need no worker: a pure function of the table
        batches = (seeds.seed_batch(table, key, settings.samples, settings.master_seed) for key in keys)
        yield from emit(context, (dg.AssetMaterialization(SEED_BATCHES, partition=b.partition_key,
                                                          metadata=row_metadata(b.describe())) for b in batches), single)
    if single and skipped and not failed:
        raise dg.Failure(description=skipped[0].split(": ", 1)[1], allow_retries=False)
    if failed:
        raise dg.Failure(description=f"{n_failed} of {len(keys)} rows failed: " + "; ".join(failed),
                         allow_retries=False)
    if chain.REPORT in selected:
        if table_check.CHECK_EVERY_ROW in {k.name for k in context.selected_asset_check_keys}:
            outcome = table_check.every_row_outcome(settings.root, table, settings.samples, settings.master_seed)
            yield evaluation(outcome, chain.REPORT, None, None, blocking=False, overview=True)


def strata(context: dg.AssetExecutionContext, settings: BoardgenSettings, catalog):
    """The stratified figures from every row's current report and the draws."""
    result = stratify.run_strata(settings.root, catalog, settings.samples, settings.master_seed,
                                 settings.node_map_adventures)
    checks = {k.name for k in context.selected_asset_check_keys}
    yield dg.MaterializeResult(
        asset_key=STRATA,
        data_version=dg.DataVersion(publish.file_digest(result.path)),
        metadata={**result.summary(), "path": dg.MetadataValue.path(result.path),
                  "duckdb": dg.MetadataValue.path(str(settings.root / datasets.DB_NAME))},
        check_results=[to_check_result(o, STRATA) for o in result.outcomes if o.name in checks],
    )
