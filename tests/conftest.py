"""Shared fixtures: repository paths and small table writers; the bounds-check
fuzz started early (its compilation overlaps the other tests)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED = REPO.parent / "shared"
# the C baseline: ../shared's when the clone sits beside it, else the repo's copy
BASELINE_C = next(p for p in (SHARED / "bench" / "baseline.c", REPO / "benchmarks" / "baseline.c") if p.exists())


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(scope="module", autouse=True)
def no_dagster_instance_outlives_its_module():
    """A Dagster evaluation context left open keeps an instance's state storage installed as the
    current one; when the garbage collector finally closes it, a later test's job resolution reads
    a dead instance (it failed CI once, at random, in another module). Catch it in the module that
    leaks, every time, by collecting here."""
    yield
    if "dagster" not in sys.modules:
        return
    import gc

    from dagster._core.storage.defs_state.base import DefsStateStorage

    gc.collect()
    storage = DefsStateStorage.get()
    ref = getattr(storage, "_instance_weakref", None)
    if storage is not None and (ref is None or ref() is None):
        pytest.fail("a Dagster context was left open: a dead instance's state storage is the current one; "
                    "use build_*_context(...) as a context manager")


def row_toml(**fields) -> str:
    lines = ["[[rows]]"]
    for k, v in fields.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    return "\n".join(lines) + "\n"


BASE_ROW = dict(
    level_index=1, node_depth=0, board_width=10, board_height=10, mine_density=0.22,
    inferability_target=0.85, solver_rules="single_subset", min_safe_count=40,
    max_gen_attempts=32, board_type="dungeon", shave_ring_radius=1, r0_max_cap=50,
)


def write_table(path: Path, rows: list[dict], header: str = "[header]\nspawn_side = 3\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + "\n" + "\n".join(row_toml(**r) for r in rows), encoding="utf-8")
    return path


FUZZ_TEST = "test_fuzz_the_kernels_under_numba_boundscheck"


def pytest_collection_finish(session):
    # the fuzz spends ~80 s compiling the kernels with bounds checks in a
    # subprocess: start it now, so it runs beside the rest of the suite
    if not session.config.option.collectonly and any(item.name == FUZZ_TEST for item in session.items):
        from tests.test_kernels_bounds import FUZZ_KEY, start_fuzz

        workdir = Path(tempfile.mkdtemp(prefix="boardgen-fuzz-"))
        session.config.stash[FUZZ_KEY] = (start_fuzz(workdir), workdir)


def pytest_sessionfinish(session):
    bounds = sys.modules.get("tests.test_kernels_bounds")
    if bounds is None:
        return
    proc, workdir = session.config.stash.get(bounds.FUZZ_KEY, (None, None))
    if proc is not None:
        if proc.poll() is None:  # the session ended before the fuzz test waited for it
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


# --- a real PostgreSQL server (issue 28: "make test runs against a real PostgreSQL server") --------

PG_URL_ENV = "BOARDGEN_TEST_POSTGRES_URL"
PG_DEFAULT = "postgresql://boardgen_test:boardgen_test@127.0.0.1:5432/postgres"


def _pg_connect(url: str):
    import psycopg2

    conn = psycopg2.connect(url, connect_timeout=5)
    conn.autocommit = True
    return conn


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The URL of a PostgreSQL server a superuser may create databases on:
    ``$BOARDGEN_TEST_POSTGRES_URL``, else the one ``scripts/ensure_postgres.sh``
    starts (``make test`` runs it; run here again when nothing answers)."""
    import psycopg2

    url = os.environ.get(PG_URL_ENV) or PG_DEFAULT
    for attempt in range(2):
        try:
            _pg_connect(url).close()
            return url
        except psycopg2.Error as exc:
            if attempt == 0 and not os.environ.get(PG_URL_ENV):
                subprocess.run(["bash", str(REPO / "scripts" / "ensure_postgres.sh")], check=False)
                continue
            pytest.fail(f"no PostgreSQL server for the instance tests at {url} ({exc}); run scripts/ensure_postgres.sh "
                        f"as root, or set {PG_URL_ENV} to a superuser's URL")


@pytest.fixture
def postgres_database(postgres_server):
    """A database of its own on the test server, dropped afterwards; its URL."""
    from urllib.parse import urlsplit, urlunsplit

    name = f"boardgen_{uuid.uuid4().hex[:12]}"
    admin = _pg_connect(postgres_server)
    try:
        admin.cursor().execute(f'create database "{name}"')
    finally:
        admin.close()
    parts = urlsplit(postgres_server)
    yield urlunsplit(parts._replace(path=f"/{name}"))
    admin = _pg_connect(postgres_server)
    try:
        admin.cursor().execute(f'drop database if exists "{name}" with (force)')
    finally:
        admin.close()


def postgres_yaml(url: str) -> str:
    """A user's dagster.yaml: PostgreSQL storage, as Dagster's docs write it."""
    return f"storage:\n  postgres:\n    postgres_url: \"{url}\"\n"


@pytest.fixture
def postgres_home(tmp_path, postgres_database) -> Path:
    """A Dagster home whose dagster.yaml names a PostgreSQL storage (and nothing else)."""
    home = tmp_path / "pg_home"
    home.mkdir()
    (home / "dagster.yaml").write_text(postgres_yaml(postgres_database))
    return home


@pytest.fixture(scope="session")
def small_nightly(tmp_path_factory) -> dict:
    """``python -m boardgen_dagster.nightly`` on the small pipeline fixture, on a SQLite
    home, once for the session: the warehouse every other nightly of the
    same tables must write, byte for byte."""
    from tests.nightly_support import nightly, parquet_files
    from tests.test_pipeline_support import copy_fixture

    base = tmp_path_factory.mktemp("small_nightly")
    tables, root, samples = copy_fixture("small", base), base / "warehouse", "16"
    rc, out, err = nightly(tables, root, base / "home", samples=samples)
    assert rc == 0, out + err
    return {"tables": tables, "root": root, "home": base / "home", "samples": samples, "files": parquet_files(root),
            "stdout": out}
