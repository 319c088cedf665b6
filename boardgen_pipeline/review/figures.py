"""The figures a row's calibration is compared by, board by board (SPEC 7
report C and diagnostics D; seed 001 F4; docs/review.md "Figures and their
margins").

Every figure of report C that a single board contributes to is a figure
here, read off one *column* of per-board values, so that the two versions
of a row can be compared on the same scopes (``pairing``):

- **binary** figures are shares of boards (won, retried, below target,
  illegal, all fog regions placed): McNemar's test on the boards that
  changed side;
- **mean** and **percentile** figures summarise a numeric column
  (inferability, attempts, guesses, survival, 3BV, openings, the fog
  budget): a paired bootstrap interval and a paired test;
- **categories**: the exits (``passed`` / ``best_legal`` / ``least_bad``):
  a paired test of marginal homogeneity.

Each figure has a default *margin*: the smallest move a designer cares
about. A change is flagged only when it is significant and its estimate
exceeds the margin (``diff``); the table header's ``review_margins`` or
``boardgen diff --margin FIGURE=VALUE`` set others. Percentiles are
numpy's linear interpolation, as in report C (``batch.percentiles``).

The overlays' figures (``OVERLAY_FIGURES``, SPEC 3) and the strata's
(``STRATA_FIGURES``, SPEC 4) are defined here beside them, so that one
registry (``KNOWN``) names every figure a margin can be set for; their
columns are made by ``overlay_diff`` and ``strata_diff``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from boardgen_pipeline.board.generator import target_fraction
from boardgen_pipeline.calibration.batch import below_target
from boardgen_pipeline.tables.board_gen import BoardGenRow

BINARY, MEAN, PERCENTILE, CATEGORIES = "binary", "mean", "percentile", "categories"
EXITS = ("passed", "best_legal", "least_bad")


@dataclass(frozen=True)
class Figure:
    """One figure: its name (report C's where it has one), kind, the per-board
    column it reads, its default margin, and where it applies."""

    name: str
    kind: str
    column: str
    margin: float
    text: str
    q: int | None = None  # the percentile, for PERCENTILE figures
    fog_only: bool = False  # only on rows where either version has fog
    analysed_only: bool = False  # the perfect player's figures: boards it could analyse in both versions
    categories: tuple[str, ...] = ()  # CATEGORIES figures: the names of the column's codes 0, 1, ...


FIGURES: tuple[Figure, ...] = (
    Figure("win_rate", BINARY, "won", 0.05, "share of boards a perfect player wins", analysed_only=True),
    Figure("no_guess_share", BINARY, "no_guess", 0.05, "share of boards won without a guess", analysed_only=True),
    Figure("retry_rate", BINARY, "retried", 0.05, "share of boards that needed a second attempt"),
    Figure("below_target_share", BINARY, "below_target", 0.0, "share of boards below target (assertion A)"),
    Figure("illegal_share", BINARY, "illegal", 0.0, "share of illegal boards (assertion A')"),
    Figure("fog_full_share", BINARY, "fog_full", 0.05, "share of boards with every fog region placed (B)",
           fog_only=True),
    Figure("inferability_mean", MEAN, "inferability", 0.01, "mean inferability |R∞|/|S|"),
    Figure("inferability_p10", PERCENTILE, "inferability", 0.01, "p10 inferability", q=10),
    Figure("inferability_p50", PERCENTILE, "inferability", 0.01, "p50 inferability", q=50),
    Figure("inferability_p90", PERCENTILE, "inferability", 0.01, "p90 inferability", q=90),
    Figure("inferability_core_p10", PERCENTILE, "inferability_core", 0.01, "p10 inferability without fog cells",
           q=10, fog_only=True),
    Figure("inferability_core_p50", PERCENTILE, "inferability_core", 0.01, "p50 inferability without fog cells",
           q=50, fog_only=True),
    Figure("mean_attempts", MEAN, "attempts_used", 0.5, "mean attempts a board"),
    Figure("mean_guesses", MEAN, "forced_guesses", 0.1, "mean forced guesses of a perfect player",
           analysed_only=True),
    Figure("mean_survival", MEAN, "survival", 0.03, "mean survival of a perfect player", analysed_only=True),
    Figure("bbbv_p50", PERCENTILE, "bbbv", 2.0, "p50 3BV", q=50),
    Figure("openings_p50", PERCENTILE, "openings", 1.0, "p50 openings (zero regions)", q=50),
    Figure("delta_budget_fog_p50", PERCENTILE, "delta_budget_fog", 2.0, "p50 fog digging cost", q=50, fog_only=True),
    Figure("delta_budget_fog_p90", PERCENTILE, "delta_budget_fog", 2.0, "p90 fog digging cost", q=90, fog_only=True),
    Figure("fog_burden_ratio_p50", PERCENTILE, "fog_burden_ratio", 0.02, "p50 fog burden ratio", q=50,
           fog_only=True),
    Figure("exits", CATEGORIES, "exit", 0.05, "exit categories (largest move of one category's share)",
           categories=EXITS),
)
BY_NAME = {f.name: f for f in FIGURES}

# The overlays of a row's boards (SPEC 3 "Overlay output per board"; ``review.overlay_diff``), one value a
# board, compared on the same boards: the cells and packs placed, a shortfall, the whole-board variant, any
# rule of the overlay checks broken, the type drawn (its categories are the types of both versions, set per
# row), and the survival weight the board's resource draw keeps after its resource-face skew.
OVERLAY_FIGURES: tuple[Figure, ...] = (
    Figure("overlay_cells_mean", MEAN, "overlay_cells", 1.0, "mean variant cells a board"),
    Figure("overlay_packs_mean", MEAN, "overlay_packs", 0.5, "mean variant packs a board"),
    Figure("overlay_shortfall_share", BINARY, "overlay_shortfall", 0.05,
           "share of boards whose packs fell short of the target"),
    Figure("overlay_whole_board_share", BINARY, "overlay_whole_board", 0.05,
           "share of boards with a whole-board (global) variant"),
    Figure("overlay_rule_broken_share", BINARY, "overlay_rule_broken", 0.0,
           "share of boards breaking a rule of the overlay checks"),
    Figure("overlay_survival_weight_mean", MEAN, "overlay_survival_weight", 1.0,
           "mean survival weight of the resource draw after the skew (of 77)"),
    Figure("overlay_types", CATEGORIES, "overlay_type", 0.05,
           "variant type drawn (largest move of one type's share)"),
)

# The stratified figures (SPEC 4 "Stratified measurement"; ``review.strata_diff``): a drawn map's figure is
# the mean of its board nodes' row figures (``steps.stratify.FIGURES``), compared adventure by adventure.
STRATA_FIGURES: tuple[Figure, ...] = (
    Figure("strata_p10", MEAN, "p10", 0.01, "p10 inferability over a drawn map's board nodes"),
    Figure("strata_p50", MEAN, "p50", 0.01, "p50 inferability over a drawn map's board nodes"),
    Figure("strata_p90", MEAN, "p90", 0.01, "p90 inferability over a drawn map's board nodes"),
    Figure("strata_retry_rate", MEAN, "retry_rate", 0.05, "retry rate over a drawn map's board nodes"),
    Figure("strata_mean_attempts", MEAN, "mean_attempts", 0.5, "mean attempts over a drawn map's board nodes"),
    Figure("strata_bbbv_p50", MEAN, "bbbv_p50", 2.0, "p50 3BV over a drawn map's board nodes"),
    Figure("strata_bbbv_per_safe_p50", MEAN, "bbbv_per_safe_p50", 0.02,
           "p50 3BV per safe cell over a drawn map's board nodes"),
    Figure("strata_subset_steps_p50", MEAN, "subset_steps_p50", 1.0,
           "p50 subset steps over a drawn map's board nodes"),
    Figure("strata_solvable_full_logic_share", MEAN, "solvable_full_logic_share", 0.05,
           "share solvable by full logic over a drawn map's board nodes"),
)
# Every figure a margin can be set for (the header's ``review_margins``, ``--margin``).
KNOWN = {f.name: f for f in (*FIGURES, *OVERLAY_FIGURES, *STRATA_FIGURES)}
DEFAULT_MARGINS = {name: f.margin for name, f in KNOWN.items()}


def applies(figure: Figure, fog: bool) -> bool:
    """Whether ``figure`` is compared on a row (``fog``: either version has fog)."""
    return fog or not figure.fog_only


def _player(records: list[dict], value) -> np.ndarray:
    """A perfect player's per-board value, NaN where the board was not analysed."""
    return np.array([np.nan if r.get("won") is None else value(r) for r in records], dtype=float)


def board_columns(records: list[dict], row: BoardGenRow) -> dict[str, np.ndarray]:
    """Every column the figures read, one value a board, in the records'
    order (scope order). ``row``: the version of the row the boards were
    made from (its target decides below_target; its fog regions, fog_full)."""
    target = target_fraction(row.inferability_target)

    def column(get, kind=float):
        return np.fromiter((get(r) for r in records), dtype=kind, count=len(records))

    inferability = column(lambda r: r["revealed"] / max(1, r["safe_count"]))
    core = column(lambda r: r["revealed_core"] / max(1, r["safe_core"]) if r.get("revealed_core") is not None
                  else r["revealed"] / max(1, r["safe_count"]))
    return {
        "won": _player(records, lambda r: float(bool(r["won"]))),
        "no_guess": _player(records, lambda r: float(r["forced_guesses"] == 0)),
        "forced_guesses": _player(records, lambda r: float(r["forced_guesses"])),
        "survival": _player(records, lambda r: float(r["survival"])),
        "retried": column(lambda r: float(r["attempts_used"] >= 2)),
        "below_target": column(lambda r: float(below_target(r, target))),
        "illegal": column(lambda r: float(bool(r["illegal"]))),
        "fog_full": column(lambda r: float(r.get("fog_regions_placed", 0) >= row.fog_region_count)),
        "inferability": inferability,
        "inferability_core": core,
        "attempts_used": column(lambda r: float(r["attempts_used"])),
        "bbbv": column(lambda r: float(r.get("bbbv") or 0)),
        "openings": column(lambda r: float(r.get("openings") or 0)),
        "delta_budget_fog": column(lambda r: float(r.get("delta_budget_fog", 0))),
        "fog_burden_ratio": column(lambda r: float(r.get("fog_burden_ratio", 0.0))),
        "exit": column(lambda r: EXITS.index(r["exit"]), kind=np.int64),
    }


def value(figure: Figure, column: np.ndarray) -> float:
    """The figure's value on one version's boards (the categories: the share
    of ``passed``)."""
    if figure.kind == PERCENTILE:
        return float(np.percentile(column, figure.q)) if len(column) else float("nan")
    if figure.kind == CATEGORIES:
        return float(np.mean(column == 0)) if len(column) else float("nan")
    return float(np.mean(column)) if len(column) else float("nan")


def exit_shares(column: np.ndarray) -> dict[str, float]:
    """Each exit's share of the boards."""
    return shares(column, EXITS)


def shares(column: np.ndarray, names: tuple[str, ...]) -> dict[str, float]:
    """Each category's share of the boards (``column``: codes into ``names``)."""
    n = max(1, len(column))
    return {name: float(np.sum(column == i)) / n for i, name in enumerate(names)}


def unknown_figure(name: str) -> str:
    """What a figure name no figure has is told, wherever it is written
    (``--margin``, the header's ``review_margins``): the nearest name, not the
    whole list."""
    from boardgen_pipeline.tables.shape import nearest

    near = nearest(name, KNOWN)
    return f"unknown figure {name!r}: " + (f"did you mean {near}?" if near else "docs/review.md lists the figures")
