"""No global random state in library code (SPEC 6; seed 001 AC-18):
a static scan of every module of boardgen_pipeline and
assets. Every draw comes from ``board.rng`` streams; Python's ``random``,
``secrets``, ``numpy.random`` (under any name it is imported as) and
``os.urandom`` are refused wherever they are reached."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted([*REPO.glob("boardgen_pipeline/**/*.py"), *REPO.glob("assets/**/*.py")])
FORBIDDEN_MODULES = ("random", "numpy.random", "secrets")


def _numpy_names(tree: ast.AST) -> set[str]:
    """The names the module binds to numpy itself (``import numpy as xp``):
    ``xp.random`` reaches the global generator as surely as ``np.random``."""
    names = {"np", "numpy"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.asname or a.name for a in node.names if a.name == "numpy"}
    return names


def _call_name(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def offences(tree: ast.AST) -> list[str]:
    found = []
    numpy_names = _numpy_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            # `import numpy.random as r` is an Import of "numpy.random": caught here too
            found += [f"import {a.name}" for a in node.names if a.name in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if node.module in FORBIDDEN_MODULES:
                found.append(f"from {node.module} import ...")
            elif node.module == "numpy":
                found += ["from numpy import random" for a in node.names if a.name == "random"]
        elif isinstance(node, ast.Attribute):
            # <numpy>.random, used or merely named; os.urandom
            if isinstance(node.value, ast.Name) and node.value.id in numpy_names and node.attr == "random":
                found.append(f"{node.value.id}.random")
            if isinstance(node.value, ast.Name) and node.value.id == "os" and node.attr == "urandom":
                found.append("os.urandom")
        elif isinstance(node, ast.Call) and _call_name(node) in ("__import__", "import_module"):
            # a module named by a string is still imported
            if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in FORBIDDEN_MODULES:
                found.append(f"{_call_name(node)}({node.args[0].value!r})")
    return found


# Each way in, alone in a module, and what the scan must say about it.
WAYS_IN = {
    "import random": ["import random"],
    "import secrets": ["import secrets"],
    "from random import shuffle": ["from random import ..."],
    "import numpy.random": ["import numpy.random"],
    "import numpy.random as r": ["import numpy.random"],
    "from numpy.random import default_rng": ["from numpy.random import ..."],
    "from numpy import random": ["from numpy import random"],
    "from numpy import random as npr": ["from numpy import random"],
    "from numpy import zeros, random": ["from numpy import random"],
    "import numpy as np\nx = np.random.rand(3)": ["np.random"],
    "import numpy\nnumpy.random.seed(1)": ["numpy.random"],
    "import numpy as xp\ng = xp.random.default_rng()": ["xp.random"],
    "import numpy as np\nr = np.random": ["np.random"],
    "import os\nb = os.urandom(8)": ["os.urandom"],
    "m = __import__('random')": ["__import__('random')"],
    "import importlib\nm = importlib.import_module('numpy.random')": ["import_module('numpy.random')"],
}

# What library code may do: numpy without its global generator, the project's own streams.
ALLOWED = [
    "import numpy as np\nx = np.zeros(3)",
    "from numpy import zeros",
    "from boardgen_pipeline.board.rng import derive_at",
    "import numpy as np\nfrom boardgen_pipeline.board import rng\ns = rng.random",
    "import importlib\nm = importlib.import_module('numpy')",
]


def test_the_scan_runs_over_the_library():
    assert len(SOURCES) >= 8
    assert REPO / "boardgen_pipeline" / "board" / "rng.py" in SOURCES and REPO / "assets" / "nightly.py" in SOURCES


@pytest.mark.parametrize("source", sorted(WAYS_IN))
def test_the_scan_finds_each_way_in(source):
    assert offences(ast.parse(source)) == WAYS_IN[source]


@pytest.mark.parametrize("source", ALLOWED)
def test_the_scan_leaves_the_rest_alone(source):
    assert offences(ast.parse(source)) == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_global_random_state(path: Path):
    assert offences(ast.parse(path.read_text(encoding="utf-8"))) == []


# Benchmarks may draw layouts (standard boards for the win-rate
# sweep), but only from a generator they seed: numpy's Generator over a
# PCG64 built from an explicit seed, nothing global and nothing unseeded.
BENCHMARKS = sorted(REPO.glob("benchmarks/*.py"))
SEEDED = {"Generator", "PCG64"}


def benchmark_offences(tree: ast.AST) -> list[str]:
    found = [f for f in offences(tree) if not f.endswith(".random")]
    numpy_names = _numpy_names(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id in numpy_names
                and node.value.attr == "random" and node.attr not in SEEDED):
            found.append(f"{node.value.value.id}.random.{node.attr}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in numpy_names \
                and node.attr == "random":
            continue  # <numpy>.random itself: what it reaches is checked above
        elif isinstance(node, ast.Call) and _call_name(node) == "PCG64" and not (node.args or node.keywords):
            found.append("PCG64() without a seed")
        elif isinstance(node, ast.Call) and _call_name(node) == "Generator" and not (
                node.args and isinstance(node.args[0], ast.Call) and _call_name(node.args[0]) == "PCG64"):
            found.append("Generator without a PCG64")
    return found


@pytest.mark.parametrize("source,expected", [
    ("import numpy as np\ng = np.random.Generator(np.random.PCG64(7))", []),
    ("import numpy as np\ng = np.random.default_rng(7)", ["np.random.default_rng"]),
    ("import numpy as np\nx = np.random.rand(3)", ["np.random.rand"]),
    ("import numpy as np\ng = np.random.Generator(np.random.PCG64())", ["PCG64() without a seed"]),
    ("import numpy as np\ng = np.random.Generator(np.random.MT19937(1))",
     ["Generator without a PCG64", "np.random.MT19937"]),
    ("import random", ["import random"]),
])
def test_the_benchmark_scan(source, expected):
    assert benchmark_offences(ast.parse(source)) == expected


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: str(p.relative_to(REPO)))
def test_benchmarks_draw_only_from_seeded_generators(path: Path):
    assert benchmark_offences(ast.parse(path.read_text(encoding="utf-8"))) == []
