"""The calibration step: a row's seed batch, boards, overlays and report, the
table-wide checks and the stratified figures (SPEC 7, SPEC 9 order;
fewer, richer events: docs/decisions.md "Runs are the unit of scale-out").

One ``multi_asset`` over ``seed_batches``, ``boards`` (one partition per
parameter row), ``variant_overlays``, ``calibration_report`` and
``calibration_strata``; each can be selected alone (``can_subset``). A run
over a range of row partitions hands its rows to ``steps.publish_rows`` (in
its own process, or on a Dask cluster) and records one ``boards``
materialization per published row as it arrives: the run records its own
rows, so runs side by side record side by side. The other assets are the
table's (their files are per row, their state is the table's): each is
materialized once per run, with what the run made. The checks are
table-wide (``steps.table_check``): every row's stored verdicts, one scan,
never left "not evaluated" by a run that judged the rows (``checks``).

**A failing row is red** (docs/decisions/partition-verdicts.md): a row whose
batch fails an F4 assertion of error severity, published (A) or withheld
(A'), or whose boards changed without a change of the row, gets no ``boards``
materialization but an observation carrying its verdict and figures; once
every row, check and figure is recorded, the step fails, naming the rows
(``failure``). Dagster then reads the row's partition as failed (its planned
materialization never came, in a failed run): red in the Partitions tab,
counted by its "Failed" filter, a red banner on the partition's page, whose
metadata leads with the observed verdict; the asset red in the graph; the
run red. A row that raises fails the run the same way.
"""

import dagster as dg

from boardgen_pipeline import settings as boardgen_settings
from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.check_names import CHECK_E
from boardgen_pipeline.errors import ClusterError
from boardgen_pipeline.steps import (
    chain,
    currency,
    determinism,
    night,
    publish_rows,
    red_rows,
    row_checks,
    stratify,
    table_check,
)
from boardgen_pipeline.warehouse import publish, views
from boardgen_pipeline.words import count, rounded

from .checks import check_result
from .home import event_log_held_open
from .names import (
    BOARDS,
    DRAWS,
    OVERLAYS,
    PARTITIONS,
    RANGE_END,
    RANGE_START,
    REPORT,
    ROWS_JOB,
    SEED_BATCHES,
    STRATA,
    check_names,
)
from .nodemaps import node_map_draws
from .partitions import board_rows
from .resources import BoardgenSettings, RowWorkers
from .tables import GROUP, load_catalog_or_fail, validated_rows

# Bump when the generator's output for the same seed changes (the metric version does).
CODE_VERSIONS = {BOARDS: f"metric_v{METRIC_VERSION}", OVERLAYS: f"overlay_v{fingerprints.OVERLAY_VERSION}",
                 REPORT: f"report_metric_v{METRIC_VERSION}"}
# plain floats: the UI plots them by partition
# the rows a backfill launched from the UI gives each run: read when the code location loads, so a bad
# value falls back to the default (`boardgen nightly --check-settings` names it)
ROWS_PER_RUN = boardgen_settings.resolve(names=("rows_per_run",))[0].rows_per_run
PLOTTED = ("p10", "p50", "p90", "pass_rate", "retry_rate", "mean_survival", "win_rate", "mean_guesses")

SPECS = [
    dg.AssetSpec(SEED_BATCHES, deps=[validated_rows], group_name=GROUP, skippable=True,
                 description="Every row's seed batch: scopes sigma(L, D) + i for i < N under the master seed (SPEC 7). "
                             "Recorded, not stored: a batch is a pure function of the table, N and the master seed."),
    dg.AssetSpec(BOARDS, deps=[SEED_BATCHES], group_name=GROUP, partitions_def=board_rows, skippable=True,
                 code_version=CODE_VERSIONS[BOARDS],
                 description="A row's N boards (metrics + layout), Parquet under <warehouse>/boards/, published once "
                             "assertion A' holds (else <warehouse>/_rejected/boards/). A row that passes F4 is "
                             "materialized, its figures and verdicts on the materialization; a row that fails an "
                             "error-severity assertion, published or not, is observed with them instead and its run "
                             "fails once every row is recorded: its partition reads as failed."),
    dg.AssetSpec(OVERLAYS, deps=[BOARDS], group_name=GROUP, skippable=True, code_version=CODE_VERSIONS[OVERLAYS],
                 description="The variant overlay of every published board (type, scope, cells, packs, shortfall, "
                             "whole-board variant), one Parquet file a row under <warehouse>/variant_overlays/."),
    dg.AssetSpec(REPORT, deps=[BOARDS, OVERLAYS], group_name=GROUP, skippable=True, code_version=CODE_VERSIONS[REPORT],
                 description="Report C (p10/p50/p90) and diagnostics D of every row, with the table parameters that "
                             "produced them and the advisor's figures; one file a row (view calibration_report)."),
    dg.AssetSpec(STRATA, deps=[REPORT, node_map_draws], group_name=GROUP, skippable=True,
                 description="Calibration figures per level x template and per pool (draw-probability-weighted mean), "
                             "from every row's current report. <warehouse>/calibration_strata/strata.parquet."),
]
CHECK_SPECS = [
    dg.AssetCheckSpec(name, asset=asset, description=(
        determinism.DESCRIPTION if name == determinism.CHECK else
        table_check.EVERY_ROW_DESCRIPTION if name == table_check.CHECK_EVERY_ROW else
        stratify.DESCRIPTION if name == stratify.CHECK_COMPLETE else table_check.DESCRIPTIONS[name]))
    for asset, names in check_names().items() if asset != DRAWS for name in names
]


def boards_metadata(result: chain.RowResult, edited: str = "") -> dict:
    """A row's boards as its partition page shows them: its F4 verdict first
    (one line, then each assertion), what the edit changed, the key figures
    as floats (plotted by partition), every figure (rounded for reading), where
    its boards are."""
    figures = dict(result.figures.get(BOARDS) or {})
    outcomes = result.outcomes.get(BOARDS, ())
    metadata = {"F4": dg.MetadataValue.text(red_rows.verdict(result))}
    metadata.update({f"{o.assertion} ({o.name})": dg.MetadataValue.text(
        "pass" if o.passed else ("FAIL" if o.severity == "error" else "warning")) for o in outcomes})
    if edited:
        metadata["edited"] = dg.MetadataValue.text(edited)
    metadata.update({k: dg.MetadataValue.float(rounded(float(figures[k])))
                     for k in PLOTTED if figures.get(k) is not None})
    metadata["figures"] = dg.MetadataValue.json(rounded(figures))
    if result.written.get(BOARDS):
        metadata["path"] = dg.MetadataValue.path(result.written[BOARDS])
    # the row's page: what a perfect player risks on it (check F's pictures, kept on every row)
    metadata.update({k: dg.MetadataValue.md(v) for o in outcomes
                     if o.name in row_checks.ALWAYS_PICTURED for k, v in o.pictures.items()})
    return metadata


def boards_materialization(result: chain.RowResult, edited: str = "") -> dg.AssetMaterialization:
    """A published row that passes: its boards (``boards_metadata``), its
    file's digest as data version."""
    return dg.AssetMaterialization(BOARDS, partition=result.partition_key, metadata=boards_metadata(result, edited),
                                   tags={"dagster/data_version": result.digests[BOARDS][:16],
                                         "dagster/code_version": CODE_VERSIONS[BOARDS]})


def boards_observation(result: chain.RowResult, edited: str = "") -> dg.AssetObservation:
    """A row that fails, published or withheld: its verdict and figures on
    its partition, as an observation; no materialization, so once the run
    fails the partition reads as failed (docs/decisions/partition-verdicts.md)."""
    metadata = boards_metadata(result, edited)
    metadata["published"] = dg.MetadataValue.text(red_rows.published(result))
    return dg.AssetObservation(BOARDS, partition=result.partition_key, metadata=metadata)


def _rows_of(context: dg.AssetExecutionContext, table) -> tuple[list, list]:
    """The run's rows (its partition range) that the table holds, and the
    partition keys it does not (a removed row still registered)."""
    keys, missing = [], []
    for partition in context.partition_keys:
        key = fingerprints.row_key(partition)
        if key in table.rows:
            keys.append(key)
        else:
            missing.append(partition)
    return keys, missing


def run_rows(context, found, workers: RowWorkers, catalog, keys, stages, edited: dict | None = None):
    """Every row of ``keys`` through its chain, each recorded as it is
    published; ``(made, failed)``: the rows made, and the rows that raised.
    A row that is red (``red_rows.why_red``: an F4 assertion of error severity, or
    boards that changed without a change of the row) records its verdict as
    an observation, not a materialization; the step fails once every row and
    check is recorded (``calibrate``). ``edited``: what the edit changed in
    each row (``edit_report.edited_rows``)."""
    made, failed = [], []
    edited = edited or {}
    with workers.pool(len(keys)) as pool:
        context.log.info(f"{count(len(keys), 'row')} on {pool.describe()}")
        for task, result, error in publish_rows.run_rows(found.warehouse, catalog, keys, found.samples,
                                                         found.master_seed, pool, stages):
            while pool.notes:
                context.log.warning(pool.notes.pop(0))
            if error is not None:
                failed.append(f"row {fingerprints.partition_key(task.key)}: {type(error).__name__}: {error}")
                context.log.error(failed[-1])
                continue
            made.append(result)
            if BOARDS not in stages:
                continue
            failures = red_rows.why_red(result)
            if failures:
                context.log.error(f"row {result.partition_key} fails: "
                                  + "; ".join(f"{k}: {v}" for k, v in failures.items()))
                yield boards_observation(result, edited.get(result.partition_key, ""))
            else:
                yield boards_materialization(result, edited.get(result.partition_key, ""))
    return made, failed


def unfinished_rows(context) -> list[str]:
    """The rows tonight's failed or cancelled rows runs did not record (the
    run's night tag names the night; none outside a night)."""
    tonight = context.run.tags.get(night.NIGHT_TAG)
    if not tonight:
        return []
    instance = context.instance
    ended = [dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
    ranges, made = [], set()
    for record in instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: tonight}, job_name=ROWS_JOB,
                                                         statuses=ended)):
        tags = record.dagster_run.tags
        first = tags.get(RANGE_START) or tags.get("dagster/partition")
        last = tags.get(RANGE_END) or first
        if first:
            ranges.append((first, last))
        # a row the run judged is recorded, whether it passed (materialization) or failed (observation)
        for of in (dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_OBSERVATION):
            made.update(r.event_log_entry.dagster_event.partition
                        for r in instance.get_records_for_run(record.dagster_run.run_id, of_type=of).records)
    return night.unfinished_rows(list(instance.get_dynamic_partitions(PARTITIONS)), ranges, made) if ranges else []


def _table_assets(made: list, stages, selected: set, found):
    """The table's assets this run made, one materialization each."""
    rows = [r.partition_key for r in made]
    base = {"rows_made": len(rows), "first_rows": dg.MetadataValue.json(rows[:20])}
    if SEED_BATCHES in selected:
        yield dg.MaterializeResult(asset_key=SEED_BATCHES, metadata={
            **base, "samples": found.samples, "master_seed": found.master_seed,
            "scopes": "sigma(L, D) + i, i < N; sigma = 10**9 + 2**20 L + 2**12 D (SPEC 7)"})
    if OVERLAYS in selected and OVERLAYS in stages:
        placed = [r.figures.get(OVERLAYS) or {} for r in made]
        yield dg.MaterializeResult(asset_key=OVERLAYS, metadata={
            **base, "boards": sum(f.get("boards", 0) for f in placed),
            "variant_cells": sum(f.get("variant_cells", 0) for f in placed),
            "whole_board_boards": sum(f.get("whole_board_boards", 0) for f in placed)})
    if REPORT in selected and REPORT in stages:
        reports = [r.figures.get(REPORT) or {} for r in made if REPORT in r.figures]
        yield dg.MaterializeResult(asset_key=REPORT, metadata={
            **base, "reported": len(reports), "green": sum(1 for f in reports if f.get("green"))})


def rejudged_observations(catalog, current: dict, made: list):
    """The verdicts that read other rows, judged again on the table now, on
    the page of each row of an edited row's level the run did not make
    (``red_rows.rejudged``)."""
    pages = red_rows.rejudged(catalog, current, [r.key for r in made])
    for pk, page in pages.items():
        yield dg.AssetObservation(BOARDS, partition=pk, metadata={k: dg.MetadataValue.text(v) for k, v in page.items()})


def failure(made: list, raised: list[str], edited: dict, reports: dict) -> dg.Failure | None:
    """The step's failure once everything is recorded (``red_rows.run_failure``), with the edit's reports."""
    found = red_rows.run_failure(made, raised, edited)
    if found is None:
        return None
    description, metadata = found
    metadata.update({f"edited {pk} against its previous version": dg.MetadataValue.md(md)
                     for pk, md in reports.items()})
    return dg.Failure(description=description, metadata=metadata, allow_retries=False)


@dg.multi_asset(
    name="calibrate",
    specs=SPECS,
    check_specs=CHECK_SPECS,
    # a backfill launched from the UI: one run per range of rows, each recording its own rows
    backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=ROWS_PER_RUN),
    can_subset=True,
)
def calibrate(context: dg.AssetExecutionContext, settings: BoardgenSettings, workers: RowWorkers):
    found = settings.resolved()
    root = found.warehouse
    catalog = load_catalog_or_fail(found)
    selected = {k.to_user_string() for k in context.selected_asset_keys}
    stages = frozenset(s for s in chain.STAGES if s in selected)
    an_edit = context.run.tags.get(night.TRIGGER_TAG) == night.TABLE_EDIT
    made, failed, edited = [], [], {}
    try:
        with event_log_held_open(context.instance, context.run.run_id):  # a row event costs one log write, not a checkpoint
            if BOARDS in selected:
                keys, missing = _rows_of(context, catalog.board_gen)
                for pk in missing:
                    context.log.warning(f"skipped: row {pk} is not in {catalog.board_gen.path}")
                if an_edit:  # what the edit changed in each row, against its last calibration
                    from boardgen_pipeline.review import edit_report

                    edited = edit_report.edited_rows(root, catalog, keys)
                made, failed = yield from run_rows(context, found, workers, catalog, keys, stages, edited)
            elif stages:  # the overlays (or reports) of rows whose boards stay, made current
                keys = currency.stale_rows(root, catalog, found.samples, found.master_seed,
                                           OVERLAYS if OVERLAYS in stages else REPORT)
                made, failed = yield from run_rows(context, found, workers, catalog, keys, stages)
    except ClusterError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from None
    yield from _table_assets(made, stages, selected, found)
    checks = {k.name: k for k in context.selected_asset_check_keys}
    # a run of one row partition that did not materialize it (a red row) judges the warehouse now: its checks
    # name no target materialization (the row's old one would read "Not evaluated": ``checks``)
    now = context.has_partition_key and not any(BOARDS in r.digests and not red_rows.why_red(r) for r in made)
    reports = {}
    if an_edit and made and BOARDS in stages:
        # what the edit did to each row it changed, against the row's previous version
        from boardgen_pipeline.review import edit_report

        reports = edit_report.markdown_against_previous(root, catalog, [r.key for r in made], found.samples,
                                                        found.master_seed)
    # the rows' F4 verdicts first, the stratified figures after them: neither reads the other, and the
    # verdicts are what a designer waits for after an edit (the strata took 0.6 s before them)
    if set(checks) - {stratify.CHECK_COMPLETE}:
        table = catalog.board_gen
        verdicts = table_check.table_verdicts(root, catalog, found.samples, found.master_seed)
        for asset, o in verdicts.all():
            if o.name in checks:
                yield check_result(o, asset, now=now and asset == BOARDS)
        if CHECK_E in checks and BOARDS in stages:
            yield from rejudged_observations(catalog, verdicts.current, made)
        if determinism.CHECK in checks:
            yield check_result(determinism.outcome(root, table, found.samples, found.master_seed), BOARDS,
                               overview=True, now=now)
        if table_check.CHECK_EVERY_ROW in checks:
            every = table_check.every_row_outcome(root, table, found.samples, found.master_seed,
                                                  unfinished_rows(context))
            every.pictures.update({f"edited {pk} against its previous version": md for pk, md in reports.items()})
            yield check_result(every, REPORT, overview=True)
    if STRATA in selected:
        result = stratify.run_strata(root, catalog, found.samples, found.master_seed, found.adventures)
        yield dg.MaterializeResult(asset_key=STRATA, data_version=dg.DataVersion(publish.file_digest(result.path)),
                                   metadata={**rounded(result.summary()), "path": dg.MetadataValue.path(result.path)})
        for o in result.outcomes:
            if o.name in checks:
                yield check_result(o, STRATA)
    views.refresh_views_atomic(root)  # once, when the step made a dataset's first file
    stop = failure(made, failed, edited, reports)
    if stop is not None:
        raise stop
