"""The PostgreSQL set-up leaves the machine as it found it
(docs/decisions/test-postgres.md): the throwaway server listens on no TCP port
and takes no login without its password, is gone with its folder once
stopped, and ``scripts/ensure_postgres_binaries.sh`` drops the superuser
``boardgen_test`` an earlier set-up created (or, where it owns a database of
the user's, takes its powers away).

Each test starts a server of its own, never the one ``BOARDGEN_TEST_POSTGRES_URL``
names: a role is created here, and a user's server gets none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg2
import pytest

from tests import machine_state
from tests import postgres_server as pg

from .conftest import REPO, _pg_connect, with_password

pytestmark = pytest.mark.integration  # real PostgreSQL servers

SCRIPT = REPO / "scripts" / "ensure_postgres_binaries.sh"


@pytest.fixture
def server():
    try:
        s = pg.start()
    except pg.Unavailable as exc:
        pytest.fail(str(exc))
    try:
        yield s
    finally:
        s.stop()


def _sql(url: str, statement: str) -> list[tuple]:
    conn = _pg_connect(url)
    try:
        cur = conn.cursor()
        cur.execute(statement)
        return cur.fetchall() if cur.description else []
    finally:
        conn.close()


def test_the_throwaway_server_listens_on_its_own_socket_only_and_wants_its_password(server):
    mine = {s for s in machine_state.listening_sockets() if s.kind == "unix" and s.address.startswith(str(server.folder))}
    assert {s.address for s in mine} == {f"{server.folder}/.s.PGSQL.{pg.PORT}"}
    held = machine_state.owners({s.inode for s in mine})
    assert set(held) == {s.inode for s in mine}
    # no TCP port: the server holds no listening TCP socket
    tcp = {s.inode for s in machine_state.listening_sockets() if s.kind == "tcp"}
    assert not [i for i, pids in machine_state.owners(tcp).items() if server.process.pid in pids]
    assert _sql(server.url(), "show listen_addresses") == [("",)]
    # scram-sha-256 for every connection; a wrong password is refused
    hba = _sql(server.url(), "select type, auth_method from pg_hba_file_rules where type = 'local'")
    assert {method for _, method in hba} == {"scram-sha-256"}
    with pytest.raises(psycopg2.OperationalError, match="password authentication failed"):
        psycopg2.connect(with_password(server.url(), "not-the-password"), connect_timeout=5)
    if os.geteuid() == 0:  # PostgreSQL refuses root: the server runs as an unprivileged user, who owns its folder
        assert os.stat(server.folder).st_uid != 0
        assert Path(f"/proc/{server.process.pid}/status").read_text().count("Uid:\t0\t") == 0


def test_a_stopped_server_leaves_no_process_folder_or_socket():
    s = pg.start()
    pid, folder = s.process.pid, s.folder
    s.stop()
    assert not folder.exists()
    assert not Path(f"/proc/{pid}").exists()
    assert not [x for x in machine_state.listening_sockets() if x.address.startswith(str(folder))]


def test_a_server_whose_test_process_died_is_stopped_and_its_folder_swept(tmp_path):
    """A test process killed before its teardown: the kernel stops its server
    (``--pdeathsig``), and the next start removes the folder."""
    child = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; sys.path.insert(0, sys.argv[1]); from tests import postgres_server as pg; "
         "s = pg.start(); print(s.folder, s.process.pid, flush=True); time.sleep(600)", str(REPO)],
        stdout=subprocess.PIPE, text=True)
    folder, server_pid = child.stdout.readline().split()
    child.kill()
    child.wait()
    proc = Path(f"/proc/{server_pid}")
    try:
        deadline = time.monotonic() + pg.STOP_DEADLINE_SECONDS
        while proc.exists() and "zombie" not in _state(proc) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not proc.exists() or "zombie" in _state(proc), "the server outlived the process that started it"
        assert Path(folder).exists()
        assert Path(folder) in pg.sweep_stale()
        assert not Path(folder).exists()
    finally:  # a server that outlived its test process (the fault this test exists for) is stopped here
        if proc.exists() and "zombie" not in _state(proc):
            os.kill(int(server_pid), signal.SIGINT)
            while proc.exists() and "zombie" not in _state(proc):
                time.sleep(0.1)
        pg.sweep_stale()


def _state(proc: Path) -> str:
    try:
        return next(line for line in (proc / "status").read_text().splitlines() if line.startswith("State:"))
    except (OSError, StopIteration):
        return "zombie"


def _role(url: str) -> tuple | None:
    rows = _sql(url, "select rolcanlogin, rolsuper, rolcreatedb, rolpassword is not null from pg_authid "
                     "where rolname = 'boardgen_test'")
    return rows[0] if rows else None


def _old_setup(url: str, *databases: str) -> None:
    """What the old set-up left: the superuser with its known password, and databases it owns."""
    _sql(url, "create role boardgen_test login superuser password 'boardgen_test'")
    for name in databases:
        _sql(url, f'create database "{name}" owner boardgen_test')


def _databases(url: str) -> set[str]:
    return {name for (name,) in _sql(url, "select datname from pg_database")}


def _drop_old_role(url: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), "--drop-old-role-at", url], capture_output=True, text=True,
                          timeout=120)


def test_the_set_up_drops_the_old_superuser_and_the_test_databases_it_left(server):
    url = server.url()
    _old_setup(url, "boardgen_0123456789ab")
    assert _role(url) == (True, True, False, True)
    done = _drop_old_role(url)
    assert done.returncode == 0, done.stderr
    assert _role(url) is None
    assert "boardgen_0123456789ab" not in _databases(url)
    assert "dropped the role boardgen_test" in done.stderr
    # nothing to do the second time, and nothing said
    again = _drop_old_role(url)
    assert (again.returncode, again.stderr) == (0, "")


def test_a_role_that_owns_a_database_of_the_users_is_disarmed_and_the_database_kept(server):
    url = server.url()
    _old_setup(url, "boardgen_0123456789ab", "the_users_own")
    done = _drop_old_role(url)
    assert done.returncode == 0, done.stderr
    assert _role(url) == (False, False, False, False)  # no login, no superuser, no password
    assert "the_users_own" in _databases(url) and "boardgen_0123456789ab" not in _databases(url)
    assert "disarmed" in done.stderr and "DROP ROLE boardgen_test" in done.stderr
