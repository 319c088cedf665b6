"""Storage faults injected on a real small file system: a full disk
never removes the views nor a published file, a read-only file system and a
warehouse path under a file end in one sentence with exit code 5, found
before any row is computed."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from boardgen_pipeline.errors import WarehouseError
from boardgen_pipeline.exits import Exit
from boardgen_pipeline.warehouse import datasets, publish, views

from .faults_support import REPO, board, fill, mines_sum, remount_read_only, small_fs, tiny_warehouse

TABLES = REPO / "tests" / "fixtures" / "pipeline" / "small"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)


def one_sentence(p, *words):
    assert p.returncode == Exit.STORAGE != 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr


@pytest.mark.parametrize("free_kb", [220, 96, 24])
def test_a_full_disk_keeps_the_old_views_and_says_so(tmp_path, free_kb):
    with small_fs(tmp_path / "fs", 2048) as fs:
        root = tiny_warehouse(fs / "wh")
        db = root / datasets.DB_NAME
        before, inode = db.read_bytes(), db.stat().st_ino
        filler = fill(fs, free_kb)
        datasets.write_partition(root, "boards", (3, 0), [board(5)])  # a new partition the views show (a glob)
        with pytest.raises(WarehouseError) as err:
            views.refresh_views_atomic(root, force=True)
        assert err.value.cause == "disk full" and err.value.path == str(db)
        assert db.read_bytes() == before and db.stat().st_ino == inode  # the old database is still the one in place
        assert mines_sum(root) == 3 * 2 * 3 + 5  # and its views answer over the files
        assert not [p for p in root.iterdir() if p.name.endswith((".tmp", ".wal"))]
        views.refresh_views_atomic(root)  # the views are the ones the datasets call for: nothing to write
        assert db.stat().st_ino == inode
        filler.unlink()
        views.refresh_views_atomic(root, force=True)  # with room again, the rebuild goes through
        assert db.stat().st_ino != inode and mines_sum(root) == 23


def test_a_full_disk_never_replaces_a_published_partition(tmp_path):
    with small_fs(tmp_path / "fs", 2048) as fs:
        root = tiny_warehouse(fs / "wh")
        path = datasets.partition_path(root, "boards", (1, 0))
        before = path.read_bytes()
        fill(fs, 0)
        big = [board(9) | {"layout": "x" * 4096 + str(i)} for i in range(400)]
        with pytest.raises(WarehouseError) as err:
            datasets.write_partition(root, "boards", (1, 0), big)
        assert err.value.cause == "disk full"
        assert path.read_bytes() == before and publish.verify(root) == []
        assert not list(path.parent.glob(".*.tmp"))


def test_calibrate_on_a_full_disk_stops_before_any_row_with_one_sentence(tmp_path):
    with small_fs(tmp_path / "fs", 1024) as fs:
        fill(fs, 0)
        p = cli("calibrate", "--samples", "8", "--tables", TABLES, "--warehouse", fs / "wh")
        one_sentence(p, str(fs / "wh"), "disk full")
        assert "calibrating" not in p.stdout  # found before the first row ran


def test_a_read_only_file_system_is_named_and_its_warehouse_still_reads(tmp_path):
    with small_fs(tmp_path / "fs", 2048) as fs:
        root = tiny_warehouse(fs / "wh")
        db_before = (root / datasets.DB_NAME).read_bytes()
        copy = fs / "copy"  # a copy on read-only media: its views cannot be rebuilt, yet read its own files
        shutil.copytree(root, copy)
        datasets.write_partition(copy, "boards", (1, 0), [board(40)])
        remount_read_only(fs)
        assert mines_sum(copy) == 40 + 2 * 3 * 2
        with pytest.raises(WarehouseError) as err:
            views.refresh_views_atomic(root)
        assert err.value.cause == "read-only file system"
        with pytest.raises(WarehouseError, match="read-only file system"):
            datasets.check_writable(root)
        p = cli("calibrate", "--samples", "8", "--tables", TABLES, "--warehouse", root)
        one_sentence(p, str(root), "read-only file system")
        assert (root / datasets.DB_NAME).read_bytes() == db_before
        assert mines_sum(root) == 18  # reading needs no write
        ok = cli("verify", "--warehouse", root)
        assert ok.returncode == 0 and "7 files" in ok.stdout, ok.stdout + ok.stderr


def test_a_warehouse_path_under_a_file_is_found_before_any_row(tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(WarehouseError, match="is a file, not a folder"):
        datasets.check_writable(tmp_path / "afile" / "wh")
    p = cli("calibrate", "--samples", "8", "--tables", TABLES, "--warehouse", tmp_path / "afile" / "wh")
    one_sentence(p, str(tmp_path / "afile"), "is a file, not a folder")
    assert "calibrating" not in p.stdout
    # the warehouse path itself a file: a bad argument, exit 2, before any work
    p = cli("calibrate", "--samples", "8", "--tables", TABLES, "--warehouse", tmp_path / "afile")
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert str(tmp_path / "afile") in p.stderr and "it is a file" in p.stderr
    assert "calibrating" not in p.stdout


def test_os_errors_become_one_sentence_with_path_and_cause(tmp_path):
    import errno

    for code, cause in [(errno.ENOSPC, "disk full"), (errno.EROFS, "read-only file system"),
                        (errno.ENOTDIR, "a parent of the path is a file, not a folder")]:
        err = datasets.warehouse_error(OSError(code, "x", str(tmp_path / "f")), tmp_path)
        assert (err.path, err.cause) == (str(tmp_path / "f"), cause)
        assert str(err) == f"storage fault at {tmp_path / 'f'}: {cause}."
