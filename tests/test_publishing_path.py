"""One publishing path: ``boardgen calibrate`` and the nightly
through Dagster publish bit-identical boards for the same tables and master
seed, on one machine or with generation sent to a Dask cluster
(``BOARDGEN_DASK``); both refuse an illegal batch (assertion A'); and a
``calibrate`` run over a nightly's warehouse leaves no overlay that joins to
no board."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import duckdb
import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.warehouse import datasets, publish
from tests.nightly_support import BOARDGEN

from .test_pipeline_support import N, copy_fixture

REPO = Path(__file__).resolve().parent.parent


def nightly(tables: Path, root: Path, home: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([BOARDGEN, "nightly", "--tables", str(tables), "--warehouse", str(root),
                           "--samples", str(N), "--dagster-home", str(home)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env={**os.environ, **env})


def board_files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "boards").rglob("part.parquet"))}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The small fixture calibrated by ``boardgen calibrate`` and by the nightly."""
    base = tmp_path_factory.mktemp("publishing")
    tables = copy_fixture("small", base)
    assert cli.main(["calibrate", "--tables", str(tables), "--warehouse", str(base / "calibrate"),
                     "--samples", str(N)]) == 0
    run = nightly(tables, base / "nightly", base / "home")
    assert run.returncode == 0, run.stdout + run.stderr
    return {"base": base, "tables": tables, "nightly_output": run.stdout}


def test_nightly_and_calibrate_publish_bit_identical_boards(small):
    base = small["base"]
    cal, night = board_files(base / "calibrate"), board_files(base / "nightly")
    assert len(cal) == 3 and cal == night


def test_the_nightly_on_a_dask_cluster_publishes_the_same_boards(small, tmp_path):
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        run = nightly(small["tables"], tmp_path / "dask", tmp_path / "home", BOARDGEN_DASK=cluster.scheduler_address)
        assert run.returncode == 0, run.stdout + run.stderr
        # the cluster did the work: nothing else submits tasks to it
        assert cluster.scheduler.transition_counter > 0
    assert board_files(tmp_path / "dask") == board_files(small["base"] / "calibrate")


def test_calibrate_refuses_an_illegal_batch(tmp_path):
    tables, root = copy_fixture("illegal", tmp_path), tmp_path / "warehouse"
    assert cli.main(["calibrate", "--tables", str(tables), "--warehouse", str(root), "--samples", str(N)]) \
        == Exit.CHECK_FAILED
    rejected = publish.keys_in(publish.rejected_root(root), "boards")
    assert rejected  # the illegal row's batch went to _rejected/, not boards/
    assert not rejected & publish.keys_in(root, "boards")
    assert not rejected & publish.keys_in(root, "variant_overlays")


def test_calibrate_over_a_nightly_warehouse_leaves_no_orphan_overlays(small, tmp_path):
    import shutil

    root = tmp_path / "warehouse"
    shutil.copytree(small["base"] / "nightly", root)
    # fewer boards than the nightly's: every row's boards are replaced, so must its overlays be
    assert cli.main(["calibrate", "--tables", str(small["tables"]), "--warehouse", str(root), "--samples", "4"]) == 0
    con = duckdb.connect(str(root / datasets.DB_NAME), read_only=True)
    try:
        orphans = con.execute("""
            select count(*) from variant_overlays o
            where not exists (select 1 from boards b where b.level_index = o.level_index
                              and b.node_depth = o.node_depth and b.batch_fingerprint = o.batch_fingerprint)
        """).fetchone()[0]
        boards, overlays = con.execute("select (select count(*) from boards), (select count(*) from variant_overlays)"
                                       ).fetchone()
    finally:
        con.close()
    assert orphans == 0
    assert boards == overlays == 3 * 4


def test_the_nightly_summary_fits_80_columns(small):
    table = [line for line in small["nightly_output"].splitlines() if "1-0" in line and "│" not in line]
    assert table, small["nightly_output"]
    row = table[0]
    assert len(row.rstrip()) <= 80 and "…" not in row and ".…" not in small["nightly_output"]


def test_row_records_are_read_a_few_files_a_scan_and_a_damaged_file_costs_only_itself(tmp_path, monkeypatch):
    """``read_row_records`` scans ``FILES_PER_SCAN`` files at a time (one scan
    over every file held every file's reader: 700 MB at 6,000 rows); a file
    that cannot be read leaves out its own row, not its scan's."""
    monkeypatch.setattr(publish, "FILES_PER_SCAN", 2)
    keys = [(1, d) for d in range(5)]
    for level, depth in keys:
        datasets.write_partition(tmp_path, "calibration_report", (level, depth), [{"p50": depth / 10, "x": depth}])
    datasets.partition_path(tmp_path, "calibration_report", (1, 2)).write_bytes(b"PAR1 not a parquet file")
    got = publish.read_row_records(tmp_path, "calibration_report", keys + [(9, 9)], columns=("p50", "missing"))
    assert got == {(1, d): [{"p50": d / 10, "level_index": 1, "node_depth": d}] for d in (0, 1, 3, 4)}
    every = publish.read_row_records(tmp_path, "calibration_report", keys)
    assert every[(1, 4)] == [{"p50": 0.4, "x": 4, "level_index": 1, "node_depth": 4}] and len(every) == 4


def test_a_file_of_an_older_schema_is_read_for_the_columns_it_has(tmp_path):
    """A reader asks for today's columns; a file written before one of them
    existed gives the others, in the order asked, rather than failing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from boardgen_pipeline.warehouse import datasets

    path = tmp_path / "old.parquet"
    pq.write_table(pa.table({"b": [2], "a": [1]}), path)
    assert datasets.read_file(path, columns=["a", "new", "b"]).to_pylist() == [{"a": 1, "b": 2}]
    assert datasets.read_file(pa.BufferReader(path.read_bytes())).column_names == ["b", "a"]
