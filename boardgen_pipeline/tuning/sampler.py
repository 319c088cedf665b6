"""A row's candidates measured on its probe scopes, never on its calibration
batch (SPEC 12; SPEC 7 the batch; ``scopes.PROBE_OFFSET``: the advisor's
layout, docs/decisions/calibration.md "The advisor's probes are never the
boards it judges").

Probe board ``i`` of row ``(L, D)`` is ``board_gen`` scope ``sigma(L, D) +
PROBE_OFFSET + i``, ``i < DEPTH_SPACING - PROBE_OFFSET`` (2048): after a
calibration batch of up to 2048 boards and before the next row's scopes,
the advisor's probes. Every candidate of a row is measured on the same
first ``n`` of them (common random numbers), each board made once a
candidate (a candidate measured on 128 boards and then on 256 makes the
128 it lacks), and counted in ``boards``.

Each measurement is report C of those boards (``batch.evaluate_row``: the
figure as the nightly reports it, and the F4 assertions those boards break,
``fix.failing_assertions``, or ``thin`` where a calibration batch would
break A too often: :func:`thin`).
"""

from __future__ import annotations

from boardgen_pipeline.board.generator import generate_batch_from_row
from boardgen_pipeline.calibration.advisor import board_pass_chance, rate_from_records
from boardgen_pipeline.calibration.batch import evaluate_row
from boardgen_pipeline.calibration.fix import failing_assertions
from boardgen_pipeline.scopes import DEFAULT_SAMPLES, DEPTH_SPACING, PROBE_OFFSET, sigma
from boardgen_pipeline.tables.board_gen import BoardGenRow
from boardgen_pipeline.tuning import figures
from boardgen_pipeline.tuning.knobs import Grid
from boardgen_pipeline.tuning.search import DECISION_LEVEL, Measurement

MAX_PROBES = DEPTH_SPACING - PROBE_OFFSET  # 2048: the probe scopes end where the next row's begin
# the figures no perfect player nor 3BV reads: their boards skip the player (about 2.5x the attempt loop's cost)
WITHOUT_PLAYER = ("retry_rate", "inferability_p10", "inferability_p50")


def probe_scopes(key: tuple[int, int], n: int) -> range:
    start = sigma(*key) + PROBE_OFFSET
    return range(start, start + n)


THIN = "thin"  # F4 holds on these boards, but a calibration batch would break A too often
THIN_BOARDS = 256  # fewer boards give a pass rate's interval too wide to say
BATCH_PASS_CHANCE = 0.99  # the chance a whole calibration batch passes A that a proposal must keep


def thin(records: list[dict], attempts: int, samples: int) -> bool:
    """Whether a calibration batch of ``samples`` boards would pass A with
    a chance below :data:`BATCH_PASS_CHANCE`, reading the low end of the
    per-attempt pass rate's interval (the advisor's reading,
    ``advisor.rate_from_records``, ``board_pass_chance``): a board fails to
    pass within its attempts with ``(1 - p) ** attempts``, and a batch
    passes A when none of its boards does. The advisor's own "thin" (a
    board's chance below 99.9%) leaves a 256-board batch a 23% chance of a
    failure: too thin a value to propose."""
    low, _ = rate_from_records(records).wilson()
    return board_pass_chance(low, attempts) ** samples < BATCH_PASS_CHANCE


def measurement(figure: str, row: BoardGenRow, records: list[dict], samples: int = DEFAULT_SAMPLES,
                judge_thin: bool | None = None) -> Measurement:
    """Report C of ``records`` read as the figure's estimate (95% and at the
    search's decision level) and the F4 assertions they break; a value that
    breaks none but is :func:`thin` for a batch of ``samples`` boards counts
    as breaking one: on another batch it would. ``judge_thin``: whether to
    read that (default: on :data:`THIN_BOARDS` boards or more)."""
    report = evaluate_row(row, records)
    values = report.as_dict()
    failing = failing_assertions(report)
    if judge_thin is None:
        judge_thin = len(records) >= THIN_BOARDS
    if judge_thin and not failing and thin(records, row.max_gen_attempts, samples):
        failing = (THIN,)
    return Measurement(figures.estimate(figure, records, values), failing,
                       figures.estimate(figure, records, values, DECISION_LEVEL))


class RowSampler:
    """The candidates of one row's knob grid on its probe scopes (module docstring)."""

    def __init__(self, row: BoardGenRow, grid: Grid, figure: str, spawn_side: int, dig_ap_cost: int = 1,
                 master_seed: int = 0, samples: int = DEFAULT_SAMPLES):
        self.row, self.grid, self.figure, self.samples = row, grid, figure, samples
        self.spawn_side, self.dig_ap_cost, self.master_seed = spawn_side, dig_ap_cost, master_seed
        self.records: dict[int, list[dict]] = {}
        self.boards = 0

    def candidate(self, k: int) -> BoardGenRow:
        return self.grid.row(self.row, k)

    def measure(self, k: int, n: int) -> Measurement:
        if not 1 <= n <= MAX_PROBES:
            raise ValueError(f"a candidate is measured on 1..{MAX_PROBES} probe boards, not {n}")
        have = self.records.setdefault(k, [])
        row = self.candidate(k)
        if len(have) < n:
            scopes = probe_scopes(self.row.key, n)[len(have):]
            made = generate_batch_from_row(row, self.spawn_side, scopes, self.master_seed, self.dig_ap_cost,
                                           figures=self.figure not in WITHOUT_PLAYER)
            have.extend(m for _, m in made)
            self.boards += len(scopes)
        # the row's own value is judged as the nightly judges it (F4); only a new value must not be thin
        return measurement(self.figure, row, have[:n], self.samples, judge_thin=None if k != self.grid.current else False)
