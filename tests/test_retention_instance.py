"""Retention on a real instance (a Dagster home that stops growing): the
nightly's last lane forgets old calibration runs, and nothing the instance
kept for a forgotten run stays in the home. The stock SQLite event log keeps
a file per run that ``delete_run`` empties but never removes, and the run's
captured logs have their own folder: before ``boardgen_dagster.retention.forget``
removed them, a home kept ~2.5 MB for every run it had ever made
(``benchmarks/soak.py``)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from boardgen_pipeline.words import count as counted

from .nightly_support import nightly
from .test_pipeline_support import copy_fixture

pytestmark = pytest.mark.integration  # two nightlies into one home


def _runs(home: Path) -> dict[str, str]:
    """Every run of the home: id -> job name, read through Dagster's API."""
    import dagster as dg

    old = os.environ.get("DAGSTER_HOME")
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        with dg.DagsterInstance.get() as instance:
            return {r.dagster_run.run_id: r.dagster_run.job_name for r in instance.get_run_records()}
    finally:
        if old is None:
            os.environ.pop("DAGSTER_HOME")
        else:
            os.environ["DAGSTER_HOME"] = old


def _files_per_run(home: Path) -> set[str]:
    """The run ids the home keeps a file or folder for: the event log's
    ``history/runs/<id>.db`` and the captured logs' ``storage/<id>/``."""
    shards = {p.name.split(".")[0] for p in (home / "history" / "runs").glob("*.db*") if not p.name.startswith("index")}
    logs = {p.name for p in (home / "storage").iterdir() if p.is_dir()} if (home / "storage").exists() else set()
    return shards | logs


def test_a_forgotten_run_leaves_no_file_in_the_home(tmp_path):
    tables, home = copy_fixture("small", tmp_path), tmp_path / "home"
    rc, out, err = nightly(tables, tmp_path / "wh", home, samples="16")
    assert rc == 0, out + err
    first = _runs(home)
    assert first and _files_per_run(home) == set(first)  # every run of the night has its files

    # the second night keeps only its newest run, and whatever still holds the latest state of something
    rc, out, err = nightly(tables, tmp_path / "wh", home, "--keep-runs", "1", samples="16")
    assert rc == 0, out + err
    now = _runs(home)
    forgotten = set(first) - set(now)
    # the second night's rows and checks replace the first's
    assert {"calibration_rows", "calibration_table"} <= {first[r] for r in forgotten}
    assert f"retention: {counted(len(forgotten), 'old run')} forgotten" in " ".join(out.split())
    # nothing stays for a run the instance no longer has, and every run it has keeps its files
    assert _files_per_run(home) == set(now)
    # nor its check evaluations: the index holds those of the runs the instance has, and this night's
    with sqlite3.connect(home / "history" / "runs" / "index.db") as db:
        checked = {r for (r,) in db.execute("select distinct run_id from asset_check_executions")}
    assert checked and checked <= set(now) and not checked & forgotten


def test_a_partition_whose_latest_attempt_failed_keeps_that_run(tmp_path):
    """A ``boards`` partition whose newest run planned it and failed holds
    that run (the partition reads as failed, not as the older run's success),
    although another run has since made another partition: only the
    partition's own latest planned event says so."""
    import dagster as dg

    from boardgen_dagster import names, retention

    @dg.asset(name=names.BOARDS, partitions_def=dg.StaticPartitionsDefinition(["1-0", "1-1"]),
              config_schema={"fail": bool})
    def boards(context):
        if context.op_execution_context.op_config["fail"]:
            raise RuntimeError("planted")
        return 1

    with dg.DagsterInstance.local_temp(str(tmp_path)) as instance:
        def run(key, fail):
            config = {"ops": {names.BOARDS: {"config": {"fail": fail}}}}
            return dg.materialize([boards], partition_key=key, instance=instance, run_config=config,
                                  raise_on_error=False).run_id

        made, failed, other = run("1-0", False), run("1-0", True), run("1-1", False)
        kept = retention.protected_runs(instance)
    assert {made, failed, other} <= kept  # made: 1-0's latest materialization; other: 1-1's and the asset's
