"""The paired noisy search for the knob value whose figure meets a target
(SPEC 12: "the tuner compares candidate values on the same scopes (common
random numbers), never on the boards the nightly judges"; docs/decisions/
tuning.md "The search").

The knob's values that matter form an increasing grid (``knobs``) and the
figure moves one way along it (``curve_targets.MOVES``). Every candidate is
measured on the same probe scopes, the first ``n`` of the row's
(``sampler``): two candidates are compared on the same boards' streams, so
the noise of the scopes is common to both and the measured curve keeps its
shape (a board's first attempt at ``N + 1`` mines is its attempt at ``N``
plus one mine: the placement is a partial Fisher-Yates shuffle).

A candidate's sample grows only while its decision is open: it is measured
on 64 boards, then 128, 256, ... (``LOOKS``) until its interval (at
:data:`DECISION_LEVEL`: the decisions steer the search, the held-out proof
judges its outcome at 95%) lies inside
the corridor (it *meets* the target), or excludes the target on one side
(the crossing lies beyond it), or the looks run out (its point estimate
then says which). A candidate whose probe boards break an F4 assertion is
*infeasible*: it steers the search but is never proposed.

The row's own value is kept when its point estimate meets the target (no
edit for a move inside the corridor). Otherwise the search starts there,
steps toward the target (a secant
through the last two readings once it has two, doubling steps before), and
once two readings bracket the target it narrows the bracket by false
position (regula falsi), halving it instead when false position did not
halve it. It stops at a candidate that meets the target (its interval inside the
corridor, or its side decided and its value within half the tolerance), at
two adjacent
candidates on either side of it (the crossing lies between: no value of the
grid is closer), or at the end of the grid without crossing (the target is
unreachable). The proposal is the feasible candidate measured closest to
the target. Written by hand: docs/decisions/tuning.md says why no library's
search serves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol

from boardgen_pipeline.tuning.figures import Estimate

LOOKS = (64, 128, 256, 512, 1024, 2048)
# a candidate's last look: its point estimate on 1,024 common boards places it within +-0.026 (90%) of a share
# near one half, a grid step (about 0.02 of win rate a mine) plus sampling noise under a tolerance of 0.03
DEFAULT_MAX_BOARDS = 1024
MAX_CANDIDATES = 16
MEETS, HIGH, LOW, INFEASIBLE = "meets", "high", "low", "infeasible"
REACHED, UNREACHABLE, UNCHANGED = "reached", "unreachable", "unchanged"


DECISION_LEVEL = 0.90  # the intervals a candidate's decisions read (the reported ones are 95%)


@dataclass(frozen=True)
class Measurement:
    """A candidate on ``n`` probe boards: its figure (the reported 95%
    interval), the interval at :data:`DECISION_LEVEL` the search decides on
    (None: the reported one), and the F4 assertions those boards break."""

    estimate: Estimate
    failing: tuple[str, ...] = ()
    decision: Estimate | None = None

    @property
    def decides(self) -> Estimate:
        return self.decision or self.estimate


class Sampler(Protocol):
    """Measures candidate ``k`` on the first ``n`` probe scopes; ``boards``: boards made so far."""

    boards: int

    def measure(self, k: int, n: int) -> Measurement: ...


@dataclass(frozen=True)
class Aim:
    """The target: ``value`` +- ``tolerance``; ``direction`` +1 when the figure rises along the grid."""

    value: float
    tolerance: float
    direction: int

    def meets(self, e: Estimate) -> bool:
        return e.value is not None and abs(e.value - self.value) <= self.tolerance

    def close(self, e: Estimate) -> bool:
        """Within half the tolerance: close enough to stop looking for a closer value."""
        return e.value is not None and abs(e.value - self.value) <= self.tolerance / 2

    def proven(self, e: Estimate) -> bool:
        """The interval lies inside the corridor."""
        return self.value - self.tolerance <= e.low and e.high <= self.value + self.tolerance


@dataclass(frozen=True)
class Reading:
    """A candidate's last measurement and what it says: ``side`` (:data:`MEETS`,
    :data:`HIGH`: the figure above the target, :data:`LOW`, :data:`INFEASIBLE`),
    ``decided`` when its interval says so (not only its point estimate)."""

    k: int
    measurement: Measurement
    side: str
    decided: bool

    @property
    def estimate(self) -> Estimate:
        return self.measurement.estimate

    @property
    def feasible(self) -> bool:
        return self.side != INFEASIBLE

    def figure_side(self, aim: Aim) -> str:
        """Which side of the target the point estimate is on (an infeasible candidate's too)."""
        v = self.estimate.value
        if v is None or aim.meets(self.estimate):
            return MEETS
        return HIGH if v > aim.value else LOW

    def toward(self, aim: Aim) -> int:
        """Where along the grid the target lies from here: +1, -1, or 0 (here)."""
        side = self.side if self.side in (HIGH, LOW, MEETS) else self.figure_side(aim)
        if side == MEETS:
            return 0
        return aim.direction if side == LOW else -aim.direction


@dataclass
class SearchResult:
    """The search's outcome: the proposed grid point (None: no feasible one
    measured), the state, the bracket of grid points between which the
    target's crossing lies (None on a side no reading decided),
    every reading, and the figure's range over the feasible readings."""

    pick: int | None
    state: str
    bracket: tuple[int | None, int | None]
    readings: dict[int, Reading] = field(default_factory=dict)
    span: tuple[float, float] | None = None
    note: str = ""


def looks(max_boards: int) -> tuple[int, ...]:
    """The sample sizes a candidate is measured at, up to ``max_boards``."""
    out = tuple(n for n in LOOKS if n < max_boards)
    return out + (max_boards,)


def _classify(k: int, m: Measurement, aim: Aim, last: bool) -> Reading | None:
    """What one measurement decides (None: still open); ``last``: no more looks, the point estimate decides."""
    e = m.decides
    if m.failing or e.value is None:
        return Reading(k, m, INFEASIBLE, True)
    if aim.proven(e):
        return Reading(k, m, MEETS, True)
    if e.low > aim.value:
        return Reading(k, m, HIGH, True)
    if e.high < aim.value:
        return Reading(k, m, LOW, True)
    if not last:
        return None
    if aim.meets(e):
        return Reading(k, m, MEETS, False)
    return Reading(k, m, HIGH if e.value > aim.value else LOW, False)


def assess(sampler: Sampler, k: int, aim: Aim, schedule: tuple[int, ...], own: bool = False) -> Reading:
    """Candidate ``k``, measured on more boards while its decision is open
    (module docstring). ``own``: the row's own value, measured until its
    interval lies inside the corridor (kept) or wholly outside it (moved:
    the corridor's rule, ``corridor.judge``), else on every look's boards,
    then kept while its value meets the target: a row is not edited on the
    strength of a few boards."""
    for i, n in enumerate(schedule):
        m = sampler.measure(k, n)
        e = m.decides
        last = i == len(schedule) - 1
        if own and not m.failing and e.value is not None and not aim.proven(e):
            if e.high < aim.value - aim.tolerance:
                return Reading(k, m, LOW, True)
            if e.low > aim.value + aim.tolerance:
                return Reading(k, m, HIGH, True)
            if last:  # the boards cannot show it out: kept while its value meets the target
                return _classify(k, m, aim, True)
            continue
        reading = _classify(k, m, aim, last)
        if reading is not None:
            return reading
    raise ValueError("no look in the schedule")


def _first_step(reading: Reading, aim: Aim, size: int, span: float) -> int:
    """Steps of the first move: the grid's length times the share of the
    figure's span the target is away, over a curve that crosses the span in
    about 40% of the grid (the density's win rate on the default table)."""
    gap = abs(reading.estimate.value - aim.value)
    return max(1, round(size * gap / (2.5 * span)))


def _secant(a: Reading, b: Reading, aim: Aim) -> float | None:
    """Where the line through two readings meets the target (None: flat, or sloping the wrong way)."""
    fa, fb = a.estimate.value, b.estimate.value
    if b.k == a.k or fa == fb:
        return None
    slope = (fb - fa) / (b.k - a.k)
    if slope * aim.direction <= 0:
        return None
    return b.k + (aim.value - fb) / slope


def _span(readings) -> tuple[float, float] | None:
    values = [r.estimate.value for r in readings if r.feasible and r.estimate.value is not None]
    return (min(values), max(values)) if values else None


def search(sampler: Sampler, size: int, start: int, aim: Aim, figure_span: float,
           max_boards: int = DEFAULT_MAX_BOARDS, max_candidates: int = MAX_CANDIDATES) -> SearchResult:
    """The grid point of ``size`` points, from ``start``, whose figure meets
    ``aim`` (module docstring)."""
    schedule = looks(max_boards)
    readings: dict[int, Reading] = {}

    def read(k: int) -> Reading:
        readings[k] = assess(sampler, k, aim, schedule, own=k == start)
        return readings[k]

    first = read(start)
    step = _first_step(first, aim, size, figure_span) if first.estimate.value is not None else 1
    halved = True  # whether the last false-position step halved the bracket
    while len(readings) < max_candidates:
        if any(r.side == MEETS or (r.feasible and r.decided and aim.close(r.estimate)) for r in readings.values()):
            break
        below = [r.k for r in readings.values() if r.toward(aim) > 0]  # the crossing lies above these
        above = [r.k for r in readings.values() if r.toward(aim) < 0]
        lo, hi = (max(below) if below else None), (min(above) if above else None)
        if lo is not None and hi is not None:
            if hi - lo <= 1 or lo > hi:  # adjacent (no grid point between), or the noise crossed them: stop
                break
            width = hi - lo
            guess = _secant(readings[lo], readings[hi], aim)
            k = round(guess) if guess is not None and halved else (lo + hi) // 2
            k = min(hi - 1, max(lo + 1, k))
            if k in readings:
                break
            read(k)
            below = [r.k for r in readings.values() if r.toward(aim) > 0]
            above = [r.k for r in readings.values() if r.toward(aim) < 0]
            new_width = (min(above) if above else size) - (max(below) if below else -1)
            halved = new_width * 2 <= width
            continue
        if lo is None and hi is None:
            break  # no reading says where the target lies (none measured, or on the target but infeasible)
        way = 1 if lo is not None else -1  # every reading says the crossing lies this way
        edge = lo if lo is not None else hi
        end = size - 1 if way > 0 else 0
        if edge == end:
            break  # the grid ends before the target: unreachable
        ordered = sorted((r for r in readings.values() if r.estimate.value is not None), key=lambda r: r.k * way)
        guess = _secant(ordered[-2], ordered[-1], aim) if len(ordered) >= 2 else None
        if guess is not None and math.isfinite(guess):
            k = round(edge + min(4 * step, max(1, (guess - edge) * way * 1.25)) * way)
        else:
            k = edge + step * way
        step = max(1, abs(k - edge)) * 2
        k = min(size - 1, max(0, k))
        if k in readings:
            break
        read(k)
    return outcome(sampler, readings, start, aim, size, max_boards, max_candidates)


def _bracket(readings: dict[int, Reading], aim: Aim) -> tuple[int | None, int | None]:
    """The grid points between which the target's crossing lies: the
    nearest readings decided on either side (None: no reading decided that side)."""
    below = [r.k for r in readings.values() if r.decided and r.toward(aim) > 0]
    above = [r.k for r in readings.values() if r.decided and r.toward(aim) < 0]
    lo, hi = (max(below) if below else None), (min(above) if above else None)
    return (hi, lo) if lo is not None and hi is not None and lo > hi else (lo, hi)


def _nearest_feasible(sampler, readings, best: Reading, aim, schedule, max_candidates) -> None:
    """Where the closest reading is infeasible: the feasible grid point
    nearest it, between it and the nearest feasible reading (bisection on
    the F4 verdict, which holds on an interval of the grid)."""
    feasible = [r.k for r in readings.values() if r.feasible]
    if not feasible:
        return
    good = min(feasible, key=lambda k: abs(k - best.k))
    bad = best.k
    while abs(good - bad) > 1 and len(readings) < max_candidates + 8:
        mid = (good + bad) // 2
        readings[mid] = assess(sampler, mid, aim, schedule)
        if readings[mid].feasible:
            good = mid
        else:
            bad = mid


def _paired(sampler: Sampler, readings: dict[int, Reading], pair: list[Reading], aim: Aim, schedule) -> None:
    """The two candidates the proposal is chosen between, compared on the
    same boards: the one measured on fewer is measured again on as many as
    the other (its reading replaced), unless their intervals already say
    which is closer to the target."""
    if len(pair) < 2 or pair[0].estimate.n == pair[1].estimate.n:
        return
    a, b = pair
    gap = lambda r: abs(r.measurement.decides.value - aim.value)  # noqa: E731
    if gap(a) + a.measurement.decides.half_width < gap(b) - b.measurement.decides.half_width or \
            gap(b) + b.measurement.decides.half_width < gap(a) - a.measurement.decides.half_width:
        return
    small, big = sorted(pair, key=lambda r: r.estimate.n)
    m = sampler.measure(small.k, big.estimate.n)
    readings[small.k] = _classify(small.k, m, aim, True) if small.side != INFEASIBLE or m.failing else \
        Reading(small.k, m, INFEASIBLE, True)


def outcome(sampler: Sampler, readings: dict[int, Reading], start: int, aim: Aim, size: int,
            max_boards: int = DEFAULT_MAX_BOARDS, max_candidates: int = MAX_CANDIDATES) -> SearchResult:
    """The proposal among ``readings``: the row's own value while it is kept;
    else the feasible value closest to the target, the two closest compared
    on the same boards; where the closest is infeasible, the feasible value
    next to it (looked for first); where none meets the target, the nearer
    end of the bracket the target is crossed in. Called again when a
    proposal breaks F4 on its held-out boards."""
    schedule = looks(max_boards)

    def closeness(r: Reading):
        return (abs(r.estimate.value - aim.value), abs(r.k - start))

    def feasible() -> list[Reading]:
        return [r for r in readings.values() if r.feasible]

    measured = [r for r in readings.values() if r.estimate.value is not None]
    wall = None
    if measured:
        best = min(measured, key=closeness)
        if not best.feasible:
            _nearest_feasible(sampler, readings, best, aim, schedule, max_candidates)
            if feasible():
                wall = min(feasible(), key=lambda r: (abs(r.k - best.k), closeness(r)))
    if not feasible():
        return SearchResult(None, UNREACHABLE, _bracket(readings, aim), readings, None,
                            "no value measured keeps every F4 assertion on its probe boards")
    own = readings.get(start)
    if own is not None and own.side == MEETS:
        return SearchResult(start, UNCHANGED, _bracket(readings, aim), readings, _span(readings.values()))
    if wall is None:
        _paired(sampler, readings, sorted(feasible(), key=closeness)[:2], aim, schedule)
    pick = wall or min(feasible(), key=closeness)
    bracket = _bracket(readings, aim)
    span = _span(readings.values())
    if aim.meets(pick.estimate):
        return SearchResult(pick.k, UNCHANGED if pick.k == start else REACHED, bracket, readings, span)
    ends = [readings[k] for k in bracket if k is not None and readings[k].feasible]
    if ends and wall is None:  # the target is crossed between the bracket's ends: the nearest value is one of them
        _paired(sampler, readings, ends, aim, schedule)
        pick = min((readings[k] for k in bracket if k is not None and readings[k].feasible), key=closeness)
        if aim.meets(pick.estimate):
            return SearchResult(pick.k, REACHED, bracket, readings, span)
    infeasible_closer = any(not r.feasible and r.estimate.value is not None and closeness(r) < closeness(pick)
                            for r in readings.values())
    note = ("the values closer to the target break an F4 assertion" if infeasible_closer else
            "the knob's grid ends before the target" if pick.k in (0, size - 1) else
            "no value of the grid lands within the tolerance: the figure jumps across it between two neighbours")
    return SearchResult(pick.k, UNREACHABLE, bracket, readings, span, note)
