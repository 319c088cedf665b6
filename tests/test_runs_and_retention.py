"""How a calibration is cut into runs (``steps.runs``) and which old runs the
retention policy lets go (``steps.retention``), as plain functions (issue
28 "bookkeeping that scales out", "a home that stops growing")."""

from __future__ import annotations

import pytest

from boardgen_pipeline.steps import retention, runs
from boardgen_pipeline.steps.retention import Policy, RunInfo

ORDER = [f"{lv}-{d}" for lv in range(1, 41) for d in range(5)]  # 200 rows


def covered(lanes, order=ORDER) -> list[str]:
    return [k for lane in lanes for r in lane for k in runs.keys_of(order, r)]


@pytest.mark.parametrize("slots", [1, 2, 3, 8])
def test_the_lanes_cover_every_row_once_in_order(slots):
    lanes = runs.plan(ORDER, {k: 1.0 for k in ORDER}, slots)
    assert len(lanes) == slots and covered(lanes) == ORDER
    for lane in lanes:
        for r in lane:
            assert r.rows == len(runs.keys_of(ORDER, r))


def test_lanes_carry_about_equal_cost_not_equal_rows():
    cost = {k: (9.0 if k.startswith(("1-", "2-")) else 1.0) for k in ORDER}  # ten expensive rows first
    lanes = runs.plan(ORDER, cost, 2)
    totals = [sum(cost[k] for r in lane for k in runs.keys_of(ORDER, r)) for lane in lanes]
    assert abs(totals[0] - totals[1]) <= 9.0  # within one row's cost
    assert sum(r.rows for r in lanes[0]) < sum(r.rows for r in lanes[1])


def test_no_run_holds_more_than_max_rows_and_lanes_get_equal_run_counts():
    lanes = runs.plan(ORDER, {k: 1.0 for k in ORDER}, 2, max_rows=30)
    assert all(r.rows <= 30 for lane in lanes for r in lane)
    assert len(lanes[0]) == len(lanes[1]) and covered(lanes) == ORDER


def test_a_registered_row_the_table_lost_costs_nothing_and_stays_in_its_range():
    order = ["1-0", "1-1", "9-9", "2-0"]
    lanes = runs.plan(order, {"1-0": 1.0, "1-1": 1.0, "2-0": 1.0}, 1)
    assert covered(lanes, order) == order


def test_more_slots_than_rows_gives_a_lane_per_row():
    assert [len(lane) for lane in runs.plan(["1-0", "1-1"], {"1-0": 1.0, "1-1": 1.0}, 8)] == [1, 1]
    assert runs.plan([], {}, 4) == []


def test_a_rows_cost_is_its_batch_of_cells():
    class Row:
        board_width, board_height = 10, 12

    assert runs.row_cost(Row, 256) == 256 * (120 + runs.ROW_FIXED_CELLS)


DAY = retention.DAY_SECONDS


def info(i: int, age_days: float, finished=True, holds=False) -> RunInfo:
    return RunInfo(f"run-{i:02d}", 1000 * DAY - age_days * DAY, finished, holds)


def test_keep_days_lets_go_of_the_older_finished_runs_oldest_first():
    found = [info(0, 40), info(1, 31), info(2, 29), info(3, 1)]
    assert retention.to_delete(found, 1000 * DAY, Policy(keep_days=30)) == ["run-00", "run-01"]


def test_keep_runs_keeps_the_newest_and_overrides_the_days():
    found = [info(i, 10 - i) for i in range(6)]
    assert retention.to_delete(found, 1000 * DAY, Policy(keep_days=30, keep_runs=2)) == [
        "run-00", "run-01", "run-02", "run-03"]


def test_a_run_that_holds_the_latest_state_or_is_not_finished_is_never_deleted():
    found = [info(0, 90, holds=True), info(1, 90, finished=False), info(2, 90), info(3, 0)]
    assert retention.to_delete(found, 1000 * DAY, Policy(keep_runs=1)) == ["run-02"]
    assert retention.to_delete(found, 1000 * DAY, Policy(keep_days=1)) == ["run-02"]
