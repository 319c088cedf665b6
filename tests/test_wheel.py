"""The library as a game tool installs it (docs/decisions/packaging.md): the
wheel, built without network from the installed build backend, installed into
a fresh virtual environment outside the checkout, used from a folder outside
the checkout.

The environment sees the wheel and, through a ``.pth`` line, a folder of links
to exactly the distributions ``pip install boardgen`` would bring: the
closure of the wheel's base requirements, read from the project's own
environment (no network: nothing is downloaded). So the pipeline's extra
(Dagster, Dask) is not there, and neither is the checkout's editable install
(its ``.pth`` finder lives in the project's site-packages, whose ``.pth``
files a ``.pth`` path line does not run): ``boardgen_pipeline`` can only come
from the wheel.

Every command is run with the environment's files listed before and after:
an installed copy writes nothing inside it. The kernels' compiled cache goes
to ``BOARDGEN_NUMBA_CACHE``, a folder of the test's (the library's default is
the user's cache folder, never site-packages; this keeps the test's cache out
of the user's).

Cost: numba compiles the kernels once for this copy of the sources (its cache
is keyed by the source file's path), about 2 minutes of CPU on the 2-core
machine; every later command loads that cache.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests import machine_state

from .conftest import REPO

pytestmark = pytest.mark.integration  # a build, a virtual environment, the kernels compiled for a copy

PIPELINE = {"dagster", "dagster-webserver", "dagster-postgres", "dask", "distributed"}
SOURCES = ("pyproject.toml", "README.md", "boardgen_pipeline", "assets", "tables")  # what the build reads
LAYOUT = "....../....../....../....../.....*/.....*"  # 6x6, two mines in a corner, the spawn square clear


def base_closure() -> dict[str, metadata.Distribution]:
    """The distributions ``pip install boardgen`` installs (no extra), as this
    environment has them: the closure of the project's base requirements."""
    out: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo: list[tuple[str, tuple[str, ...]]] = [("boardgen", ())]
    while todo:
        name, extras = todo.pop()
        if (canonicalize_name(name), extras) in seen:
            continue
        seen.add((canonicalize_name(name), extras))
        dist = metadata.distribution(name)
        out[canonicalize_name(name)] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
                todo.append((req.name, tuple(sorted(req.extras))))
    del out["boardgen"]
    return out


def link_dependencies(view: Path) -> set[str]:
    """A folder of links to the files of the base closure's distributions
    (their top-level entries in this environment's site-packages); the names linked."""
    site = Path(sysconfig.get_paths()["purelib"])
    view.mkdir(parents=True)
    for dist in base_closure().values():
        for top in {Path(str(f)).parts[0] for f in dist.files or []}:
            # `..` holds the scripts; a .pth would run nothing from here anyway
            if top in ("..", "__pycache__") or top.endswith(".pth") or (view / top).exists():
                continue
            if (site / top).exists():
                (view / top).symlink_to(site / top)
    return {p.name for p in view.iterdir()}


def listing(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``root`` (links not followed): size and mtime."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder) / name
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size if not p.is_dir() else 0, st.st_mtime_ns if not p.is_dir() else 0)
    return out


@dataclass
class Installed:
    wheel: Path
    build_output: str
    env: Path
    site: Path
    work: Path  # the folder outside the checkout the commands run in
    home: Path
    cache: Path
    deps: set[str]

    def environ(self, **extra: str) -> dict[str, str]:
        # nothing of the checkout's settings; the session's marker stays (tests/machine_state.py)
        env = {k: v for k, v in os.environ.items() if k == machine_state.MARKER
               or not k.startswith(("BOARDGEN_", "PYTHON", "VIRTUAL_ENV", "DAGSTER_", "COVERAGE_"))}
        env.update(PATH=f"{self.env / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin", HOME=str(self.home),
                   BOARDGEN_NUMBA_CACHE=str(self.cache), LC_ALL="C.UTF-8", **extra)
        env.pop("XDG_CACHE_HOME", None)
        return env

    def run(self, *argv: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess:
        """``argv`` run in the environment, from ``cwd`` (default: the work
        folder); fails the test when it wrote anything inside the environment."""
        before = listing(self.env)
        done = subprocess.run(list(argv), cwd=cwd or self.work, env=self.environ(**extra), capture_output=True,
                              text=True, timeout=1200)
        after = listing(self.env)
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        assert not changed, f"{argv[:3]} wrote inside the installed environment: {changed[:10]}"
        return done

    def python(self, code: str, *args: str) -> subprocess.CompletedProcess:
        # -I: neither the working folder nor $PYTHON* variables on the path, only the environment's site-packages
        return self.run(str(self.env / "bin" / "python"), "-I", "-c", code, *args)

    def boardgen(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return self.run(str(self.env / "bin" / "boardgen"), *args, cwd=cwd)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    assert not base.is_relative_to(REPO)
    # the sources the build reads, copied: a build in the checkout would leave build/ and *.egg-info there,
    # and setuptools' build/ keeps files of earlier builds that a later wheel would ship
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
        else:
            shutil.copy2(REPO / name, src / name)
    # no network: no index, no build isolation (the installed setuptools builds), no dependency fetched; a
    # proxy that refuses turns any download attempt into a failure
    offline = {**os.environ, "PIP_NO_INDEX": "1", "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
                            "-w", str(base / "dist"), str(src)], env=offline, capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (base / "dist").glob("boardgen-*.whl")
    env = base / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=300)
    (site,) = (env / "lib").glob("python3*/site-packages")
    deps = link_dependencies(base / "deps")
    (site / "boardgen-dependencies.pth").write_text(f"{base / 'deps'}\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "--no-deps",
                           "--no-index", str(wheel)], env=offline, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("work", "home", "numba-cache"):
        (base / name).mkdir()
    return Installed(wheel, built.stdout + built.stderr, env, site, base / "work", base / "home", base / "numba-cache",
                     deps)


def test_the_wheel_holds_the_library_the_code_location_and_the_repositorys_tables(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    # no generic top-level name: the code location installs under its own
    assert {n.split("/")[0] for n in names} == {"boardgen_pipeline", "boardgen_dagster", "boardgen-0.1.0.dist-info"}
    assert "boardgen_dagster/definitions.py" in names and not any(n.startswith("assets/") for n in names)
    # one source: the tables shipped are the repository's tables/, byte for byte, every one of them
    shipped = {n.removeprefix("boardgen_pipeline/default_tables/"): n for n in names
               if n.startswith("boardgen_pipeline/default_tables/") and not n.endswith("/")}
    tables = {str(p.relative_to(REPO / "tables")) for p in (REPO / "tables").rglob("*.toml")}
    assert set(shipped) == tables
    with zipfile.ZipFile(installed.wheel) as z:
        for rel, name in shipped.items():
            assert z.read(name) == (REPO / "tables" / rel).read_bytes()
    # and setuptools left no folder of the tree out (it warns at every build when it does)
    assert "is absent from the `packages` configuration" not in installed.build_output


def test_the_generators_install_requires_no_pipeline_package(installed):
    with zipfile.ZipFile(installed.wheel) as z:
        meta = Parser().parsestr(z.read("boardgen-0.1.0.dist-info/METADATA").decode())
    requirements = [Requirement(r) for r in meta.get_all("Requires-Dist")]
    base = {canonicalize_name(r.name) for r in requirements if r.marker is None}
    assert base and not base & PIPELINE
    for r in requirements:
        if canonicalize_name(r.name) in PIPELINE:
            assert str(r.marker) == 'extra == "pipeline"', r
    assert {canonicalize_name(r.name) for r in requirements if r.marker is not None
            and r.marker.evaluate({"extra": "pipeline"})} >= PIPELINE
    # and the environment really lacks them: what follows runs without Dagster or Dask
    assert not installed.deps & {"dagster", "dask", "distributed", "boardgen_dagster"}


def test_the_library_imports_from_the_installation_and_finds_its_default_tables(installed):
    done = installed.python(
        "import json, importlib.util, boardgen_pipeline; from boardgen_pipeline import paths; "
        "print(json.dumps({'file': boardgen_pipeline.__file__, 'checkout': str(paths.checkout()), "
        "'tables': str(paths.default_tables_dir()), 'warehouse': str(paths.default_warehouse()), "
        "'dagster': importlib.util.find_spec('dagster') is not None}))")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert Path(found["file"]).is_relative_to(installed.site) and not Path(found["file"]).is_relative_to(REPO)
    assert found["checkout"] == "None"
    assert Path(found["tables"]) == installed.site / "boardgen_pipeline" / "default_tables"
    assert Path(found["warehouse"]) == installed.work / "warehouse"
    assert found["dagster"] is False


def test_generate_and_measure_layout_from_python_give_the_checkouts_results(installed):
    from boardgen_pipeline import generate, measure_layout

    done = installed.python(
        "import json, sys; from boardgen_pipeline import generate, measure_layout; "
        "board, metrics = generate(1, 0, 7); "
        f"m = measure_layout({LAYOUT!r}); "
        "print(json.dumps({'mines': bytes(board.mines).hex(), 'metrics': metrics, 'measure': m.as_json(), "
        "'dagster': 'dagster' in sys.modules}, default=str))")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    board, metrics = generate(1, 0, 7)
    assert found["mines"] == bytes(board.mines).hex()
    assert found["metrics"] == json.loads(json.dumps(metrics, default=str))
    assert found["measure"] == json.loads(json.dumps(measure_layout(LAYOUT).as_json(), default=str))
    assert found["dagster"] is False


def test_generate_measure_and_validate_on_the_command_line(installed, capsys):
    from boardgen_pipeline import cli

    done = installed.boardgen("generate", "--level", "1", "--depth", "0", "--seed", "7", "--json")
    assert done.returncode == 0, done.stderr
    assert cli.main(["generate", "--level", "1", "--depth", "0", "--seed", "7", "--json"]) == 0
    assert json.loads(done.stdout) == json.loads(capsys.readouterr().out)

    (installed.work / "layout.txt").write_text(LAYOUT + "\n", encoding="utf-8")
    done = installed.boardgen("measure", "layout.txt")
    assert done.returncode == 0, done.stderr
    assert cli.main(["measure", str(installed.work / "layout.txt")]) == 0
    assert json.loads(done.stdout) == json.loads(capsys.readouterr().out)

    done = installed.boardgen("validate")
    assert done.returncode == 0, done.stderr
    tables = installed.site / "boardgen_pipeline" / "default_tables"
    assert done.stdout.startswith(f"ok: {tables / 'board_gen.toml'}: ")
    assert "ok: node-map pools (" in done.stdout  # the node maps' folder is shipped too


def test_calibrate_writes_the_warehouse_it_is_given_else_the_working_folders(installed, tmp_path):
    given = tmp_path / "given"
    done = installed.boardgen("calibrate", "--warehouse", str(given), "--samples", "8", "--rows", "1,0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(given.rglob("*.parquet")) and (given / "boardgen.duckdb").is_file()
    assert not (installed.work / "warehouse").exists()

    folder = tmp_path / "elsewhere"
    folder.mkdir()
    done = installed.boardgen("calibrate", "--samples", "8", "--rows", "1,0", cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"warehouse: {folder / 'warehouse'}" in " ".join(done.stdout.split())
    assert sorted(p.name for p in folder.iterdir()) == ["warehouse"]


def test_advise_apply_refuses_the_package_tables_and_edits_only_the_folder_named(installed, tmp_path):
    from .test_advise_apply import CAP_LINE, ROW, _set

    done = installed.boardgen("advise", "--row", "1,2", "--apply", "--samples", "32", "--probes", "32")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "error: --apply edits a tables folder you name: the installed package's default tables are read only (copy "
        "them, then give --tables DIR, or --dry-run to see the change)"]

    mine = tmp_path / "my_tables"
    shutil.copytree(installed.site / "boardgen_pipeline" / "default_tables", mine,
                    ignore=shutil.ignore_patterns("__pycache__", "__init__*"))
    table = mine / "board_gen.toml"
    table.write_text(_set(table.read_text(encoding="utf-8"), ROW, "r0_max_cap", CAP_LINE), encoding="utf-8")
    before = {p: p.read_bytes() for p in mine.rglob("*") if p.is_file()}
    done = installed.boardgen("advise", "--row", "1,2", "--apply", "--tables", str(mine), "--samples", "32",
                              "--probes", "32")
    assert done.returncode == 0, done.stdout + done.stderr
    after = {p: p.read_bytes() for p in mine.rglob("*") if p.is_file()}
    assert set(after) == set(before)
    assert [p for p in after if after[p] != before[p]] == [table]  # the table named, and nothing else
    assert CAP_LINE not in table.read_text(encoding="utf-8")
    assert f"wrote {table}" in " ".join(done.stdout.split())


def test_the_nightly_without_the_pipeline_extra_says_what_to_install(installed):
    done = installed.boardgen("nightly")
    assert done.returncode == 6, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "error: `boardgen nightly` runs the Dagster pipeline, whose packages are not installed (no module 'dagster'): "
        "pip install 'boardgen[pipeline]'"]
    assert not [p for p in installed.work.iterdir() if p.name in ("warehouse", ".dagster_home")]


def test_the_library_imports_no_dagster_where_dagster_is_installed(installed):
    """The project's own environment, whole (Dagster in it), behind the
    installation: the library still comes from the wheel, and generating a
    board imports no Dagster."""
    # appended, not run as a site folder: its .pth files (the checkout's editable finder) stay unread
    done = installed.python(
        "import sys, importlib.util; sys.path.append(sys.argv[1]); "
        "import boardgen_pipeline; from boardgen_pipeline import generate; generate(1, 0, 7); "
        "assert importlib.util.find_spec('dagster') is not None, 'dagster is not visible: the check proves nothing'; "
        "assert 'dagster' not in sys.modules, sorted(m for m in sys.modules if m.startswith('dagster')); "
        "print(boardgen_pipeline.__file__)",
        sysconfig.get_paths()["purelib"])
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(installed.site)


def test_the_tables_the_commands_read_are_never_written(installed):
    """Last, after every command above: the package's own tables are as the wheel shipped them."""
    with zipfile.ZipFile(installed.wheel) as z:
        for name in z.namelist():
            if name.startswith("boardgen_pipeline/default_tables/") and not name.endswith("/"):
                assert (installed.site / name).read_bytes() == z.read(name)
    assert not re.search(r"\.(nbi|nbc)$", "\n".join(listing(installed.env)), re.M)
