"""The layout's rules hold, and breaking one fails the build (issue 11).

``make test`` runs ``lint-imports`` and ``ruff check`` before pytest; these
tests run them too, and show on a copy of the code that a Dagster import in
the domain, an upward import between stages and an import cycle are each
caught."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd)}  # the copy's packages before the installed ones
    return subprocess.run([str(BIN / "lint-imports"), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True)


@pytest.fixture
def copy(tmp_path):
    for name in ("boardgen_pipeline", "assets"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_contracts_hold():
    p = lint_imports(REPO)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Contracts: 4 kept, 0 broken." in p.stdout


def test_ruff_is_clean():
    p = subprocess.run([str(BIN / "ruff"), "check", "."], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_the_copy_is_clean_before_it_is_broken(copy):
    assert lint_imports(copy).returncode == 0


def test_a_dagster_import_in_the_domain_breaks_the_build(copy):
    append(copy / "boardgen_pipeline" / "board" / "rng.py", "import dagster  # noqa")
    p = lint_imports(copy)
    assert p.returncode != 0
    assert "boardgen_pipeline.board.rng -> dagster" in p.stdout


def test_an_upward_import_breaks_the_build(copy):
    append(copy / "boardgen_pipeline" / "board" / "generator.py", "from boardgen_pipeline.warehouse import publish  # noqa")
    p = lint_imports(copy)
    assert p.returncode != 0
    assert "boardgen_pipeline.board is not allowed to import boardgen_pipeline.warehouse" in p.stdout


def test_an_import_cycle_breaks_the_build(copy):
    # seeds -> batch already; batch -> seeds closes a cycle inside calibration/
    append(copy / "boardgen_pipeline" / "calibration" / "batch.py", "from boardgen_pipeline.calibration import seeds  # noqa")
    p = lint_imports(copy)
    assert p.returncode != 0
    assert "No import cycles among the modules of any package BROKEN" in p.stdout
