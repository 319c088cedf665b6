"""``boardgen ui``'s supervision of ``dagster dev``'s process group
(``boardgen_pipeline.processes``): once the leader has exited, what it left
in its group (a run worker the daemon launched) is asked to stop at once,
not waited for until the end of the grace period and then killed. Plain
processes: a leader that exits, a child that stays until it is signalled."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil

from boardgen_pipeline import processes

# a child in the group: it says when it is asked to stop, and otherwise stays for ten minutes
CHILD = """
import signal, sys, time
def stop(*_):
    open(sys.argv[1], "w").write("asked to stop")
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
open(sys.argv[1] + ".up", "w").write("up")
time.sleep(600)
"""
# the leader: starts the child in its own group, waits until it is up, and exits
LEADER = """
import os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]])
while not os.path.exists(sys.argv[2] + ".up"):
    time.sleep(0.05)
"""


def living(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that have not ended (an ended one waits as a zombie for its reaper,
    the container's first process, which may take its time)."""
    out = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return out


def gone(pgid: int, seconds: float = 30.0) -> bool:
    """Whether every process of group ``pgid`` has ended within ``seconds`` (a
    signalled process ends a moment after the signal: waited for, not slept on)."""
    deadline = time.monotonic() + seconds
    while living(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_what_the_leader_leaves_behind_is_asked_to_stop_once_it_has_gone(tmp_path):
    said = tmp_path / "child"
    leader = subprocess.Popen([sys.executable, "-c", LEADER, CHILD, str(said)], start_new_session=True)
    leader.wait(timeout=60)
    # the grace period is long: a launcher that waited it out would not return before the test's own timeout
    processes.stop_group(leader.pid, grace=600, leader=leader)
    assert said.read_text() == "asked to stop"  # SIGTERM, not SIGKILL at the end of the grace period
    assert gone(leader.pid), "a process of the group outlived stop_group"


def test_a_group_that_ignores_sigterm_is_killed_after_the_tail(tmp_path):
    said = tmp_path / "child"
    stubborn = CHILD.replace("signal.signal(signal.SIGTERM, stop)", "signal.signal(signal.SIGTERM, signal.SIG_IGN)")
    leader = subprocess.Popen([sys.executable, "-c", LEADER, stubborn, str(said)], start_new_session=True)
    leader.wait(timeout=60)
    processes.stop_group(leader.pid, grace=600, leader=leader)
    assert not said.exists() and gone(leader.pid)
