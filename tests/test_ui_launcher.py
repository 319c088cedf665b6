"""``make ui`` stops cleanly on SIGTERM: the launcher
(``assets/ui.py``) brings the whole ``dagster dev`` process group down, the
daemon included, and exits 0; ``dagster dev`` shuts down on its own within
that (its temporary workspace and socket folders removed), even started as
a non-interactive shell starts a background job, with SIGINT ignored.

The test waits on conditions, never on the clock: the UI and its
daemon are polled until they are up, and the daemon until it is gone (a
deadline only turns a hang into a failure); ``dagster dev``'s output goes to
a file, as an undrained pipe fills and blocks it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.nightly_support import BOARDGEN

pytestmark = pytest.mark.integration  # dagster dev: a webserver and a daemon
REPO = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _daemon_pids(home: Path) -> list[int]:
    """Processes whose command line runs the Dagster daemon for this home."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            env = (proc / "environ").read_bytes()
        except OSError:
            continue
        if "dagster" in cmd and "daemon" in cmd and str(home).encode() in env:
            out.append(int(proc.name))
    return out


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _until(condition, seconds: float) -> bool:
    """Whether ``condition()`` held within ``seconds`` (polled each 0.2 s)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_sigterm_stops_the_webserver_and_the_daemon(tmp_path):
    port = _free_port()
    home = tmp_path / "dagster_home"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "DAGSTER_HOME": str(home), "BOARDGEN_WAREHOUSE": str(tmp_path / "warehouse"),
           "TMPDIR": str(temp)}
    log = tmp_path / "ui.log"

    def as_a_background_job():  # `make ui &` in a script: SIGINT ignored, and inherited through exec
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    with open(log, "wb") as out:
        proc = subprocess.Popen([BOARDGEN, "ui", "-p", str(port)], cwd=REPO, env=env, preexec_fn=as_a_background_job,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        started = _until(lambda: proc.poll() is not None or (_answers(port) and bool(_daemon_pids(home))), 240)
        assert started and proc.poll() is None, "the UI never came up:\n" + log.read_text(errors="replace")[-2000:]
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        assert code == 0
        # every process of dagster dev's group is gone, the daemon included (a killed process
        # leaves /proc once reaped: waited for, not slept on)
        assert _until(lambda: _daemon_pids(home) == [], 60), f"the daemon outlived the launcher: {_daemon_pids(home)}"
        assert not _answers(port)
        assert b"boardgen UI stopped" in log.read_bytes()
        # dagster dev's warning that it is superseded by dg dev, which a designer cannot act on, is not printed
        assert b"SupersessionWarning" not in log.read_bytes() and b"Serving dagster-webserver" in log.read_bytes()
        # dagster dev shut down by itself, not killed at the end of the grace period: it removed what it made
        assert b"Dagster services shut down" in log.read_bytes()
        assert sorted(p.name for p in temp.iterdir()) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _daemon_pids(home):
            os.kill(pid, signal.SIGKILL)
