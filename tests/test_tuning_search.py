"""The paired noisy search on planted curves (SPEC 12; tuning.search): a
synthetic figure that is a known function of the grid point plus noise, with
common random numbers (one uniform draw a scope, shared by every candidate,
as the probe boards are), so the truth is known and the boards counted."""

from __future__ import annotations

import numpy as np
import pytest

from boardgen_pipeline.tuning import figures, search
from boardgen_pipeline.tuning.search import Aim, Measurement


class PlantedCurve:
    """A share whose true value at grid point ``k`` is ``p(k)``: board ``i``
    counts when the scope's uniform ``u[i] < p(k)`` (the same ``u`` for every
    candidate: common random numbers). Counts the boards each candidate made."""

    def __init__(self, p, seed: int = 0, infeasible=lambda k: False):
        self.p = p
        self.u = np.random.default_rng(seed).random(2048)
        self.infeasible = infeasible
        self.made: dict[int, int] = {}
        self.boards = 0

    def measure(self, k: int, n: int) -> Measurement:
        have = self.made.get(k, 0)
        if n > have:
            self.boards += n - have
            self.made[k] = n
        wins = int((self.u[:n] < self.p(k)).sum())
        failing = ("A'",) if self.infeasible(k) else ()
        return Measurement(figures.share_estimate(wins, n), failing,
                           figures.share_estimate(wins, n, search.DECISION_LEVEL))


def step(at: int, high: float, low: float):
    return lambda k: high if k < at else low


@pytest.mark.parametrize("at,start", [(20, 40), (20, 3), (37, 10), (5, 55)])
def test_a_step_curve_is_found_within_the_bracket_in_the_stated_boards(at, start):
    # a win rate that falls from 0.9 to 0.5 at mine count `at`: a target of 0.7 +- 0.03 lies in the jump,
    # so no value meets it; the crossing is between at-1 and at, and each candidate is decided on 64 boards
    curve = PlantedCurve(step(at, 0.9, 0.5))
    result = search.search(curve, 60, start, Aim(0.7, 0.03, -1), 1.0)
    assert result.state == search.UNREACHABLE
    assert result.bracket == (at - 1, at)
    assert result.pick in (at - 1, at)
    assert "jumps across it" in result.note
    measured = sum(curve.made.values())
    assert curve.boards == measured == 64 * len(result.readings)
    assert len(result.readings) <= 9  # a bisection of 60 points with its first steps: log2(60) + 3


def test_a_smooth_curve_is_reached_and_the_boards_are_those_it_made():
    curve = PlantedCurve(lambda k: 0.98 - 0.02 * k, seed=3)  # the density's win rate, about 0.02 a mine
    result = search.search(curve, 45, 10, Aim(0.55, 0.03, -1), 1.0)
    assert result.state == search.REACHED
    assert abs(curve.p(result.pick) - 0.55) <= 0.03
    lo, hi = result.bracket
    assert (lo is None or lo <= result.pick) and (hi is None or result.pick <= hi)
    assert curve.boards == sum(curve.made.values())


def test_the_rows_own_value_is_kept_while_it_meets_the_target():
    curve = PlantedCurve(lambda k: 0.98 - 0.02 * k, seed=5)
    result = search.search(curve, 45, 10, Aim(0.79, 0.03, -1), 1.0)  # p(10) = 0.78
    assert result.state == search.UNCHANGED and result.pick == 10
    assert list(result.readings) == [10]


def test_a_target_beyond_the_grid_is_unreachable_with_the_range_and_the_nearest_end():
    curve = PlantedCurve(lambda k: 0.9 - 0.01 * k, seed=1)
    result = search.search(curve, 30, 15, Aim(0.2, 0.03, -1), 1.0)
    assert result.state == search.UNREACHABLE
    assert result.pick == 29
    assert result.note == "the knob's grid ends before the target"
    assert result.span[0] == pytest.approx(result.readings[29].estimate.value)


def test_values_that_break_f4_are_never_proposed_and_the_nearest_feasible_is():
    # the figure would meet the target at k = 30, but every k >= 25 breaks F4 on its probes
    curve = PlantedCurve(lambda k: 0.95 - 0.01 * k, seed=2, infeasible=lambda k: k >= 25)
    result = search.search(curve, 45, 5, Aim(0.65, 0.03, -1), 1.0)
    assert result.state == search.UNREACHABLE
    assert result.pick == 24
    assert all(r.feasible == (r.k < 25) for r in result.readings.values())
    assert result.note == "the values closer to the target break an F4 assertion"


def test_a_decreasing_and_an_increasing_figure_are_searched_the_same_way():
    up = PlantedCurve(lambda k: 0.1 + 0.02 * k, seed=4)
    result = search.search(up, 45, 2, Aim(0.6, 0.03, +1), 1.0)
    assert result.state == search.REACHED and abs(up.p(result.pick) - 0.6) <= 0.03
