"""Dagster's migration scripts read once a process (``warehouse.instance_storage.alembic_scripts_read_once``;
docs/performance.md "The nightly"): every SQL storage Dagster opens, and each run's own SQLite
file, checks its schema against the scripts' head, and each check used to read and execute every
script again (14 times to create a home). A new home, a run and a second instance now read them
at most once; a configuration with other options still gets its own scripts; a home behind the
installed Dagster is still migrated (tests/test_faults_instance.py)."""

import dagster as dg
import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory, base

from boardgen_dagster import home
from boardgen_pipeline.warehouse import instance_storage

from .instance_support import marked

pytestmark = pytest.mark.usefixtures("dagster_home_restored")  # ensure_dagster_home sets it


def test_a_new_home_a_run_and_a_second_instance_read_the_scripts_at_most_once(tmp_path, monkeypatch):
    reads = []
    load = base.ScriptDirectory._load_revisions

    def counted(self):
        reads.append(self.dir)
        yield from load(self)

    monkeypatch.setattr(base.ScriptDirectory, "_load_revisions", counted)
    dh = home.ensure_dagster_home(tmp_path / "dh")  # three storages made, each stamped and checked
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert dg.materialize([marked], instance=instance).success  # the run's own file, made and checked
    with dg.DagsterInstance.from_config(str(dh)) as instance:
        assert home.storages_behind(instance) == {}
    # once in a fresh process; none when an earlier test of this process read them already
    assert len(reads) <= 1, reads


def _config(script_location) -> Config:
    config = Config()
    config.set_main_option("script_location", str(script_location))
    return config


def test_the_same_options_share_one_directory_and_other_options_get_their_own(tmp_path):
    instance_storage.alembic_scripts_read_once()
    instance_storage.alembic_scripts_read_once()  # a second call adds nothing: still one layer
    for name in ("a", "b"):
        (tmp_path / name / "versions").mkdir(parents=True)
    a = ScriptDirectory.from_config(_config(tmp_path / "a"))
    assert ScriptDirectory.from_config(_config(tmp_path / "a")) is a  # another Config, the same options
    b = ScriptDirectory.from_config(_config(tmp_path / "b"))
    assert b is not a and b.dir == str(tmp_path / "b")
    quiet = _config(tmp_path / "a")
    quiet.cmd_opts = type("Opts", (), {"quiet": True})()
    assert ScriptDirectory.from_config(quiet) is not a  # messaging options are part of it
