"""Shared fixtures: repository paths and small table writers; the bounds-check
fuzz started early (its compilation overlaps the other tests)."""

from __future__ import annotations

import os
import shutil
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


@pytest.fixture
def dagster_home_restored(monkeypatch):
    """``DAGSTER_HOME`` as it was before the test: ``ensure_dagster_home``
    sets it (modules that call it use this fixture for each test)."""
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


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
    if bounds is not None:
        proc, workdir = session.config.stash.get(bounds.FUZZ_KEY, (None, None))
        if proc is not None:
            if proc.poll() is None:  # the session ended before the fuzz test waited for it
                proc.kill()
                proc.wait()
            shutil.rmtree(workdir, ignore_errors=True)
    _check_the_machine(session)
    if TEMP_KEY in session.config.stash:  # the process that started the session, once its workers are done
        from tests import session_tmp

        session_tmp.finish(session.config.stash[TEMP_KEY])


# --- the machine as the suite found it (tests/machine_state.py) ---------------------------------

MACHINE_KEY = pytest.StashKey[tuple]()
TEMP_KEY = pytest.StashKey[Path]()
LEAK_DEADLINE_SECONDS = 60  # a process on its way out gets this long to close its socket; a leak never does


def pytest_configure(config):
    # The session's processes carry a marker of their own, so that what one of them leaves listening is
    # told apart from what other processes of a shared machine open meanwhile. Taken once, by the
    # process that starts the session (pytest-xdist's workers inherit it, and every process they start).
    if hasattr(config, "workerinput"):
        return
    from tests import machine_state, session_tmp

    marker = uuid.uuid4().hex
    os.environ[machine_state.MARKER] = marker
    config.stash[MACHINE_KEY] = (marker, machine_state.snapshot())
    # every process of the session writes its temporary files in a folder removed when the session ends
    # (tests/session_tmp.py; pytest-xdist's workers inherit $TMPDIR)
    config.stash[TEMP_KEY] = session_tmp.start()


def _check_the_machine(session) -> None:
    """After the last test (pytest-xdist's workers have finished theirs): no
    listening port or socket, no machine cluster started, no role added by
    this session; else the session fails, naming each."""
    if MACHINE_KEY not in session.config.stash:
        return  # a pytest-xdist worker: the process that started the session checks
    import time

    from tests import machine_state

    marker, before = session.config.stash[MACHINE_KEY]
    deadline = time.monotonic() + LEAK_DEADLINE_SECONDS
    while True:
        bad, notes = machine_state.leaks(before, machine_state.snapshot(), marker)
        if not bad or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")

    def say(text: str, **markup) -> None:
        reporter.write_line(text, **markup) if reporter is not None else print(text, file=sys.stderr)

    if reporter is not None and (bad or notes):
        reporter.write("\n")  # after the progress line of the last test

    for note in notes:
        say(f"machine check: {note}")
    if bad:
        say("!" * 20 + " the test session changed this machine " + "!" * 20, red=True, bold=True)
        for line in bad:
            say(f"LEAK: {line}", red=True, bold=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- a real PostgreSQL server, thrown away after the session (tests/postgres_server.py) ---------

PG_URL_ENV = "BOARDGEN_TEST_POSTGRES_URL"


def _pg_connect(url: str):
    import psycopg2

    conn = psycopg2.connect(url, connect_timeout=5)
    conn.autocommit = True
    return conn


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of a PostgreSQL server whose user may create databases:
    ``$BOARDGEN_TEST_POSTGRES_URL`` (a server of your own, used as it is), else
    a throwaway server this session starts (tests/postgres_server.py: a
    temporary folder, an unprivileged user, a unix socket, a random password)
    and removes when the session ends, however its tests ended. Each pytest-xdist
    worker that needs one starts its own (docs/decisions/test-postgres.md)."""
    import psycopg2

    from tests import postgres_server as pg

    url = os.environ.get(PG_URL_ENV)
    if url:
        try:
            _pg_connect(url).close()
        except psycopg2.Error as exc:
            pytest.fail(f"{PG_URL_ENV}={url}: no PostgreSQL server answers there ({exc})")
        yield url
        return
    try:
        server = pg.start()
    except pg.Unavailable as exc:
        pytest.fail(f"no throwaway PostgreSQL server for the instance tests: {exc}")
    try:
        yield server.url()
    finally:
        server.stop()


def with_password(url: str, password: str) -> str:
    """``url`` with another password, the server and the database kept."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{password}@{host}"))


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
