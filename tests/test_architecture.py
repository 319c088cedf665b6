"""The layout's rules hold, and breaking one fails the build.

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


def test_each_broken_rule_breaks_the_build(copy):
    """One copy, three faults planted at once, one run of the linter (the
    suite once ran it five times): each is named."""
    assert lint_imports(copy).returncode == 0  # the copy itself is clean
    append(copy / "boardgen_pipeline" / "board" / "rng.py", "import dagster  # noqa")
    append(copy / "boardgen_pipeline" / "board" / "generator.py", "from boardgen_pipeline.warehouse import publish  # noqa")
    # seeds -> batch already; batch -> seeds closes a cycle inside calibration/
    append(copy / "boardgen_pipeline" / "calibration" / "batch.py", "from boardgen_pipeline.calibration import seeds  # noqa")
    p = lint_imports(copy)
    assert p.returncode != 0
    assert "boardgen_pipeline.board.rng -> dagster" in p.stdout
    assert "boardgen_pipeline.board is not allowed to import boardgen_pipeline.warehouse" in p.stdout
    assert "No import cycles among the modules of any package BROKEN" in p.stdout


# Every use of Dagster's private modules (``dagster._...``), and the Dagster it was read against:
# docs/decisions/private-dagster-api.md gives each one's reason. None is in the product's code. A new one, or a new
# Dagster, fails here until the list (and the reasons) are read again.
PRIVATE_DAGSTER = {
    "tests/conftest.py": {"dagster._core.storage.defs_state.base"},
    "tests/test_faults_instance.py": {"dagster._core.storage.runs.sqlite", "dagster._core.storage.sql"},
}
PRIVATE_READ_AGAINST = "1.13.27"


def test_private_dagster_api_is_the_listed_one():
    import re

    import dagster

    found = {}
    for folder in ("assets", "boardgen_pipeline", "benchmarks", "scripts", "tests"):
        for path in sorted((REPO / folder).rglob("*.py")):
            names = set(re.findall(r"\bdagster\._[\w.]*[\w]", path.read_text(encoding="utf-8")))
            if names:
                found[str(path.relative_to(REPO))] = names
    found.pop("tests/test_architecture.py", None)  # this list
    assert found == PRIVATE_DAGSTER
    assert dagster.__version__ == PRIVATE_READ_AGAINST, (
        f"Dagster moved from {PRIVATE_READ_AGAINST} to {dagster.__version__}: check that each private use "
        f"still works and still has no public replacement ({PRIVATE_DAGSTER}; docs/decisions.md "
        "'Stand on the engine'), then update PRIVATE_READ_AGAINST")
