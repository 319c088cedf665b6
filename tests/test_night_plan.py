"""A night's plan and what follows each of its runs, as plain functions
(``steps.night``), the decisions the daemon's sensors and ``boardgen
nightly`` both take; no Dagster here."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from boardgen_pipeline.steps import night
from boardgen_pipeline.steps.night import PREPARE, RETENTION, ROWS, TABLE, NightRun, RunSpec

ORDER = [f"{level}-{depth}" for level in (1, 2, 3) for depth in range(5)]


def test_the_plan_is_prepare_then_every_row_once_in_ranges_that_know_their_number():
    specs = night.plan(ORDER, {k: 1.0 for k in ORDER}, 2)
    assert specs[0] == RunSpec(PREPARE, PREPARE)
    rows = specs[1:]
    assert [s.key for s in rows] == ["rows-000", "rows-001"] and {s.of for s in rows} == {2}
    covered = [k for s in rows for k in ORDER[ORDER.index(s.first):ORDER.index(s.last) + 1]]
    assert covered == ORDER and sum(s.rows for s in rows) == len(ORDER)
    assert rows[0].tags("n")[night.OF_TAG] == "2" and night.OF_TAG not in specs[0].tags("n")
    # a run's stage is its key's first word, not a tag of its own: few tags a run on the Runs page
    assert [night.stage_of(s.key) for s in specs] == [PREPARE, ROWS, ROWS] and night.stage_of("") == ""
    assert set(rows[0].tags("n")) == {night.KEY_TAG, night.NIGHT_TAG, night.OF_TAG}
    assert set(night.here()) == {night.EXECUTOR_TAG}


def test_the_lane_that_draws_gets_fewer_rows_or_none():
    even = {k: 1.0 for k in ORDER}
    assert [s.rows for s in night.plan(ORDER, even, 2)[1:]] == [8, 7]
    # the draws cost five rows: the other lane takes ten of the fifteen, the drawing lane five
    assert [s.rows for s in night.plan(ORDER, even, 2, prepare_cost=5.0)[1:]] == [10, 5]
    # the draws cost more than a lane's share: the drawing lane draws only
    alone = night.plan(ORDER, even, 2, prepare_cost=40.0)[1:]
    assert [s.rows for s in alone] == [15] and night.lanes_of([RunSpec(PREPARE, PREPARE), *alone], 2) == [
        alone, [RunSpec(PREPARE, PREPARE)]]


def _runs(*states) -> list[NightRun]:
    return [NightRun(key, stage, finished, True, of) for key, stage, finished, of in states]


def test_what_follows_each_run_of_the_night():
    plan = night.plan(ORDER, {k: 1.0 for k in ORDER}, 2)
    rows = plan[1:]
    # nothing has run: the rows (they do not wait for prepare)
    assert night.follow_up([], rows) == rows
    assert night.follow_up(_runs(("prepare", PREPARE, False, 0)), rows) == rows
    running = _runs(("prepare", PREPARE, True, 0), ("rows-000", ROWS, True, 2), ("rows-001", ROWS, False, 2))
    assert night.follow_up(running, rows) == []
    # one of the two rows runs not yet created: the table waits for it
    assert night.follow_up(_runs(("prepare", PREPARE, True, 0), ("rows-000", ROWS, True, 2)), rows) == []
    ended = _runs(("prepare", PREPARE, True, 0), ("rows-000", ROWS, True, 2), ("rows-001", ROWS, True, 2))
    assert night.follow_up(ended, rows) == [RunSpec(TABLE, TABLE)]
    assert night.follow_up(ended + _runs(("table", TABLE, False, 0)), rows) == []
    checked = ended + _runs(("table", TABLE, True, 0))
    assert night.follow_up(checked, rows) == [RunSpec(RETENTION, RETENTION)]
    assert not night.over(checked)
    done = checked + _runs(("retention", RETENTION, True, 0))
    assert night.follow_up(done, rows) == [] and night.over(done)
    # a failed run ends as a run: the night goes on
    failed = [NightRun("rows-001", ROWS, True, False, 2) if r.key == "rows-001" else r for r in ended]
    assert night.follow_up(failed, rows) == [RunSpec(TABLE, TABLE)]


def test_the_runs_are_dealt_to_executors_prepare_beside_the_rows():
    prepare = RunSpec(PREPARE, PREPARE)
    rows = [RunSpec(ROWS, f"rows-{i}") for i in range(5)]

    def keys(lanes):
        return [[s.key for s in lane] for lane in lanes]

    assert keys(night.lanes_of([prepare, rows[0]], 2)) == [["rows-0"], ["prepare"]]
    assert keys(night.lanes_of([prepare, *rows[:4]], 2)) == [["rows-0", "rows-1"], ["rows-2", "rows-3", "prepare"]]
    assert keys(night.lanes_of([prepare, rows[0]], 1)) == [["rows-0", "prepare"]]
    assert keys(night.lanes_of([prepare], 2)) == [["prepare"]]


def test_the_rows_a_failed_run_did_not_record_are_the_rows_that_did_not_finish():
    assert night.unfinished_rows(ORDER, [("1-3", "2-1")], {"1-3", "2-0"}) == ["1-4", "2-1"]
    assert night.unfinished_rows(ORDER, [("1-0", "1-0"), ("9-9", "9-9")], set()) == ["1-0"]


def test_a_night_has_an_id_of_its_own_and_its_start():
    import datetime as dt

    when = dt.datetime(2026, 12, 1, 2, 0, tzinfo=dt.UTC)
    a, b = night.new_night(when, night.SCHEDULE), night.new_night(when, night.SCHEDULE)
    assert a != b and a.startswith("2026-12-01T020000-schedule-")


def test_only_a_process_of_this_host_that_is_gone_is_judged_dead():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    here = night.here()
    assert night.executor_alive(here, time.time())  # this process
    assert not night.executor_alive({night.EXECUTOR_TAG: f"{socket.gethostname()}:{dead.pid}"}, time.time())
    assert night.executor_alive({night.EXECUTOR_TAG: f"another-host:{dead.pid}"}, time.time())
    assert night.executor_alive({}, time.time())  # launched by the daemon: Dagster's run monitoring judges it
