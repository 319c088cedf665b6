"""One helper per file job (one way to do each thing;
``boardgen_pipeline/files.py``): every replaced file is synced and renamed with
its folder synced, keeps its permissions, and is left untouched when the new
content is refused; every lock is ``files.lock``, the table editor's on the
table's folder itself; temporary names carry the writer's pid."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import filelock
import pytest

from boardgen_pipeline import files
from boardgen_pipeline.tables import edit
from boardgen_pipeline.warehouse import datasets, views

from .conftest import REPO


@pytest.fixture
def synced(monkeypatch) -> list[Path]:
    """The folders ``files`` fsyncs, in order."""
    seen: list[Path] = []
    real = files.fsync_dir
    monkeypatch.setattr(files, "fsync_dir", lambda folder: (seen.append(Path(folder)), real(folder)))
    return seen


def test_atomic_write_replaces_the_file_keeps_its_mode_and_syncs_its_folder(tmp_path, synced):
    path = tmp_path / "a.txt"
    path.write_text("old")
    path.chmod(0o640)
    files.atomic_write(path, "new")
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o640
    assert synced == [tmp_path] and os.listdir(tmp_path) == ["a.txt"]


def test_a_refused_new_content_leaves_the_file_and_no_temporary_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old")
    seen = []

    def refuse(temp: Path):
        seen.append(temp.read_text())
        raise ValueError("no")

    with pytest.raises(ValueError):
        files.atomic_write(path, "new", before_replace=refuse)
    assert seen == ["new"] and path.read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]
    with pytest.raises(ValueError), files.replacing(path) as temp:
        temp.write_text("newer")
        raise ValueError("no")
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["a.txt"]


def test_a_warehouse_file_is_synced_digest_first_and_its_folders_synced(tmp_path, synced):
    """``write_bytes_atomic``: the digest is renamed into place before the file
    (a crash between the two reads as damaged), and both folders are synced."""
    path = datasets.partition_path(tmp_path, "boards", (1, 0))
    datasets.write_bytes_atomic(b"PAR1 bytes", path, tmp_path)
    digest_folder = datasets.digest_path(tmp_path, path).parent
    assert synced == [digest_folder, path.parent]
    assert datasets.file_problem(tmp_path, path) is None
    synced.clear()
    datasets.write_bytes_atomic(b"PAR1 bytes", path, tmp_path)  # the same bytes: the file is left alone
    assert synced == []


def test_the_views_database_is_replaced_with_its_folder_synced(tmp_path, synced):
    datasets.write_bytes_atomic(datasets.encode(datasets.records_table([{"scope": 1, "layout": "*."}])),
                                datasets.partition_path(tmp_path, "boards", (1, 0)), tmp_path)
    synced.clear()
    db = views.refresh_views_atomic(tmp_path, force=True)
    assert tmp_path in synced and db.is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((files.TEMP_SUFFIX, ".wal"))]


def test_a_temporary_name_carries_the_writers_host_and_pid(tmp_path):
    temp = files.temp_name(tmp_path / "part.parquet")
    assert temp.parent == tmp_path and temp.name.startswith(".part.parquet.") and temp.name.endswith(".tmp")
    assert files.temp_owner(temp) == (files._host_tag(), os.getpid())
    assert files.temp_owner(tmp_path / "part.parquet") is None


def test_the_sweep_leaves_what_another_live_writer_may_own(tmp_path):
    """A temporary file of a dead writer of this host goes; this process's,
    a live process's and another host's (young) stay; another host's older
    than a day goes."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host = files._host_tag()
    made = {
        "mine": files.temp_name(tmp_path / "a.parquet"),
        "dead": tmp_path / f".b.parquet.{host}_{dead.pid}.x.tmp",
        "live": tmp_path / f".c.parquet.{host}_1.x.tmp",  # pid 1 is alive
        "other_host": tmp_path / f".d.parquet.ffffffff_{dead.pid}.x.tmp",
        "other_host_old": tmp_path / f".e.parquet.ffffffff_{dead.pid}.x.tmp",
    }
    for path in made.values():
        path.write_bytes(b"x")
    old = time.time() - files.FOREIGN_TEMP_MAX_AGE - 60
    os.utime(made["other_host_old"], (old, old))
    gone = {name for name, path in made.items() if files.writer_gone(path)}
    assert gone == {"dead", "other_host_old"}


def test_a_lock_file_serialises_two_holders(tmp_path):
    order = []
    lock = tmp_path / "x.lock"

    def other():
        with files.lock(lock):
            order.append("other")

    with files.lock(lock):
        with pytest.raises(filelock.Timeout):
            with files.lock(lock, timeout=0):
                pass
        with pytest.raises(filelock.Timeout):
            with files.lock(tmp_path, timeout=0), files.lock(tmp_path, timeout=0):  # a folder: the same rule
                pass
        order.append("first")
    thread = threading.Thread(target=other)
    thread.start()
    thread.join(60)
    assert order == ["first", "other"]


def test_an_edit_waits_for_a_lock_held_on_the_tables_folder(tmp_path, monkeypatch):
    """The table editor locks the table's folder itself: an edit started while
    another holder has that folder locked waits for it (the edit's attempts on
    the folder are seen failing), and lands once the holder lets go."""
    tables = tmp_path / "tables"
    tables.mkdir()
    path = tables / "board_gen.toml"
    path.write_bytes((REPO / "tables" / "board_gen.toml").read_bytes())
    before = path.read_bytes()
    contended = threading.Event()
    real = filelock.lock_descriptor

    def spy(fd, **kwargs):
        got = real(fd, **kwargs)
        if not got and os.readlink(f"/proc/self/fd/{fd}") == str(tables):
            contended.set()
        return got

    monkeypatch.setattr(filelock, "lock_descriptor", spy)
    done: list = []
    change = edit.RowChange((1, 0), "max_gen_attempts", None, 31)
    editor = threading.Thread(target=lambda: done.append(edit.apply_changes(path, [change])))
    with files.lock(tables):
        editor.start()
        assert contended.wait(60), "the edit never tried the folder's lock"
        assert path.read_bytes() == before and not done
    editor.join(60)
    assert done and done[0].written and b"max_gen_attempts = 31" in path.read_bytes()
    assert sorted(p.name for p in tables.iterdir()) == ["board_gen.toml"]  # no lock file, no temporary file


def test_sha256_file_is_the_digest_of_the_bytes(tmp_path):
    import hashlib

    path = tmp_path / "a"
    path.write_bytes(b"x" * 3_000_000)
    assert files.sha256_file(path) == hashlib.sha256(b"x" * 3_000_000).hexdigest()


def test_rename_moves_in_one_step_and_syncs_both_folders(tmp_path, synced):
    """``files.rename``: a file over a file, a folder to a new name, both
    ends' folders synced; a folder onto a folder that holds something is
    refused and nothing moves (a night that pinned the same tables first)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    source, target = tmp_path / "a" / "x", tmp_path / "b" / "x"
    source.write_text("new")
    target.write_text("old")
    assert files.rename(source, target) == target and target.read_text() == "new" and not source.exists()
    assert synced == [tmp_path / "b", tmp_path / "a"]
    staged, pinned = tmp_path / ".pin.tmp", tmp_path / "pin"
    staged.mkdir()
    (staged / "t.toml").write_text("1")
    files.rename(staged, pinned)
    assert (pinned / "t.toml").read_text() == "1" and not staged.exists()
    staged.mkdir()
    (staged / "t.toml").write_text("2")
    with pytest.raises(OSError):
        files.rename(staged, pinned)
    assert (pinned / "t.toml").read_text() == "1" and (staged / "t.toml").read_text() == "2"


def test_every_rename_is_files_rename():
    """One helper a job: no module renames a file or folder but ``files``
    (a move written again forgets the fsync of its folder)."""
    import re

    calls = re.compile(r"\bos\.(replace|rename)\(|\bshutil\.move\(")
    found = [f"{path.relative_to(REPO)}:{n}" for folder in ("boardgen_pipeline", "assets")
             for path in sorted((REPO / folder).rglob("*.py")) if path.name != "files.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if calls.search(line)]
    assert found == []
