"""One table of exit codes for every command (``boardgen_pipeline/exits.py``;
docs/decisions/names-and-exit-codes.md): the README prints it as it is, every
code is documented, each error class maps to the code its cause has, and a
Dask cluster that does not answer (6, before any work) is told apart from one
lost after the rows began (4, never the "bad command line" 2)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from boardgen_pipeline import cli, errors, exits
from boardgen_pipeline.cli_args import ArgumentError
from boardgen_pipeline.errors import Violation
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.steps import pool

from .conftest import REPO


def test_the_readme_prints_the_table_as_it_is():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count(exits.markdown_table()) == 1
    # under its own heading, and no other exit-code table beside it
    section = readme.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    assert section.strip() == exits.markdown_table()


def test_every_code_is_documented_once():
    assert list(exits.TABLE) == sorted(Exit)
    assert all(text.strip() for text in exits.TABLE.values())
    rows = exits.markdown_table().splitlines()[2:]
    assert [int(r.split("|")[1]) for r in rows] == [int(c) for c in Exit]


VIOLATION = Violation("t.toml", "1-0", "mine_density", 2.0, "domain", "out of range")
CASES = [
    (errors.ClusterLost("tcp://h:1", "the cluster has had no worker"), Exit.RUN_FAILED),
    (errors.ClusterError("tcp://h:1", "no Dask scheduler answers there"), Exit.UNAVAILABLE),
    (errors.InstanceUnavailable("dagster.yaml", "the server refused the login"), Exit.UNAVAILABLE),
    (errors.WarehouseError("/w", "disk full"), Exit.STORAGE),
    (errors.TableError([VIOLATION]), Exit.INPUT),
    (ArgumentError([VIOLATION]), Exit.USAGE),
    (errors.PipelineMissing("nightly", "dagster"), Exit.UNAVAILABLE),
    (KeyboardInterrupt(), Exit.INTERRUPTED),
]


@pytest.mark.parametrize("exc, code", CASES, ids=[type(e).__name__ for e, _ in CASES])
def test_each_error_class_maps_to_the_code_of_its_cause(exc, code):
    assert errors.exit_code(exc) == code


def test_the_codes_the_table_gives_each_cause():
    # the table's own words for each cause, so that a code moved in errors.exit_code without the table fails here
    assert "cluster lost mid-run" in exits.TABLE[Exit.RUN_FAILED]
    assert "Dask scheduler that does not answer" in exits.TABLE[Exit.UNAVAILABLE]
    assert "PostgreSQL server" in exits.TABLE[Exit.UNAVAILABLE]
    assert "pip install 'boardgen[pipeline]'" in exits.TABLE[Exit.UNAVAILABLE]
    assert "before any work began" in exits.TABLE[Exit.USAGE]
    assert "storage fault" in exits.TABLE[Exit.STORAGE]


def test_a_bug_keeps_its_traceback():
    assert errors.exit_code(ValueError("a bug")) is None


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # bound, never listening, closed on return: a connection is refused


def _calibrate(tmp_path, address: str) -> list[str]:
    return ["calibrate", "--dask", address, "--warehouse", str(tmp_path / "warehouse"), "--samples", "8",
            "--rows", "1,0"]


def test_a_dask_address_that_refuses_is_unavailable_before_any_work(tmp_path, capsys):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    code = cli.main(_calibrate(tmp_path, address))
    err = capsys.readouterr().err
    assert code == Exit.UNAVAILABLE, err
    (line,) = err.splitlines()  # one sentence, no traceback
    assert line.startswith(f"error: --dask={address}: no Dask scheduler answers there (ConnectionRefusedError: ")
    assert not (tmp_path / "warehouse").exists()  # nothing written


def test_a_cluster_lost_after_the_rows_began_is_a_failed_run(tmp_path, capsys, monkeypatch):
    """The cluster's only worker is busy (it waits on an event nobody sets),
    so ``calibrate``'s rows wait on the scheduler; once they are there the
    worker goes, and ``calibrate`` gives up after ``WORKERLESS_SECONDS`` with
    exit 4. No timing decides the outcome: no row can finish before the worker
    goes, because the worker never takes one."""
    from distributed import Client, Event, LocalCluster

    monkeypatch.setattr(pool, "WORKERLESS_SECONDS", 1)  # the wait for a worker to come back: 60 s by default
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        hold = Event("boardgen-test-hold", client=client)
        busy = client.submit(hold.wait, pure=False)
        _until(lambda: busy.status == "pending" and client.processing() and any(client.processing().values()))

        def tasks() -> int:
            return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))

        def lose_the_worker_once_the_rows_wait():
            _until(lambda: tasks() > 1)  # calibrate's row is on the scheduler, behind the busy worker
            cluster.scale(0)

        killer = threading.Thread(target=lose_the_worker_once_the_rows_wait, daemon=True)
        killer.start()
        code = cli.main(_calibrate(tmp_path, cluster.scheduler_address))
        killer.join(timeout=60)
        err = capsys.readouterr().err
    assert code == Exit.RUN_FAILED, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines == [f"error: --dask={cluster.scheduler_address}: the cluster has had no worker for 1 s; 1 rows were "
                     "not run (the next run makes them)"]
    assert not list((tmp_path / "warehouse").rglob("*.parquet"))  # no row was written


def _until(condition, deadline_seconds: float = 60) -> None:
    """Poll ``condition`` until it holds; the deadline only turns a hang into a failure."""
    deadline = time.monotonic() + deadline_seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.05)


def test_a_pipeline_command_without_the_pipeline_extra_says_what_to_install(monkeypatch, capsys, tmp_path):
    # the commands look the extra up rather than import it (so `boardgen nightly` starts its lanes first):
    # the lookup failing must still be the one sentence and the "unavailable" code, with nothing written
    import importlib.util
    import sys

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "dagster" else real(name, *a))
    monkeypatch.delitem(sys.modules, "boardgen_dagster.commands", raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BOARDGEN_WAREHOUSE", str(tmp_path / "wh"))
    assert cli.main(["nightly"]) == Exit.UNAVAILABLE
    err = capsys.readouterr().err
    assert "no module 'dagster'" in err and "pip install 'boardgen[pipeline]'" in err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
