"""The calibration advisor: what would make a row pass (SPEC 7.1
"Facts for tuning"; seed 001 F4 assertions A and A').

Attempts of one generate call are independent draws from one stream, so a
row has a per-attempt pass rate ``p`` (legal and inferability >= target),
and a board leaves through ``passed`` with probability
``1 - (1 - p) ** max_gen_attempts``. The advisor measures ``p`` from a batch
(``passes / attempts``: each board stops at its first pass, which makes
this the maximum-likelihood estimate), with a Wilson 95% interval, and
searches, with the row's own attempt budget, for:

- the largest ``mine_density`` at which the pass chance is >= 99.9% (the
  pass rate is not monotone in density, so every density of the grid is
  probed, from 0.50 down);
- the smallest ``r0_max_cap`` (a larger cap only makes more attempts legal:
  monotone, binary search up to ``floor(W*H/2)``);
- the largest ``inferability_target`` on the 0.01 grid of [0.85, 1]
  (monotone, binary search).

It also reads the difficulty curve: a row whose median 3BV per
safe cell does not rise above the row one depth shallower in its level is
named (``difficulty_findings``), since a designer expects deeper nodes to
play harder.

Probes never draw the boards the advice is judged against. The
calibration batch of ``N`` boards is ``board_gen`` scopes ``sigma(L, D) + i``,
``i < N``, and a row owns 4096 scopes (``calibrate --samples`` <= 4096):

- ``N <= 2048`` (the nightly's 256, every ``advise`` default): probe ``i`` is
  ``board_gen`` scope ``sigma(L, D) + 2048 + i`` (``PROBE_OFFSET``), inside
  the row's scopes and after its batch, as it always was, so no report
  record changes;
- ``N > 2048``: the row's scopes after the batch may hold fewer than the
  probes (none at ``N = 4096``), so probe ``i`` is scope ``sigma(L, D) + i``
  of a stream label of its own, ``advisor_probe`` (``PROBE_LABEL``): a
  label is part of a stream's name (``rng.initial_state``), so these streams
  are no row's boards, whatever ``N``.

``probe_stream`` is the one place that says which. Every candidate value is
one the table loader would accept.
"""

from __future__ import annotations

from dataclasses import dataclass

from boardgen_pipeline.board.generator import generate_from_row
from boardgen_pipeline.board.rng import derive_at, sigma
from boardgen_pipeline.calibration.rates import Z95, wilson
from boardgen_pipeline.scopes import PROBE_OFFSET  # probes of a batch of at most 2048 boards follow it
from boardgen_pipeline.tables.board_gen import BoardGenRow, fog_predicate, mines_target
from boardgen_pipeline.words import count

PASS_CHANCE = 0.999


PROBE_LABEL = "advisor_probe"  # the probes of a batch of more than PROBE_OFFSET boards: a label of their own


DEFAULT_PROBES = 128


THIN_MARGIN = PASS_CHANCE  # a row whose lower-bound pass chance is below this is "thin"


@dataclass(frozen=True)
class PassRate:
    passes: int
    attempts: int

    @property
    def p(self) -> float:
        return self.passes / self.attempts if self.attempts else 0.0

    def wilson(self, z: float = Z95) -> tuple[float, float]:
        return wilson(self.p, self.attempts, z)


def board_pass_chance(p: float, attempts: int) -> float:
    return 1.0 - (1.0 - p) ** attempts


def required_rate(attempts: int, chance: float = PASS_CHANCE) -> float:
    """The per-attempt rate that gives ``chance`` within ``attempts``."""
    return 1.0 - (1.0 - chance) ** (1.0 / attempts)


def rate_from_records(records: list[dict]) -> PassRate:
    return PassRate(sum(1 for r in records if r["exit"] == "passed"), sum(r["attempts_used"] for r in records))


def probe_stream(row: BoardGenRow, i: int, batch_samples: int, master_seed: int = 0):
    """The stream of probe board ``i`` of a row calibrated on ``batch_samples``
    boards: never one of that batch (module docstring)."""
    if batch_samples <= PROBE_OFFSET:
        return derive_at("board_gen", sigma(row.level_index, row.node_depth) + PROBE_OFFSET + i, master_seed)
    return derive_at(PROBE_LABEL, sigma(row.level_index, row.node_depth) + i, master_seed)


def probe(row: BoardGenRow, spawn_side: int, samples: int = DEFAULT_PROBES, master_seed: int = 0,
          batch_samples: int = PROBE_OFFSET) -> PassRate:
    recs = [generate_from_row(row, spawn_side, probe_stream(row, i, batch_samples, master_seed)).metrics
            for i in range(samples)]
    return rate_from_records(recs)


def _variant(row: BoardGenRow, **changes) -> BoardGenRow:
    return row.model_copy(update=changes)


def _loadable(row: BoardGenRow, spawn_side: int) -> bool:
    n = mines_target(row.mine_density, row.board_width, row.board_height, spawn_side)
    return n >= 1 and row.board_width * row.board_height - n >= row.min_safe_count and \
        not fog_predicate("-", "-", row)


@dataclass(frozen=True)
class Advice:
    key: tuple[int, int]
    status: str  # "fails", "thin" or "ok"
    rate: PassRate
    attempts: int
    density: float | None = None
    cap: int | None = None
    target: float | None = None
    searched: bool = False

    def as_dict(self) -> dict:
        lo, hi = self.rate.wilson()
        return {
            "level_index": self.key[0],
            "node_depth": self.key[1],
            "advice_status": self.status,
            "pass_rate_per_attempt": self.rate.p,
            "pass_rate_ci_low": lo,
            "pass_rate_ci_high": hi,
            "board_pass_chance": board_pass_chance(self.rate.p, self.attempts),
            "required_rate_per_attempt": required_rate(self.attempts),
            "advice_density": self.density,
            "advice_r0_max_cap": self.cap,
            "advice_target": self.target,
        }

    def text(self) -> str:
        lo, hi = self.rate.wilson()
        head = (f"row ({self.key[0]},{self.key[1]}): {self.status}; pass rate per attempt {self.rate.p:.3f} "
                f"[95% CI {lo:.3f}-{hi:.3f}] over {count(self.rate.attempts, 'attempt')}; chance a board passes "
                f"within {count(self.attempts, 'attempt')} {board_pass_chance(self.rate.p, self.attempts):.4f} "
                f"(needs >= {PASS_CHANCE}: {required_rate(self.attempts):.3f} per attempt)")
        if not self.searched:
            return head
        fmt = lambda v, f: "none in the domain" if v is None else f.format(v)  # noqa: E731
        return "\n".join([head,
                          "  largest mine_density that passes: " + fmt(self.density, "{:.2f}"),
                          "  smallest r0_max_cap that passes:  " + fmt(self.cap, "{}"),
                          "  largest inferability_target:      " + fmt(self.target, "{:.2f}")])


def classify(records: list[dict], attempts: int, failing: bool) -> str:
    if failing:
        return "fails"
    lo, _ = rate_from_records(records).wilson()
    return "thin" if board_pass_chance(lo, attempts) < THIN_MARGIN else "ok"


QUICK_PROBES = 16


def _good(row: BoardGenRow, spawn_side: int, samples: int, master_seed: int, batch_samples: int = PROBE_OFFSET) -> bool:
    """Pass chance >= 99.9% on ``samples`` probe boards. A quick look at the
    first 16 boards rejects hopeless candidates (chance < 90%) early: the
    same scopes, so the full probe would only add to the same evidence."""
    quick = probe(row, spawn_side, min(QUICK_PROBES, samples), master_seed, batch_samples)
    if board_pass_chance(quick.p, row.max_gen_attempts) < 0.9:
        return False
    return board_pass_chance(probe(row, spawn_side, samples, master_seed, batch_samples).p,
                             row.max_gen_attempts) >= PASS_CHANCE


def largest_density(row, spawn_side, samples=DEFAULT_PROBES, master_seed=0, batch_samples=PROBE_OFFSET) -> float | None:
    """Coarse grid (0.05 steps, from 0.50 down), then the 0.01 steps just
    above the largest coarse pass. A pass window narrower than 0.05 between
    two failing coarse points can be missed: the answer is then None."""

    def ok(hundredths):
        cand = _variant(row, mine_density=hundredths / 100)
        return _loadable(cand, spawn_side) and _good(cand, spawn_side, samples, master_seed, batch_samples)

    coarse = next((h for h in range(50, 0, -5) if ok(h)), None)
    if coarse is None:
        return None
    fine = next((h for h in range(min(50, coarse + 4), coarse, -1) if ok(h)), coarse)
    return fine / 100


def smallest_cap(row, spawn_side, samples=DEFAULT_PROBES, master_seed=0, batch_samples=PROBE_OFFSET) -> int | None:
    lo, hi = spawn_side**2, (row.board_width * row.board_height) // 2
    if not _good(_variant(row, r0_max_cap=hi), spawn_side, samples, master_seed, batch_samples):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if _good(_variant(row, r0_max_cap=mid), spawn_side, samples, master_seed, batch_samples):
            hi = mid
        else:
            lo = mid + 1
    return lo


def largest_target(row, spawn_side, samples=DEFAULT_PROBES, master_seed=0, batch_samples=PROBE_OFFSET) -> float | None:
    lo, hi = 85, 100  # hundredths
    if not _good(_variant(row, inferability_target=0.85), spawn_side, samples, master_seed, batch_samples):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _good(_variant(row, inferability_target=mid / 100), spawn_side, samples, master_seed, batch_samples):
            lo = mid
        else:
            hi = mid - 1
    return lo / 100


def advise(row: BoardGenRow, spawn_side: int, records: list[dict], *, failing: bool,
           samples: int = DEFAULT_PROBES, master_seed: int = 0, force: bool = False) -> Advice:
    """Advice for one row from its calibration ``records`` (its whole batch:
    the probes avoid those ``len(records)`` boards); the searches run for
    rows that fail or pass thinly (or always with ``force``)."""
    status = classify(records, row.max_gen_attempts, failing)
    rate = rate_from_records(records)
    if status == "ok" and not force:
        return Advice(row.key, status, rate, row.max_gen_attempts)
    n = len(records)
    return Advice(row.key, status, rate, row.max_gen_attempts,
                  density=largest_density(row, spawn_side, samples, master_seed, n),
                  cap=smallest_cap(row, spawn_side, samples, master_seed, n),
                  target=largest_target(row, spawn_side, samples, master_seed, n),
                  searched=True)


# The figure the difficulty curve is read on (docs/decisions.md):
# 3BV per safe cell is the clicks a board asks per cell it gives, so it does
# not grow with the board's size the way raw 3BV does, and unlike
# subset_steps it is rarely 0 (a median of 0 cannot rise).
DIFFICULTY_FIGURE = "bbbv_per_safe_p50"


def difficulty_findings(reports: list[dict], figure: str = DIFFICULTY_FIGURE) -> list[str]:
    """Rows whose difficulty does not rise with depth: for each level, each
    row compared with the nearest shallower row of the same level among
    ``reports`` (report C records); rows without the figure are skipped."""
    by_level: dict[int, list[dict]] = {}
    for r in reports:
        if r.get(figure) is not None:
            by_level.setdefault(r["level_index"], []).append(r)
    out = []
    for level, rows in sorted(by_level.items()):
        rows.sort(key=lambda r: r["node_depth"])
        for prev, cur in zip(rows, rows[1:]):
            if cur[figure] <= prev[figure]:
                out.append(f"row ({level},{cur['node_depth']}): difficulty does not rise with depth: median 3BV per "
                           f"safe cell {cur[figure]:.3f} at depth {cur['node_depth']} <= {prev[figure]:.3f} at depth "
                           f"{prev['node_depth']}")
    return out
