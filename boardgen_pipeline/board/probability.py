"""Exact mine probabilities of a position (seed 000 "可推理率承诺":
a player "loses only to a gamble they chose, never to a board with large
unsolvable areas"; SPEC 2.3 for the knowledge a player has, SPEC 5 / seed
001 F1 for fog).

A position is what a player sees: the opened cells and their numbers, the
cells proven to be mines, the fog cells, and the board's total mine count
(known to the player, as in every minesweeper). Every layout of mines
consistent with all of that is equally likely; the probability that a cell
is a mine is the share of those layouts in which it is one.

Fog (SPEC 5, as in the project's closure and ``difficulty``): a fog cell is
known safe and shows no number, opened or not; a fog cell next to an opened
cell counts as opened (meta-knowledge). So fog is never unknown and never a
constraint.

How it is counted (the reasoning of ``difficulty``'s complete logic, with
counts instead of yes/no):

- the *frontier* (unknown cells next to a visible number) splits into
  independent components, linked through shared constraints
  (``difficulty.frontier_components``); the other unknown cells are the
  *interior*: no number touches them, so they are interchangeable;
- each component's consistent assignments are enumerated by backtracking
  (``difficulty.component_counts``, compiled, ``int64`` counts): per mine
  count k, the number of assignments ``count[k]`` and per cell the number
  with that cell a mine;
- the global mine count couples the components and the interior: one
  combination of per-component counts ``k_i`` with ``x = r - sum k_i``
  interior mines (``r`` = mines not yet proven) weighs
  ``prod count_i[k_i] * C(interior, x)`` layouts. ``total`` is the sum over
  all combinations; a frontier cell's weight adds, over the combinations,
  its component's cell count in place of ``count_i``; an interior cell's
  weight adds ``C(interior - 1, x - 1)`` in place of ``C(interior, x)``.

**Arithmetic: exact integers, never floats.** ``P(mine) = weight / total``
with both integers, handed out as ``fractions.Fraction``. Two equal
probabilities are equal integers, two different ones differ, however close:
a near-tie is never taken for a tie nor a tie for a near-tie. There are two
exact implementations of the combination, held equal by the tests:

- ``combine_exact``, the reference: Python integers, prefix and suffix
  products of the component polynomials, written to be read against the
  formula above; ``probabilities`` uses it;
- ``combine``, the compiled twin the perfect player (``player``) runs at
  every forced guess: fixed-width integers of 32-bit limbs (``limbs``), the
  generating function of the whole position divided exactly by each
  component's polynomial, the interior weight from "the unknown cells hold
  exactly r mines" (``sum of weights = r * total``).

**Too big.** The enumeration has a node budget per position
(``NODE_BUDGET``, as in ``difficulty``). A component that does not fit what
is left of it is counted in ``too_big`` and then nothing is claimed: no
probability at all (every component is coupled to every other through the
mine count), never an approximation.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import NamedTuple

import numpy as np
from numba import njit

from boardgen_pipeline.board import limbs
from boardgen_pipeline.board.closure_cells import constraint_at
from boardgen_pipeline.board.difficulty import NODE_BUDGET, component_counts, open_seen_fog
from boardgen_pipeline.board.difficulty import frontier_components as _frontier_components
from boardgen_pipeline.board.geometry import neighbour_arrays
from boardgen_pipeline.board.kernel_args import MAX_SIDE
from boardgen_pipeline.words import count

__all__ = ["NODE_BUDGET", "Position", "Probabilities", "probabilities", "position_from_text"]

# a cell's place in a position, as ``tables`` classifies it
KNOWN, FRONTIER, INTERIOR = 0, 1, 2

# counts of assignments stay below the node budget (one leaf a node at most);
# the compiled combination multiplies by them as factors below 2**32
MAX_BUDGET = 2**32 - 1


class Position(NamedTuple):
    """What a player sees (arrays of ``width * height`` cells, row-major)."""

    width: int
    height: int
    revealed: np.ndarray  # uint8: opened (fog next to an opened cell counts as opened)
    numbers: np.ndarray  # int32: the number an opened cell shows (read at opened non-fog cells only)
    known_mines: np.ndarray  # uint8: cells proven to be mines
    fog: np.ndarray  # uint8: fog cells (known safe, no number)
    mines_total: int  # mines on the board


def position_from_text(text: str, mines_total: int) -> Position:
    """A position drawn as text, rows top to bottom (one a line or joined by
    ``/``): ``0``-``8`` an opened cell and its number, ``?`` a closed cell,
    ``*`` a proven mine, ``f`` a fog cell."""
    rows = [r.strip() for part in text.strip().splitlines() for r in part.split("/")]
    rows = [r for r in rows if r]
    if not rows or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError(f"a position is a rectangle of cells, got rows of lengths {[len(r) for r in rows]}")
    flat = "".join(rows)
    bad = sorted({ch for ch in flat if ch not in "012345678?*f"})
    if bad:
        raise ValueError(f"unknown cell characters {bad}; use 0-8 ? * f")
    code = np.frombuffer(flat.encode("ascii"), np.uint8)
    digit = (code >= ord("0")) & (code <= ord("8"))
    return Position(len(rows[0]), len(rows), digit.astype(np.uint8), np.where(digit, code - ord("0"), 0).astype(np.int32),
                    (code == ord("*")).astype(np.uint8), (code == ord("f")).astype(np.uint8), mines_total)


def check_position(p: Position, budget: int) -> None:
    """ValueError unless the kernels can read ``p``: the sizes match, cells
    are 0/1, numbers lie in 0..8, no cell is both opened (or fog) and a
    proven mine, the mine count covers the proven mines (refused before any
    kernel runs, as ``kernels.check_board`` does for boards)."""
    w, h = p.width, p.height
    for name, v in (("width", w), ("height", h), ("mines_total", p.mines_total), ("budget", budget)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an integer, got {v!r}")
    if not (1 <= w <= MAX_SIDE and 1 <= h <= MAX_SIDE):
        raise ValueError(f"position size {w}x{h} is outside [1, {MAX_SIDE}] on a side")
    if not 0 <= budget <= MAX_BUDGET:
        raise ValueError(f"node budget must lie in [0, {MAX_BUDGET}], got {budget}")
    for name in ("revealed", "numbers", "known_mines", "fog"):
        a = np.asarray(getattr(p, name))
        if a.shape != (w * h,):
            raise ValueError(f"{name} must hold {w * h} cells, got shape {a.shape}")
    for name in ("revealed", "known_mines", "fog"):
        if not np.isin(np.asarray(getattr(p, name)), (0, 1)).all():
            raise ValueError(f"{name} must be 0 or 1 per cell")
    shown = (np.asarray(p.revealed) == 1) & (np.asarray(p.fog) == 0)
    nums = np.asarray(p.numbers)
    if ((nums[shown] < 0) | (nums[shown] > 8)).any():
        raise ValueError("an opened cell's number must lie in 0..8")
    known = np.asarray(p.known_mines) == 1
    if (known & ((np.asarray(p.revealed) == 1) | (np.asarray(p.fog) == 1))).any():
        raise ValueError("a proven mine cannot be an opened or fog cell")
    if not int(known.sum()) <= p.mines_total <= w * h:
        raise ValueError(f"mines_total {p.mines_total} must lie in [proven mines {int(known.sum())}, cells {w * h}]")


@njit(cache=True, error_model="numpy")
def tables(rev, known, num, fog, W, H, nb, nbn, budget):
    """The enumeration of a position: fog next to opened cells opened (in
    place: ``rev`` is the caller's copy), constraints of every opened
    non-fog cell with unknown neighbours, frontier components, and each
    component's tables. Returns ``(kind, cells, starts, coff, counts, moff,
    cell_counts, interior, over, nodes)``: ``kind`` per cell (KNOWN,
    FRONTIER, INTERIOR); component i is ``cells[starts[i]:starts[i + 1]]``
    (n_i cells), its ``count[k]`` is ``counts[coff[i] + k]`` and its cell j's
    count ``cell_counts[moff[i] + j * (n_i + 1) + k]``; ``over`` components
    did not fit the node budget (their tables are zero)."""
    nc = W * H
    open_seen_fog(rev, num, fog, nb, nbn, np.empty(nc, np.int32), np.empty(nc, np.int32), np.int64(0))
    cm = np.zeros(nc, np.int32)
    ccnt = np.zeros(nc, np.int32)
    for c in range(nc):
        # every opened number is a constraint, zeros included (a position
        # need not be chained through its zeros)
        if rev[c] == 1 and fog[c] == 0:
            _, cm[c], ccnt[c] = constraint_at(c, rev, known, num, nb, nbn, W, H)
    order, starts, ncomp, front, interior = _frontier_components(rev, known, fog, ccnt, nb, nbn)
    kind = np.zeros(nc, np.uint8)
    for c in range(nc):
        if front[c]:
            kind[c] = FRONTIER
        elif rev[c] == 0 and known[c] == 0 and fog[c] == 0:
            kind[c] = INTERIOR
    coff = np.zeros(ncomp + 1, np.int64)
    moff = np.zeros(ncomp + 1, np.int64)
    for i in range(ncomp):
        n = starts[i + 1] - starts[i]
        coff[i + 1] = coff[i] + n + 1
        moff[i + 1] = moff[i] + n * (n + 1)
    counts = np.zeros(coff[ncomp], np.int64)
    cell_counts = np.zeros(moff[ncomp], np.int64)
    cid = np.full(nc, -1, np.int32)
    nodes = 0
    over = 0
    for i in range(ncomp):
        count, cell_count, used = component_counts(order[starts[i]:starts[i + 1]], ccnt, cm, nb, nbn, cid,
                                                   budget - nodes)
        if used < 0:
            over += 1
            continue
        nodes += used
        counts[coff[i]:coff[i + 1]] = count
        cell_counts[moff[i]:moff[i + 1]] = cell_count.ravel()
    return kind, order[:starts[ncomp]].copy(), starts[:ncomp + 1].copy(), coff, counts, moff, cell_counts, interior, \
        over, nodes


class Tables(NamedTuple):
    """``tables``' output for Python: per component, ``count[k]`` and per
    cell ``[count with the cell a mine, for k = 0..n]``."""

    kind: np.ndarray
    components: list[tuple[int, ...]]  # cells of each component, in enumeration order
    counts: list[list[int]]
    cell_counts: list[list[list[int]]]
    interior: int
    remaining: int  # mines not proven: in the frontier and the interior
    over: int
    nodes: int


def _arrays(p: Position) -> tuple:
    nb, nbn = neighbour_arrays(p.width, p.height)
    # copies: ``tables`` opens seen fog in its ``rev``, and numba would
    # compile a read-only input as another type
    return (np.array(p.revealed, np.uint8), np.array(p.known_mines, np.uint8), np.array(p.numbers, np.int32),
            np.array(p.fog, np.uint8), p.width, p.height, nb, nbn)


def enumerate_position(p: Position, budget: int = NODE_BUDGET) -> Tables:
    """The component tables of a position (validated first)."""
    check_position(p, budget)
    kind, cells, starts, coff, counts, moff, cell_counts, interior, over, nodes = tables(*_arrays(p), budget)
    comps, cnt, cc = [], [], []
    cells, starts, coff, moff = cells.tolist(), starts.tolist(), coff.tolist(), moff.tolist()
    for i in range(len(starts) - 1):
        n = starts[i + 1] - starts[i]
        comps.append(tuple(cells[starts[i]:starts[i + 1]]))
        cnt.append(counts[coff[i]:coff[i + 1]].tolist())
        cc.append(cell_counts[moff[i]:moff[i + 1]].reshape(n, n + 1).tolist())
    remaining = p.mines_total - int(np.asarray(p.known_mines).sum())
    return Tables(kind, comps, cnt, cc, int(interior), remaining, int(over), int(nodes))


def _convolve(a: list[int], b: list[int]) -> list[int]:
    out = [0] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def _binomial(n: int, k: int) -> int:
    return comb(n, k) if 0 <= k <= n else 0


def combine_exact(t: Tables) -> tuple[int, list[list[int]], int]:
    """The reference combination in Python integers: ``(total, weight of
    each cell of each component, weight of an interior cell)``.

    ``others`` of component i = the product of every other component's
    polynomial ``sum_k count[k] z^k`` (prefix times suffix); the weight of
    the rest of the board when component i holds k mines is
    ``sum_s others[s] * C(interior, r - k - s)``."""
    polys = t.counts
    n = len(polys)
    prefix = [[1]]
    for poly in polys:
        prefix.append(_convolve(prefix[-1], poly))
    suffix = [[1]] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = _convolve(polys[i], suffix[i + 1])
    r, interior = t.remaining, t.interior
    total = sum(c * _binomial(interior, r - s) for s, c in enumerate(prefix[n]))
    weights = []
    for i in range(n):
        others = _convolve(prefix[i], suffix[i + 1])
        rest = [sum(c * _binomial(interior, r - k - s) for s, c in enumerate(others)) for k in range(len(polys[i]))]
        weights.append([sum(m * w for m, w in zip(cell, rest)) for cell in t.cell_counts[i]])
    inner = sum(c * _binomial(interior - 1, r - s - 1) for s, c in enumerate(prefix[n])) if interior else 0
    return total, weights, inner


@njit(cache=True, error_model="numpy")
def _binomials(interior, upto, L):
    """``C(interior, x)`` for ``x = 0..upto`` (zero past ``interior``)."""
    out = np.zeros((upto + 1, L), np.uint64)
    limbs.set_small(out[0], 1)
    for x in range(1, min(upto, interior) + 1):
        if not limbs.add_mul(out[x], out[x - 1], interior - x + 1):
            raise OverflowError("limb width exceeded")
        if limbs.div_small(out[x], x) != 0:
            raise ArithmeticError("inexact binomial")
    return out


@njit(cache=True, error_model="numpy")
def combine(counts, coff, cell_counts, moff, starts, interior, remaining, L):
    """The compiled combination in ``L``-limb integers: ``(consistent,
    total, weight of each frontier cell (rows in ``tables``' cell order),
    weight of an interior cell)``.

    With ``P_i(z) = sum_k count_i[k] z^k`` and ``B(z) = sum_x C(interior,
    x) z^x``, the layouts with ``r`` unknown mines are the coefficient of
    ``z^r`` in ``G = B * prod P_i``: ``total = G[r]``. ``G / P_i`` (an exact
    power-series division: ``P_i``'s lowest coefficient is a count >= 1)
    is the rest of the board for component i, so a cell's weight is
    ``sum_k cell_count[k] * (G / P_i)[r - k]``. Every unknown cell of every
    layout counted is a mine r times in all, so an interior cell weighs
    ``(r * total - sum of frontier weights) / interior``. Degrees are
    counted from the lowest feasible mine counts, and only coefficients up
    to ``z^r`` are kept."""
    ncomp = starts.shape[0] - 1
    nf = starts[ncomp]
    total = np.zeros(L, np.uint64)
    weights = np.zeros((nf, L), np.uint64)
    inner = np.zeros(L, np.uint64)
    lo = np.zeros(ncomp, np.int64)
    hi = np.zeros(ncomp, np.int64)
    low = 0
    high = interior
    for i in range(ncomp):
        n = starts[i + 1] - starts[i]
        lo[i], hi[i] = -1, -1
        for k in range(n + 1):
            if counts[coff[i] + k] > 0:
                if lo[i] < 0:
                    lo[i] = k
                hi[i] = k
        if lo[i] < 0:
            return False, total, weights, inner
        low += lo[i]
        high += hi[i]
    if remaining < low or remaining > high:
        return False, total, weights, inner
    R = remaining - low  # G is kept from z^low to z^remaining
    g = _binomials(interior, R, L)
    tmp = np.zeros(L, np.uint64)
    for i in range(ncomp):
        base = coff[i] + lo[i]
        d = hi[i] - lo[i]
        for t in range(R, -1, -1):
            tmp[:] = 0
            for k in range(min(d, t) + 1):
                if not limbs.add_mul(tmp, g[t - k], counts[base + k]):
                    raise OverflowError("limb width exceeded")
            g[t] = tmp
    total[:] = g[R]
    q = np.zeros((R + 1, L), np.uint64)
    frontier_sum = np.zeros(L, np.uint64)
    for i in range(ncomp):
        base = coff[i] + lo[i]
        d = hi[i] - lo[i]
        lead = counts[base]
        for t in range(R + 1):
            q[t] = g[t]
            for k in range(1, min(d, t) + 1):
                if not limbs.sub_mul(q[t], q[t - k], counts[base + k]):
                    raise ArithmeticError("inexact series division")
            if limbs.div_small(q[t], lead) != 0:
                raise ArithmeticError("inexact series division")
        n = starts[i + 1] - starts[i]
        for j in range(n):
            row = weights[starts[i] + j]
            cbase = moff[i] + j * (n + 1) + lo[i]
            for k in range(min(d, R) + 1):
                if not limbs.add_mul(row, q[R - k], cell_counts[cbase + k]):
                    raise OverflowError("limb width exceeded")
            if not limbs.add_mul(frontier_sum, row, np.int64(1)):
                raise OverflowError("limb width exceeded")
    if interior > 0:
        if not limbs.add_mul(inner, total, remaining) or not limbs.sub_mul(inner, frontier_sum, np.int64(1)):
            raise ArithmeticError("frontier weights exceed r * total")
        if limbs.div_small(inner, interior) != 0:
            raise ArithmeticError("inexact interior weight")
    return True, total, weights, inner


@dataclass(frozen=True)
class Probabilities:
    """The exact mine probabilities of a position: ``P(mine at c) =
    weights[c] / total`` (proven mines weigh ``total``, opened and fog cells
    0). When ``too_big`` components did not fit the node budget, ``total``
    is 0 and nothing is claimed."""

    width: int
    height: int
    total: int
    weights: tuple[int, ...]
    frontier: tuple[int, ...]  # unknown cells next to a number, row-major
    interior: tuple[int, ...]  # the other unknown cells, row-major
    components: int
    too_big: int
    nodes: int

    @property
    def exact(self) -> bool:
        return self.too_big == 0

    def _claim(self) -> None:
        if not self.exact:
            raise ValueError(f"{count(self.too_big, 'component')} over the node budget: no probability is claimed")

    def p_mine(self, cell: int) -> Fraction:
        self._claim()
        return Fraction(self.weights[cell], self.total)

    def p_interior(self) -> Fraction | None:
        """The probability of every interior cell (None: no interior)."""
        self._claim()
        return Fraction(self.weights[self.interior[0]], self.total) if self.interior else None

    def lowest(self) -> tuple[int, Fraction] | None:
        """The unknown cell least likely to be a mine, ties to the lowest
        row-major index (the player's order), with its P(mine); None when
        no unknown cell is left."""
        self._claim()
        unknown = sorted(self.frontier + self.interior)
        if not unknown:
            return None
        cell = min(unknown, key=lambda c: (self.weights[c], c))
        return cell, Fraction(self.weights[cell], self.total)


def probabilities(p: Position, budget: int = NODE_BUDGET) -> Probabilities:
    """The exact mine probability of every cell of a position (the
    reference combination, Python integers). ValueError for a position no
    board can have (its numbers contradict each other or the mine count)."""
    t = enumerate_position(p, budget)
    frontier = tuple(int(c) for c in np.flatnonzero(t.kind == FRONTIER))
    interior = tuple(int(c) for c in np.flatnonzero(t.kind == INTERIOR))
    if t.over:
        return Probabilities(p.width, p.height, 0, (), frontier, interior, len(t.components), t.over, t.nodes)
    total, comp_weights, inner = combine_exact(t)
    if total == 0:
        raise ValueError("inconsistent position: no layout of mines agrees with its numbers and mine count")
    weights = [0] * (p.width * p.height)
    for c in np.flatnonzero(np.asarray(p.known_mines)).tolist():
        weights[c] = total
    for cells, ws in zip(t.components, comp_weights):
        for c, w in zip(cells, ws):
            weights[c] = w
    for c in interior:
        weights[c] = inner
    return Probabilities(p.width, p.height, total, tuple(weights), frontier, interior, len(t.components), 0, t.nodes)
