"""A perfect player, to give ``inferability_target`` its consequence (issue
30; seed 000 "可推理率承诺": the player "loses only to a gamble they chose,
never to a board with large unsolvable areas"; SPEC 2.1-2.3, SPEC 5 fog).

Inferability says how much of a board logic opens; designers also need to
know how often a player who never errs must guess, how many times, and how
often that kills them. This player sees only what a player sees (numbers,
proven mines, fog, the board's mine count) and plays:

1. R0: the spawn square (side 3 or 5 around ``((W-1)//2, (H-1)//2)``) and
   its flood through zeros (SPEC 2.1, 2.3);
2. logic: the project's compiled ``single_subset`` closure (fog next to an
   opened cell opens, seed 001 F1), then every cell the exact engine proves
   safe or a mine (probability 0 or 1: ``difficulty.full_logic``, whose
   yes/no enumeration settles exactly the cells whose exact weight is 0 or
   the total), then the closure again, to the fixed point; the cells left
   are checked against the exact weights once more (the two enumerations
   have separate node budgets);
3. if every safe cell is open, the board is won; otherwise the player opens
   the cell with the lowest exact mine probability (``probability.combine``,
   integers, never floats), and the real layout decides: a mine ends the
   game as lost, a safe cell opens (and chains) and play goes back to 2.

**Tie order: the lowest row-major index** (``y * W + x``) among the cells
of least probability. SPEC 2.1 fixes row-major order wherever an order is
needed; it depends on nothing but the position (not on the enumeration's
component order or the frontier's shape), so any tool can replay a game
from the layout alone, and the interior (interchangeable cells) is
represented by its first cell in that order.

**Too big**: when a position at a forced guess has a component the node
budget cannot enumerate, the player stops there and the board is reported
*not analysed*: ``won`` and ``survival`` are None, ``too_big`` counts the
components, the guesses made before it are kept. No probability is ever
approximated, so no guess is ever made on one. (On the shipped tables this
never happens; the benchmark reports it.)

Per board: ``won``; ``forced_guesses`` (guesses made); ``survival`` (the
product of the chosen cells' exact P(safe), as a float, and exact in
``survival_exact``); ``guesses`` as ``(x, y, p_safe)``;
``first_guess_p_safe``; ``open_share_at_first_guess`` (opened safe cells /
safe cells when the first guess was forced); ``too_big``. ``play_batch``
runs the boards of one size in one kernel call and gives boards that need
no guess - R∞ = S, or solvable by complete logic when the caller knows it -
their record (won, no guess, survival 1) without any work.
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numba import njit

from boardgen_pipeline.board import limbs
from boardgen_pipeline.board.closure_rows import BITS_ROWS, PAD
from boardgen_pipeline.board.difficulty import _WIDEN, NODE_BUDGET, _arrays, _close, _open, figures_state, full_logic, r0_state
from boardgen_pipeline.board.kernel_args import check_board
from boardgen_pipeline.board.place_numbers import numbers_of
from boardgen_pipeline.board.probability import INTERIOR, MAX_BUDGET, Position, combine, tables

FIELDS = ("won", "forced_guesses", "survival", "survival_exact", "guesses", "first_guess_p_safe",
          "open_share_at_first_guess", "too_big")

# how a game ended (OUT_STATE)
WON, LOST, TOO_BIG, STOPPED = range(4)

# a board's summary row
(OUT_STATE, OUT_GUESSES, OUT_TOO_BIG, OUT_OPEN_AT_FIRST, OUT_SAFE, OUT_REVEALED) = range(6)
OUT_SIZE = 6

# a guess row: board, cell, then the limbs of P(safe)'s numerator and of its denominator
G_BOARD, G_CELL, G_LIMBS = 0, 1, 2


class Rules(NamedTuple):
    """What every game of one board size reads and none writes, by name (as
    the generator's kernels take theirs: ``kernel_args``): the size, the
    neighbour tables, the closure's widening table, the exact engine's node
    budget and the limbs of its integers."""

    width: int
    height: int
    nb: np.ndarray  # int32 [W*H, 8]: each cell's neighbours
    nbn: np.ndarray  # int32 [W*H]: how many neighbours each cell has
    widen: np.ndarray  # uint64 [512]: difficulty._WIDEN
    budget: int  # the exact engine's node budget
    limbs: int  # limbs of the exact counts (limbs.limbs_for(W*H))


class Sight(NamedTuple):
    """What the player sees of one game, which it writes as it plays, one
    entry a cell: revealed cells, cells proven mines, the numbers, the
    closure's bit rows; and the board's safe cells and whether it has fog."""

    rev: np.ndarray  # uint8
    known: np.ndarray  # uint8
    num: np.ndarray  # int32
    bits: np.ndarray  # uint64 [BITS_ROWS, H + 2 PAD]
    safe: int  # |S|
    has_fog: bool


def rules_for(width: int, height: int, nb: np.ndarray, nbn: np.ndarray, budget: int) -> Rules:
    return Rules(width, height, nb, nbn, _WIDEN, budget, limbs.limbs_for(width * height))


@njit(cache=True, error_model="numpy")
def _record_guess(guesses, ng, b, cell, total, weight, L):
    """Append a guess (its P(safe) = (total - weight) / total) to the
    guess rows, doubling them when full; returns ``(guesses, ng)``."""
    if ng == guesses.shape[0]:
        grown = np.zeros((2 * guesses.shape[0], guesses.shape[1]), np.uint64)
        grown[:ng] = guesses
        guesses = grown
    row = guesses[ng]
    row[G_BOARD] = b
    row[G_CELL] = cell
    num = row[G_LIMBS:G_LIMBS + L]
    num[:] = total
    limbs.sub_mul(num, weight, np.int64(1))
    row[G_LIMBS + L:G_LIMBS + 2 * L] = total
    return guesses, ng + 1


@njit(cache=True, error_model="numpy")
def play_board(b, mines, fog, spawn, rules, stop_at, rev, known, out, guesses, ng):
    """Play board ``b`` (module docstring; ``rules``: :class:`Rules`) from R0
    to a win, a loss, a position too big to enumerate, or - for
    ``stop_at >= 0`` - the moment the ``stop_at + 1``-th guess is forced
    (``rev`` and ``known`` then hold that position). Fills ``out`` (OUT_*),
    appends the guesses; returns ``(guesses, ng)``."""
    W, H, nb, nbn = rules.width, rules.height, rules.nb, rules.nbn
    num = np.zeros(W * H, np.int32)
    safe, has_fog = r0_state(mines, fog, spawn, nb, nbn, num, rev, known)
    bits = np.zeros((BITS_ROWS, H + 2 * PAD), np.uint64)
    _close(rev, known, num, fog, mines, has_fog, W, H, nb, nbn, rules.widen, bits)
    return play_on(b, mines, fog, rules, Sight(rev, known, num, bits, safe, has_fog), stop_at, True, out, guesses, ng)


@njit(cache=True, error_model="numpy")
def play_on(b, mines, fog, rules, sight, stop_at, logic_first, out, guesses, ng):
    """The game of ``play_board`` from a closed state (``sight``:
    :class:`Sight`, its ``rev`` and ``known`` at the ``single_subset`` fixed
    point): with ``logic_first`` False the state is already at the
    complete-logic fixed point and not won (``difficulty.figures_state``
    left it there), so the first pass of complete logic is skipped."""
    W, H, nb, nbn, widen, budget, L = rules.width, rules.height, rules.nb, rules.nbn, rules.widen, rules.budget, rules.limbs
    rev, known, num, bits, safe, has_fog = sight.rev, sight.known, sight.num, sight.bits, sight.safe, sight.has_fog
    nc = W * H
    total_mines = nc - safe
    out[:] = 0
    out[OUT_OPEN_AT_FIRST] = -1
    out[OUT_SAFE] = safe
    queue = np.empty(nc, np.int32)
    act = np.empty(nc, np.int32)
    made = 0
    logic = logic_first
    while True:
        if logic:
            solved, _ = full_logic(rev, known, num, fog, mines, has_fog, total_mines, safe, W, H, nb, nbn, widen,
                                   bits, budget)
            if solved:
                out[OUT_STATE] = WON
                break
        logic = True
        if made == stop_at:
            out[OUT_STATE] = STOPPED
            break
        kind, cells, starts, coff, counts, moff, cell_counts, interior, over, _ = tables(rev, known, num, fog, W, H,
                                                                                        nb, nbn, budget)
        if over > 0:
            out[OUT_STATE] = TOO_BIG
            out[OUT_TOO_BIG] = over
            break
        nf = cells.shape[0]
        if nf == 0 and interior == 0:
            # nothing unknown is left but fog no opened cell touches (an
            # illegal board's enclosed fog): known safe, open it
            opened = False
            for c in range(nc):
                if fog[c] == 1 and rev[c] == 0:
                    _open(c, rev, num, fog, nb, nbn, queue, act, np.int64(0))
                    opened = True
            if not opened:
                raise ValueError("nothing unknown is left, yet a safe cell is closed")
            continue
        remaining = total_mines
        for c in range(nc):
            remaining -= known[c]
        consistent, total, weights, inner = combine(counts, coff, cell_counts, moff, starts, interior, remaining, L)
        if not consistent:
            raise ValueError("inconsistent position: the player's knowledge contradicts the board")
        # cells the exact weights settle that full logic left (its budget)
        settled = False
        for j in range(nf):
            if limbs.is_zero(weights[j]):
                _open(cells[j], rev, num, fog, nb, nbn, queue, act, np.int64(0))
                settled = True
            elif limbs.compare(weights[j], total) == 0:
                known[cells[j]] = 1
                settled = True
        if interior > 0 and (limbs.is_zero(inner) or limbs.compare(inner, total) == 0):
            mine = not limbs.is_zero(inner)
            for c in range(nc):
                if kind[c] == INTERIOR:
                    if mine:
                        known[c] = 1
                    else:
                        _open(c, rev, num, fog, nb, nbn, queue, act, np.int64(0))
            settled = True
        if settled:
            _close(rev, known, num, fog, mines, has_fog, W, H, nb, nbn, widen, bits)
            continue
        # the guess: least weight, ties to the lowest row-major index
        best = -1
        best_w = total
        for j in range(nf):
            c = cells[j]
            cmp = limbs.compare(weights[j], best_w)
            if best < 0 or cmp < 0 or (cmp == 0 and c < best):
                best, best_w = c, weights[j]
        if interior > 0:
            first = -1
            for c in range(nc):
                if kind[c] == INTERIOR:
                    first = c
                    break
            cmp = limbs.compare(inner, best_w)
            if best < 0 or cmp < 0 or (cmp == 0 and first < best):
                best, best_w = first, inner
        if made == 0:
            opened = 0
            for c in range(nc):
                opened += rev[c]
            out[OUT_OPEN_AT_FIRST] = opened
        guesses, ng = _record_guess(guesses, ng, b, best, total, best_w, L)
        made += 1
        out[OUT_GUESSES] = made
        if mines[best]:
            out[OUT_STATE] = LOST
            break
        _open(best, rev, num, fog, nb, nbn, queue, act, np.int64(0))
        _close(rev, known, num, fog, mines, has_fog, W, H, nb, nbn, widen, bits)
    opened = 0
    for c in range(nc):
        opened += rev[c]
    out[OUT_REVEALED] = opened
    return guesses, ng


@njit(cache=True, inline="always")
def _fitted(mines, fog, rules, out):
    """The board's cell count, once every batch array is seen to hold it:
    a kernel never indexes past an array it was handed."""
    nc = rules.width * rules.height
    if mines.shape[1] != nc or fog.shape[1] != nc or rules.nb.shape[0] != nc or out.shape[1] != OUT_SIZE:
        raise ValueError("batch arrays do not match the board size")
    return nc


@njit(cache=True, error_model="numpy")
def _play_batch(mines, fog, todo, spawn, rules, out):
    """``play_board`` for every board ``b`` with ``todo[b]`` (rows of
    ``mines``, ``fog``, ``out``); returns the guess rows of all of them."""
    nc = _fitted(mines, fog, rules, out)
    guesses = np.zeros((64, G_LIMBS + 2 * rules.limbs), np.uint64)
    ng = np.int64(0)  # not a literal 0: play_on and _record_guess compile once
    rev = np.zeros(nc, np.uint8)
    known = np.zeros(nc, np.uint8)
    for b in range(mines.shape[0]):
        if todo[b]:
            guesses, ng = play_board(b, mines[b], fog[b], spawn, rules, -1, rev, known, out[b], guesses, ng)
    return guesses[:ng]


@njit(cache=True, error_model="numpy")
def _figures_play_batch(mines, fog, todo, spawn, rules, figures, out):
    """The difficulty figures (``difficulty.figures_state``, into
    ``figures``) of every board ``b`` with ``todo[b]`` and, on those that
    complete logic does not solve, the game (into ``out``) from the state
    the figures left: the game's first complete-logic pass is theirs. The
    same games as ``_play_batch`` (``tests/test_player.py`` holds them
    equal); returns the guess rows."""
    nc = _fitted(mines, fog, rules, out)
    W, H, nb, nbn = rules.width, rules.height, rules.nb, rules.nbn
    guesses = np.zeros((64, G_LIMBS + 2 * rules.limbs), np.uint64)
    ng = np.int64(0)  # not a literal 0: play_on and _record_guess compile once
    num = np.zeros(nc, np.int32)
    rev = np.zeros(nc, np.uint8)
    known = np.zeros(nc, np.uint8)
    bits = np.zeros((BITS_ROWS, H + 2 * PAD), np.uint64)
    for b in range(mines.shape[0]):
        if todo[b]:
            bits[:] = 0
            safe, has_fog = figures_state(mines[b], fog[b], spawn, W, H, nb, nbn, rules.widen, rules.budget, figures[b],
                                          num, rev, known, bits)
            if figures[b, 4] == 0:  # not solvable by complete logic: a guess is coming
                guesses, ng = play_on(b, mines[b], fog[b], rules, Sight(rev, known, num, bits, safe, has_fog), -1, False,
                                      out[b], guesses, ng)
    return guesses[:ng]


def _check_batch(width: int, height: int, spawn_side: int, mines: np.ndarray, fog: np.ndarray, spawn: np.ndarray,
                 budget: int) -> None:
    """ValueError unless the kernel can play these boards (refused
    before any kernel runs): the size fits, cells are 0/1, fog is safe, the
    spawn square holds no mine (R0 would open one)."""
    check_board(width, height, spawn_side)
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or not 0 <= budget <= MAX_BUDGET:
        raise ValueError(f"node budget must be an integer in [0, {MAX_BUDGET}], got {budget!r}")
    for name, a in (("mines", mines), ("fog", fog)):
        if a.ndim != 2 or a.shape[1] != width * height:
            raise ValueError(f"{name} must be rows of {width * height} cells, got shape {a.shape}")
        if not np.isin(a, (0, 1)).all():
            raise ValueError(f"{name} must be 0 or 1 per cell")
    if mines.shape[0] != fog.shape[0]:
        raise ValueError(f"{mines.shape[0]} boards of mines but {fog.shape[0]} of fog")
    if (mines & fog).any():
        raise ValueError("a fog cell must be safe")
    if mines[:, spawn].any():
        raise ValueError("the spawn square must be free of mines")


def _record(summary: list, guesses: list, width: int) -> dict:
    """One board's record (``FIELDS``) from its summary row and guesses."""
    state = summary[OUT_STATE]
    steps = [(c % width, c // width, p) for c, p in guesses]
    survival = Fraction(1)
    for _, _, p in steps:
        survival *= p
    analysed = state in (WON, LOST)
    first = summary[OUT_OPEN_AT_FIRST]
    return {
        "won": (state == WON) if analysed else None,
        "forced_guesses": summary[OUT_GUESSES],
        "survival": float(survival) if analysed else None,
        "survival_exact": survival if analysed else None,
        "guesses": steps,
        "first_guess_p_safe": steps[0][2] if steps else None,
        "open_share_at_first_guess": Fraction(first, summary[OUT_SAFE]) if first >= 0 else None,
        "too_big": summary[OUT_TOO_BIG],
    }


_NO_GUESS = {"won": True, "forced_guesses": 0, "survival": 1.0, "survival_exact": Fraction(1), "guesses": [],
             "first_guess_p_safe": None, "open_share_at_first_guess": None, "too_big": 0}


def _played(width: int, height: int, spawn_side: int, mines: np.ndarray, fog: np.ndarray | None, revealed,
            safe_count, solvable, budget: int) -> tuple[np.ndarray, list, list[list]]:
    """The kernel's part of :func:`play_batch`: ``(todo, summary rows, each
    board's guesses as (cell, numerator, denominator) of P(safe))``."""
    # writable C arrays always: numba compiles a read-only array as another type
    mines = np.require(mines, np.uint8, ("C", "W"))
    fog = np.zeros_like(mines) if fog is None else np.require(fog, np.uint8, ("C", "W"))
    nb, nbn, spawn = _arrays(width, height, spawn_side)
    _check_batch(width, height, spawn_side, mines, fog, spawn, budget)
    boards = mines.shape[0]
    for name, column in (("revealed", revealed), ("safe_count", safe_count), ("solvable", solvable)):
        if column is not None and np.shape(column) != (boards,):
            raise ValueError(f"{name} must hold one value a board ({boards}), got shape {np.shape(column)}")
    todo = np.ones(boards, np.uint8)
    if revealed is not None and safe_count is not None:
        todo &= np.asarray(revealed) != np.asarray(safe_count)
    if solvable is not None:
        todo &= ~np.asarray(solvable, bool)
    out = np.zeros((boards, OUT_SIZE), np.int64)
    rules = rules_for(width, height, nb, nbn, budget)
    rows = _play_batch(mines, fog, todo, spawn, rules, out) if todo.any() else ()
    return todo, out.tolist(), _decode(rows, boards, rules.limbs)


def _decode(rows, boards: int, L: int) -> list[list]:
    """Each board's guesses from the kernel's guess rows, as ``(cell,
    numerator, denominator)`` of P(safe) in Python integers."""
    per_board: list[list] = [[] for _ in range(boards)]
    if len(rows):
        # every limb at once as little-endian 32-bit words: one int.from_bytes a number
        words = np.ascontiguousarray(rows[:, G_LIMBS:], np.uint64).astype("<u4")
        width_bytes = 4 * L
        for row, w in zip(rows[:, :G_LIMBS].tolist(), words):
            raw = w.tobytes()
            per_board[row[G_BOARD]].append((row[G_CELL], int.from_bytes(raw[:width_bytes], "little"),
                                            int.from_bytes(raw[width_bytes:], "little")))
    return per_board


def play_batch(width: int, height: int, spawn_side: int, mines: np.ndarray, fog: np.ndarray | None = None,
               revealed=None, safe_count=None, solvable=None, budget: int = NODE_BUDGET) -> dict[str, list]:
    """The perfect player on boards of one size (rows of ``mines`` and
    ``fog``, uint8 per cell), as per-board columns (``FIELDS``, one list
    each, boards in order).

    Boards that need no guess get their record with no work: those with
    ``revealed == safe_count`` (|R∞| = |S|, the metrics' integer pair) and,
    when given, those marked ``solvable`` (``solvable_full_logic``: complete
    logic from R∞, which the player runs first, reaches every safe cell)."""
    todo, summary, per_board = _played(width, height, spawn_side, mines, fog, revealed, safe_count, solvable, budget)
    records = [_record(summary[b], [(c, Fraction(n, d)) for c, n, d in per_board[b]], width) if todo[b]
               else _NO_GUESS for b in range(len(todo))]
    return {k: [r[k] for r in records] for k in FIELDS}


def play(board, budget: int = NODE_BUDGET) -> dict:
    """The perfect player's record of one
    :class:`~boardgen_pipeline.board.geometry.Board` (``FIELDS``)."""
    mines, fog = board_rows(board)
    cols = play_batch(board.width, board.height, board.spawn_side, mines, fog, budget=budget)
    return {k: v[0] for k, v in cols.items()}


def board_rows(board) -> tuple[np.ndarray, np.ndarray]:
    mines = np.frombuffer(bytes(board.mines), np.uint8).reshape(1, -1).copy()
    fog = np.zeros_like(mines)
    fog[0, list(board.fog)] = 1
    return mines, fog


def position_at_guess(board, guess: int = 0, budget: int = NODE_BUDGET) -> Position | None:
    """The position at which the player's ``guess + 1``-th guess (0: the
    first) is due - logic has nothing left there; it may be too big to
    enumerate - or None when the game ends before it."""
    mines, fog = board_rows(board)
    W, H = board.width, board.height
    nb, nbn, spawn = _arrays(W, H, board.spawn_side)
    _check_batch(W, H, board.spawn_side, mines, fog, spawn, budget)
    rev, known = np.zeros(W * H, np.uint8), np.zeros(W * H, np.uint8)
    out = np.zeros(OUT_SIZE, np.int64)
    rules = rules_for(W, H, nb, nbn, budget)
    play_board(0, mines[0], fog[0], spawn, rules, guess, rev, known, out,
               np.zeros((64, G_LIMBS + 2 * rules.limbs), np.uint64), 0)
    if out[OUT_STATE] != STOPPED:
        return None
    num = np.zeros(W * H, np.int32)
    numbers_of(mines[0], nb, nbn, num)
    return Position(W, H, rev, np.where(rev == 1, num, 0).astype(np.int32), known, fog[0].copy(),
                    int(mines[0].sum()))


# --- the player's figures in the board's metrics record (per board, in board_metrics) ------

METRICS = ("forced_guesses", "survival", "won", "first_guess_p_safe", "open_share_at_first_guess", "guess_cells",
           "guess_p_safe", "fairness_too_big")


def _metrics(summary: list, guesses: list, width: int) -> dict:
    """One board's ``METRICS`` from its summary row and its guesses as
    ``(cell, numerator, denominator)``: floats of the exact values (the
    product of the P(safe) in integers, one division), no Fraction built."""
    state = summary[OUT_STATE]
    analysed = state in (WON, LOST)
    num = den = 1
    for _, n, d in guesses:
        num, den = num * n, den * d
    first, safe = summary[OUT_OPEN_AT_FIRST], summary[OUT_SAFE]
    return {
        "forced_guesses": summary[OUT_GUESSES],
        "survival": num / den if analysed else None,
        "won": (state == WON) if analysed else None,
        "first_guess_p_safe": guesses[0][1] / guesses[0][2] if guesses else None,
        "open_share_at_first_guess": first / safe if first >= 0 else None,
        "guess_cells": [c for c, _, _ in guesses],
        "guess_p_safe": [n / d for _, n, d in guesses],
        "fairness_too_big": summary[OUT_TOO_BIG],
    }


_NO_GUESS_METRICS = {"forced_guesses": 0, "survival": 1.0, "won": True, "first_guess_p_safe": None,
                     "open_share_at_first_guess": None, "guess_cells": [], "guess_p_safe": [], "fairness_too_big": 0}


def board_figures_batch(width: int, height: int, spawn_side: int, mines: np.ndarray, fog: np.ndarray,
                        todo) -> list[dict | None]:
    """The difficulty fields (``difficulty.FIELDS``) and the player's
    ``METRICS`` of the boards of a batch (rows of ``mines`` and ``fog``)
    where ``todo`` is set, None elsewhere, in one kernel call: the player
    starts where complete logic stopped, so the boards it solves cost the
    player nothing and the others skip their first pass."""
    from boardgen_pipeline.board.difficulty import _record as difficulty_record

    mines = np.require(mines, np.uint8, ("C", "W"))
    fog = np.require(fog, np.uint8, ("C", "W"))
    nb, nbn, spawn = _arrays(width, height, spawn_side)
    _check_batch(width, height, spawn_side, mines, fog, spawn, NODE_BUDGET)
    todo = np.ascontiguousarray(todo, np.uint8)
    boards = mines.shape[0]
    if todo.shape != (boards,):
        raise ValueError(f"todo must hold one value a board ({boards}), got shape {todo.shape}")
    figures = np.zeros((boards, 7), np.int64)
    out = np.zeros((boards, OUT_SIZE), np.int64)
    rules = rules_for(width, height, nb, nbn, NODE_BUDGET)
    rows = _figures_play_batch(mines, fog, todo, spawn, rules, figures, out)
    per_board = _decode(rows, boards, rules.limbs)
    summary = out.tolist()
    records: list[dict | None] = []
    for b, (f, t) in enumerate(zip(figures.tolist(), todo.tolist())):
        if not t:
            records.append(None)
            continue
        d = difficulty_record(f)
        records.append({**d, **(dict(_NO_GUESS_METRICS) if d["solvable_full_logic"]
                                else _metrics(summary[b], per_board[b], width))})
    return records


def game_json(board) -> dict:
    """One game of the player on ``board`` as ``boardgen play`` prints it:
    ``won``, ``forced_guesses``, ``survival`` and ``guesses`` as
    ``{x, y, p_safe}`` (floats of the exact fractions); a board it could not
    analyse has ``won`` and ``survival`` null and ``too_big`` > 0."""
    r = play(board)
    return {"won": r["won"], "forced_guesses": r["forced_guesses"], "survival": r["survival"],
            "guesses": [{"x": x, "y": y, "p_safe": float(p)} for x, y, p in r["guesses"]], "too_big": r["too_big"]}
