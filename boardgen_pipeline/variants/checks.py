"""Checks over variant overlays and the resource skew (seed 003 "验收标准";
SPEC 3, SPEC 9 "overlay checks").

Plain functions for the Dagster asset checks (wired elsewhere): each returns
the list of :class:`CheckIssue` it found, empty when the rule holds, so a
check's metadata can carry the count and the offending cells. The placement
builds these guarantees in; the checks are the last gate, written against the
seed's acceptance lines rather than against the placement's code:

* placement domain: every variant cell is on the board, safe and outside R0;
* packs: 8-connected, size in ``[pack_min, pack_max]``, and the board's
  connected pieces of variant cells are exactly the packs; cell count within
  the target, shortfall reported truthfully;
* one type per board; a global (whole-board) variant carries zero cells and
  took zero stream draws;
* Boss rule ("替换制", "兜底回落", "全局取用确定性"), on any legal table: a
  Boss (or elite) board whose global candidate pool is non-empty carries the
  pool's first row as its whole-board type and zero cells; with an empty pool
  (the default table's level-1 Boss, or any level before a global row
  unlocks) it carries none and falls back to region placement. The pool is
  the gate's (``table.candidate_pools``): recomputed from the variation table
  when the caller passes it, else the one the overlay recorded. Nothing here
  knows the default table's unlock levels;
* skew: total 77, ``effect_value = 0`` identical to no skew, whitelist rows
  unchanged, survival never rises, offense never falls.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from boardgen_pipeline.board.geometry import Board, neighbour_table
from boardgen_pipeline.variants.placement import Overlay
from boardgen_pipeline.variants.skew import POOL_TOTAL, ResourceWeights, skew_weights
from boardgen_pipeline.variants.table import VariationTable, candidate_pools


@dataclass(frozen=True)
class CheckIssue:
    """One broken overlay or skew rule, with the cells (or rows) involved."""

    rule: str
    message: str
    cells: tuple = ()

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "cells": list(self.cells)}


def _components(cells, width: int, height: int) -> list[tuple[int, ...]]:
    table = neighbour_table(width, height)
    pool = set(cells)
    seen: set[int] = set()
    out = []
    for start in sorted(pool):
        if start in seen:
            continue
        comp = [start]
        seen.add(start)
        k = 0
        while k < len(comp):
            for n in table[comp[k]]:
                if n in pool and n not in seen:
                    seen.add(n)
                    comp.append(n)
            k += 1
        out.append(tuple(sorted(comp)))
    return out


def check_domain(board: Board, r0, overlay: Overlay) -> list[CheckIssue]:
    """Variant cells all on the board, safe, and outside R0 (acceptance "布置域")."""
    issues = []
    if (overlay.width, overlay.height) != (board.width, board.height):
        issues.append(CheckIssue("board_mismatch", f"overlay is {overlay.width}x{overlay.height}, board {board.width}x{board.height}"))
        return issues
    off = tuple(c for c in overlay.cells if not 0 <= c < board.width * board.height)
    if off:
        issues.append(CheckIssue("variant_outside_board", f"{len(off)} variant cells off the board", off))
    on_board = [c for c in overlay.cells if 0 <= c < board.width * board.height]
    mines = tuple(c for c in on_board if board.mines[c])
    if mines:
        issues.append(CheckIssue("variant_on_mine", f"{len(mines)} variant cells are mines", mines))
    r0 = frozenset(r0)
    opened = tuple(c for c in on_board if c in r0)
    if opened:
        issues.append(CheckIssue("variant_in_r0", f"{len(opened)} variant cells inside R0", opened))
    return issues


def check_packs(overlay: Overlay) -> list[CheckIssue]:
    """Packs 8-connected, sized in range, never touching; count within target."""
    issues = []
    lo, hi = overlay.pack_min, overlay.pack_max
    union = sorted(c for p in overlay.packs for c in p)
    dup = tuple(sorted(c for c, k in Counter(union).items() if k > 1))
    if dup:
        issues.append(CheckIssue("pack_overlap", f"{len(dup)} cells in more than one pack", dup))
    if tuple(sorted(set(union))) != tuple(sorted(overlay.cells)):
        issues.append(CheckIssue("cells_not_union_of_packs", "cells differ from the union of the packs"))
    for p in overlay.packs:
        if len(_components(p, overlay.width, overlay.height)) != 1:
            issues.append(CheckIssue("pack_disconnected", f"pack of {len(p)} cells is not 8-connected", tuple(p)))
        if not lo <= len(p) <= hi:
            issues.append(CheckIssue("pack_size", f"pack of {len(p)} cells outside [{lo}, {hi}]", tuple(p)))
    # What a player sees is the connected pieces of variant cells: they must
    # be the packs themselves, or two packs merged into one oversized piece.
    pieces = set(_components(overlay.cells, overlay.width, overlay.height))
    if not dup and pieces != {tuple(sorted(p)) for p in overlay.packs}:
        touching = tuple(sorted(c for piece in pieces - {tuple(sorted(p)) for p in overlay.packs} for c in piece))
        issues.append(CheckIssue("packs_touch", "packs touch and form a larger connected piece", touching))
    if len(overlay.cells) > overlay.target:
        issues.append(CheckIssue("count_over_target", f"{len(overlay.cells)} cells placed, target {overlay.target}"))
    if overlay.shortfall != overlay.target - len(overlay.cells):
        issues.append(
            CheckIssue("shortfall_mismatch", f"shortfall {overlay.shortfall} != target {overlay.target} - placed {len(overlay.cells)}")
        )
    return issues


def check_one_type(overlay: Overlay) -> list[CheckIssue]:
    """At most one variant type on the board; a whole-board variant has no cells."""
    issues = []
    if overlay.global_variant is not None:
        if overlay.variant_type != overlay.global_variant:
            issues.append(
                CheckIssue("more_than_one_type", f"whole-board {overlay.global_variant} and region {overlay.variant_type}")
            )
        if overlay.cells:
            issues.append(CheckIssue("global_with_cells", f"whole-board variant with {len(overlay.cells)} cells", overlay.cells))
        if overlay.draws:
            issues.append(CheckIssue("global_consumed_draws", f"global pick took {overlay.draws} stream draws"))
    if overlay.cells and overlay.variant_type is None:
        issues.append(CheckIssue("cells_without_type", "variant cells without a variant type", overlay.cells))
    return issues


def check_boss_rule(overlay: Overlay, table: VariationTable | None = None) -> list[CheckIssue]:
    """Seed 003's Boss rule on any legal table: whole-board type exactly when
    the board's global pool is non-empty (its first row), zero cells then;
    no whole-board type (region fallback) when the pool is empty; never a
    whole-board type off Boss and elite boards."""
    issues = []
    pool = tuple(overlay.global_pool)
    if table is not None:
        gate = candidate_pools(table, level_index=overlay.level_index, board_type=overlay.board_type,
                               is_boss=overlay.is_boss, is_elite=overlay.is_elite)
        pool = tuple(t.id for t in gate.global_pool)
        if pool != tuple(overlay.global_pool):
            issues.append(CheckIssue("global_pool_mismatch",
                                     f"overlay records global pool {list(overlay.global_pool)}, the table's gate gives {list(pool)}"))
    if not (overlay.is_boss or overlay.is_elite):
        if overlay.global_variant is not None:
            issues.append(CheckIssue("global_off_boss", f"whole-board {overlay.global_variant} on a non-Boss board"))
        return issues
    where = f"level {overlay.level_index} {'Boss' if overlay.is_boss else 'elite'}"
    if pool:
        if overlay.global_variant is None:
            issues.append(CheckIssue("boss_without_global",
                                     f"{where} has no whole-board variant; its global pool is {list(pool)}"))
        elif overlay.global_variant != pool[0]:
            issues.append(CheckIssue("boss_wrong_global",
                                     f"{where} carries {overlay.global_variant}, not the pool's first row {pool[0]}"))
        if overlay.cells:
            issues.append(CheckIssue("boss_with_cells", f"Boss board carries {len(overlay.cells)} variant cells", overlay.cells))
    elif overlay.global_variant is not None:
        # the seed names the level-1 case ("L1 Boss 零全局变异"); any level
        # whose pool is empty falls back to region placement the same way
        rule = "level1_boss_global" if overlay.level_index == 1 else "boss_global_from_empty_pool"
        issues.append(CheckIssue(rule, f"{where} carries {overlay.global_variant} but its global pool is empty "
                                       "(region fallback expected)"))
    return issues


def check_overlay(board: Board, r0, overlay: Overlay, *, boss_rule: bool = True,
                  table: VariationTable | None = None) -> dict[str, list[CheckIssue]]:
    """Every overlay check, by check name (for one asset-check metadata map);
    ``table``: the variation table, to recompute the Boss rule's pool."""
    out = {
        "domain": check_domain(board, r0, overlay),
        "packs": check_packs(overlay),
        "one_type": check_one_type(overlay),
    }
    if boss_rule:
        out["boss_rule"] = check_boss_rule(overlay, table)
    return out


def count_issues(results: dict[str, list[CheckIssue]]) -> dict[str, int]:
    return {name: len(issues) for name, issues in results.items()}


def check_skew(weights: ResourceWeights, effect_value: int) -> list[CheckIssue]:
    """Skew invariants for one effect value (acceptance "off 态零扰动",
    "正向池合计恒 77")."""
    issues = []
    skewed = skew_weights(weights, effect_value)
    if skewed.total != POOL_TOTAL:
        issues.append(CheckIssue("skew_total", f"skewed pool totals {skewed.total}, not {POOL_TOTAL}"))
    if effect_value == 0 and skewed != weights:
        issues.append(CheckIssue("skew_off_not_identical", "effect_value 0 changed the weights"))
    for before, after in zip(weights.rows, skewed.rows):
        if before.id != after.id or before.family != after.family:
            issues.append(CheckIssue("skew_rows_changed", f"row {before.id} became {after.id}", (before.id,)))
        elif before.family == "whitelist" and after.weight != before.weight:
            issues.append(CheckIssue("skew_whitelist_moved", f"{before.id}: {before.weight} -> {after.weight}", (before.id,)))
        elif before.family == "survival" and after.weight > before.weight:
            issues.append(CheckIssue("skew_survival_rose", f"{before.id}: {before.weight} -> {after.weight}", (before.id,)))
        elif before.family == "offense" and after.weight < before.weight:
            issues.append(CheckIssue("skew_offense_fell", f"{before.id}: {before.weight} -> {after.weight}", (before.id,)))
    if len(weights.rows) != len(skewed.rows):
        issues.append(CheckIssue("skew_rows_changed", "row count changed"))
    return issues
