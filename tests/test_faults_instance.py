"""The Dagster instance's faults (docs/operations.md "The Dagster
instance"): the nightly leaves alone a run it did not launch, even one whose
process was killed; a user's dagster.yaml is never edited and a user's
instance is never migrated (an out-of-date schema is one sentence naming
`dagster instance migrate`); boardgen's own home is migrated following the
storage's alembic revision; a truncated runs.db ends in one sentence."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from boardgen_dagster import home
from boardgen_pipeline.errors import WarehouseError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.warehouse import instance as yaml_parts

from .faults_support import REPO

pytestmark = pytest.mark.usefixtures("dagster_home_restored")  # ensure_dagster_home sets it


RUNNER = textwrap.dedent("""
    import os, signal, sys, time
    import dagster as dg
    mode, ready = sys.argv[1], sys.argv[2]

    @dg.op
    def work():
        open(ready, "w").close()
        if mode == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(600)

    @dg.job(tags={"boardgen/kind": "fault-test"})
    def job():
        work()

    with dg.DagsterInstance.get() as instance:
        job.execute_in_process(instance=instance)
""")


def start_runner(mode: str, ready, env):
    return subprocess.Popen([sys.executable, "-c", RUNNER, mode, str(ready)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for(path, proc, seconds=240):
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None or path.exists() or proc.returncode == -signal.SIGKILL, proc.returncode
        assert time.monotonic() < deadline, "the runner never started its op"
        time.sleep(0.2)


def test_a_started_run_of_another_job_whose_process_was_killed_survives_the_nightly(tmp_path):
    """A run the nightly did not launch is another process's (perhaps on
    another host sharing the instance): even with its process gone, the
    nightly leaves it STARTED (for Dagster's run monitoring or the
    operator), and is not blocked by it."""
    from tests.nightly_support import nightly
    from tests.test_pipeline_support import copy_fixture

    dh = home.ensure_dagster_home(tmp_path / "dh")
    env = {**os.environ, "DAGSTER_HOME": str(dh), "PYTHONPATH": str(REPO)}
    dead = start_runner("die", tmp_path / "dead.ready", env)
    wait_for(tmp_path / "dead.ready", dead)
    assert dead.wait(timeout=60) == -signal.SIGKILL
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        (orphan,) = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
    rc, out, err = nightly(copy_fixture("small", tmp_path), tmp_path / "warehouse", dh, samples="8")
    assert rc == 0, out + err
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert instance.get_run_by_id(orphan.run_id).status == dg.DagsterRunStatus.STARTED


def test_a_users_dagster_yaml_is_never_edited(tmp_path):
    dh = tmp_path / "dh"
    dh.mkdir()
    mine = "# my instance\ntelemetry:\n  enabled: false\n"
    (dh / "dagster.yaml").write_text(mine)
    home.ensure_dagster_home(dh)
    assert (dh / "dagster.yaml").read_text() == mine
    assert not yaml_parts.is_own_yaml(mine) and yaml_parts.is_own_yaml(yaml_parts.DAGSTER_YAML)


def _downgrade_runs_db(dh):
    """Set the runs storage one alembic revision back, as an older Dagster left it."""
    from alembic.script import ScriptDirectory
    from dagster._core.storage.runs.sqlite import sqlite_run_storage
    from dagster._core.storage.sql import get_alembic_config

    with dg.DagsterInstance.from_config(str(dh)) as instance:
        db_rev, head = instance.run_storage.alembic_version()
    assert db_rev == head
    previous = ScriptDirectory.from_config(get_alembic_config(sqlite_run_storage.__file__)).get_revision(head).down_revision
    with sqlite3.connect(dh / "history" / "runs.db") as con:
        con.execute("update alembic_version set version_num = ?", (previous,))
    return previous, head


def test_a_users_instance_behind_dagster_is_one_sentence_naming_migrate_and_is_not_migrated(tmp_path):
    dh = tmp_path / "dh"
    dh.mkdir()
    (dh / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    home.ensure_dagster_home(dh)
    previous, head = _downgrade_runs_db(dh)
    with pytest.raises(WarehouseError) as err:
        home.ensure_dagster_home(dh)
    assert "dagster instance migrate" in str(err.value) and str(dh / "dagster.yaml") in str(err.value)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert home.storages_behind(instance) == {"runs": (previous, head)}  # left as the operator found it
    p = subprocess.run([str(Path(sys.executable).with_name("boardgen")), "prune", "--dagster-home", str(dh)],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == Exit.STORAGE and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "dagster instance migrate" in p.stderr and "Traceback" not in p.stderr


def test_boardgens_own_home_is_migrated_following_the_storage_revision(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    (dh / f".boardgen-migrated-{dg.__version__}").touch()  # an old stamp saying "done" must not matter
    previous, head = _downgrade_runs_db(dh)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert home.storages_behind(instance) == {"runs": (previous, head)}
    home.ensure_dagster_home(dh)
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert home.storages_behind(instance) == {}


def test_a_truncated_runs_db_ends_in_one_sentence(tmp_path):
    dh = home.ensure_dagster_home(tmp_path / "dh")
    runs_db = dh / "history" / "runs.db"
    with open(runs_db, "r+b") as fh:
        fh.truncate(100)
    with pytest.raises(WarehouseError) as err:
        home.ensure_dagster_home(dh)
    assert err.value.path == str(runs_db) and "corrupt" in err.value.cause
    p = subprocess.run([sys.executable, "-m", "boardgen_dagster.home"], capture_output=True, text=True, cwd=REPO,
                       env={**os.environ, "DAGSTER_HOME": str(dh), "PYTHONPATH": str(REPO)}, timeout=240)
    assert p.returncode == Exit.STORAGE and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and str(runs_db) in p.stderr and "corrupt" in p.stderr
