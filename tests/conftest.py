"""Shared fixtures: repository paths and small table writers; the bounds-check
fuzz started early (its compilation overlaps the other tests)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = REPO.parent / "shared"
# the C baseline: ../shared's when the clone sits beside it, else the repo's copy
BASELINE_C = next(p for p in (SHARED / "bench" / "baseline.c", REPO / "benchmarks" / "baseline.c") if p.exists())


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(scope="module", autouse=True)
def no_dagster_instance_outlives_its_module():
    """A Dagster evaluation context left open keeps an instance's state storage installed as the
    current one; when the garbage collector finally closes it, a later test's job resolution reads
    a dead instance (it failed CI once, at random, in another module). Catch it in the module that
    leaks, every time, by collecting here."""
    yield
    if "dagster" not in sys.modules:
        return
    import gc

    from dagster._core.storage.defs_state.base import DefsStateStorage

    gc.collect()
    storage = DefsStateStorage.get()
    ref = getattr(storage, "_instance_weakref", None)
    if storage is not None and (ref is None or ref() is None):
        pytest.fail("a Dagster context was left open: a dead instance's state storage is the current one; "
                    "use build_*_context(...) as a context manager")


def row_toml(**fields) -> str:
    lines = ["[[rows]]"]
    for k, v in fields.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    return "\n".join(lines) + "\n"


BASE_ROW = dict(
    level_index=1, node_depth=0, board_width=10, board_height=10, mine_density=0.22,
    inferability_target=0.85, solver_rules="single_subset", min_safe_count=40,
    max_gen_attempts=32, board_type="dungeon", shave_ring_radius=1, r0_max_cap=50,
)


def write_table(path: Path, rows: list[dict], header: str = "[header]\nspawn_side = 3\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "\n".join(row_toml(**r) for r in rows), encoding="utf-8")
    return path


FUZZ_TEST = "test_fuzz_the_kernels_under_numba_boundscheck"


def pytest_collection_finish(session):
    # the fuzz spends ~80 s compiling the kernels with bounds checks in a
    # subprocess: start it now, so it runs beside the rest of the suite
    if not session.config.option.collectonly and any(item.name == FUZZ_TEST for item in session.items):
        from tests.test_kernels_bounds import FUZZ_KEY, start_fuzz

        workdir = Path(tempfile.mkdtemp(prefix="boardgen-fuzz-"))
        session.config.stash[FUZZ_KEY] = (start_fuzz(workdir), workdir)


def pytest_sessionfinish(session):
    bounds = sys.modules.get("tests.test_kernels_bounds")
    if bounds is None:
        return
    proc, workdir = session.config.stash.get(bounds.FUZZ_KEY, (None, None))
    if proc is not None:
        if proc.poll() is None:  # the session ended before the fuzz test waited for it
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
