"""The jobs, the nightly schedule, the sensors that carry a night to its end,
and the table-edit sensor (SPEC 9 "a nightly schedule runs the calibration;
an edit of a table row regenerates only the partitions whose row changed";
docs/pipeline.md "One nightly").

Jobs, each a fixed selection (a run executes its job whole):

- ``calibration_prepare``: the tables observed and validated, the node-map draws;
- ``calibration_rows``: a range of row partitions, without their checks;
- ``calibration_table``: the table-wide checks and the stratified figures, then the Godot export on green;
- ``calibration_retention``: old runs forgotten (``retention``);
- ``calibration_job``: everything, for one run per edit and a click in the UI.

A night (``boardgen_pipeline.steps.night``): the schedule asks for the
night's ``prepare`` run over tables pinned for the night; each time a run of
the night ends, a run-status sensor asks ``night.follow_up`` what starts
next (the rows, then the table run once every row run has ended, then
retention) and asks for it, keyed by the night and the run so that nothing
is asked twice. ``boardgen nightly`` asks the same functions and executes
the runs itself, so a night has the same runs whatever starts it. The
sensors see runs that ``execute_job`` made too (``monitor_all_code_locations``)
and follow only the nights whose runs say the daemon follows them.

Why a sensor and not declarative automation for the table run: its
conditions hold when *any* partition of the rows matches, not when every run
of the night has ended; and a schedule cannot launch a backfill.
"""

from __future__ import annotations

import time

import dagster as dg

from boardgen_pipeline import catalog as catalogs
from boardgen_pipeline import settings as boardgen_settings
from boardgen_pipeline.calibration import fingerprints
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.steps import night, regen

from . import nights
from .names import (  # noqa: I001
    ALL_ASSETS,
    CALIBRATION_JOB,
    CHECKED,
    DRAWS,
    GODOT,
    OVERLAYS,
    PREPARE_JOB,
    REASON_TAG,
    ROW_ASSETS,
    ROWS_JOB,
    SCHEDULE,
    SCHEDULE_NAME_TAG,
    STRATA,
    TABLE_JOB,
    TABLES,
    check_keys,
    range_tags,
)
from .partitions import board_rows
from .resources import BoardgenSettings, run_config
from .retention import retention_job

prepare_job = dg.define_asset_job(
    PREPARE_JOB, selection=dg.AssetSelection.assets(*TABLES, DRAWS), executor_def=dg.in_process_executor,
    description="A night's first run: the tables observed and validated (partitions kept in step), the node-map draws.")
rows_job = dg.define_asset_job(
    ROWS_JOB, selection=dg.AssetSelection.assets(*ROW_ASSETS).without_checks(),
    executor_def=dg.in_process_executor,
    description="A range of row partitions: seed batch, boards, overlays, report of each row, recorded as each is "
                "published. The table-wide checks come after, in calibration_table.")
table_job = dg.define_asset_job(
    TABLE_JOB,
    selection=dg.AssetSelection.assets(STRATA, GODOT) | dg.AssetSelection.checks_for_assets(*CHECKED),
    executor_def=dg.in_process_executor,
    description="After the rows: every table-wide check (F4, determinism, the overlay checks, every row passes F4, "
                "naming the rows that did not finish) and the stratified figures, from the warehouse; then the Godot "
                "export when every row is green.")
calibration_job = dg.define_asset_job(
    CALIBRATION_JOB, selection=dg.AssetSelection.assets(*ALL_ASSETS), executor_def=dg.in_process_executor,
    description="The whole graph: with a row partition or range, the rows, then the table-wide checks and figures.")


def cron_problem(text: str) -> str | None:
    """Why ``text`` is not a cron expression Dagster schedules, or None."""
    try:
        dg.ScheduleDefinition(name="probe", cron_schedule=text, job_name="probe")
    except Exception as exc:  # Dagster's own verdict, whatever its class
        return str(exc).splitlines()[0][:160]
    return None


# Read when the code location loads: a bad value falls back to its default, so the location loads, and
# every tick of the schedule fails with the sentence (`boardgen nightly --check-settings` prints it too).
NIGHTLY_CRON, NIGHTLY_TIMEZONE, SCHEDULE_PROBLEMS = boardgen_settings.schedule_settings(cron_problem=cron_problem)


class SettingsError(Exception):
    """A setting out of its domain, said on a tick."""


def _report(bad) -> str:
    return "; ".join(str(v) for v in bad)


@dg.schedule(
    name=SCHEDULE,
    cron_schedule=NIGHTLY_CRON,
    execution_timezone=NIGHTLY_TIMEZONE,
    job=prepare_job,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="The nightly calibration, at $BOARDGEN_NIGHTLY_CRON in $BOARDGEN_TIMEZONE (default 02:00 UTC): the "
                "night's prepare run over the tables pinned for the night; the night_follow_up sensors then ask for "
                "every row in ranges, the table-wide checks and retention, as `boardgen nightly` does. A tick while "
                "a night is running is skipped.",
)
def nightly_calibration(context: dg.ScheduleEvaluationContext):
    if SCHEDULE_PROBLEMS:
        raise SettingsError(f"the schedule runs at its default time because {_report(SCHEDULE_PROBLEMS)}")
    found, bad = boardgen_settings.resolve(names=boardgen_settings.NIGHTLY, prog="the nightly schedule")
    if bad:
        raise SettingsError(_report(bad))
    running = nights.in_flight(context.instance)
    if running:
        return dg.SkipReason(f"night {running[0]} is still running: one night at a time (its runs are tagged "
                             f"{night.NIGHT_TAG}={running[0]})")
    when = context.scheduled_execution_time
    night_id = night.new_night(when, night.SCHEDULE)
    try:
        table = catalogs.load_catalog(found.tables).board_gen
    except TableError:  # the run fails at validated_rows with the validation report; nothing follows it
        tags = nights.night_tags(night_id, night.SCHEDULE, "none")
        return dg.RunRequest(run_key=f"{night_id}:invalid", asset_selection=_keys(*TABLES), tags=tags,
                             run_config=run_config(found))
    nights.register(context.instance, table)
    first, _ = nights.start(found, night_id, night.SCHEDULE, night.DAEMON)
    return dg.RunRequest(run_key=first.run_key, tags={**first.tags, SCHEDULE_NAME_TAG: SCHEDULE},
                         run_config=first.run_config)


def _follow(context: dg.RunStatusSensorContext):
    run = context.dagster_run
    tags = run.tags
    if tags.get(night.FOLLOW_TAG) != night.DAEMON or night.NIGHT_TAG not in tags:
        return dg.SkipReason("not a run of a night the daemon follows")
    base = {**{k: tags[k] for k in (night.NIGHT_TAG, night.TRIGGER_TAG, night.FOLLOW_TAG)},
            night.LAUNCHER_TAG: night.launcher()}
    found, _ = boardgen_settings.resolve(names=("workers",))
    slots = found.workers or 2  # the queue's default concurrency (home.DAGSTER_YAML)
    launches = nights.follow(context.instance, tags[night.NIGHT_TAG], base, run.run_config, slots)
    if not launches:
        return dg.SkipReason(f"night {tags[night.NIGHT_TAG]}: nothing to start yet")
    return [dg.RunRequest(run_key=launch.run_key, job_name=launch.job, tags=launch.tags,
                          run_config=launch.run_config) for launch in launches]


def _follow_up_sensor(status: dg.DagsterRunStatus):
    @dg.run_status_sensor(
        name=f"night_follow_up_on_{status.value.lower()}",
        run_status=status,
        monitor_all_code_locations=True,  # a night's runs executed by `boardgen nightly` have no code location
        request_jobs=[rows_job, table_job, retention_job],
        minimum_interval_seconds=5,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"When a run of a night the daemon follows ends ({status.value}), asks for what follows it: the "
                    "rows after prepare, the table-wide checks once every row run has ended, then retention.",
    )
    def follow_up(context: dg.RunStatusSensorContext):
        return _follow(context)

    return follow_up


night_follow_up = [_follow_up_sensor(s) for s in (dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE,
                                                   dg.DagsterRunStatus.CANCELED)]


# --- the table-edit sensor -----------------------------------------------------------------------


def _keys(*names) -> list[dg.AssetKey]:
    return [dg.AssetKey(n) for n in names]


def _request(request: regen.Request, order: list[str], checks: list[dg.AssetCheckKey]) -> dg.RunRequest:
    tags = {night.TRIGGER_TAG: night.TABLE_EDIT, REASON_TAG: request.reason}
    draws = [DRAWS] if request.draws else []
    if request.kind == regen.VALIDATE:
        return dg.RunRequest(asset_selection=_keys(*TABLES), tags=tags)
    draw_checks_ = [k for k in checks if k.asset_key.to_user_string() == DRAWS] if draws else []
    table_checks_ = [k for k in checks if k.asset_key.to_user_string() in CHECKED]
    if request.kind == regen.ROWS:
        index = {k: i for i, k in enumerate(order)}
        ranked = sorted(request.partitions, key=index.__getitem__)
        selection = _keys(*TABLES, *draws, *ROW_ASSETS, STRATA)
        if len(ranked) == 1:
            return dg.RunRequest(partition_key=ranked[0], asset_selection=selection,
                                 asset_check_keys=[*table_checks_, *draw_checks_], tags=tags)
        return dg.RunRequest(asset_selection=selection, asset_check_keys=[*table_checks_, *draw_checks_],
                             tags={**tags, **range_tags(ranked[0], ranked[-1])})
    if request.kind == regen.OVERLAYS:  # nothing reads the overlays: they and their checks alone
        overlay_checks = [k for k in checks if k.asset_key.to_user_string() == OVERLAYS]
        return dg.RunRequest(asset_selection=_keys(*TABLES, *draws, OVERLAYS),
                             asset_check_keys=[*overlay_checks, *draw_checks_], tags=tags)
    return dg.RunRequest(asset_selection=_keys(*TABLES, *draws, STRATA),
                         asset_check_keys=[*table_checks_, *draw_checks_], tags=tags)


@dg.sensor(
    name="table_edit_sensor",
    job=calibration_job,
    # As often as the daemon's sensor loop turns: a saved edit starts its run seconds later. A tick that
    # finds nothing changed costs a stat of each file.
    minimum_interval_seconds=1,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Regenerates exactly the rows whose fingerprint changed (overlays alone when only they changed), "
                "then the table-wide checks and figures, in one run; the node-map draws only when their pools, the "
                "number of adventures or the table's rows changed; adds/removes row partitions. While a night "
                "or an edit's rows are in flight, the stratified figures wait for them; edited rows do not.",
)
def table_edit_sensor(context: dg.SensorEvaluationContext, settings: BoardgenSettings):
    found = settings.resolved()
    try:
        catalog = catalogs.load_catalog(found.tables)
    except TableError as exc:
        decision = regen.decide_invalid(context.cursor, fingerprints.tables_digest(found.tables)[0], exc.report())
    else:
        clock = time.time()
        in_flight = regen.rows_in_flight(context.cursor, clock) or bool(nights.in_flight(context.instance))
        facts = regen.gather(found.warehouse, catalog, found.samples, found.master_seed, found.adventures, in_flight)
        decision = regen.decide(facts, context.instance.get_dynamic_partitions(board_rows.name), context.cursor, clock)
    if not decision.requests and not decision.add and not decision.remove:
        return dg.SensorResult(skip_reason=decision.skip_reason or "nothing to do", cursor=decision.cursor)
    context.log.info(decision.log)
    order = [*context.instance.get_dynamic_partitions(board_rows.name), *decision.add]
    checks = check_keys()
    partition_requests = []
    if decision.add:
        partition_requests.append(board_rows.build_add_request(decision.add))
    if decision.remove:
        partition_requests.append(board_rows.build_delete_request(decision.remove))
    return dg.SensorResult(run_requests=[_request(r, order, checks) for r in decision.requests],
                           dynamic_partitions_requests=partition_requests, cursor=decision.cursor)
