"""The nightly past one machine and on every core: on a real
Dask cluster (a ``dask scheduler`` and two ``dask worker`` processes on
localhost, not an in-process cluster) and in two lanes of runs, the nightly
writes the warehouse a one-lane nightly writes, byte for byte; a Dask worker
killed in the middle of a run costs no row (its rows run again), a cluster
that loses every worker fails the run cleanly and the next run repairs the
warehouse; a Dask address that does not answer stops the nightly before
anything is created."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardgen_pipeline.exits import Exit

from .nightly_support import REPO, TIMEOUT, nightly, parquet_files
from .test_pipeline_support import copy_fixture

DASK = str(Path(sys.executable).with_name("dask"))
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> Path:
    """The repo's tables (15 rows, fog and Boss rows among them)."""
    import shutil

    dest = tmp_path_factory.mktemp("tables") / "tables"
    shutil.copytree(REPO / "tables", dest)
    return dest


@pytest.fixture(scope="module")
def reference(tables, tmp_path_factory) -> dict[str, bytes]:
    """The warehouse a nightly writes with its rows in its own process."""
    base = tmp_path_factory.mktemp("reference")
    rc, out, err = nightly(tables, base / "warehouse", base / "home", "--workers", "1")
    assert rc == 0, out + err
    files = parquet_files(base / "warehouse")
    # every row's boards, overlays, report, checks and one history version; the draws; the strata
    assert len(files) == 5 * 15 + 2
    return files


class Cluster:
    """A ``dask scheduler`` and two single-threaded ``dask worker`` processes
    without nannies (a killed worker stays dead)."""

    def __init__(self, workdir: Path):
        self.file = workdir / "scheduler.json"
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        self.scheduler = subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                           "--no-dashboard", "--scheduler-file", str(self.file)],
                                          cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.address = self._address(time.monotonic() + 120)
        self.workers = [subprocess.Popen([DASK, "worker", self.address, "--nthreads", "1", "--no-nanny",
                                          "--no-dashboard", "--host", "127.0.0.1"],
                                         cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                        for _ in range(2)]
        from distributed import Client

        self.client = Client(self.address, timeout=60)
        self.client.wait_for_workers(2, timeout=120)

    def _address(self, deadline: float) -> str:
        """The scheduler's address, once its file is whole: the scheduler
        writes it in place, so the file can exist and still be empty."""
        while True:
            try:
                return json.loads(self.file.read_text())["address"]
            except (FileNotFoundError, json.JSONDecodeError, KeyError):
                if time.monotonic() > deadline or self.scheduler.poll() is not None:
                    raise
                time.sleep(0.1)

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)

    def close(self) -> None:
        self.client.close()
        for proc in [*self.workers, self.scheduler]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def test_the_nightly_on_a_dask_cluster_writes_the_warehouse_a_local_run_writes(tables, reference, cluster, tmp_path):
    rc, out, err = nightly(tables, tmp_path / "warehouse", tmp_path / "home", env={"BOARDGEN_DASK": cluster.address})
    assert rc == 0, out + err
    assert parquet_files(tmp_path / "warehouse") == reference  # boards, overlays, reports, draws, strata
    # the rows ran on the cluster's workers, not in the nightly
    prefixes = cluster.client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert "run_row" in prefixes


def _kill_a_busy_worker(cluster: Cluster, proc: subprocess.Popen, pids: dict) -> tuple[str, list]:
    """Wait until a worker holds a row, and kill its process (SIGKILL)."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline and proc.poll() is None:
        busy = {w: keys for w, keys in cluster.client.processing().items() if keys}
        if busy:
            worker, keys = next(iter(busy.items()))
            os.kill(pids[worker], signal.SIGKILL)
            return worker, keys
        time.sleep(0.01)
    raise AssertionError("no worker ever held a row")


def test_a_dask_worker_killed_mid_run_costs_no_row(tables, reference, cluster, tmp_path):
    pids = cluster.worker_pids()
    proc = nightly(tables, tmp_path / "warehouse", tmp_path / "home", env={"BOARDGEN_DASK": cluster.address},
                   wait=False)
    worker, keys = _kill_a_busy_worker(cluster, proc, pids)
    out, err = proc.communicate(timeout=TIMEOUT)
    assert any(str(k).startswith("run_row") for k in keys)  # it died holding a row
    assert proc.returncode == 0, out + err
    assert parquet_files(tmp_path / "warehouse") == reference
    assert list(cluster.client.nthreads()) != [] and worker not in cluster.client.nthreads()


def test_a_cluster_that_loses_every_worker_fails_the_run_and_the_next_run_repairs_it(tables, reference, cluster,
                                                                                     tmp_path):
    root, home = tmp_path / "warehouse", tmp_path / "home"
    pids = cluster.worker_pids()
    proc = nightly(tables, root, home, env={"BOARDGEN_DASK": cluster.address, "BOARDGEN_DASK_WAIT_SECONDS": "3"},
                   wait=False)
    _kill_a_busy_worker(cluster, proc, pids)
    for pid in pids.values():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # the busy one, already gone
            pass
    out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 4, out + err  # the run failed, cleanly: a verdict, no traceback
    assert "Traceback" not in err and "no worker" in out
    rc, out, err = nightly(tables, root, home, "--workers", "2")
    assert rc == 0, out + err
    assert parquet_files(root) == reference


def test_two_lanes_of_runs_write_the_warehouse_one_lane_writes(tables, reference, tmp_path):
    root, home = tmp_path / "warehouse", tmp_path / "home"
    rc, out, err = nightly(tables, root, home, "--workers", "2")
    assert rc == 0, out + err
    assert parquet_files(root) == reference
    said = " ".join(out.split())
    # counted in words that read right: "1 run of rows on 2 lanes", never "1 rows run(s) on 2 lane(s)"
    assert "on 2 lanes, each recording its own rows" in said and "(s)" not in said
    assert re.search(r"\b1 runs\b|\b1 lanes\b", said) is None


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("how", ["environment", "option"])
def test_an_unreachable_scheduler_stops_the_nightly_before_anything_is_written(tmp_path, how):
    tables = copy_fixture("small", tmp_path)
    address = f"tcp://127.0.0.1:{_closed_port()}"
    root, home = tmp_path / "warehouse", tmp_path / "home"
    extra, env = (("--dask", address), {}) if how == "option" else ((), {"BOARDGEN_DASK": address})
    rc, out, err = nightly(tables, root, home, *extra, env=env)
    assert rc == Exit.UNAVAILABLE, out + err
    line = f"{'--dask' if how == 'option' else 'BOARDGEN_DASK'}={address}: no Dask scheduler answers there"
    assert err.startswith(f"error: {line}") and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not root.exists() and not home.exists()


def test_a_malformed_dask_address_is_refused_with_the_arguments(tmp_path):
    tables = copy_fixture("small", tmp_path)
    rc, out, err = nightly(tables, tmp_path / "warehouse", tmp_path / "home", env={"BOARDGEN_DASK": "tcp://nohost"})
    assert rc == 2 and "$BOARDGEN_DASK" in err and "no port" in err and "Traceback" not in err
    assert not (tmp_path / "warehouse").exists()


def test_calibrate_on_an_unreachable_scheduler_writes_nothing(tmp_path):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    root = tmp_path / "warehouse"
    p = subprocess.run([str(Path(sys.executable).with_name("boardgen")), "calibrate", "--tables",
                        str(copy_fixture("small", tmp_path)), "--warehouse", str(root), "--dask", address],
                       cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == Exit.UNAVAILABLE
    assert p.stderr.startswith(f"error: --dask={address}: no Dask scheduler answers there")
    assert "Traceback" not in p.stderr
    assert not any(root.rglob("*.parquet"))
