"""A night's runs as the engine keeps them (``boardgen_pipeline.steps.night``
decides; this module reads and writes the instance): the schedule's first
request, what follows a run of the night, and whether a night is in flight.
The schedule and its sensors (``automation``) and ``boardgen nightly``
(``nightly``) all go through these functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from boardgen_pipeline import catalog as catalogs
from boardgen_pipeline import settings
from boardgen_pipeline.calibration.fingerprints import partition_key
from boardgen_pipeline.steps import night, pinned_tables, runs, summary

from .names import PARTITIONS, STAGE_JOBS, range_tags
from .resources import run_config

FOLLOW_GRACE_SECONDS = 120  # the follow-up sensors turn every 5 s; a night left longer than this is not followed
UNFINISHED = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
              dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


@dataclass(frozen=True)
class Launch:
    """One run to start: its job, tags (the night's and the run's own) and config."""

    spec: night.RunSpec
    job: str
    tags: dict
    run_config: dict

    @property
    def run_key(self) -> str:
        return f"{self.tags[night.NIGHT_TAG]}:{self.spec.key}"


def register(instance, table) -> list[str]:
    """Register the table's new rows as partitions; every registered partition, in order."""
    registered = list(instance.get_dynamic_partitions(PARTITIONS))
    known = set(registered)
    new = [partition_key(k) for k in sorted(table.keys()) if partition_key(k) not in known]
    if new:
        instance.add_dynamic_partitions(PARTITIONS, new)
    return registered + new


def night_tags(night_id: str, trigger: str, follow: str) -> dict[str, str]:
    """The tags every run of a night carries: the night, what started it, who
    follows it, and the process that asked for the run."""
    return {night.NIGHT_TAG: night_id, night.TRIGGER_TAG: trigger, night.FOLLOW_TAG: follow,
            night.LAUNCHER_TAG: night.launcher()}


def launch(spec: night.RunSpec, base_tags: dict, config: dict) -> Launch:
    tags = {**base_tags, **spec.tags(base_tags[night.NIGHT_TAG])}
    if spec.stage == night.ROWS:
        tags.update(range_tags(spec.first, spec.last))
    return Launch(spec, STAGE_JOBS[spec.stage], tags, config)


def start(found: settings.Settings, night_id: str, trigger: str, follow: str) -> tuple[Launch, dict]:
    """The night's first run (``prepare``) over the tables pinned for the
    night (``steps.pinned_tables``), and the run config every run of the
    night takes. The tables must have validated."""
    pinned = pinned_tables.pin(found.warehouse, found.tables)
    from dataclasses import replace

    config = run_config(replace(found, tables=pinned, tables_source=found.tables))
    tags = night_tags(night_id, trigger, follow)
    return launch(night.RunSpec(night.PREPARE, night.PREPARE), tags, config), config


def seen(instance, night_id: str) -> list[night.NightRun]:
    """The night's runs, as :func:`night.follow_up` reads them."""
    out = []
    for record in instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: night_id})):
        run = record.dagster_run
        of = run.tags.get(night.OF_TAG, "0")
        key = run.tags.get(night.KEY_TAG, "")
        out.append(night.NightRun(key, night.stage_of(key),
                                  run.is_finished, run.is_success, int(of) if of.isdigit() else 0))
    return out


def rows_plan(instance, config: dict, slots: int) -> list[night.RunSpec]:
    """The night's rows runs: its pinned table's rows, registered, cut into
    ranges of about equal cost (``steps.runs``) for ``slots`` executors."""
    cfg = config["resources"]["settings"]["config"]
    table = catalogs.load_catalog(cfg["tables_dir"]).board_gen
    order = register(instance, table)
    costs, draws = runs.row_costs(table, cfg["samples"]), runs.draws_cost(cfg.get("node_map_adventures") or settings.DEFAULT_ADVENTURES)
    return [s for s in night.plan(order, costs, slots, prepare_cost=draws) if s.stage == night.ROWS]


def follow(instance, night_id: str, base_tags: dict, config: dict, slots: int) -> list[Launch]:
    """What the night starts now (``night.follow_up`` on its runs)."""
    runs_now = seen(instance, night_id)
    plan = rows_plan(instance, config, slots) if not any(r.stage == night.ROWS for r in runs_now) else []
    return [launch(spec, base_tags, config) for spec in night.follow_up(runs_now, plan)]


def in_flight(instance) -> list[str]:
    """The nights (of the schedule or of ``boardgen nightly``) with a run not
    finished whose executor may be alive (``night.executor_alive``)."""
    found = []
    records = instance.get_run_records(dg.RunsFilter(tags={night.TRIGGER_TAG: list(night.TRIGGERS)},
                                                     statuses=UNFINISHED))
    for record in records:
        run = record.dagster_run
        started = (record.start_time or record.create_timestamp.timestamp())
        if night.executor_alive(run.tags, started) and run.tags.get(night.NIGHT_TAG) not in found:
            found.append(run.tags.get(night.NIGHT_TAG))
    # between a run's end and the sensor's request for what follows it (seconds), a night the daemon
    # follows has no unfinished run; it is in flight until its retention has run
    import datetime as dt

    recent = instance.get_run_records(dg.RunsFilter(
        tags={night.FOLLOW_TAG: night.DAEMON},
        updated_after=dt.datetime.now(dt.UTC) - dt.timedelta(seconds=FOLLOW_GRACE_SECONDS)))
    for record in recent:
        night_id = record.dagster_run.tags.get(night.NIGHT_TAG)
        if night_id and night_id not in found and not night.over(seen(instance, night_id)):
            found.append(night_id)
    return found


def fail_dead_here(instance) -> int:
    """Mark failed the unfinished runs of a night executed by a process of
    this host that is gone (a ``boardgen nightly`` killed with its lanes):
    their executor is certainly dead (``night.executor_alive``); runs of
    other hosts or launched by the daemon are left to run monitoring."""
    failed = 0
    # NOT_STARTED too: a run created for a lane killed before it began would never start
    for record in instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.NOT_STARTED,
                                                                   dg.DagsterRunStatus.STARTING,
                                                                   dg.DagsterRunStatus.STARTED])):
        run = record.dagster_run
        pid = night.pid_here(run.tags)
        started = record.start_time or record.create_timestamp.timestamp()
        if pid is not None and not night.executor_alive(run.tags, started):
            instance.report_run_failed(run, message=f"its process (pid {pid}) on this host is gone; marked "
                                                    "failed by the next boardgen nightly")
            failed += 1
    return failed


def fail_runs_of(instance, pid: int, who: str) -> set[str]:
    """A lane process of this host died: mark failed the runs it was executing
    (STARTING or STARTED with its pid and host; the caller holds its handle,
    so they are certainly its own); the keys of every run it had begun."""
    begun = set()
    for record in instance.get_run_records(dg.RunsFilter(tags={night.EXECUTOR_TAG: night.launcher(pid)})):
        run = record.dagster_run
        begun.add(run.tags.get(night.KEY_TAG, ""))
        if run.status in (dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED):
            instance.report_run_failed(run, message=f"its process (pid {pid}) died; marked failed by {who}")
    return begun


class Progress:
    """The rows the night's runs have recorded, as the engine counts them: a
    finished run its range, a running one its materializations so far."""

    def __init__(self, instance, night_id: str, sizes: dict):
        self.instance, self.night_id, self.sizes = instance, night_id, sizes
        self.finished: dict[str, int] = {}

    def rows_done(self) -> int:
        import dagster as dg

        from .names import RANGE_START, ROWS_JOB

        done = sum(self.finished.values())
        for record in self.instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: self.night_id},
                                                                  job_name=ROWS_JOB)):
            run = record.dagster_run
            if run.run_id in self.finished:
                continue
            rows = self.sizes.get(run.tags.get(RANGE_START), 0)
            if run.is_finished:
                self.finished[run.run_id] = rows
                done += rows
            else:
                done += min(rows, self.instance.get_run_stats(run.run_id).materializations)
        return done


def outcome(instance, night_id: str):
    """Each run of the night (label, success, what its failed steps said),
    the checks it evaluated, the metadata of the table's assets it made
    (counts summed over the runs that made them), and how many old runs its
    retention forgot."""
    import dagster as dg

    from .names import DRAWS, OVERLAYS, RANGE_END, RANGE_START, ROWS_JOB, STRATA

    records = sorted(instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: night_id})),
                     key=lambda r: r.create_timestamp)
    outcomes, checks, forgotten = [], {}, 0
    for record in records:
        run = record.dagster_run
        label = (f"rows {run.tags[RANGE_START]}..{run.tags[RANGE_END]}" if RANGE_START in run.tags
                 else night.stage_of(run.tags.get(night.KEY_TAG, "")) or run.job_name)
        failures, verdicts = [], []
        if not run.is_success:
            of = dg.DagsterEventType.STEP_FAILURE
            for rec in instance.get_records_for_run(run.run_id, of_type=of).records:
                data = rec.event_log_entry.dagster_event.step_failure_data
                user = data.user_failure_data
                failures.append((user.description if user else None) or _cause(data.error))
                verdict = (user.metadata or {}).get("verdict_only") if user else None
                verdicts.append(bool(getattr(verdict, "value", verdict)))
            failures = failures or [f"the run ended {run.status.value}"]
        # a run that failed only on its rows' verdicts: the checks say so (exit 3), not a failed run (exit 4)
        outcomes.append(summary.RunOutcome(label, run.run_id, run.is_success, "; ".join(failures),
                                           verdict_only=bool(verdicts) and all(verdicts)
                                           and run.status == dg.DagsterRunStatus.FAILURE))
        if night.stage_of(run.tags.get(night.KEY_TAG, "")) == night.RETENTION:
            of = dg.DagsterEventType.STEP_OUTPUT
            for rec in instance.get_records_for_run(run.run_id, of_type=of).records:
                data = rec.event_log_entry.dagster_event.step_output_data
                value = (data.metadata or {}).get("forgotten_runs")
                forgotten = int(getattr(value, "value", value) or 0)
        elif run.job_name != ROWS_JOB:  # a rows run evaluates no check: its events are its rows
            of = dg.DagsterEventType.ASSET_CHECK_EVALUATION
            for rec in instance.get_records_for_run(run.run_id, of_type=of).records:
                data = rec.event_log_entry.dagster_event.event_specific_data
                checks[data.check_name] = {
                    "passed": data.passed, "severity": data.severity.value,
                    "description": (data.description or "").split("\n\n")[0],
                    "metadata": {k: getattr(v, "value", v) for k, v in (data.metadata or {}).items()}}
    run_ids = {r.dagster_run.run_id for r in records}
    made = {}
    for asset in (DRAWS, OVERLAYS, STRATA):
        seen = {}
        for rec in instance.fetch_materializations(dg.AssetKey(asset), limit=len(run_ids)).records:
            if rec.run_id not in run_ids:
                continue
            for k, v in rec.asset_materialization.metadata.items():
                v = getattr(v, "value", v)
                # the table's assets are made a range at a time: their counts add up over the runs
                summed = isinstance(v, int) and not isinstance(v, bool) and isinstance(seen.get(k), int)
                seen[k] = seen[k] + v if summed else v
        made[asset] = seen or None
    return outcomes, checks, made, forgotten


def _cause(error) -> str:
    """The innermost message of an engine error (the wrapper says only "error in op")."""
    if error is None:
        return "failed"
    while error.cause is not None:
        error = error.cause
    return error.message.strip()


