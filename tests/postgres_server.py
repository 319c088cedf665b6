"""A throwaway PostgreSQL server for the tests of a PostgreSQL-backed Dagster
instance (docs/decisions/test-postgres.md).

:func:`start` initialises a cluster in a temporary folder of its own and
starts its server; :meth:`Server.stop` stops it and removes the folder. The
server leaves nothing on the machine:

* **an unprivileged user** runs ``initdb`` and ``postgres`` (PostgreSQL
  refuses to run as root): the caller, or, when the tests run as root, the
  ``postgres`` system user (``nobody`` where there is none), who owns the
  folder;
* **no TCP port**: ``listen_addresses`` is empty; the server listens on a
  unix socket inside its folder only;
* **a password**: every connection authenticates with scram-sha-256 as the
  folder's own superuser ``boardgen``, whose password is random and lives only
  in this process (and the URL it hands the tests);
* **stopped when the tests end, however they end**: the session fixture stops
  it (fast shutdown, then the folder removed); should the test process die
  without tearing down (``SIGKILL``), the kernel sends the server ``SIGINT``
  (``setpriv --pdeathsig``), and the next :func:`start` removes the folders
  whose processes are gone.

Standard library and psycopg2 (the ``pipeline`` extra's, through
dagster-postgres) only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "boardgen-pg-"
SUPERUSER = "boardgen"
PORT = 5432  # only names the socket file (.s.PGSQL.5432) in the server's own folder: no TCP port is opened
START_DEADLINE_SECONDS = 120  # turns a server that never answers into a failure; a correct start takes ~1 s
STOP_DEADLINE_SECONDS = 60
OWNER_FILE = "owner.pid"  # the test process that made the folder: its folder is stale once that process is gone
# a unix socket path holds at most 107 bytes (sun_path): the folder stays short, under /tmp when $TMPDIR is long
SOCKET_PATH_MAX = 100


class Unavailable(Exception):
    """No throwaway server can be started here; ``str()`` says what to do."""


@dataclass
class Server:
    """A running throwaway server: its folder, its process, its URL."""

    folder: Path
    process: subprocess.Popen
    password: str
    stopped: bool = field(default=False)

    @property
    def socket_dir(self) -> str:
        return str(self.folder)

    def url(self, database: str = "postgres") -> str:
        """A libpq URL over the unix socket (``host`` is the socket's folder),
        as dagster-postgres, SQLAlchemy and psycopg2 all take it."""
        return f"postgresql://{SUPERUSER}:{self.password}@/{database}?host={self.folder}&port={PORT}"

    def stop(self) -> None:
        """Fast shutdown (clients disconnected, no recovery needed), then the
        folder removed; SIGKILL only for a server that ignores the shutdown."""
        if self.stopped:
            return
        self.stopped = True
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=STOP_DEADLINE_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # the backends are the postmaster's children: they exit with it; the folder goes once they are gone
        _remove_folder(self.folder)


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``: Debian's newest
    ``/usr/lib/postgresql/N/bin``, else the ``PATH``'s."""
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: _version(p.parent.name), reverse=True)
    for folder in versions:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    initdb, postgres = shutil.which("initdb"), shutil.which("postgres")
    if initdb and postgres:
        return Path(initdb).resolve().parent
    return None


def _version(name: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in name.split("."))
    except ValueError:
        return (-1,)


def _run_as() -> tuple[int, int] | None:
    """``(uid, gid)`` of the unprivileged user who runs the server when this
    process is root, else None (the server runs as the caller)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return entry.pw_uid, entry.pw_gid
    raise Unavailable("the tests run as root and this machine has neither a `postgres` nor a `nobody` user to run "
                      "a throwaway PostgreSQL server as (PostgreSQL refuses to run as root)")


def _prefix(user: tuple[int, int] | None) -> list[str]:
    """The command prefix that drops to ``user`` (when root) and asks the kernel
    to send the server SIGINT should this process die without stopping it."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:  # util-linux is essential on Debian; elsewhere the session fixture still stops the server
        if user is None:
            return []
        runuser = shutil.which("runuser")
        if runuser is None:
            raise Unavailable("running as root needs setpriv or runuser (util-linux) to start PostgreSQL as another user")
        return [runuser, "-u", pwd.getpwuid(user[0]).pw_name, "--"]
    drop = [] if user is None else [f"--reuid={user[0]}", f"--regid={user[1]}", "--init-groups"]
    return [setpriv, *drop, "--pdeathsig=INT"]


def _base_folder() -> Path:
    base = Path(tempfile.gettempdir())
    if len(str(base)) + len(PREFIX) + 40 > SOCKET_PATH_MAX:
        base = Path("/tmp")
    return base


def sweep_stale(base: Path | None = None) -> list[Path]:
    """Remove the folders of throwaway servers whose test process is gone and
    whose server no longer runs (a test process killed before its teardown);
    the folders removed."""
    removed = []
    for folder in (base or _base_folder()).glob(PREFIX + "*"):
        owner = _pid_in(folder / OWNER_FILE)
        postmaster = _pid_in(folder / "data" / "postmaster.pid")
        if (owner and _alive(owner)) or (postmaster and _alive(postmaster)):
            continue
        if owner is None and time.time() - folder.stat().st_mtime < START_DEADLINE_SECONDS:
            continue  # a folder another session is setting up right now has no owner file for a moment
        _remove_folder(folder)
        if not folder.exists():  # another user's folder stays: theirs to sweep
            removed.append(folder)
    return removed


def _pid_in(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_folder(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)


def start(env: dict[str, str] | None = None) -> Server:
    """Initialise a cluster in a new temporary folder and start its server;
    returns once it accepts a login. ``env``: the server's environment
    (default: this process's)."""
    import psycopg2

    bin_dir = binaries()
    if bin_dir is None:
        raise Unavailable("no PostgreSQL server binaries (initdb, postgres) on this machine: run "
                          "`bash scripts/ensure_postgres_binaries.sh` as root (make test does), or set "
                          "BOARDGEN_TEST_POSTGRES_URL to a server of your own")
    user = _run_as()
    prefix = _prefix(user)
    sweep_stale()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=_base_folder()))
    (folder / OWNER_FILE).write_text(f"{os.getpid()}\n", encoding="ascii")
    server: Server | None = None
    try:
        password = secrets.token_hex(24)
        pwfile = folder / "password"
        pwfile.write_text(password + "\n", encoding="ascii")
        pwfile.chmod(0o600)
        if user is not None:
            for path in (folder, pwfile):
                os.chown(path, *user)
        env = {**(os.environ if env is None else env), "LC_ALL": "C", "LANG": "C"}
        env.pop("PGDATA", None)
        log = folder / "initdb.log"
        with open(log, "wb") as out:
            done = subprocess.run([*prefix, str(bin_dir / "initdb"), "-D", str(folder / "data"), "-U", SUPERUSER,
                                   f"--pwfile={pwfile}", "--auth-local=scram-sha-256", "--auth-host=reject",
                                   "-E", "UTF8", "--no-locale", "--no-sync"],
                                  cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
        pwfile.unlink()
        if done.returncode != 0:
            raise Unavailable(f"initdb failed (exit {done.returncode}): {log.read_text(errors='replace')[-2000:]}")
        # fsync off and friends: the cluster is thrown away, a crash loses nothing anyone keeps; its own
        # session, so that a Ctrl-C meant for pytest reaches the server only through the fixture's stop
        with open(folder / "server.log", "wb") as server_log:
            proc = subprocess.Popen([*prefix, str(bin_dir / "postgres"), "-D", str(folder / "data"), "-k", str(folder),
                                     "-p", str(PORT), "-c", "listen_addresses=", "-c", "fsync=off",
                                     "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                                    cwd=folder, env=env, stdout=server_log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        server = Server(folder, proc, password)
        atexit.register(server.stop)  # a session that ends without its fixture's teardown still stops it
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while True:
            if proc.poll() is not None:
                raise Unavailable(f"the throwaway PostgreSQL server exited ({proc.returncode}) before it answered: "
                                  f"{(folder / 'server.log').read_text(errors='replace')[-2000:]}")
            try:
                psycopg2.connect(server.url(), connect_timeout=5).close()
                return server
            except psycopg2.OperationalError:
                if time.monotonic() > deadline:
                    raise Unavailable(f"the throwaway PostgreSQL server did not answer within {START_DEADLINE_SECONDS} s: "
                                      f"{(folder / 'server.log').read_text(errors='replace')[-2000:]}") from None
                time.sleep(0.1)
    except BaseException:
        if server is not None:
            server.stop()
        else:
            _remove_folder(folder)
        raise
