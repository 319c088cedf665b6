"""Where rows run (every core, and past one machine; no
reaching into CPython's private attributes): the pool gives every item's
result once, whatever the number of workers; a row that raises fails alone;
a worker process that dies is replaced and only the row it ran runs again,
failing once it has killed its worker ``RETRIES + 1`` times while innocent
rows pass; a pool that breaks is started again; the workers a machine gives
follow its control group's CPU quota; a Dask address that does not parse or
does not answer is one sentence naming it, before any row runs. Nothing here
reaches into a pool's private attributes: workers die as they would in
production (``os._exit``, a failing start-up)."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from boardgen_pipeline import processes
from boardgen_pipeline.errors import ClusterError
from boardgen_pipeline.steps import pool as pool_mod
from boardgen_pipeline.steps.pool import RowPool, check_address, connect, workers_for


def square(x: int) -> int:
    return x * x


def odd_fails(x: int) -> int:
    if x % 2:
        raise ValueError(f"row {x} is odd")
    return x


def dies_once(item: tuple[int, str]) -> int:
    """Kills its own worker process the first time it sees item 3 (a marker
    file says it did), as an out-of-memory kill or a ``kill -9`` would."""
    x, marker = item
    if x == 3 and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()))
        os._exit(9)
    return x * 10


@pytest.mark.parametrize("workers", [1, 2])
def test_every_item_comes_back_once_with_its_result(workers):
    with RowPool(workers) as pool:
        outcomes = list(pool.map_unordered(square, range(20), window=3))
    assert sorted((o.item, o.result) for o in outcomes) == [(i, i * i) for i in range(20)]
    assert all(o.error is None for o in outcomes)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_row_that_raises_fails_alone(workers):
    with RowPool(workers) as pool:
        outcomes = {o.item: o for o in pool.map_unordered(odd_fails, range(6))}
    assert sorted(k for k, o in outcomes.items() if o.error is None) == [0, 2, 4]
    assert str(outcomes[3].error) == "row 3 is odd" and isinstance(outcomes[3].error, ValueError)


def test_a_worker_that_dies_is_replaced_and_its_row_runs_again(tmp_path):
    marker = tmp_path / "died"
    with RowPool(2) as pool:
        outcomes = list(pool.map_unordered(dies_once, [(i, str(marker)) for i in range(8)], window=4))
        notes = list(pool.notes)
    assert marker.exists()  # item 3 did kill its worker
    assert sorted((o.item[0], o.result) for o in outcomes) == [(i, i * 10) for i in range(8)]
    assert all(o.error is None for o in outcomes)
    assert notes == [f"a worker process died running a row (exit code 9); it runs again ({pool_mod.RETRIES} retries "
                     "left), the other rows go on"]


def runs_logged(item):
    """Logs each run of an item (a file per run); item 3 then kills its
    worker, and item 4 stays in flight until item 3 has run ``runs_of_3``
    times (so every death happens while an innocent row is running)."""
    x, folder, runs_of_3 = item
    Path(folder, f"{x}.{os.getpid()}.{time.monotonic_ns()}").touch()
    if x == 3:
        os._exit(9)
    if x == 4:
        deadline = time.monotonic() + 120  # only against a hang: the condition is what it waits for
        while len(list(Path(folder).glob("3.*"))) < runs_of_3 and time.monotonic() < deadline:
            time.sleep(0.05)
    return x


@pytest.mark.parametrize("retries", [0, 1, 2])
def test_a_row_whose_worker_keeps_dying_fails_after_its_retries_and_costs_no_other_row(tmp_path, monkeypatch,
                                                                                       retries):
    """Item 3 kills every worker that runs it: it runs ``retries + 1`` times,
    then fails with the worker's death; every other row runs exactly once,
    item 4 too, which is in flight on the other worker at each death."""
    monkeypatch.setattr(pool_mod, "RETRIES", retries)
    items = [(i, str(tmp_path), retries + 1) for i in range(6)]
    with RowPool(2) as pool:
        outcomes = {o.item[0]: o for o in pool.map_unordered(runs_logged, items, window=3)}
        notes = list(pool.notes)
    from pebble import ProcessExpired

    assert isinstance(outcomes[3].error, ProcessExpired) and outcomes[3].error.exitcode == 9
    assert {k: o.result for k, o in outcomes.items() if o.error is None} == {0: 0, 1: 1, 2: 2, 4: 4, 5: 5}
    runs = sorted(int(p.name.split(".")[0]) for p in tmp_path.iterdir())
    assert runs == [0, 1, 2, *[3] * (retries + 1), 4, 5]
    assert len(notes) == retries + 1 and notes[-1].endswith(f"so it fails ({retries} retries)")


def dies_in_start_up():
    os._exit(3)


def test_a_pool_that_breaks_is_started_again_and_runs_every_row_once(monkeypatch):
    """Every worker of the first pool dies before it takes a row (its start-up
    fails): pebble cannot say whose row it was and breaks the pool; a new pool
    runs every row, each once."""
    import multiprocessing

    from pebble import ProcessPool

    made = []

    def start(self):
        made.append(len(made))
        self._executor = ProcessPool(max_workers=self.workers, context=multiprocessing.get_context("spawn"),
                                     initializer=dies_in_start_up if len(made) == 1 else None)
        return self._executor

    monkeypatch.setattr(RowPool, "_start", start)
    with RowPool(2) as pool:
        outcomes = list(pool.map_unordered(square, range(10), window=4))
        notes = list(pool.notes)
    assert len(made) == 2  # the broken pool, then a new one
    assert sorted((o.item, o.result) for o in outcomes) == [(i, i * i) for i in range(10)]
    assert all(o.error is None for o in outcomes)
    assert notes and notes[0].startswith("the worker pool broke (") and notes[0].endswith("rows again")


def test_a_pool_that_refuses_rows_while_its_window_is_filled_runs_every_row_once(monkeypatch):
    """pebble refuses a row (``RuntimeError``) once its pool broke: as seen
    between two rows of a window, the rows not yet sent go to a new pool."""
    import multiprocessing

    from pebble import ProcessPool

    class RefusesTheThird(ProcessPool):
        scheduled = 0

        def schedule(self, *args, **kwargs):
            type(self).scheduled += 1
            if type(self).scheduled == 3:
                raise RuntimeError("The Pool is not active")
            return super().schedule(*args, **kwargs)

    made = []

    def start(self):
        made.append(len(made))
        kind = RefusesTheThird if len(made) == 1 else ProcessPool
        self._executor = kind(max_workers=self.workers, context=multiprocessing.get_context("spawn"))
        return self._executor

    monkeypatch.setattr(RowPool, "_start", start)
    with RowPool(2) as pool:
        outcomes = list(pool.map_unordered(square, range(10), window=4))
        notes = list(pool.notes)
    assert len(made) == 2
    assert sorted((o.item, o.result) for o in outcomes) == [(i, i * i) for i in range(10)]
    assert all(o.error is None for o in outcomes)
    assert notes == ["the worker pool broke (The Pool is not active); a new one runs its 3 rows again"]


def test_a_pool_that_keeps_breaking_fails_its_rows_and_ends(monkeypatch):
    import multiprocessing

    from pebble import ProcessPool

    def start(self):
        self._executor = ProcessPool(max_workers=self.workers, context=multiprocessing.get_context("spawn"),
                                     initializer=dies_in_start_up)
        return self._executor

    monkeypatch.setattr(RowPool, "_start", start)
    monkeypatch.setattr(pool_mod, "RETRIES", 0)
    with RowPool(2) as pool:
        outcomes = list(pool.map_unordered(square, range(3), window=4))
    assert sorted(o.item for o in outcomes) == [0, 1, 2] and all(o.error is not None for o in outcomes)


def test_the_pool_uses_no_private_attribute_of_a_library():
    """No reaching into ``concurrent.futures``' or pebble's internals."""
    import re

    source = Path(pool_mod.__file__).read_text(encoding="utf-8")
    assert not re.search(r"\b_(broken|processes|executor_manager_thread|context|pool_manager)\b", source)
    assert "ProcessPoolExecutor" not in source


@pytest.mark.parametrize("v2, v1, cpus", [
    ("200000 100000\n", None, 2),  # a 2-CPU quota (cgroup v2)
    ("150000 100000\n", None, 2),  # 1.5 CPUs: rounded up
    ("max 100000\n", None, None),  # no quota
    (None, ("200000", "100000"), 2),  # cgroup v1
    (None, ("-1", "100000"), None),  # v1 without a quota
    (None, None, None),  # neither file
    ("garbage", ("x", "y"), None),  # unreadable figures: no quota
])
def test_cgroup_cpus_reads_the_quota(tmp_path, v2, v1, cpus):
    v2_path, v1_paths = tmp_path / "cpu.max", (tmp_path / "cfs_quota_us", tmp_path / "cfs_period_us")
    if v2 is not None:
        v2_path.write_text(v2)
    if v1 is not None:
        for path, text in zip(v1_paths, v1):
            path.write_text(text + "\n")
    assert processes.cgroup_cpus(str(v2_path), tuple(map(str, v1_paths))) == cpus


def test_a_2_cpu_quota_on_a_many_core_machine_gives_2_workers(tmp_path, monkeypatch):
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    monkeypatch.setattr(processes, "CGROUP_V2_MAX", str(tmp_path / "cpu.max"))
    monkeypatch.setattr(processes, "CGROUP_V1", (str(tmp_path / "none1"), str(tmp_path / "none2")))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert pool_mod.default_workers() == 2
    assert pool_mod.parallelism(600) == 2 and pool_mod.build(600).workers == 2
    (tmp_path / "cpu.max").write_text("max 100000\n")  # no quota: every core it may run on
    assert pool_mod.default_workers() == 64
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})  # fewer cores than the quota
    (tmp_path / "cpu.max").write_text("800000 100000\n")
    assert pool_mod.default_workers() == 3


def test_worker_counts_follow_the_rows():
    assert workers_for(600, 2) == 2 and workers_for(15, 2) == 1 and workers_for(3, 8) == 1
    assert workers_for(0, 2) == 1  # never fewer than one
    assert workers_for(10 * pool_mod.MIN_ROWS_PER_WORKER, 16) == 10


@pytest.mark.parametrize("address, problem", [
    ("", "empty address"),
    ("tcp://scheduler", "no port"),
    ("tcp://scheduler:http", "port 'http' is not a number"),
    ("tcp://scheduler:0", "port '0' is not a number"),
    ("udp://scheduler:8786", "unknown protocol 'udp'"),
])
def test_an_address_that_cannot_name_a_scheduler_is_refused(address, problem):
    assert problem in check_address(address)
    with pytest.raises(ClusterError) as err:
        connect(address, source="BOARDGEN_DASK")
    assert str(err.value).startswith(f"BOARDGEN_DASK={address}: ") and problem in str(err.value)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "127.0.0.1:8786", "tls://host.example:8786",
                                     "inproc://x"])
def test_a_well_formed_address_passes(address):
    assert check_address(address) is None


def test_a_scheduler_that_does_not_answer_is_one_sentence():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ClusterError) as err:
        connect(f"tcp://127.0.0.1:{port}", timeout=2, source="--dask")
    text = str(err.value)
    assert text.startswith(f"--dask=tcp://127.0.0.1:{port}: no Dask scheduler answers there") and "\n" not in text


def frozen_objects(_: int) -> int:
    import gc

    return gc.get_freeze_count()


def test_a_worker_keeps_its_loaded_modules_and_kernels_out_of_its_collections():
    """The worker's initializer loads the kernels and freezes what it loaded
    (``processes.freeze_long_lived``): a full collection in a worker would
    otherwise walk every object of its modules, about a tenth of a long batch."""
    with RowPool(workers=2) as p:
        counts = [o.result for o in p.map_unordered(frozen_objects, [1, 2])]
    assert all(c > 10_000 for c in counts), counts
