"""The test session's own temporary directory (``tests/session_tmp.py``):
every process of the session writes there, and the folders of sessions that
are gone are swept, those running kept."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import session_tmp


def test_the_session_and_the_processes_it_starts_write_in_a_folder_of_its_own():
    temp = Path(tempfile.gettempdir())
    assert temp.name.startswith(session_tmp.PREFIX) and os.environ["TMPDIR"] == str(temp)
    child = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
                           capture_output=True, text=True, check=True)
    assert child.stdout.strip() == str(temp)
    # its owner is the process that started the session: this one, or the one that started this worker
    owner = int((temp / session_tmp.OWNER_FILE).read_text(encoding="ascii"))
    assert owner == (os.getppid() if "PYTEST_XDIST_WORKER" in os.environ else os.getpid())


def test_the_folder_of_a_session_that_is_gone_is_swept_and_a_running_ones_kept(tmp_path):
    gone = subprocess.Popen(["true"])
    gone.wait()

    def session(name: str, owner: int | None) -> Path:
        folder = tmp_path / f"{session_tmp.PREFIX}{name}"
        (folder / "left-behind").mkdir(parents=True)
        if owner is not None:
            (folder / session_tmp.OWNER_FILE).write_text(str(owner), encoding="ascii")
        return folder

    dead, running, starting = session("dead", gone.pid), session("running", os.getpid()), session("starting", None)
    other = tmp_path / "not-a-session"
    other.mkdir()
    assert session_tmp.sweep(tmp_path) == [dead]
    assert not dead.exists() and running.exists() and starting.exists() and other.exists()
