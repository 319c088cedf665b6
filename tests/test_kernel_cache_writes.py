"""Two processes compile into one numba cache at once (``board.kernel_cache``;
docs/decisions/kernels.md, "Compiling a cold cache from both ends").

Numba reads a function's index, adds an entry and writes it back, unlocked:
two processes saving two signatures of one function at once both take data
file 1, and one signature is lost or, worse, named with the other's code.
The race is made certain here, not left to luck: each process sleeps between
reading the index and writing it back, so without the lock both read it
empty. With the lock, a third process finds both signatures, each with its
own code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from boardgen_pipeline import paths
from boardgen_pipeline.board import kernel_cache

REPO = Path(__file__).resolve().parent.parent

KERNEL = """
from numba import njit

@njit(cache=True)
def twice(x):
    return x + x
"""

# One process: the lock (or not), a slow read of the index, one signature compiled and saved.
SAVE = """
import sys, time
from numba.core import caching
from boardgen_pipeline import paths
from boardgen_pipeline.board import kernel_cache
if sys.argv[2] == "locked":
    kernel_cache.serialize_cache_writes()
load = caching.IndexDataCacheFile._load_index
def slow_load(self):
    index = load(self)
    time.sleep(2.0)  # both processes read the index before either writes it back, unless they take turns
    return index
caching.IndexDataCacheFile._load_index = slow_load
import probe
probe.twice(1 if sys.argv[1] == "int" else 1.5)
"""

LOAD = """
import json
import boardgen_pipeline.board  # the same cache folder as the saves (named by the kernels' digest)
import probe
print(json.dumps({"int": probe.twice(1), "float": probe.twice(1.5),
                  "misses": sum(probe.twice.stats.cache_misses.values())}))
"""


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "BOARDGEN_NUMBA_CACHE"}
    return {**env, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
            "NUMBA_CACHE_DIR": str(tmp_path / "cache")}


def _two_saves_at_once(tmp_path: Path, mode: str) -> dict:
    (tmp_path / "probe.py").write_text(KERNEL)
    env = _env(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", SAVE, sig, mode], env=env, cwd=tmp_path,
                              stderr=subprocess.PIPE, text=True) for sig in ("int", "float")]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read()
    out = subprocess.run([sys.executable, "-c", LOAD], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.integration
def test_two_signatures_saved_at_once_are_both_found_with_their_own_code(tmp_path):
    loaded = _two_saves_at_once(tmp_path, "locked")
    assert loaded == {"int": 2, "float": 3.0, "misses": 0}


@pytest.mark.integration
def test_without_the_lock_the_race_is_real(tmp_path):
    """The planted fault the lock exists for: without it, one of the two
    signatures is missing from the index (compiled again by the third
    process) or named with the other's code."""
    loaded = _two_saves_at_once(tmp_path, "unlocked")
    assert loaded != {"int": 2, "float": 3.0, "misses": 0}


def test_the_lock_is_installed_once():
    from numba.core import caching

    kernel_cache.serialize_cache_writes()
    save = caching.IndexDataCacheFile.save
    kernel_cache.serialize_cache_writes()
    assert caching.IndexDataCacheFile.save is save and save.boardgen_serialized


ENTRY = """
import os, pathlib, time
def run():
    pathlib.Path(os.environ["PROBE_OUT"]).write_text(os.getcwd() + "\\n" + os.environ["BOARDGEN_NUMBA_CACHE"])
def run_long():
    time.sleep(600)
"""


def test_the_second_process_runs_from_this_copy_of_the_package_and_is_waited_for(tmp_path, monkeypatch):
    (tmp_path / "entry_probe.py").write_text(ENTRY)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PROBE_OUT", str(tmp_path / "out"))
    monkeypatch.setattr("boardgen_pipeline.processes.default_workers", lambda: 2)
    with kernel_cache.other_end_compiling("entry_probe:run") as proc:
        assert proc is not None
    assert proc.returncode == 0  # waited for, not left running
    cwd, cache = (tmp_path / "out").read_text().splitlines()
    assert Path(cwd) == REPO and Path(cache).is_absolute()


def test_one_core_starts_no_second_process(monkeypatch):
    monkeypatch.setattr("boardgen_pipeline.processes.default_workers", lambda: 1)
    with kernel_cache.other_end_compiling("entry_probe:run") as proc:
        assert proc is None


def test_a_failed_compile_takes_the_second_process_with_it(tmp_path, monkeypatch):
    (tmp_path / "entry_probe.py").write_text(ENTRY)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr("boardgen_pipeline.processes.default_workers", lambda: 2)
    with pytest.raises(RuntimeError), kernel_cache.other_end_compiling("entry_probe:run_long") as proc:
        raise RuntimeError("the compile failed")
    assert proc.returncode is not None and proc.returncode < 0  # killed, not waited for


def test_a_cache_holding_some_kernels_is_cold_until_a_warm_up_compiled_them_all(tmp_path, monkeypatch):
    """A folder where a few tests compiled a few kernels, or another checkout
    of the same sources compiled them all, is cold: the night compiles what
    is missing under the compile lock, from both ends, rather than the
    lanes' server compiling it alone, holding every lane back."""
    from boardgen_pipeline.steps import chain

    monkeypatch.setattr(paths, "kernel_cache_dir", lambda: tmp_path)
    assert chain.kernels_cold()
    (tmp_path / "board_x").mkdir()
    (tmp_path / "board_x" / "closure_rows.close_rows-10.py311.nbi").write_bytes(b"")
    assert chain.kernels_cold()
    monkeypatch.setattr(paths, "__file__", str(tmp_path / "other_checkout" / "boardgen_pipeline" / "paths.py"))
    paths.kernel_cache_mark().touch()  # another checkout's warm-up
    monkeypatch.undo()
    monkeypatch.setattr(paths, "kernel_cache_dir", lambda: tmp_path)
    assert chain.kernels_cold()
    paths.kernel_cache_mark().touch()  # this checkout's
    assert not chain.kernels_cold()


# After the warm-up, boards that no attempt passes (least bad, then best legal) and their figures: the
# signatures every compiled function of the board package holds before and after, in a process of its own
# (a test worker may have compiled anything already).
AFTER_WARM_UP = """
import json, sys
from boardgen_pipeline.board import generator
from boardgen_pipeline.board.bench import bench_row

def signatures():
    out = {}
    for name, mod in list(sys.modules.items()):
        if name.startswith("boardgen_pipeline.board."):
            for attr, obj in vars(mod).items():
                if hasattr(obj, "py_func") and hasattr(obj, "signatures"):
                    out[f"{name}.{attr}"] = len(obj.signatures)
    return out

generator.warm_up()
before = signatures()
for target, cap in ((0.95, 9), (1.0, 45)):
    outs = generator.generate_batch_from_row(bench_row(10, 10, 0.3, target, cap, 3), 3, range(40))
    assert {m["exit"] for _, m in outs} - {"passed"}, "no board failed: the test proves nothing"
after = signatures()
print(json.dumps({k: (before.get(k, 0), v) for k, v in after.items() if v != before.get(k, 0)}))
"""


def test_the_warm_up_compiles_what_a_board_no_attempt_passes_needs():
    """The exit of a board that no attempt passed and the replay of its chosen
    attempt are part of ``run_batch`` (docs/decisions/kernels.md, "First
    use"): after ``generator.warm_up``, a row whose boards end least bad or
    best legal runs no compiled function the warm-up did not load."""
    out = subprocess.run([sys.executable, "-c", AFTER_WARM_UP], capture_output=True, text=True, cwd=REPO,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}
