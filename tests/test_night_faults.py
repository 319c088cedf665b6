"""A night that loses part of its work still ends as a night
(docs/pipeline.md "One nightly"): a rows run that fails gets the night's
table-wide checks, which name the rows it did not finish; a lane process
that dies has its own runs marked failed by the nightly that holds its
handle, its unbegun runs go to another lane, and the night exits 4."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time

import dagster as dg
import psutil
import pytest

from boardgen_dagster.names import PREPARE_JOB, ROWS_JOB, TABLE_JOB, range_tags
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.steps import night
from boardgen_pipeline.steps.table_check import CHECK_EVERY_ROW, DID_NOT_FINISH

from .faults_support import row_chain_raises
from .nightly_support import REPO, TIMEOUT, nightly, nightly_command
from .test_pipeline_support import checks_of, copy_fixture, defs_for, execute, meta

KEYS = ["1-0", "1-1", "2-0"]


def _night(defs, instance, tonight: str):
    tags = {night.NIGHT_TAG: tonight}
    assert execute(defs, instance, PREPARE_JOB, tags={**tags, night.KEY_TAG: night.PREPARE}).success
    rows = execute(defs, instance, ROWS_JOB, tags={**tags, night.KEY_TAG: "rows-000", **range_tags(KEYS[0], KEYS[-1])})
    table = execute(defs, instance, TABLE_JOB, tags={**tags, night.KEY_TAG: night.TABLE})
    return rows, table


def test_a_row_run_that_fails_mid_night_gets_the_nights_checks_which_name_the_row(tmp_path, monkeypatch):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        rows, table = _night(defs, instance, "night-1")
        assert rows.success and checks_of(table)[CHECK_EVERY_ROW].passed
        row_chain_raises(monkeypatch, (1, 1))
        # the second night: row 1-1's files are still last night's, current for an unchanged table; only the
        # night knows its run did not finish it
        rows, table = _night(defs, instance, "night-2")
        assert not rows.success
        every = checks_of(table)[CHECK_EVERY_ROW]
        assert not every.passed and meta(every)["failing"] == {"1-1": [DID_NOT_FINISH]}
        assert every.description.startswith(f"1 of 3 rows fail F4: 1-1 ({DID_NOT_FINISH})")


def _lanes(proc) -> list:
    # the lanes are forks of their server, a child of the nightly: the nightly's descendants (a lane is
    # told by the pid its runs carry)
    return psutil.Process(proc.pid).children(recursive=True)


def _kill_leftovers(home) -> None:
    """Whatever a killed lane left running on this test's Dagster home (an orphaned compute-log tail):
    the machine as the test found it."""
    for p in psutil.process_iter(["cmdline"]):
        if any(str(home) in part for part in p.info["cmdline"] or ()):
            with contextlib.suppress(psutil.Error):
                p.kill()


@pytest.mark.integration
def test_a_lane_that_dies_fails_only_its_own_runs_and_the_night_still_ends(tmp_path):
    tables, root, home = copy_fixture("small", tmp_path), tmp_path / "warehouse", tmp_path / "home"
    # its output into files, not pipes: a lane killed between Dagster starting its compute-log `tail` and
    # the watcher that kills it leaves that tail holding the lane's inherited output, and a pipe read to
    # its end would wait for it (seen once in six full runs); the night's end is the nightly's exit
    out_path, err_path = tmp_path / "nightly.out", tmp_path / "nightly.err"
    with out_path.open("w") as out_file, err_path.open("w") as err_file:
        proc = subprocess.Popen(nightly_command(tables, root, home, "--workers", "2", samples="256"), cwd=REPO,
                                stdout=out_file, stderr=err_file, text=True)
    victim = None
    deadline = time.monotonic() + TIMEOUT
    try:
        while victim is None:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
            if not (home / "dagster.yaml").exists():
                continue
            with dg.DagsterInstance.from_config(str(home)) as instance:
                started = instance.get_run_records(dg.RunsFilter(job_name=ROWS_JOB,
                                                                 statuses=[dg.DagsterRunStatus.STARTED]))
            pids = {str(night.executor_of(r.dagster_run.tags)[1]): r.dagster_run for r in started}
            for lane in _lanes(proc):
                if str(lane.pid) in pids:
                    victim, run = lane, pids[str(lane.pid)]
                    os.kill(lane.pid, signal.SIGKILL)
                    break
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_leftovers(home)
    out, err = out_path.read_text(), err_path.read_text()
    assert proc.returncode == Exit.RUN_FAILED, out + err
    assert "a lane died" in " ".join(out.split())
    with dg.DagsterInstance.from_config(str(home)) as instance:
        killed = instance.get_run_by_id(run.run_id)
        assert killed.status == dg.DagsterRunStatus.FAILURE
        records = instance.get_run_records(dg.RunsFilter(tags={night.NIGHT_TAG: run.tags[night.NIGHT_TAG]}))
        others = [r.dagster_run for r in records if r.dagster_run.run_id != run.run_id]
        assert all(r.is_success for r in others), [(r.tags.get(night.KEY_TAG), r.status) for r in others]
        assert {night.stage_of(r.tags[night.KEY_TAG]) for r in others} >= {night.TABLE, night.RETENTION}


def test_a_killed_nightlys_runs_on_this_host_are_failed_by_the_next_and_no_other():
    """A run executed here by a process that is gone is failed; a run of
    another host, or one executed by a live process here, is left alone."""
    from boardgen_dagster import nights

    dead = psutil.Popen(["true"])
    dead.wait()
    here = socket.gethostname()
    with dg.instance_for_test() as instance:
        def started(host, pid, start=True):
            run = instance.create_run_for_job(dg.GraphDefinition("g").to_job(),
                                              tags={night.EXECUTOR_TAG: f"{host}:{pid}"})
            if start:
                instance.handle_run_event(run.run_id, dg.DagsterEvent(
                    dg.DagsterEventType.RUN_START.value, job_name=run.job_name))
            return run.run_id

        gone, elsewhere, alive = started(here, dead.pid), started("another-host", dead.pid), started(here, os.getpid())
        # created for a lane that was killed before the run began: it would read "not started" for ever
        never = started(here, dead.pid, start=False)
        assert nights.fail_dead_here(instance) == 2
        status = {r: instance.get_run_by_id(r).status for r in (gone, never, elsewhere, alive)}
        assert status == {gone: dg.DagsterRunStatus.FAILURE, never: dg.DagsterRunStatus.FAILURE,
                          elsewhere: dg.DagsterRunStatus.STARTED, alive: dg.DagsterRunStatus.STARTED}


def test_tables_that_do_not_validate_write_nothing_and_say_where(tmp_path):
    """A bad row stops the night before anything is written: not a file, not
    even the warehouse folder; the report names the file, row, field, value
    and rule, and the failed validation run is recorded for the UI."""
    tables, root, home = copy_fixture("small", tmp_path), tmp_path / "warehouse", tmp_path / "home"
    path = tables / "board_gen.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("mine_density = ", 'mine_density = "high" # ', 1), encoding="utf-8")
    code, out, err = nightly(tables, root, home)
    assert code == Exit.INPUT and "Traceback" not in err
    assert f"{path}: row (1,0): field mine_density = 'high': [domain]" in err
    assert not root.exists()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_run_records()
        assert [r.dagster_run.status for r in runs] == [dg.DagsterRunStatus.FAILURE]
