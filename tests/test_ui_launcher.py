"""``make ui`` stops cleanly on SIGTERM (issue 13): the launcher
(``assets/ui.py``) brings the whole ``dagster dev`` process group down, the
daemon included, and exits 0."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

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


def test_sigterm_stops_the_webserver_and_the_daemon(tmp_path):
    port = _free_port()
    home = tmp_path / "dagster_home"
    env = {**os.environ, "DAGSTER_HOME": str(home), "BOARDGEN_WAREHOUSE": str(tmp_path / "warehouse")}
    proc = subprocess.Popen([sys.executable, "-m", "assets.ui", "-p", str(port)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        up = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as r:
                    up = r.status == 200
            except OSError:
                pass
            if up and _daemon_pids(home):
                break
            time.sleep(1)
        assert up, "the UI never answered"
        assert _daemon_pids(home), "no daemon was started"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        assert code == 0
        # every process of dagster dev's group is gone, the daemon included
        time.sleep(0.5)
        assert _daemon_pids(home) == []
        with __import__("pytest").raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2)
        assert b"boardgen UI stopped" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _daemon_pids(home):
            os.kill(pid, signal.SIGKILL)
