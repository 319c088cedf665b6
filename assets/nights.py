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
from boardgen_pipeline.steps import night, pinned_tables, runs

from .names import PARTITIONS, STAGE_JOBS, range_tags
from .resources import run_config

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
    return {night.NIGHT_TAG: night_id, night.TRIGGER_TAG: trigger, night.FOLLOW_TAG: follow}


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

    config = run_config(replace(found, tables=pinned))
    tags = night_tags(night_id, trigger, follow)
    return launch(night.RunSpec(night.PREPARE, night.PREPARE), tags, config), config


def seen(instance, night_id: str) -> list[night.NightRun]:
    """The night's runs, as :func:`night.follow_up` reads them."""
    out = []
    for record in instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: night_id})):
        run = record.dagster_run
        of = run.tags.get(night.OF_TAG, "0")
        out.append(night.NightRun(run.tags.get(night.KEY_TAG, ""), run.tags.get(night.STAGE_TAG, ""),
                                  run.is_finished, run.is_success, int(of) if of.isdigit() else 0))
    return out


def rows_plan(instance, config: dict, slots: int) -> list[night.RunSpec]:
    """The night's rows runs: its pinned table's rows, registered, cut into
    ranges of about equal cost (``steps.runs``) for ``slots`` executors."""
    cfg = config["resources"]["settings"]["config"]
    table = catalogs.load_catalog(cfg["tables_dir"]).board_gen
    order = register(instance, table)
    return [s for s in night.plan(order, runs.row_costs(table, cfg["samples"]), slots) if s.stage == night.ROWS]


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
    return found
