"""Fault injection helpers for tests/test_faults_*.py: a small file
system to fill (tmpfs, or a loop-mounted ext2 image where tmpfs cannot be
mounted), a tiny warehouse written through the library, a flipped byte."""

from __future__ import annotations

import errno
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

from boardgen_pipeline.warehouse import datasets, views

REPO = Path(__file__).resolve().parent.parent


def _run(*cmd) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True)


@contextmanager
def small_fs(where: Path, size_kb: int = 2048):
    """A fresh file system of ``size_kb`` mounted at ``where`` (tests run as
    root in CI): tmpfs, else an ext2 image on a loop device. Never skipped:
    when neither mounts, the test fails saying why."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = _run("mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", where)
    if mounted.returncode != 0:
        image = where.parent / f"{where.name}.img"
        with open(image, "wb") as fh:
            fh.truncate(size_kb * 1024)
        made = _run("mkfs.ext2", "-q", "-F", "-m", "0", image)
        mounted = _run("mount", "-o", "loop", image, where) if made.returncode == 0 else made
        if mounted.returncode != 0:
            raise AssertionError(f"cannot mount a small file system at {where} (root needed): {mounted.stderr}")
    try:
        yield where
    finally:
        _run("umount", "-l", where)


def fill(fs: Path, leave_kb: int) -> Path:
    """Fill ``fs`` until ``leave_kb`` KiB are free (0: until writes fail)."""
    filler = fs / "filler"
    st = os.statvfs(fs)
    target = max(0, st.f_bavail * st.f_frsize - leave_kb * 1024)
    with open(filler, "ab", buffering=0) as fh:
        try:
            fh.write(b"\0" * target)
            while leave_kb == 0:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def remount_read_only(fs: Path) -> None:
    done = _run("mount", "-o", "remount,ro", fs)
    assert done.returncode == 0, done.stderr


def board(mines: int, fingerprint: str = "fp") -> dict:
    return {"scope": 1, "mines_actual": mines, "layout": "*..", "batch_fingerprint": fingerprint}


def tiny_warehouse(root: Path, mines: int = 3, keys=((1, 0), (1, 1), (2, 0))) -> Path:
    """Boards and reports for ``keys`` (``mines`` mines per board, two boards
    a row), the flat strata file, and the views; all through the library."""
    for key in keys:
        datasets.write_partition(root, "boards", key, [board(mines, f"fp{key}"), board(mines, f"fp{key}")])
        datasets.write_partition(root, "calibration_report", key, [{"p50": 0.5, "batch_fingerprint": f"fp{key}"}])
    datasets.write_atomic(pa.table({"template": ["a"], "inputs_fingerprint": ["x"]}),
                          datasets.flat_path(root, "calibration_strata", "strata"))
    views.refresh_views_atomic(root)
    return root


def flip_byte(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x01
    path.write_bytes(bytes(data))


def mines_sum(root: Path) -> int:
    con = views.connect(root)
    try:
        return con.execute("select sum(mines_actual) from boards").fetchone()[0]
    finally:
        con.close()


def row_chain_raises(monkeypatch, key: tuple[int, int]):
    """Plant a fault in one row's chain: ``chain.run_row`` raises for ``key``
    and runs every other row as before. Returns the real ``run_row``."""
    from boardgen_pipeline.steps import chain

    real = chain.run_row

    def broken(task):
        if task.key == key:
            raise RuntimeError("planted: this row's chain raises")
        return real(task)

    monkeypatch.setattr(chain, "run_row", broken)
    return real
