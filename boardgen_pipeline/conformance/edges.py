"""The edge cases a traced board exercises, by name: the kit's flags, and
the search for the scopes that pin them (SPEC 11; STYLE.md's Wycheproof:
"flags naming the edge case"; seed 001 F5 and SPEC 2.5's exits).

A vector is worth its place when a port that reads a rule otherwise gets it
wrong. :func:`flags` names, for one :class:`~trace.BoardTrace`, what it
would catch: a decimal on a .5 boundary (the double and the decimal round
apart), an attempt failing several gates (the gates' order names one), a
verdict decided by the core condition, best_legal's choice (a later
attempt, a tie, a choice the core ratio would change), the least-bad key's
order (a swap of two of its parts would choose another attempt), a tie in
it, fog regions of size 0 or skipped. :func:`first_scopes` walks the scopes
from 0 and takes the first whose trace shows what a pin asks for, so no
pinning scope is picked by hand.

Two rules of the fog step never act on a generated board, so no flag names
them: a 3x3 window all fog would need its centre among the allowed cells,
yet the centre of such a window has eight safe neighbours and is a zero;
and a region cannot stop short of its size, since it grows inside a
component of at least that size and only the window test could stop it
(``fog.place_fog`` counts both, and the suite holds them at 0).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from boardgen_pipeline.board.fog import region_sizes
from boardgen_pipeline.conformance.trace import AttemptTrace, BoardTrace, failed_gates, meets, trace_board
from boardgen_pipeline.tables.board_gen import BoardGenRow, mines_target

# the least-bad key's parts before the attempt number, in SPEC 2.5's order
KEY_PARTS = ("unreachable", "min_safe_gap", "cap_excess", "free_open")
SEARCH_LIMIT = 512  # scopes a pin's search examines before it gives up


def decimal_text(value: float) -> str:
    """A table's float as the kit writes it: the double's shortest decimal."""
    return repr(float(value))


def _exact(text: str) -> Fraction:
    return Fraction(text)


def plan_flags(row: BoardGenRow, spawn_side: int) -> list[str]:
    """Where the plan's doubles and the decimals the designer wrote round
    apart, and where the fog aim's product order matters."""
    out = []
    W, H = row.board_width, row.board_height
    m = W * H - spawn_side**2
    exact_n = math.floor(_exact(decimal_text(row.mine_density)) * m + Fraction(1, 2))
    if exact_n != math.floor(row.mine_density * m + 0.5):
        out.append("n_half_boundary")
    if row.fog_region_count:
        ratio = row.fog_target_ratio
        left = math.floor(ratio * W * H + 0.5)
        if math.floor(_exact(decimal_text(ratio)) * W * H + Fraction(1, 2)) != left:
            out.append("fog_aim_half_boundary")
        if math.floor(ratio * (W * H) + 0.5) != left:
            out.append("fog_aim_product_order")
    if W * H - mines_target(row.mine_density, W, H, spawn_side) < row.min_safe_count:
        out.append("row_min_safe_infeasible")  # AC-2 refuses the row; the generator runs it
    return out


def badness(a: AttemptTrace, row: BoardGenRow) -> tuple[int, int, int, int]:
    """The least-bad key's first four parts (SPEC 2.5; ``generator.Attempt.badness``)."""
    return a.attempt(row).badness()[:4]


def least_bad_choice(t: BoardTrace, order: tuple[int, ...]) -> int:
    """The attempt the least-bad rule chooses with the key's parts in ``order``."""
    return min(t.attempts, key=lambda a: (tuple(badness(a, t.row)[i] for i in order), a.k)).k


def _ratio(revealed: int | None, safe: int) -> Fraction:
    return Fraction(revealed or 0, max(1, safe))


def _fog_flags(t: BoardTrace) -> list[str]:
    out = set()
    for a in t.attempts:
        f = a.fog_step
        if f is None:
            continue
        if 0 in region_sizes(f.target_cells, t.row.fog_region_count):
            out.add("fog_region_size_0")
        if f.regions_skipped:
            out.add("fog_region_skipped")
        if f.shortfall:
            out.add("fog_shortfall")
    return sorted(out)


def _exit_flags(t: BoardTrace) -> list[str]:
    out = []
    legal = [a for a in t.attempts if a.gate is None]
    if t.exit == "best_legal":
        chosen = t.attempts[t.chosen - 1]
        best = _ratio(chosen.revealed, chosen.safe)
        if chosen.k != legal[0].k:
            out.append("best_legal_later")
        if any(a.k != chosen.k and _ratio(a.revealed, a.safe) == best for a in legal):
            out.append("best_legal_tie")
        by_core = max(legal, key=lambda a: (_ratio(a.revealed_core, a.safe - len(a.fog_cells)), -a.k))
        if t.row.fog_region_count and by_core.k != chosen.k:
            out.append("best_legal_not_core")
        if max(legal, key=lambda a: (a.revealed, -a.k)).k != chosen.k:
            out.append("best_legal_not_count")
    if t.exit == "least_bad":
        true = tuple(range(len(KEY_PARTS)))
        chosen = t.attempts[t.chosen - 1]
        if any(a.k != chosen.k and badness(a, t.row) == badness(chosen, t.row) for a in t.attempts):
            out.append("least_bad_tie")
        for i, j in itertools.combinations(true, 2):
            order = list(true)
            order[i], order[j] = order[j], order[i]
            if least_bad_choice(t, tuple(order)) != t.chosen:
                out.append(f"least_bad_swap_{KEY_PARTS[i]}_{KEY_PARTS[j]}")
    return out


def flags(t: BoardTrace) -> list[str]:
    """The edge cases of one traced board (see the module docstring)."""
    out = plan_flags(t.row, t.spawn_side)
    target = t.plan.target
    for a in t.attempts:
        failed = failed_gates(a.safe, a.r0, a.unreachable, t.row)
        if len(failed) > 1:
            out.append("gates_" + "+".join(failed))
        if a.gate is None:
            if meets(a.revealed, a.safe, target) and not meets(a.revealed_core, a.safe - len(a.fog_cells), target):
                out.append("verdict_by_core")
    out += _fog_flags(t) + _exit_flags(t)
    return sorted(set(out))


def first_scope(row: BoardGenRow, spawn_side: int, shows, taken=(), limit: int = SEARCH_LIMIT) -> int:
    """The first scope from 0, not in ``taken``, whose board (master seed 0)
    shows every flag of ``shows``; ValueError when none of ``limit`` does."""
    wanted = set(shows)
    for scope in range(limit):
        if scope in taken:
            continue
        if wanted <= set(flags(trace_board(row, spawn_side, scope))):
            return scope
    raise ValueError(f"no scope in [0, {limit}) of row {row.key_text} shows {sorted(wanted)}")
