"""Supervise a tree of processes as one (SPEC 8 ``make ui``): a command that
starts children of its own (``dagster dev`` starts a webserver and a
daemon) runs in a process group of its own, and a stop signal reaches the
whole group, which gets a grace period and is then killed, so nothing is
left holding the instance. And a process that has loaded what it keeps for
its life sets it aside from the garbage collector (:func:`freeze_long_lived`).
How many cores this process may use (:func:`default_workers`). Plain
processes, no Dagster."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
from pathlib import Path

GRACE_SECONDS = 15
# Once the leader (dagster dev) has exited, what is left of its group (a code server ending, a run worker
# the daemon launched, its log tails) gets this long, then SIGTERM, this long again, then SIGKILL: the
# launcher no longer waits out the whole grace period for processes dagster dev does not stop (Ctrl-C with
# a run in flight: 17.2-17.6 s -> 8.1 s; idle: 7-10 s, Dagster's own shutdown). A code server SIGTERMed
# after dagster dev has gone still removes its socket folder (tests/test_ui_launcher.py).
TAIL_SECONDS = 0.5


def supervise(cmd: list[str], grace: float = GRACE_SECONDS) -> int:
    """Run ``cmd`` in a process group of its own until it exits (its exit code)
    or this process gets SIGINT or SIGTERM: then its leader gets SIGTERM, and
    the whole group is given ``grace`` seconds and killed (exit 0)."""
    stopping = []
    started = []

    def stop(signum, _frame):
        stopping.append(signum)
        try:
            if started:  # dagster dev stops its webserver, daemon and code servers itself, removing their files
                os.kill(started[0].pid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    # before the child starts: a signal ignored here (SIGINT in a job a non-interactive shell put in the
    # background) would stay ignored in the child, and dagster dev maps SIGTERM to SIGINT's handler, so it
    # would ignore both, be killed at the end of the grace period, and leave its temporary folders behind
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    proc = subprocess.Popen(cmd, start_new_session=True)
    started.append(proc)
    if stopping:  # a signal came while it started
        stop(stopping[0], None)
    while not stopping:
        try:
            code = proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            continue
    if stopping:
        # dagster dev may take its time (or ignore SIGTERM while it starts): the group gets GRACE_SECONDS
        stop_group(proc.pid, grace, leader=proc)
        proc.wait()
        return 0
    return code


def stop_group(pgid: int, grace: float = GRACE_SECONDS, leader: subprocess.Popen | None = None,
               tail: float = TAIL_SECONDS) -> None:
    """Wait up to ``grace`` seconds for every process of the group (the daemon,
    the webserver) to exit after SIGTERM, then SIGKILL what is left. With
    ``leader`` (the process that stops the others, ``dagster dev``): once it
    has exited, the rest of the group gets ``tail`` seconds, then SIGTERM (a
    run worker the daemon launched ends its run as it would on a stop), then
    ``tail`` seconds more, then SIGKILL (measured: dagster dev down in ~8 s,
    its code servers ~3 s later, and the exit came at the 15 s grace, waiting
    on what dagster dev had left behind)."""
    import time

    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            os.killpg(pgid, 0)  # raises once no process of the group is left
            if leader is not None and leader.poll() is not None:
                deadline = min(deadline, _after_leader(pgid, tail))
                break
            time.sleep(0.1)
        while time.monotonic() < deadline:
            os.killpg(pgid, 0)
            time.sleep(0.1)
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _after_leader(pgid: int, tail: float) -> float:
    """The group without its leader: ``tail`` seconds to end by itself, then
    SIGTERM; the time by which what is left is killed."""
    import time

    end = time.monotonic() + tail
    while time.monotonic() < end:
        os.killpg(pgid, 0)
        time.sleep(0.1)
    os.killpg(pgid, signal.SIGTERM)
    return time.monotonic() + tail


def freeze_long_lived() -> None:
    """Set every object alive now aside from the garbage collector
    (``gc.freeze``), once a process has loaded what it keeps for its life:
    its modules and compiled kernels. A batch of boards allocates tens of
    thousands of records, which start collections; a full one walked the
    130,000 objects of the loaded modules for about 110 ms, a tenth of a
    20,000-board batch. Frozen objects are never freed, which costs nothing
    for objects that live as long as the process; and a process forked from
    this one no longer writes to the pages it shares with it when it collects
    (the Python documentation's advice for a server that forks)."""
    gc.freeze()


def default_workers() -> int:
    """Every core this process may use: the cores it may run on, capped by
    the CPU quota of its control group (a 2-CPU container on a 64-core node
    gets 2, not 64)."""
    try:
        cores = max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        cores = max(1, os.cpu_count() or 1)
    quota = cgroup_cpus()
    return max(1, min(cores, quota)) if quota else cores


CGROUP_V2_MAX = "/sys/fs/cgroup/cpu.max"
CGROUP_V1 = ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")


def cgroup_cpus(v2: str | None = None, v1: tuple[str, str] | None = None) -> int | None:
    """The CPUs the control group's quota allows, rounded up (``cpu.max``
    ``"200000 100000"`` is 2), or None without a quota. ``v2``, ``v1``: the
    files to read (default: ``CGROUP_V2_MAX``, ``CGROUP_V1``, read when called)."""
    import math

    try:
        quota, period = Path(v2 or CGROUP_V2_MAX).read_text(encoding="ascii").split()[:2]
        if quota == "max":
            return None
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass
    try:
        quota, period = (int(Path(p).read_text(encoding="ascii").strip()) for p in v1 or CGROUP_V1)
    except (OSError, ValueError):
        return None
    return max(1, math.ceil(quota / period)) if quota > 0 and period > 0 else None
