"""The check that the suite left the machine as it found it
(tests/machine_state.py) sees what it must: a socket this session left
listening, a machine cluster started, a role added; and blames no other
process of a shared machine."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from tests import machine_state as ms

LISTENER = ("import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); "
            "print(s.getsockname()[1], flush=True); time.sleep(600)")


def test_the_listening_sockets_of_this_machine_are_read(tmp_path):
    with socket.socket() as tcp, socket.socket(socket.AF_UNIX) as unix:
        tcp.bind(("127.0.0.1", 0))
        tcp.listen()
        unix.bind(str(tmp_path / "s"))
        unix.listen()
        names = {f"tcp 127.0.0.1:{tcp.getsockname()[1]}", f"unix {tmp_path / 's'}"}
        mine = {s.inode for s in ms.listening_sockets() if str(s) in names}
        assert len(mine) == 2
        assert {os.getpid()} == {p for pids in ms.owners(mine).values() for p in pids}
    assert not names & {str(s) for s in ms.listening_sockets()}


def _listener(marker: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-c", LISTENER], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, ms.MARKER: marker})
    return proc, f"tcp 127.0.0.1:{proc.stdout.readline().strip()}"


def test_a_socket_this_session_left_is_a_leak_and_another_sessions_is_not():
    before = ms.snapshot()
    ours, address = _listener("this-session")
    theirs, other = _listener("another-session")
    try:
        bad, notes = ms.leaks(before, ms.snapshot(), "this-session")
        assert [line for line in bad if address in line] and not [line for line in bad if other in line]
        assert [line for line in notes if other in line]
    finally:
        for proc in (ours, theirs):
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 60
    while address in {str(s) for s in ms.listening_sockets()} and time.monotonic() < deadline:
        time.sleep(0.05)
    bad, _ = ms.leaks(before, ms.snapshot(), "this-session")
    assert not [line for line in bad if address in line]


def test_a_machine_cluster_started_or_created_or_a_role_added_is_a_leak():
    before = ms.Snapshot(set(), {"15/main": "down", "16/main": "online"}, {"16/main": {"postgres"}}, [])
    after = ms.Snapshot(set(), {"15/main": "online", "16/main": "online", "17/main": "down"},
                        {"15/main": {"postgres"}, "16/main": {"postgres", "boardgen_test"}}, [])
    bad, _ = ms.leaks(before, after, "m")
    assert bad == ["the machine's PostgreSQL cluster 15/main was started (it was down)",
                   "a PostgreSQL cluster was created on this machine: 17/main (down)",
                   "role(s) added to the machine's cluster 16/main while the tests ran: boardgen_test (an earlier "
                   "set-up's superuser: scripts/ensure_postgres_binaries.sh drops it)"]
    assert ms.leaks(before, before, "m") == ([], [])
