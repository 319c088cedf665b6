"""The wheel's package list is the tree's (docs/decisions/packaging.md):
``pyproject.toml`` names its packages one by one (the code location lives in
``assets/`` but imports as ``boardgen_dagster``; the default tables are the
repository's ``tables/``, shipped as ``boardgen_pipeline.default_tables``), so
a package added to the tree and not to the list would be missing from every
installation, silently. And ``workspace.yaml`` loads what ``boardgen ui``
writes for an installation."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import yaml

from .conftest import REPO


def _setuptools() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _python_packages(folder: Path, name: str) -> set[str]:
    """``name`` and every package under ``folder`` (a folder with an ``__init__.py``)."""
    return {".".join([name, *p.parent.relative_to(folder).parts]) for p in folder.rglob("__init__.py")
            if "__pycache__" not in p.parts}


def _data_packages(folder: Path, name: str) -> set[str]:
    """``name`` and every folder under ``folder`` that holds a file (package data)."""
    return {".".join([name, *d.relative_to(folder).parts]) for d in [folder, *folder.rglob("*")]
            if d.is_dir() and "__pycache__" not in d.parts and any(f.is_file() for f in d.iterdir())}


def tree_packages() -> set[str]:
    dirs = _setuptools()["package-dir"]
    assert dirs == {"boardgen_dagster": "assets", "boardgen_pipeline.default_tables": "tables"}
    return (_python_packages(REPO / "boardgen_pipeline", "boardgen_pipeline")
            | _python_packages(REPO / dirs["boardgen_dagster"], "boardgen_dagster")
            | _data_packages(REPO / dirs["boardgen_pipeline.default_tables"], "boardgen_pipeline.default_tables"))


def test_the_package_list_names_exactly_the_trees_packages():
    listed = _setuptools()["packages"]
    assert len(listed) == len(set(listed)), "a package is listed twice"
    assert set(listed) == tree_packages()
    # what the list must never hold: a generic top-level name (the code location's folder name among them)
    assert {p.split(".")[0] for p in listed} == {"boardgen_pipeline", "boardgen_dagster"}


def test_every_default_table_is_package_data():
    data = _setuptools()["package-data"]
    tables = REPO / "tables"
    files = [f for f in tables.rglob("*") if f.is_file() and "__pycache__" not in f.parts]
    assert files
    for f in files:
        package = ".".join(["boardgen_pipeline.default_tables", *f.parent.relative_to(tables).parts])
        assert any(fnmatch.fnmatch(f.name, pattern) for pattern in data.get(package, [])), \
            f"{f.relative_to(REPO)} is not in the package data of {package}"


def test_the_workspace_file_loads_what_boardgen_ui_writes_for_an_installation():
    from boardgen_dagster.ui import WORKSPACE

    repo_file = yaml.safe_load((REPO / "workspace.yaml").read_text(encoding="utf-8"))
    assert repo_file == yaml.safe_load(WORKSPACE)
    (entry,) = repo_file["load_from"]
    target = entry["python_module"]
    import importlib

    import dagster as dg

    module = importlib.import_module(target["module_name"])
    assert isinstance(getattr(module, target["attribute"]), dg.Definitions)
