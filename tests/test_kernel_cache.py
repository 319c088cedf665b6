"""The compiled kernels' cache cannot run code older than the sources
(``paths.kernel_cache_dir``; docs/decisions/kernels.md).

Numba invalidates a cached function only when its own file changes, and the
kernels call each other across files. The cache folder is therefore named by
a digest of every kernel module and what they import. Tested as it would
happen on a developer's machine: in a copy of the package, a kernel runs and
is cached; a constant of a callee in *another* module changes; a new process
on the same cache folder runs the new code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from boardgen_pipeline import paths

REPO = Path(__file__).resolve().parent.parent
CALLEE = Path("boardgen_pipeline/board/rng_kernels.py")  # ``below``, called by ``kernels.place``
CONSTANT = "_M2 = uint64(0x94D049BB133111EB)"

# ``kernels.place`` (in kernels.py) draws through ``rng_kernels.below``
RUN = """
import json, os
from boardgen_pipeline.board import kernels
from boardgen_pipeline.board.workspace import Workspace
ws = Workspace.for_board(8, 8, 3)
removed, state, draws = ws.place(12345, 10, 1)
print(json.dumps({"mines": [int(c) for c in ws.mines.nonzero()[0]], "state": state,
                  "cache": os.environ["NUMBA_CACHE_DIR"], "hits": sum(kernels.place.stats.cache_hits.values()),
                  "misses": sum(kernels.place.stats.cache_misses.values())}))
"""


def _run(src: Path, base: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "BOARDGEN_NUMBA_CACHE")}
    env.update(PYTHONPATH=str(src), BOARDGEN_NUMBA_CACHE=str(base))
    p = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=300, cwd=src)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout.splitlines()[-1])


@pytest.mark.integration
def test_an_edited_callee_in_another_module_is_run_not_its_cached_caller(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(REPO / "boardgen_pipeline", src / "boardgen_pipeline",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    base = tmp_path / "cache"
    first = _run(src, base)
    assert Path(first["cache"]).parent == base and any(Path(first["cache"]).rglob("*.nbi"))
    again = _run(src, base)  # the cache is used: loaded, not compiled
    assert (again["mines"], again["cache"], again["hits"], again["misses"]) == (first["mines"], first["cache"], 1, 0)
    callee = src / CALLEE
    text = callee.read_text(encoding="utf-8")
    assert CONSTANT in text, "the stream constant moved: point this test at another callee's constant"
    callee.write_text(text.replace(CONSTANT, "_M2 = uint64(0x94D049BB133111ED)"), encoding="utf-8")
    changed = _run(src, base)  # kernels.py itself is unchanged: numba alone would load the stale caller
    assert changed["cache"] != first["cache"] and changed["misses"] == 1
    assert changed["mines"] != first["mines"]
    callee.write_text(text, encoding="utf-8")  # and back: the first folder serves the first sources again
    back = _run(src, base)
    assert (back["mines"], back["cache"], back["hits"]) == (first["mines"], first["cache"], 1)


def test_the_digest_covers_every_kernel_module_and_what_it_imports():
    names = {p.relative_to(REPO / "boardgen_pipeline").as_posix() for p in paths.kernel_sources()}
    for module in ("board/kernels.py", "board/rng_kernels.py", "board/bitops.py", "board/closure_rows.py",
                   "board/fog_rows.py", "board/difficulty.py", "board/player.py", "board/probability.py",
                   "board/limbs.py", "board/r0.py", "variants/placement_kernels.py", "variants/check_kernels.py",
                   "board/geometry.py", "board/solver.py"):
        assert module in names
    assert "board/generator.py" not in names  # no kernel, imported by none: editing it keeps the cache


def test_the_cache_folder_is_set_before_any_kernel_is_compiled():
    import numba

    from boardgen_pipeline.board import kernels  # noqa: F401 - imported for its side effect on numba's settings

    here = paths.kernel_cache_dir()
    assert here.name == paths.kernel_digest() and numba.config.CACHE_DIR == str(here)
    assert os.environ["NUMBA_CACHE_DIR"] == str(here)
    assert os.environ["BOARDGEN_NUMBA_CACHE"] == str(here.parent)


def test_pruning_keeps_the_most_recently_used_folders_and_any_in_use(tmp_path):
    now = time.time()
    folders = []
    for i in range(7):
        f = tmp_path / f"{i:016x}"
        f.mkdir()
        age = 0 if i == 6 else 86400 * (10 - i)  # folder 6: used a moment ago
        os.utime(f, (now - age, now - age))
        folders.append(f)
    (tmp_path / "not-a-digest").mkdir()
    gone = paths.prune_kernel_caches(tmp_path, keep=folders[0])
    left = sorted(p.name for p in tmp_path.iterdir())
    # the newest KERNEL_CACHE_KEEP by use (6, 5, 4, 3), the kept one (0), and what is no digest folder
    assert paths.KERNEL_CACHE_KEEP == 4
    assert set(gone) == {folders[1], folders[2]}
    assert left == sorted([folders[i].name for i in (0, 3, 4, 5, 6)] + ["not-a-digest"])
