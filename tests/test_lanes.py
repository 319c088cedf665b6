"""The lanes of ``boardgen nightly`` as plain processes (``steps.lanes``): each
answers the runs it is sent, one answer a run; a lane that dies before
answering is reported (its begun runs are the caller's to fail) and the runs
it had not begun go to another lane, a new one when none is left. A night
leaves nothing of its fork server behind in the temporary directory, though
it ends without the interpreter's teardown."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from boardgen_pipeline.steps.lanes import Lanes, lane_spawner
from tests.nightly_support import BOARDGEN, REPO

from .test_pipeline_support import copy_fixture


def fake_lane(orders, answers, first: bool) -> None:
    """A lane that answers each run, or dies (exit 9) before answering on a
    run whose order says so: ``die_in`` its pid, or ``die`` when ``first``."""
    while True:
        try:
            order = orders.recv()
        except EOFError:
            return
        if order.get("die_in") == os.getpid() or (order.get("die") and first):
            os._exit(9)
        answers.send({"run_id": order["key"], "success": True})


def spawner(log: list, first_dies: bool = False):
    # processes of their own ("spawn"): a fork server would outlive the test; the nightly's tests run it
    def spawn():
        lane = lane_spawner(fake_lane, first_dies and not log, method="spawn")()
        log.append(lane.pid)
        return lane

    return spawn


def test_every_run_sent_is_answered_and_the_ticks_come_between():
    pids, ticks = [], []
    lanes = Lanes(spawner(pids), 2)
    try:
        for i in range(6):
            lanes.lanes[i % 2].send(f"r{i}", {"key": f"r{i}"})
        lanes.wait(lambda: ticks.append(1), seconds=0.05)
        assert not lanes.busy() and ticks and lanes.notes == []
    finally:
        lanes.close()
    assert all(lane.returncode == 0 for lane in lanes.lanes)  # each exits when its input ends


def test_a_lane_that_dies_hands_the_runs_it_had_not_begun_to_a_live_one():
    pids, lost = [], []
    lanes = Lanes(spawner(pids, first_dies=True), 2, lost=lambda lane: lost.append(lane.pid) or {"a"})
    try:
        first, second = lanes.lanes
        first.send("a", {"key": "a", "die": True})  # the lane dies on its first run (begun: the caller says so)
        first.send("b", {"key": "b"})
        first.send("c", {"key": "c"})
        lanes.wait(seconds=0.05)
        assert lost == [first.pid] and first.dead and first.returncode == 9
        assert not lanes.busy() and second.pending == [] and len(lanes.notes) == 1
        assert "2 runs it had not begun go to another lane" in lanes.notes[0]
        # every lane dead: a new one is started for what is left, and answers it
        second.send("d", {"key": "d", "die_in": second.pid})
        lanes.wait(seconds=0.05)
        assert second.dead and len(lanes.lanes) == 3 and not lanes.lanes[2].dead and not lanes.busy()
        assert lanes.live() is lanes.lanes[2]
    finally:
        lanes.close()


def test_runs_asked_for_together_go_one_a_lane():
    lanes = Lanes(spawner([]), 2)
    try:
        lanes.deal([("table", {"key": "table"}), ("retention", {"key": "retention"})])
        assert [[key for key, _ in lane.pending] for lane in lanes.lanes] == [["table"], ["retention"]]
        lanes.wait(seconds=0.05)
        assert not lanes.busy()
    finally:
        lanes.close()


@pytest.mark.integration  # a nightly
def test_a_night_leaves_nothing_in_the_temporary_directory(tmp_path):
    """The nightly ends with ``os._exit`` (no teardown), which skips the
    standard library's removal of its fork server's socket folder
    (``pymp-*``): one folder a night, forever, unless the nightly removes it."""
    tables = copy_fixture("small", tmp_path)
    # a folder of the session's own $TMPDIR, not under tmp_path: the fork server's socket,
    # <TMPDIR>/pymp-*/listener-*, must fit AF_UNIX's 107 bytes, which pytest's numbered
    # folders (pytest-of-root/pytest-147/popen-gw1/<test name>/) overran
    temp = Path(tempfile.mkdtemp(prefix="night-"))
    proc = subprocess.run([BOARDGEN, "nightly", "--tables", str(tables), "--warehouse", str(tmp_path / "wh"),
                           "--dagster-home", str(tmp_path / "home"), "--samples", "16", "--workers", "2"],
                          cwd=REPO, env={**os.environ, "TMPDIR": str(temp)}, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "2 lanes" in proc.stdout  # the night ran on lanes: it started the fork server
    assert sorted(p.name for p in temp.iterdir()) == []
    temp.rmdir()
