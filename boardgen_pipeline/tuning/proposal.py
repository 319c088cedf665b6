"""One targeted row tuned: the search on its probe scopes, then the held-out
proof on its calibration batch (SPEC 12: "proves each proposal on held-out
scopes before it proposes it"; docs/decisions/tuning.md).

A value tuned on the boards it was measured on flatters itself: the search
picks the candidate that *looked* closest to the target among several, so
its estimate leans toward the target. After the search, the proposal is
measured on scopes the search never saw, the row's calibration batch
(``sigma(L, D) + i``, ``i < samples``: the very boards the next nightly
judges), and reported as it is there: its figure and interval, whether it
holds the corridor there (``corridor.judge``: not *out*), and its F4
verdict. A proposal that breaks an F4 assertion on those boards is never
proposed: the search's next closest candidate is proven instead.

``tune_row`` takes a :class:`RowTask` and touches no file, so rows tune
anywhere (``steps.pool``: this process, local workers, Dask).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from boardgen_pipeline.calibration.batch import run_row
from boardgen_pipeline.calibration.fingerprints import partition_key
from boardgen_pipeline.scopes import DEFAULT_SAMPLES
from boardgen_pipeline.tables.board_gen import BoardGenRow, BoardGenTable, Header
from boardgen_pipeline.tables.curve_targets import FIGURES, RowTarget
from boardgen_pipeline.tuning import corridor, knobs, search
from boardgen_pipeline.tuning.figures import Estimate
from boardgen_pipeline.tuning.sampler import MAX_PROBES, RowSampler, measurement

PROOF_TRIES = 3  # proposals proven on the calibration batch before the row is called unreachable


@dataclass(frozen=True)
class RowTask:
    """Everything one row's tuning reads."""

    row: BoardGenRow
    header: Header
    target: RowTarget
    samples: int = DEFAULT_SAMPLES  # the calibration batch the proposal is proven on
    master_seed: int = 0
    max_boards: int = search.DEFAULT_MAX_BOARDS  # probe boards a candidate is measured on at most

    @property
    def key(self) -> tuple[int, int]:
        return self.row.key


@dataclass(frozen=True)
class HeldOut:
    """The proposal on the row's calibration batch."""

    estimate: Estimate
    failing: tuple[str, ...]
    verdict: corridor.Verdict

    @property
    def holds(self) -> bool:
        return not self.failing and self.verdict.state != corridor.OUT

    def as_dict(self) -> dict:
        return {**self.estimate.as_dict(), "f4": not self.failing, "failing": list(self.failing),
                "corridor": self.verdict.state, "holds": self.holds}


@dataclass
class Proposal:
    """One row's outcome (the JSON fields of ``boardgen tune``)."""

    task: RowTask
    state: str
    old: float
    new: float | None
    new_interval: tuple[float | None, float | None]
    achieved: Estimate | None
    f4: bool
    boards: int
    candidates: int
    heldout: HeldOut | None = None
    nearest: float | None = None
    knob_range: tuple[float, float] | None = None
    figure_range: tuple[float, float] | None = None
    note: str = ""
    failing: tuple[str, ...] = ()
    heldout_boards: int = 0
    readings: list[dict] = field(default_factory=list)

    @property
    def key(self) -> tuple[int, int]:
        return self.task.key

    @property
    def key_text(self) -> str:
        return partition_key(self.key)

    @property
    def changes(self) -> bool:
        return self.state == search.REACHED and self.new is not None and self.new != self.old

    def as_dict(self) -> dict:
        t = self.task.target
        a = self.achieved
        finite = lambda x: x if x is not None and math.isfinite(x) else None  # noqa: E731
        return {
            "key": self.key_text, "figure": t.figure, "target": t.value, "tolerance": t.tolerance, "knob": t.knob,
            "old": self.old, "new": self.new, "new_interval": list(self.new_interval),
            "achieved": None if a is None else finite(a.value),
            "achieved_interval": None if a is None else [finite(a.low), finite(a.high)],
            "boards": self.boards, "f4": self.f4, "state": self.state,
            "nearest": self.nearest, "knob_range": None if self.knob_range is None else list(self.knob_range),
            "figure_range": None if self.figure_range is None else list(self.figure_range),
            "search_boards": self.boards - self.heldout_boards, "heldout_boards": self.heldout_boards,
            "candidates": self.candidates, "heldout": None if self.heldout is None else self.heldout.as_dict(),
            "failing": list(self.failing), "note": self.note, "target_entry": t.target,
            "readings": self.readings,
        }


def prove(task: RowTask, row: BoardGenRow) -> tuple[HeldOut, int]:
    """``row`` (the row with its proposed value) on the calibration batch, and
    the boards made; a new value must not be thin there either."""
    table = BoardGenTable("-", task.header, {row.key: row})
    records = run_row(table, row.key, task.samples, task.master_seed)
    m = measurement(task.target.figure, row, records, task.samples, judge_thin=row != task.row)
    return HeldOut(m.estimate, m.failing, corridor.judge(task.target, m.estimate)), len(records)


def _span(figure: str, row_value: float | None, aim: float) -> float:
    """The figure's span for the first step: its domain, or its scale where unbounded."""
    f = FIGURES[figure]
    if math.isfinite(f.high):
        return f.high - f.low
    return max(abs(row_value or 0.0), abs(aim), 1e-9)


def _search_and_prove(task: RowTask, grid, sampler: RowSampler, aim: search.Aim, span: float, max_boards: int,
                      proven: dict):
    """The search on up to ``max_boards`` probe boards a candidate, then its
    pick proven on the calibration batch: ``(result, heldout, proof boards)``.
    A pick that breaks an F4 assertion there is marked so and the next
    closest is proven, up to :data:`PROOF_TRIES` of them. ``proven``: the
    proofs made before, by candidate (a second search's pick proven once,
    and a value the batch refused refused again without its boards)."""
    result = search.search(sampler, len(grid), grid.current, aim, span, max_boards)
    heldout, proof_boards, tries = None, 0, 0
    while result.state != search.UNREACHABLE and result.pick is not None and tries < PROOF_TRIES:
        if result.pick not in proven:
            proven[result.pick] = prove(task, grid.row(task.row, result.pick))
            proof_boards += proven[result.pick][1]
        heldout = proven[result.pick][0]
        tries += 1
        if not heldout.failing:
            break
        reading = result.readings[result.pick]
        result.readings[result.pick] = replace(reading, side=search.INFEASIBLE, measurement=replace(
            reading.measurement, failing=heldout.failing))
        result = search.outcome(sampler, result.readings, grid.current, aim, len(grid), max_boards)
        heldout = None
    if result.state != search.UNREACHABLE and heldout is None:
        result.state, result.note = search.UNREACHABLE, (
            f"the {PROOF_TRIES} closest values measured break an F4 assertion on the calibration batch")
    return result, heldout, proof_boards


def tune_row(task: RowTask) -> Proposal:
    """Search, then prove (module docstring). When the calibration batch puts
    the proposal out of its corridor, the probe boards the search read were
    off the row's truth by more than their interval said (every candidate is
    read on the same boards, so they share that error): the search runs once
    more on every probe scope (:data:`~boardgen_pipeline.tuning.sampler.MAX_PROBES`
    a candidate, the boards already made kept) and its pick is proven again.
    The batch only says *whether* to look again, never *where*; its second
    verdict is a second look at it, said in the note."""
    t = task.target
    grid = knobs.grid(task.row, t.knob, task.header.spawn_side)
    sampler = RowSampler(task.row, grid, t.figure, task.header.spawn_side, task.header.dig_ap_cost,
                         task.master_seed, task.samples)
    aim = search.Aim(t.value, t.tolerance, t.direction)
    first = sampler.measure(grid.current, search.looks(task.max_boards)[0]).estimate.value
    span = _span(t.figure, first, t.value)
    proven: dict = {}
    result, heldout, proof_boards = _search_and_prove(task, grid, sampler, aim, span, task.max_boards, proven)
    if (heldout is not None and heldout.verdict.state == corridor.OUT and result.state != search.UNREACHABLE
            and task.max_boards < MAX_PROBES):
        first_pick = grid.values[result.pick]
        result, heldout, more = _search_and_prove(task, grid, sampler, aim, span, MAX_PROBES, proven)
        proof_boards += more
        again = (f"searched again on up to {MAX_PROBES} probe boards a candidate: the calibration batch put "
                 f"{t.knob} {first_pick} out of the corridor (its verdict here is a second look at that batch)")
        result.note = f"{result.note}; {again}" if result.note else again
    pick = result.readings.get(result.pick) if result.pick is not None else None
    feasible = sorted(k for k, r in result.readings.items() if r.feasible)
    lo, hi = result.bracket
    value = grid.values
    return Proposal(
        task, result.state, task.row.model_dump()[t.knob],
        None if result.state == search.UNREACHABLE else value[result.pick],
        (None if lo is None else value[lo], None if hi is None else value[hi]), pick.estimate if pick is not None else None,
        f4=pick is not None and pick.feasible and (heldout is None or not heldout.failing),
        boards=sampler.boards + proof_boards, candidates=len(result.readings),
        heldout=heldout if result.state != search.UNREACHABLE else None,
        nearest=value[result.pick] if result.pick is not None else None,
        knob_range=(value[feasible[0]], value[feasible[-1]]) if feasible else None,
        figure_range=result.span, note=result.note,
        failing=pick.measurement.failing if pick is not None else (), heldout_boards=proof_boards,
        readings=[{"knob_value": value[k], "side": r.side, "decided": r.decided,
                   **{("figure" if name == "value" else name): v for name, v in r.estimate.as_dict().items()}}
                  for k, r in sorted(result.readings.items())])
