"""No global random state in library code (SPEC 6; seed 001 AC-18): a
static scan of every module of boardgen_pipeline and assets."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted([*REPO.glob("boardgen_pipeline/**/*.py"), *REPO.glob("assets/**/*.py")])
NUMPY_LEGACY = {"rand", "randn", "randint", "random", "seed", "shuffle", "permutation", "choice",
                "random_sample", "uniform", "normal", "default_rng", "RandomState", "Generator"}


def offences(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name in ("random", "numpy.random", "secrets")]
        elif isinstance(node, ast.ImportFrom):
            if node.module in ("random", "numpy.random", "secrets"):
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Attribute):
            # np.random.<anything>, numpy.random.<anything>, os.urandom, uuid4 for data
            if isinstance(node.value, ast.Attribute) and node.value.attr == "random" and \
                    isinstance(node.value.value, ast.Name) and node.value.value.id in ("np", "numpy"):
                found.append(f"numpy.random.{node.attr}")
            if isinstance(node.value, ast.Name) and node.value.id == "os" and node.attr == "urandom":
                found.append("os.urandom")
    return found


def test_the_scan_finds_something():
    assert len(SOURCES) >= 8
    bad = ast.parse("import random\nimport numpy as np\nx = np.random.rand(3)\nfrom numpy.random import default_rng")
    assert sorted(offences(bad)) == sorted(["import random", "numpy.random.rand", "from numpy.random import ..."])


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_global_random_state(path: Path):
    assert offences(ast.parse(path.read_text(encoding="utf-8"))) == []
