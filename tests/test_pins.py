"""The dependencies pyproject.toml declares are the ones the code imports,
and their pins let in no release the code cannot run on (issue 51;
docs/decisions/packaging.md "What the code imports is declared").

- Every module the code imports from outside the standard library belongs to
  a declared distribution: the library's own dependencies for what
  ``boardgen_pipeline`` imports when a module loads (an installation without
  the ``pipeline`` extra imports every module of the library), those or the
  ``pipeline`` extra's for what it imports inside a function and for what
  ``assets/`` imports.
- The installed version of every declared distribution satisfies its pin.
- A pin's lower bound is at least the oldest release whose API the code
  calls (``review.stats.NEEDS``: scipy's ``rng=`` keyword is 1.15's; a pin
  ``scipy>=1.11`` let in releases that raise a TypeError on it).
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import sys
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from boardgen_pipeline.review import stats

from .conftest import REPO

OWN = {"boardgen_pipeline", "boardgen_dagster", "assets", "__future__"}


def requirements(group: str | None = None) -> list[Requirement]:
    """The library's requirements, or an extra's (its own lines, not the
    ``boardgen[...]`` it names)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = project["dependencies"] if group is None else project["optional-dependencies"][group]
    return [r for r in map(Requirement, lines) if canonicalize_name(r.name) != "boardgen"]


def imports(tree: ast.AST, at_load: bool) -> set[str]:
    """The top-level names of the modules a module imports: those its loading
    runs (``at_load``: the module's own statements, not a function's), or all."""
    nodes = ast.walk(tree) if not at_load else (
        n for stmt in tree.body for n in ast.walk(stmt) if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)))
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
    return out - OWN - set(sys.stdlib_module_names)


def distributions(modules: set[str]) -> set[str]:
    found = md.packages_distributions()
    return {canonicalize_name(d) for m in modules for d in found.get(m, [f"(no distribution: {m})"])}


def test_what_the_code_imports_is_declared():
    library = {canonicalize_name(r.name) for r in requirements()}
    pipeline = library | {canonicalize_name(r.name) for r in requirements("pipeline")}
    at_load, lazily = set(), set()
    for path in (REPO / "boardgen_pipeline").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        at_load |= imports(tree, True)
        lazily |= imports(tree, False)
    for path in (REPO / "assets").rglob("*.py"):
        lazily |= imports(ast.parse(path.read_text(encoding="utf-8")), False)
    assert distributions(at_load) - library == set()
    assert distributions(lazily) - pipeline == set()


def test_the_installed_versions_satisfy_the_pins():
    for requirement in requirements() + requirements("pipeline") + requirements("test"):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        installed = md.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (str(requirement), installed)


def lower_bound(requirement: Requirement) -> Version | None:
    bounds = [Version(s.version) for s in requirement.specifier if s.operator in (">=", "==", "~=")]
    return max(bounds) if bounds else None


def test_the_pins_let_in_no_release_the_code_cannot_run_on():
    pins = {canonicalize_name(r.name): r for r in requirements()}
    for name, (oldest, why) in stats.NEEDS.items():
        bound = lower_bound(pins[canonicalize_name(name)])
        assert bound is not None and bound >= Version(oldest), f"{name}: pinned from {bound}, needs {oldest} ({why})"
