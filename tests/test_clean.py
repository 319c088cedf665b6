"""``make clean`` deletes only what a run makes again, and says so;
``make clean-all`` names what no run makes again before it deletes it, and asks
(``FORCE=1`` where nobody can answer). On the warehouse and the Dagster home a
real nightly wrote (``small_nightly``), so that whatever a run writes is known
to the script."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boardgen_pipeline import files
from boardgen_pipeline.export import godot as export_godot
from boardgen_pipeline.steps import pinned_tables
from boardgen_pipeline.warehouse import datasets, publish, views
from boardgen_pipeline.warehouse.instance import DAGSTER_YAML

from .conftest import REPO, postgres_yaml

SCRIPT = REPO / "scripts" / "clean.py"
USERS_YAML = postgres_yaml("postgresql://me:secret@db.example/dagster")  # a storage the user wrote


def _load_script():
    spec = importlib.util.spec_from_file_location("clean_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def made(small_nightly, tmp_path) -> tuple[Path, Path]:
    """A copy of what a nightly wrote: its warehouse and its Dagster home."""
    warehouse, home = tmp_path / "warehouse", tmp_path / "home"
    shutil.copytree(small_nightly["root"], warehouse, symlinks=True)
    shutil.copytree(small_nightly["home"], home, symlinks=True)
    assert (warehouse / "calibration_history").is_dir() and (warehouse / "_manifest" / "calibration_history").is_dir()
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == DAGSTER_YAML  # boardgen's own
    return warehouse, home


def clean_script(warehouse: Path, home: Path, *args: str, stdin=subprocess.DEVNULL, **env: str):
    """The script as ``make clean`` runs it: standard library only (``-S``: no site-packages)."""
    return subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), "--warehouse", str(warehouse),
                           "--dagster-home", str(home), *args], stdin=stdin, capture_output=True, text=True,
                          env={**{k: v for k, v in os.environ.items() if k != "FORCE"}, **env}, timeout=120)


def test_clean_keeps_the_history_its_digests_and_the_users_dagster_yaml_and_deletes_the_rest(made, capsys):
    warehouse, home = made
    (home / "dagster.yaml").write_text(USERS_YAML, encoding="utf-8")
    history = digests(warehouse / "calibration_history")
    manifest = digests(warehouse / "_manifest" / "calibration_history")
    done = clean_script(warehouse, home)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in warehouse.iterdir()) == ["_manifest", "calibration_history"]
    assert [p.name for p in (warehouse / "_manifest").iterdir()] == ["calibration_history"]
    assert digests(warehouse / "calibration_history") == history
    assert digests(warehouse / "_manifest" / "calibration_history") == manifest
    assert [p.name for p in home.iterdir()] == ["dagster.yaml"]
    assert (home / "dagster.yaml").read_text(encoding="utf-8") == USERS_YAML
    lines = done.stdout.splitlines()
    assert lines[0].startswith("deleted ") and lines[0].endswith(f" of {warehouse} and {home} (a run makes them again)")
    assert lines[1:] == [f"kept: {p} (no run makes it again; `make clean-all` deletes it)" for p in
                         (warehouse / "calibration_history", warehouse / "_manifest" / "calibration_history",
                          home / "dagster.yaml")]
    # what is kept still verifies against its recorded digests
    from boardgen_pipeline import cli

    assert cli.main(["verify", "--warehouse", str(warehouse)]) == 0, capsys.readouterr()


def test_boardgens_own_dagster_yaml_goes_with_the_home(made):
    warehouse, home = made
    done = clean_script(warehouse, home)
    assert done.returncode == 0, done.stderr
    assert not home.exists()
    assert f"kept: {home / 'dagster.yaml'}" not in done.stdout


def test_what_no_run_writes_is_left_alone_and_named(made):
    warehouse, home = made
    (warehouse / "notes.txt").write_text("mine", encoding="utf-8")
    (home / "workspace.yaml").write_text("mine", encoding="utf-8")
    done = clean_script(warehouse, home)
    assert done.returncode == 0, done.stderr
    assert (warehouse / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (home / "workspace.yaml").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in home.iterdir()) == ["workspace.yaml"]
    for path in (warehouse / "notes.txt", home / "workspace.yaml"):
        assert f"left alone: {path} (not something a run writes)" in done.stdout.splitlines()


def test_an_interrupted_write_is_cleaned_too(made):
    warehouse, home = made
    temp = files.temp_name(warehouse / "boardgen.duckdb")
    temp.write_bytes(b"half")
    done = clean_script(warehouse, home)
    assert done.returncode == 0, done.stderr
    assert not temp.exists()


def test_make_clean_runs_the_script_on_the_folders_the_environment_names(made):
    warehouse, home = made
    (home / "dagster.yaml").write_text(USERS_YAML, encoding="utf-8")
    env = {**os.environ, "BOARDGEN_WAREHOUSE": str(warehouse), "DAGSTER_HOME": str(home)}
    done = subprocess.run(["make", "-s", "-C", str(REPO), "clean"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in warehouse.iterdir()) == ["_manifest", "calibration_history"]
    assert [p.name for p in home.iterdir()] == ["dagster.yaml"]
    assert f"kept: {warehouse / 'calibration_history'}" in done.stdout


def _everything(*folders: Path) -> dict[str, str]:
    return {f"{folder.name}/{k}": v for folder in folders for k, v in digests(folder).items()}


def test_clean_all_names_what_is_lost_and_deletes_nothing_without_an_answer(made):
    warehouse, home = made
    (home / "dagster.yaml").write_text(USERS_YAML, encoding="utf-8")
    before = _everything(warehouse, home)
    done = clean_script(warehouse, home, "--all")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "make clean-all deletes what no run can make again:"
    named = [line.strip().split(" (")[0] for line in done.stdout.splitlines()[1:]]
    assert named == [str(warehouse / "calibration_history"), str(warehouse / "_manifest" / "calibration_history"),
                     str(home / "dagster.yaml")]
    assert done.stderr.strip() == "nothing deleted: run `make clean-all FORCE=1` to delete them without a question"
    assert _everything(warehouse, home) == before


def test_clean_all_with_force_deletes_them(made):
    warehouse, home = made
    (home / "dagster.yaml").write_text(USERS_YAML, encoding="utf-8")
    done = clean_script(warehouse, home, "--all", FORCE="1")
    assert done.returncode == 0, done.stderr
    assert not warehouse.exists() and not home.exists()


def _at_a_terminal(warehouse: Path, home: Path, answer: bytes) -> tuple[int, str]:
    """``clean --all`` with a terminal for its standard input, answering ``answer``."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-I", "-S", str(SCRIPT), "--all", "--warehouse", str(warehouse),
                                 "--dagster-home", str(home)], stdin=follower, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env={k: v for k, v in os.environ.items() if k != "FORCE"})
        os.write(leader, answer)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(leader)
        os.close(follower)
    return proc.returncode, out.decode()


@pytest.mark.parametrize("answer, deleted", [(b"n\n", False), (b"\n", False), (b"y\n", True), (b"\x04", False)],
                         ids=["no", "enter", "yes", "ctrl-d"])
def test_clean_all_at_a_terminal_asks_first(made, answer, deleted):
    warehouse, home = made
    before = _everything(warehouse, home)
    code, out = _at_a_terminal(warehouse, home, answer)
    assert "delete them? [y/N] " in out and "Traceback" not in out
    if deleted:
        assert code == 0 and not warehouse.exists() and not home.exists()
    else:
        assert code == 1 and out.rstrip().endswith("nothing deleted")
        assert _everything(warehouse, home) == before


def test_clean_all_asks_nothing_when_nothing_is_irreplaceable(tmp_path):
    warehouse, home = tmp_path / "warehouse", tmp_path / "home"
    (warehouse / "boards").mkdir(parents=True)
    home.mkdir()
    (home / "dagster.yaml").write_text(DAGSTER_YAML, encoding="utf-8")
    done = clean_script(warehouse, home, "--all")
    assert done.returncode == 0, done.stderr
    assert not warehouse.exists() and not home.exists()


def test_the_scripts_names_are_the_librarys():
    """The script runs before anything is installed, so it spells the names
    out; they are the ones the library writes."""
    script = _load_script()
    assert script.HISTORY == datasets.HISTORY and script.MANIFEST == datasets.MANIFEST
    assert script.REVIEW == datasets.REVIEW
    assert script.WAREHOUSE_MADE == {*datasets.ROW_DATASETS, *datasets.FLAT_DATASETS, datasets.DRIFT,
                                     pinned_tables.PINNED, datasets.DB_NAME, datasets.DB_NAME + ".wal",
                                     views.VIEWS_LOCK, publish.REJECTED, publish.DAMAGED, datasets.MANIFEST,
                                     export_godot.NIGHT_FOLDER}
    assert set(datasets.DATASETS) - script.WAREHOUSE_MADE == {datasets.HISTORY, datasets.REVIEW}
    assert script.TEMP_SUFFIX == files.TEMP_SUFFIX and files.temp_name(Path("x")).name.startswith(".")
