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

Report C also carries the difficulty figures of the row's boards (issue 17,
``board.difficulty``): p10/p50/p90 of 3BV, of 3BV per safe cell and of
subset_steps, the median solve_rounds, and the share of boards complete
logic solves. They describe the boards; no assertion reads them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from boardgen_pipeline.board.generator import generate_batch_from_row, target_fraction
from boardgen_pipeline.board.rng import DEFAULT_SAMPLES, sigma
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
    # one kernel call per chunk of scopes (issue 16); the records are those
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
    def green(self) -> bool:
        return all(x is not False for x in (self.assertion_a, self.assertion_a2, self.assertion_a1,
                                            self.assertion_b, self.assertion_b1))

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
            "fog_full_share": self.fog_full_share,
            "delta_budget_fog_p50": self.fog_budget.get("delta_p50", 0.0),
            "delta_budget_fog_p90": self.fog_budget.get("delta_p90", 0.0),
            "fog_burden_ratio_p50": self.fog_budget.get("burden_p50", 0.0),
            "fog_burden_ratio_p90": self.fog_budget.get("burden_p90", 0.0),
            "worst_scope": self.worst_scope,
            "green": self.green,
            **self.difficulty,
        }


def percentiles(values, qs=PERCENTILES) -> list[float]:
    """Linear-interpolated percentiles (numpy's default method)."""
    if len(values) == 0:
        return [0.0 for _ in qs]
    return [float(v) for v in np.percentile(np.asarray(values, dtype=float), qs)]


# Report C's difficulty columns (issue 17), in the order they are written.
DIFFICULTY_FIGURES = tuple(f"{name}_p{q}" for name in ("bbbv", "bbbv_per_safe", "subset_steps") for q in PERCENTILES) \
    + ("solve_rounds_p50", "solvable_full_logic_share")


def difficulty_figures(records: list[dict]) -> dict:
    """The difficulty columns of report C from a row's board records; empty
    when the records carry no difficulty fields (written before issue 17)."""
    recs = [r for r in records if r.get("bbbv") is not None]
    if not recs:
        return {}
    out = {}
    for name, values in (("bbbv", [r["bbbv"] for r in recs]),
                         ("bbbv_per_safe", [r["bbbv"] / max(1, r["safe_count"]) for r in recs]),
                         ("subset_steps", [r["subset_steps"] for r in recs])):
        out.update({f"{name}_p{q}": v for q, v in zip(PERCENTILES, percentiles(values))})
    out["solve_rounds_p50"] = percentiles([r["solve_rounds"] for r in recs], (50,))[0]
    out["solvable_full_logic_share"] = sum(1 for r in recs if r["solvable_full_logic"]) / len(recs)
    return out


def evaluate_row(row: BoardGenRow, records: list[dict]) -> RowReport:
    target = target_fraction(row.inferability_target)
    infer = [r["inferability"] for r in records]
    p10, p50, p90 = percentiles(infer)
    exits = Counter(r["exit"] for r in records)
    has_fog = row.fog_region_count >= 1
    deltas = [r.get("delta_budget_fog", 0) for r in records]
    burdens = [r.get("fog_burden_ratio", 0.0) for r in records]
    d50, d90 = percentiles(deltas, (50, 90))
    b50, b90 = percentiles(burdens, (50, 90))
    full = sum(1 for r in records if r.get("fog_regions_placed", 0) >= row.fog_region_count)
    worst = min(records, key=lambda r: (Fraction(r["revealed"], max(1, r["safe_count"])), r["scope"]), default=None)
    return RowReport(
        key=row.key,
        samples=len(records),
        target=row.inferability_target,
        p10=p10,
        p50=p50,
        p90=p90,
        exits={e: exits.get(e, 0) for e in ("passed", "best_legal", "least_bad")},
        retry_rate=sum(1 for r in records if r["attempts_used"] >= 2) / max(1, len(records)),
        mean_attempts=float(np.mean([r["attempts_used"] for r in records])) if records else 0.0,
        cap_rejections=sum(r["r0_cap_rejected"] for r in records),
        below_target_scopes=[r["scope"] for r in records if below_target(r, target)],
        illegal_scopes=[r["scope"] for r in records if r["illegal"]],
        has_fog=has_fog,
        fog_full_share=full / max(1, len(records)) if has_fog else 1.0,
        fog_boards_on_fogless_row=0 if has_fog else sum(1 for r in records if r.get("fog_cells", 0) > 0),
        fog_budget={"delta_p50": d50, "delta_p90": d90, "burden_p50": b50, "burden_p90": b90},
        shortfall=dict(Counter(r.get("fog_shortfall", 0) for r in records)),
        worst_scope=worst["scope"] if worst else None,
        difficulty=difficulty_figures(records),
    )


def monotone_findings(table: BoardGenTable) -> list[str]:
    """Assertion E (warning): the table's own monotone_in_depth declaration."""
    return [str(v) for v in table.warnings]
