"""Batch calibration, the F4 assertions and report C / diagnostics D
(SPEC 7; seed 001 "F4 批量统计断言").

The batch of row ``(L, D)`` is ``generate(L, D, derive_at("board_gen",
sigma(L, D) + i))`` for ``i`` in ``[0, N)``; ``derive_at`` is pure, so a batch
is reproducible across runs and machines. The assertions are evaluated on
the records alone, so the CLI, the Dagster checks and the tests share them:

- A: boards below target (inferability, and inferability_core where fog
  exists) = 0;
- A'': the row's target >= 0.85;
- A': boards flagged illegal = 0;
- B / B': fog rows place all regions on >= 95% of boards / rows without fog
  carry no fog;
- E: monotone in depth (advisory, from the table's own declaration).

Report C also carries what a perfect player risks on the row's boards
(``board.player``): the share of boards that need no guess, the
mean number of guesses, the win rate and the mean survival (the chance the
player's policy survives a board's guesses) with Wilson intervals, over the
boards the player could analyse. They inform the target; no assertion reads
them unless the table asks (``min_mean_survival``: the advisory check F).

Report C also carries the difficulty figures of the row's boards (see
``board.difficulty``): p10/p50/p90 of 3BV, of 3BV per safe cell and of
subset_steps, the median solve_rounds, and the share of boards complete
logic solves. They describe the boards; no assertion reads them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from operator import itemgetter

import numpy as np

from boardgen_pipeline.board.generator import generate_batch_from_row, target_fraction
from boardgen_pipeline.board.rng import DEFAULT_SAMPLES, sigma
from boardgen_pipeline.calibration.rates import wilson
from boardgen_pipeline.tables.board_gen import BoardGenRow, BoardGenTable

PERCENTILES = (10, 50, 90)


FOG_PLACEMENT_FLOOR = 0.95  # assertion B


def batch_scopes(level_index: int, node_depth: int, samples: int = DEFAULT_SAMPLES) -> range:
    base = sigma(level_index, node_depth)
    return range(base, base + samples)


def run_row(table: BoardGenTable, key: tuple[int, int], samples: int = DEFAULT_SAMPLES,
            master_seed: int = 0, progress=None) -> list[dict]:
    """The F4 batch of one row: one metrics record per board, in scope order."""
    row = table.rows[key]
    scopes = batch_scopes(*key, samples)
    out = []
    # one kernel call per chunk of scopes; the records are those
    # of generate_from_row on each scope
    step = len(scopes) if progress is None else 64
    for start in range(0, len(scopes), step):
        for _, metrics in generate_batch_from_row(row, table.spawn_side, scopes[start : start + step], master_seed,
                                                  table.header.dig_ap_cost):
            out.append(metrics)
            if progress is not None:
                progress()
    return out


def below_target(record: dict, target: Fraction) -> bool:
    """Seed 001 F5: a board meets its target only if both inferability and
    inferability_core do (they are equal on boards without fog)."""
    main = Fraction(record["revealed"], max(1, record["safe_count"]))
    core_pair = record.get("revealed_core"), record.get("safe_core")
    core = Fraction(core_pair[0], max(1, core_pair[1])) if core_pair[0] is not None else main
    return main < target or core < target


@dataclass
class RowReport:
    """Report C, diagnostics D and the assertions of one row."""

    key: tuple[int, int]
    samples: int
    target: float
    p10: float
    p50: float
    p90: float
    exits: dict
    retry_rate: float
    mean_attempts: float
    cap_rejections: int
    below_target_scopes: list[int]
    illegal_scopes: list[int]
    has_fog: bool = False
    fog_full_share: float = 1.0
    fog_boards_on_fogless_row: int = 0
    fog_budget: dict = field(default_factory=dict)
    shortfall: dict = field(default_factory=dict)
    worst_scope: int | None = None
    difficulty: dict = field(default_factory=dict)
    fairness: dict = field(default_factory=dict)
    survival_floor: float | None = None  # the row's min_mean_survival (check F)
    survival_criterion: bool = False  # the header's survival_is_criterion: F counts toward green

    @property
    def assertion_a(self) -> bool:
        return not self.below_target_scopes

    @property
    def assertion_a2(self) -> bool:  # A''
        return self.target >= 0.85

    @property
    def assertion_a1(self) -> bool:  # A'
        return not self.illegal_scopes

    @property
    def assertion_b(self) -> bool | None:
        return self.fog_full_share >= FOG_PLACEMENT_FLOOR if self.has_fog else None

    @property
    def assertion_b1(self) -> bool | None:  # B'
        return self.fog_boards_on_fogless_row == 0 if not self.has_fog else None

    @property
    def assertion_f(self) -> bool | None:
        """F: mean survival >= the row's floor; None where the row sets none. A
        row whose boards could not be analysed (too big) has no mean to judge:
        it fails, never passes on a guess."""
        if self.survival_floor is None:
            return None
        survival = self.fairness.get("mean_survival")
        return survival is not None and survival >= self.survival_floor

    @property
    def green(self) -> bool:
        verdicts = [self.assertion_a, self.assertion_a2, self.assertion_a1, self.assertion_b, self.assertion_b1]
        if self.survival_criterion:
            verdicts.append(self.assertion_f)
        return all(x is not False for x in verdicts)

    def as_dict(self) -> dict:
        return {
            "level_index": self.key[0],
            "node_depth": self.key[1],
            "samples": self.samples,
            "inferability_target": self.target,
            "p10": self.p10,
            "p50": self.p50,
            "p90": self.p90,
            "passed": self.exits.get("passed", 0),
            "best_legal": self.exits.get("best_legal", 0),
            "least_bad": self.exits.get("least_bad", 0),
            "retry_rate": self.retry_rate,
            "mean_attempts": self.mean_attempts,
            "cap_rejections": self.cap_rejections,
            "below_target": len(self.below_target_scopes),
            "illegal": len(self.illegal_scopes),
            "assertion_a": self.assertion_a,
            "assertion_a2": self.assertion_a2,
            "assertion_a1": self.assertion_a1,
            "assertion_b": self.assertion_b,
            "assertion_b1": self.assertion_b1,
            "assertion_f": self.assertion_f,
            "min_mean_survival": self.survival_floor,
            "survival_is_criterion": self.survival_criterion,
            "fog_full_share": self.fog_full_share,
            "delta_budget_fog_p50": self.fog_budget.get("delta_p50", 0.0),
            "delta_budget_fog_p90": self.fog_budget.get("delta_p90", 0.0),
            "fog_burden_ratio_p50": self.fog_budget.get("burden_p50", 0.0),
            "fog_burden_ratio_p90": self.fog_budget.get("burden_p90", 0.0),
            "worst_scope": self.worst_scope,
            "green": self.green,
            **self.difficulty,
            **self.fairness,
        }


def percentiles(values, qs=PERCENTILES) -> list[float]:
    """Linear-interpolated percentiles (numpy's default method)."""
    if len(values) == 0:
        return [0.0 for _ in qs]
    return [float(v) for v in np.percentile(np.asarray(values, dtype=float), qs)]


def percentiles_of(columns: list, qs=PERCENTILES) -> list[list[float]]:
    """``percentiles(column, qs)`` of each of several columns of one length,
    in one numpy call (a call costs more than its 256 values): each
    percentile is an order statistic, or two interpolated, of its own
    column, so the figures are those of one call a column."""
    if not columns or len(columns[0]) == 0:
        return [percentiles(c, qs) for c in columns]
    return np.percentile(np.asarray(columns, dtype=float), qs, axis=1).T.tolist()


# Report C's difficulty columns, in the order they are written.
DIFFICULTY_FIGURES = tuple(f"{name}_p{q}" for name in ("bbbv", "bbbv_per_safe", "subset_steps") for q in PERCENTILES) \
    + ("solve_rounds_p50", "solvable_full_logic_share")


def difficulty_figures(records: list[dict]) -> dict:
    """The difficulty columns of report C from a row's board records; empty
    when the records carry no difficulty fields (written before the difficulty figures existed)."""
    recs = [r for r in records if r.get("bbbv") is not None]
    return _difficulty(recs, percentiles_of(_difficulty_columns(recs))) if recs else {}


def _difficulty_columns(recs: list[dict]) -> list[list]:
    """The columns whose percentiles the difficulty figures are: 3BV, 3BV per
    safe cell, subset steps, solve rounds."""
    get = itemgetter("bbbv", "safe_count", "subset_steps", "solve_rounds")
    bbbv, safe, subset, rounds = zip(*map(get, recs))
    return [bbbv, [b / max(1, s) for b, s in zip(bbbv, safe)], subset, rounds]


def _difficulty(recs: list[dict], figures: list[list[float]]) -> dict:
    out = {}
    for name, values in zip(("bbbv", "bbbv_per_safe", "subset_steps"), figures):
        out.update({f"{name}_p{q}": v for q, v in zip(PERCENTILES, values)})
    out["solve_rounds_p50"] = figures[3][PERCENTILES.index(50)]
    out["solvable_full_logic_share"] = sum(1 for r in recs if r["solvable_full_logic"]) / len(recs)
    return out


def below_target_scopes(records: list[dict], target: Fraction) -> list[int]:
    """The scopes of the records :func:`below_target` flags, in order, with
    integers: ``r / s < n / d`` is ``r * d < n * s`` (positive
    denominators), the same test on the same integers without a Fraction a
    board (a test holds the two equal)."""
    n, d = target.numerator, target.denominator
    out = []
    for r in records:
        if r["revealed"] * d < n * max(1, r["safe_count"]):
            out.append(r["scope"])
            continue
        core = r.get("revealed_core")
        if core is not None and core * d < n * max(1, r.get("safe_core")):
            out.append(r["scope"])
    return out


def judged_inferability(record: dict) -> float:
    """The value assertion A judges a board by, as a float for a picture:
    its inferability, or its inferability without the fog cells where that
    is lower (fog rows, seed 001 F5). Counts of boards below target come from
    :func:`below_target_scopes` (integers), never from these floats."""
    core = record.get("inferability_core")
    return record["inferability"] if core is None else min(record["inferability"], core)


def worst_record(records: list[dict]) -> dict | None:
    """The record of the lowest inferability ``revealed / max(1, safe_count)``,
    ties to the lowest scope, then to the first (``min`` over
    ``(Fraction, scope)``, compared by cross-multiplying)."""
    worst, wa, wb, ws = None, 0, 1, 0
    for r in records:
        a, b, s = r["revealed"], max(1, r["safe_count"]), r["scope"]
        if worst is None or a * wb < wa * b or (a * wb == wa * b and s < ws):
            worst, wa, wb, ws = r, a, b, s
    return worst


def evaluate_row(row: BoardGenRow, records: list[dict], survival_criterion: bool = False) -> RowReport:
    """Report C of one row from its board records; ``survival_criterion``:
    the table's header makes check F count toward green."""
    target = target_fraction(row.inferability_target)
    n = len(records)
    has_fog = row.fog_region_count >= 1
    get = itemgetter("inferability", "exit", "attempts_used", "r0_cap_rejected", "scope", "illegal")
    infer, exits, attempts, caps, scopes, illegal = zip(*map(get, records)) if records else [()] * 6
    columns = [infer, [r.get("delta_budget_fog", 0) for r in records], [r.get("fog_burden_ratio", 0.0) for r in records]]
    difficult = [r for r in records if r.get("bbbv") is not None]
    if len(difficult) == n:  # every board has its difficulty figures: all percentiles in one call
        columns += _difficulty_columns(difficult) if n else []
    figures = percentiles_of(columns)
    (p10, p50, p90), (_, d50, d90), (_, b50, b90) = figures[:3]
    difficulty = {}
    if difficult:
        difficulty = _difficulty(difficult, figures[3:] if len(difficult) == n else
                                 percentiles_of(_difficulty_columns(difficult)))
    exit_counts = Counter(exits)
    full = sum(1 for r in records if r.get("fog_regions_placed", 0) >= row.fog_region_count)
    worst = worst_record(records)
    return RowReport(
        key=row.key,
        samples=n,
        target=row.inferability_target,
        p10=p10,
        p50=p50,
        p90=p90,
        exits={e: exit_counts.get(e, 0) for e in ("passed", "best_legal", "least_bad")},
        retry_rate=sum(1 for a in attempts if a >= 2) / max(1, n),
        mean_attempts=float(np.mean(attempts)) if records else 0.0,
        cap_rejections=sum(caps),
        below_target_scopes=below_target_scopes(records, target),
        illegal_scopes=[s for s, bad in zip(scopes, illegal) if bad],
        has_fog=has_fog,
        fog_full_share=full / max(1, n) if has_fog else 1.0,
        fog_boards_on_fogless_row=0 if has_fog else sum(1 for r in records if r.get("fog_cells", 0) > 0),
        fog_budget={"delta_p50": d50, "delta_p90": d90, "burden_p50": b50, "burden_p90": b90},
        shortfall=dict(Counter(r.get("fog_shortfall", 0) for r in records)),
        worst_scope=worst["scope"] if worst else None,
        difficulty=difficulty,
        fairness=fairness(records),
        survival_floor=row.min_mean_survival,
        survival_criterion=survival_criterion and row.min_mean_survival is not None,
    )


# Report C's perfect-player columns, in the order they are written; null where no board
# was analysed (and in reports written before the perfect player existed).
FAIRNESS_FIGURES = ("fairness_boards", "fairness_not_analysed", "no_guess_share", "mean_guesses", "win_rate",
                    "win_rate_ci_low", "win_rate_ci_high", "mean_survival", "mean_survival_ci_low",
                    "mean_survival_ci_high", "mean_first_guess_p_safe")


def fairness(records: list[dict]) -> dict:
    """The perfect player's figures of a row (module docstring) from its
    boards' records; empty when the records carry none (written before the perfect player existed)."""
    if not records or "forced_guesses" not in records[0]:
        return {}
    analysed = [r for r in records if r.get("won") is not None]
    n = len(analysed)
    out = dict.fromkeys(FAIRNESS_FIGURES)
    out["fairness_boards"], out["fairness_not_analysed"] = n, len(records) - n
    if n:
        wins = sum(1 for r in analysed if r["won"])
        survival = sum(r["survival"] for r in analysed) / n
        firsts = [r["first_guess_p_safe"] for r in analysed if r["first_guess_p_safe"] is not None]
        out.update(no_guess_share=sum(1 for r in analysed if r["forced_guesses"] == 0) / n,
                   mean_guesses=sum(r["forced_guesses"] for r in analysed) / n, win_rate=wins / n,
                   mean_survival=survival, mean_first_guess_p_safe=sum(firsts) / len(firsts) if firsts else None)
        out["win_rate_ci_low"], out["win_rate_ci_high"] = wilson(wins / n, n)
        # the mean survival is a rate too: the expected win rate of the policy on these boards
        out["mean_survival_ci_low"], out["mean_survival_ci_high"] = wilson(survival, n)
    return out


def monotone_findings(table: BoardGenTable) -> list[str]:
    """Assertion E (warning): the table's own monotone_in_depth declaration."""
    return [str(v) for v in table.warnings]
