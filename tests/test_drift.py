"""The nightly proves the generator has not drifted (seed 000 "同种子同参数必产
同图"; ``steps.determinism``): boards that change without a change of their
row turn the nightly red, name the rows and the first differing scope, and
leave the stored files as they were. Tested as it would happen: a constant of
the generator's stream changed in a copy of the source, the nightly run from
that copy in a new process with an empty numba cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.board import kernel_cache
from boardgen_pipeline.steps import determinism
from boardgen_pipeline.warehouse import datasets

from .nightly_support import REPO, TIMEOUT, parquet_files

RELOAD = """
import importlib, pkgutil
from numba.extending import is_jitted
import boardgen_pipeline.board, boardgen_pipeline.variants
from boardgen_pipeline.steps.chain import warm_up
warm_up()
misses = 0
for pkg in (boardgen_pipeline.board, boardgen_pipeline.variants):
    for m in pkgutil.iter_modules(pkg.__path__):
        mod = importlib.import_module(f"{pkg.__name__}.{m.name}")
        misses += sum(sum(o.stats.cache_misses.values()) for o in vars(mod).values() if is_jitted(o))
print(misses)
"""
STREAM_CONSTANT = "0x94D049BB133111EB"  # SplitMix64's second multiplier: every draw of every stream moves


def _copy_with_a_planted_drift(dest):
    ignore = shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc")
    shutil.copytree(REPO / "boardgen_pipeline", dest / "boardgen_pipeline", ignore=ignore)
    shutil.copytree(REPO / "assets", dest / "boardgen_dagster", ignore=ignore)
    planted = 0
    for path in (dest / "boardgen_pipeline" / "board").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if STREAM_CONSTANT in text:
            path.write_text(text.replace(STREAM_CONSTANT, "0x94D049BB133111ED"), encoding="utf-8")
            planted += 1
    assert planted, "the stream constant moved: point this test at the generator's mixing constant"


@pytest.mark.integration
@pytest.mark.slow
def test_a_drift_planted_in_a_copy_of_the_source_turns_the_nightly_red_and_keeps_the_files(tmp_path, small_nightly):
    src = tmp_path / "src"
    _copy_with_a_planted_drift(src)
    root = tmp_path / "warehouse"
    shutil.copytree(small_nightly["root"], root)
    before = parquet_files(root)
    env = {**os.environ, "PYTHONPATH": str(src), "BOARDGEN_NUMBA_CACHE": str(tmp_path / "numba")}
    where = subprocess.run([sys.executable, "-c", "import boardgen_pipeline, boardgen_dagster; "
                            "print(boardgen_pipeline.__file__); print(boardgen_dagster.__file__)"],
                           env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert all(line.startswith(str(src)) for line in where.stdout.split()), where.stdout + where.stderr
    cmd = [sys.executable, "-m", "boardgen_pipeline.cli", "nightly", "--tables", str(small_nightly["tables"]),
           "--warehouse", str(root), "--dagster-home", str(tmp_path / "home"), "--samples", small_nightly["samples"]]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    said = " ".join(p.stdout.split())
    assert "boards changed without a change of their row" in said and "METRIC_VERSION" in said
    # the stored files are kept, byte for byte; what was added is the drift's record
    after = parquet_files(root)
    assert {k: after[k] for k in before} == before
    assert {k.split("/")[0] for k in set(after) - set(before)} == {datasets.DRIFT}
    drift = {}
    for path in (root / datasets.DRIFT).glob("level_index=*/node_depth=*/part.parquet"):
        (record,) = pq.read_table(path).to_pylist()
        drift[path.parent.parent.name, path.parent.name] = record
    assert len(drift) == len(list((root / "boards").glob("level_index=*/node_depth=*/part.parquet")))
    for (level, depth), record in drift.items():
        stored = pq.read_table(root / "boards" / level / depth / "part.parquet")
        assert record["scope"] == min(stored.column("scope").to_pylist())  # every board moved: the first scope
        assert record["stored_layout"] == stored.column("layout")[0].as_py() != record["new_layout"]
        assert record["stored_digest"] == determinism.records_digest(stored)
    # the kernels this night compiled on its empty cache (from both ends at once, board.kernel_cache) are all
    # found by a new process: not one compiled again
    assert list((tmp_path / "numba").rglob(kernel_cache.SAVE_LOCK)), "the saves did not take the lock"
    p = subprocess.run([sys.executable, "-c", RELOAD], env=env, capture_output=True, text=True, timeout=TIMEOUT,
                       cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.split()[-1] == "0", p.stdout + p.stderr
    # the same check on demand writes nothing and says the same
    p = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "verify", "--regenerate", "--warehouse",
                        str(root), "--tables", str(small_nightly["tables"]), "--samples", small_nightly["samples"],
                        "--rows", "1,0"], env=env, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert p.returncode == 3 and "drift: row (1,0)" in p.stdout, p.stdout + p.stderr
    assert parquet_files(root) == after


def test_the_same_records_encoded_otherwise_are_not_a_drift(tmp_path, small_nightly):
    """A new Parquet encoder writes other bytes for the same values: the
    records are compared, not the bytes."""
    path = small_nightly["root"] / "boards" / "level_index=1" / "node_depth=0" / "part.parquet"
    stored = pq.read_table(path)
    shutil.copytree(small_nightly["root"], tmp_path / "warehouse")
    sink = pa.BufferOutputStream()
    pq.write_table(stored, sink, compression="gzip")  # other settings: other bytes, the same records
    data = sink.getvalue().to_pybytes()
    import hashlib

    fp = stored.column("batch_fingerprint")[0].as_py()
    found = determinism.compare(tmp_path / "warehouse", (1, 0), data, hashlib.sha256(data).hexdigest(), fp)
    assert found.kind == determinism.REENCODED
    changed = stored.set_column(stored.column_names.index("attempts_used"), "attempts_used",
                                pa.array([v + (i == 3) for i, v in enumerate(stored.column("attempts_used").to_pylist())],
                                         stored.schema.field("attempts_used").type))
    sink = pa.BufferOutputStream()
    pq.write_table(changed, sink)
    data = sink.getvalue().to_pybytes()
    found = determinism.compare(tmp_path / "warehouse", (1, 0), data, hashlib.sha256(data).hexdigest(), fp)
    assert found.kind == determinism.DRIFT and found.fields == ("attempts_used",)
    assert found.scope == sorted(stored.column("scope").to_pylist())[3] and found.differing == 1
    # another version of the row (a new fingerprint) is new, not a drift
    assert determinism.compare(tmp_path / "warehouse", (1, 0), data, "x", "another").kind == determinism.NEW
