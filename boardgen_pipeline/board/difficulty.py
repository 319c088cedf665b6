"""Per-board difficulty figures next to the inferability guarantee (see
SPEC 2.3 for R0 / R∞ and the ``single_subset`` rules; seed 001 F1 for the
fog meta-knowledge and "changing the rule set is a design revision").

Inferability says *whether* a board can be solved without guessing; these
figures say how long and how hard the solve is. None of them feeds back into
the generator: they are read off the final board, and the frozen
``single_subset`` definition stays the only pass/fail criterion.

- ``bbbv`` (Bechtel's Board Benchmark Value, 3BV) and ``openings``: the
  community's standard figures on the whole board, as every minesweeper tool
  computes them (openings = 8-connected regions of zero cells; 3BV = openings
  + safe cells not next to a zero). Fog is ignored here: the figures describe
  the layout, and the standard definition keeps them comparable with other
  generators (docs/decisions.md).
- ``solve_rounds`` and ``subset_steps``: the ``single_subset`` closure from R0
  run in *waves*, the way a careful player works: one wave applies the single
  rule to every visible constraint at once; only when it finds nothing does a
  wave apply the subset rule to every pair of constraints at once. Chaining
  through zeros and opening fog next to revealed cells are free (part of a
  wave, as in ``solver.closures``). ``solve_rounds`` counts the waves up to
  the last one that revealed a cell; ``subset_steps`` counts the cells (safe or
  mine) settled by subset waves up to that point: deductions the single rule
  could not make at the time. The fixed point is R∞ of ``solver.closures``
  (the closure is order-free, seed 001 F1 note 5); the tests hold them equal.
  A board the single rule clears has ``subset_steps == 0``: single-first waves
  reach R∞ before any subset wave.
- ``solvable_full_logic``: whether complete logic reaches every safe cell.
  Complete logic knows every visible number, the proven mines, that fog cells
  are safe, and the global mine count; a cell is safe when it is safe in every
  mine configuration consistent with all of that. It is computed exactly: the
  unknown cells next to visible numbers split into connected components; each
  component is enumerated by backtracking (partial sums per constraint prune
  the search), recording which mine counts are feasible and, per count,
  whether each cell can be a mine or safe; the global count couples the
  components and the cells far from any number (the "interior"). Proven safe
  cells open (and chain), proven mines are marked, the ``single_subset``
  closure runs again, and so on to the fixed point. Soundness: every step
  uses only facts true of the board, so knowledge only grows and the fixed
  point contains R∞ (full logic never does worse than ``single_subset``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit, uint64

from boardgen_pipeline.board.closure_cells import WIDEN, closure_cells_of, constraint_at
from boardgen_pipeline.board.closure_rows import BITS_ROWS, PAD, close_rows, load_rows, store_rows, waves_rows
from boardgen_pipeline.board.geometry import neighbour_arrays, parse_layout
from boardgen_pipeline.board.place_numbers import numbers_of
from boardgen_pipeline.board.solver import spawn_square

# Enumeration nodes allowed per board for the exact solver. A component
# needing more is left undecided (no deduction from it), so the answer can
# only err towards "not solvable"; on the shipped tables it is never reached
# (docs/performance.md).
NODE_BUDGET = 2_000_000


FIELDS = ("bbbv", "openings", "subset_steps", "solve_rounds", "solvable_full_logic")


_WIDEN = WIDEN  # the window table of the cell closure


@njit(cache=True, error_model="numpy")
def bbbv_openings(mines, num, nb, nbn):
    """``(3BV, openings)`` of a board: one click per opening (a zero region
    opens with its border), one per safe cell no opening reaches."""
    nc = mines.shape[0]
    covered = np.zeros(nc, np.uint8)
    queue = np.empty(nc, np.int32)
    openings = 0
    for s in range(nc):
        if mines[s] or num[s] != 0 or covered[s]:
            continue
        openings += 1
        covered[s] = 1
        queue[0] = s
        qh, qt = 0, 1
        while qh < qt:
            c = queue[qh]
            qh += 1
            for k in range(nbn[c]):
                n = nb[c, k]
                if covered[n] == 0:
                    covered[n] = 1  # a neighbour of a zero is never a mine
                    if num[n] == 0:
                        queue[qt] = n
                        qt += 1
    lone = 0
    for c in range(nc):
        if mines[c] == 0 and covered[c] == 0:
            lone += 1
    return openings + lone, openings


@njit(cache=True, error_model="numpy")
def _open(c, rev, num, fog, nb, nbn, queue, act, nact):
    """Open a safe cell: chain through zeros (fog never chains) and open fog
    next to anything opened (fog is known safe, seed 001 F1 (b)). Opened
    numbered cells join the active constraints ``act[:nact]``; returns the
    new ``nact``."""
    if rev[c]:
        return nact
    rev[c] = 1
    queue[0] = c
    qh, qt = 0, 1
    while qh < qt:
        v = queue[qh]
        qh += 1
        chain = num[v] == 0 and fog[v] == 0
        if num[v] > 0 and fog[v] == 0:
            act[nact] = v
            nact += 1
        for k in range(nbn[v]):
            n = nb[v, k]
            if rev[n] == 0 and (chain or fog[n] == 1):
                rev[n] = 1
                queue[qt] = n
                qt += 1
    return nact


@njit(cache=True, error_model="numpy")
def open_seen_fog(rev, num, fog, nb, nbn, queue, act, nact):
    """Open every fog cell next to an opened cell (fog is known safe, seed
    001 F1 (b)), and the fog next to those; returns the new ``nact``."""
    for c in range(rev.shape[0]):
        if rev[c]:
            for k in range(nbn[c]):
                n = nb[c, k]
                if fog[n] == 1 and rev[n] == 0:
                    nact = _open(np.int64(n), rev, num, fog, nb, nbn, queue, act, nact)
    return nact


@njit(cache=True, error_model="numpy")
def _constraints(rev, known, num, fog, W, H, nb, nbn, cmask, cm, ccnt):
    """The constraint of every revealed numbered cell (``ccnt`` 0: none)."""
    for c in range(W * H):
        ccnt[c] = 0
        if rev[c] == 1 and fog[c] == 0 and num[c] > 0:
            cmask[c], cm[c], ccnt[c] = constraint_at(c, rev, known, num, nb, nbn, W, H)


@njit(cache=True, error_model="numpy")
def _mark_window(diff, value, x, y, W, mark, marked, nmarked):
    """Mark the unmarked cells of a 49-bit window mask centred on (x, y)."""
    for b in range(49):
        if (diff >> uint64(b)) & uint64(1):
            n = (y + b // 7 - 3) * W + (x + b % 7 - 3)
            if mark[n] == 0:
                mark[n] = value
                marked[nmarked] = n
                nmarked += 1
    return nmarked


@njit(cache=True, error_model="numpy")
def waves(rev, known, num, fog, W, H, nb, nbn, widen):
    """Run the ``single_subset`` closure in waves from the current state (in
    place). Returns ``(solve_rounds, subset_steps)``, both counted up to the
    last wave that revealed a cell.

    Only the active constraints (revealed numbered cells with unknown
    neighbours) are visited; a wave reads the constraints as they were at its
    start, so its deductions are simultaneous."""
    nc = W * H
    cmask = np.zeros(nc, np.int64)
    cm = np.zeros(nc, np.int32)
    ccnt = np.zeros(nc, np.int32)  # 0 for every cell not active
    mark = np.zeros(nc, np.uint8)  # 1 safe, 2 mine
    marked = np.empty(nc, np.int32)
    queue = np.empty(nc, np.int32)
    act = np.empty(nc, np.int32)
    nact = np.int64(0)  # not a literal 0: _open and open_seen_fog compile once
    for c in range(nc):
        if rev[c] == 1 and num[c] > 0 and fog[c] == 0:
            act[nact] = c
            nact += 1
    nact = open_seen_fog(rev, num, fog, nb, nbn, queue, act, nact)
    rounds = 0
    subset = 0
    last_rounds = 0
    last_subset = 0
    while True:
        # refresh the constraints, dropping the settled ones
        keep = 0
        for i in range(nact):
            c = act[i]
            ma, m, cnt = constraint_at(c, rev, known, num, nb, nbn, W, H)
            cmask[c], cm[c], ccnt[c] = ma, m, cnt
            if cnt > 0:
                act[keep] = c
                keep += 1
        nact = keep
        nmarked = np.int64(0)
        for i in range(nact):
            c = act[i]
            cnt = ccnt[c]
            if cm[c] != 0 and cm[c] != cnt:
                continue
            x, y = c % W, c // W
            for b in range(9):
                if cmask[c] >> b & 1:
                    n = (y + b // 3 - 1) * W + (x + b % 3 - 1)
                    if mark[n] == 0:
                        marked[nmarked] = n
                        nmarked += 1
                        mark[n] = 1 if cm[c] == 0 else 2
        by_subset = nmarked == 0
        if by_subset:
            # subset wave: U_A a proper subset of U_B puts m_B - m_A mines in U_B - U_A
            for i in range(nact):
                a = act[i]
                x, y = a % W, a // W
                wa = widen[cmask[a]]
                for oy in range(-2, 3):
                    yy = y + oy
                    if yy < 0 or yy >= H:
                        continue
                    for ox in range(-2, 3):
                        xx = x + ox
                        if (ox == 0 and oy == 0) or xx < 0 or xx >= W:
                            continue
                        b = yy * W + xx
                        if ccnt[b] <= ccnt[a]:
                            continue
                        s = oy * 7 + ox
                        wb = widen[cmask[b]]
                        wb = wb << uint64(s) if s >= 0 else wb >> uint64(-s)
                        if wa & ~wb:
                            continue
                        dm = cm[b] - cm[a]
                        if dm == 0 or dm == ccnt[b] - ccnt[a]:
                            nmarked = _mark_window(wb & ~wa, 1 if dm == 0 else 2, x, y, W, mark, marked, nmarked)
        if nmarked == 0:
            break
        rounds += 1
        revealed_any = False
        for i in range(nmarked):
            c = marked[i]
            if mark[c] == 2:
                known[c] = 1
            else:
                revealed_any = True
                nact = _open(c, rev, num, fog, nb, nbn, queue, act, nact)
            mark[c] = 0
        if by_subset:
            subset += nmarked
        if revealed_any:
            last_rounds, last_subset = rounds, subset
    return last_rounds, last_subset


@njit(cache=True, error_model="numpy")
def enumerate_counts(n, cons_of, ncons_of, cm, count, cell_count, budget):
    """Every assignment of mines to the ``n`` cells of a component meeting
    its constraints (``cm[k]`` mines among the component cells of constraint
    k; ``cons_of[i, :ncons_of[i]]`` the constraints of cell i). Adds, per
    mine count k, the number of assignments to ``count[k]`` and the number
    with cell i a mine to ``cell_count[i, k]``. Returns the nodes used, or -1
    when over ``budget`` (the tables are then incomplete). Partial sums per
    constraint prune the search: a constraint already over its count, or
    that can no longer reach it, cuts the branch."""
    ncon = cm.shape[0]
    placed = np.zeros(ncon, np.int32)
    left = np.zeros(ncon, np.int32)
    for i in range(n):
        for j in range(ncons_of[i]):
            left[cons_of[i, j]] += 1
    val = np.full(n + 1, -1, np.int8)
    i = 0
    mines = 0
    nodes = 0
    while i >= 0:
        if i == n:
            count[mines] += 1
            for j in range(n):
                if val[j] == 1:
                    cell_count[j, mines] += 1
            i -= 1
            continue
        v = val[i]
        if v >= 0:  # undo the current choice
            for j in range(ncons_of[i]):
                k = cons_of[i, j]
                left[k] += 1
                placed[k] -= v
            mines -= v
        if v == 1:
            val[i] = -1
            i -= 1
            continue
        v += 1
        val[i] = v
        nodes += 1
        if nodes > budget:
            return -1
        ok = True
        for j in range(ncons_of[i]):
            k = cons_of[i, j]
            left[k] -= 1
            placed[k] += v
            if placed[k] > cm[k] or placed[k] + left[k] < cm[k]:
                ok = False
        mines += v
        if ok:
            i += 1
            val[i] = -1
    return nodes


@njit(cache=True, error_model="numpy")
def _convolve(a, b):
    out = np.zeros(a.shape[0] + b.shape[0] - 1, np.bool_)
    for i in range(a.shape[0]):
        if a[i]:
            for j in range(b.shape[0]):
                if b[j]:
                    out[i + j] = True
    return out


@njit(cache=True, error_model="numpy")
def frontier_components(rev, known, fog, ccnt, nb, nbn):
    """The unknown cells next to a constraint (``ccnt[c] > 0``: the
    frontier) split into components linked through shared constraints.
    Returns ``(order, starts, ncomp, front, interior)``: component i is
    ``order[starts[i]:starts[i + 1]]``, in BFS order so each constraint
    closes soon after it opens (tight pruning); ``front`` marks the
    frontier; ``interior`` counts the unknown cells off it (fog is known
    safe, never unknown)."""
    nc = rev.shape[0]
    comp = np.full(nc, -1, np.int32)
    front = np.zeros(nc, np.uint8)
    for c in range(nc):
        if ccnt[c]:
            for k in range(nbn[c]):
                n = nb[c, k]
                if rev[n] == 0 and known[n] == 0:
                    front[n] = 1
    interior = 0
    for c in range(nc):
        if rev[c] == 0 and known[c] == 0 and fog[c] == 0 and front[c] == 0:
            interior += 1
    order = np.empty(nc, np.int32)
    starts = np.zeros(nc + 1, np.int32)
    ncomp = 0
    total = 0
    for s in range(nc):
        if front[s] == 0 or comp[s] >= 0:
            continue
        starts[ncomp] = total
        comp[s] = ncomp
        order[total] = s
        qh = total
        total += 1
        while qh < total:
            u = order[qh]
            qh += 1
            for k in range(nbn[u]):
                c = nb[u, k]
                if ccnt[c] == 0:
                    continue
                for k2 in range(nbn[c]):
                    v = nb[c, k2]
                    if front[v] and comp[v] < 0 and rev[v] == 0 and known[v] == 0:
                        comp[v] = ncomp
                        order[total] = v
                        total += 1
        ncomp += 1
    starts[ncomp] = total
    return order, starts, ncomp, front, interior


@njit(cache=True, error_model="numpy")
def component_system(cells, ccnt, cm, nb, nbn, cid):
    """The constraints of one component (``cells``): ``(cons_of, ncons_of,
    cm)`` as ``enumerate_counts`` reads them. ``cid`` (-1 everywhere, per
    cell) is scratch, left as it was found."""
    n = cells.shape[0]
    ncon = 0
    cons_of = np.zeros((n, 8), np.int32)
    ncons_of = np.zeros(n, np.int32)
    cmv = np.zeros(8 * n, np.int32)
    for i in range(n):
        u = cells[i]
        for k in range(nbn[u]):
            c = nb[u, k]
            if ccnt[c] == 0:
                continue
            if cid[c] < 0:
                cid[c] = ncon
                cmv[ncon] = cm[c]
                ncon += 1
            cons_of[i, ncons_of[i]] = cid[c]
            ncons_of[i] += 1
    for i in range(n):
        u = cells[i]
        for k in range(nbn[u]):
            cid[nb[u, k]] = -1
    return cons_of, ncons_of, cmv[:ncon]


@njit(cache=True, error_model="numpy")
def component_counts(cells, ccnt, cm, nb, nbn, cid, budget):
    """``enumerate_counts`` of one component: ``(count, cell_count, nodes
    used or -1 over budget)``."""
    n = cells.shape[0]
    cons_of, ncons_of, cmv = component_system(cells, ccnt, cm, nb, nbn, cid)
    count = np.zeros(n + 1, np.int64)
    cell_count = np.zeros((n, n + 1), np.int64)
    return count, cell_count, enumerate_counts(n, cons_of, ncons_of, cmv, count, cell_count, budget)


@njit(cache=True, error_model="numpy")
def _exact_pass(rev, known, num, fog, mines_total, W, H, nb, nbn, budget):
    """One pass of complete logic: open every cell safe in all consistent
    configurations, mark every cell that is a mine in all of them. Returns
    ``(cells settled, nodes used)``; nodes is -1 when a component ran over."""
    nc = W * H
    cmask = np.zeros(nc, np.int64)
    cm = np.zeros(nc, np.int32)
    ccnt = np.zeros(nc, np.int32)
    _constraints(rev, known, num, fog, W, H, nb, nbn, cmask, cm, ccnt)
    order, starts, ncomp, front, interior = frontier_components(rev, known, fog, ccnt, nb, nbn)
    remaining = mines_total
    for c in range(nc):
        remaining -= known[c]
    cid = np.full(nc, -1, np.int32)  # constraint cell -> index within its component
    results_feasible = []
    results_mine = []
    results_safe = []
    nodes_used = 0
    over = False
    for ci in range(ncomp):
        cells = order[starts[ci]:starts[ci + 1]]
        n = cells.shape[0]
        count, cell_count, used = component_counts(cells, ccnt, cm, nb, nbn, cid, budget - nodes_used)
        feasible = np.ones(n + 1, np.bool_)  # undecided (over budget): every count, every cell either way
        can_mine = np.ones((n, n + 1), np.bool_)
        can_safe = np.ones((n, n + 1), np.bool_)
        if used < 0:
            over = True
        else:
            nodes_used += used
            for k in range(n + 1):
                feasible[k] = count[k] > 0
                for i in range(n):
                    can_mine[i, k] = cell_count[i, k] > 0
                    can_safe[i, k] = cell_count[i, k] < count[k]
        results_feasible.append(feasible)
        results_mine.append(can_mine)
        results_safe.append(can_safe)
    # prefix / suffix sums of the feasible counts, to couple the components
    # through the global count: component i with k mines is possible when the
    # others can hold s mines with 0 <= remaining - k - s <= interior
    one = np.ones(1, np.bool_)
    prefix = [one]
    for ci in range(ncomp):
        prefix.append(_convolve(prefix[ci], results_feasible[ci]))
    suffix = [one] * (ncomp + 1)
    for ci in range(ncomp - 1, -1, -1):
        suffix[ci] = _convolve(suffix[ci + 1], results_feasible[ci])
    settled = 0
    queue = np.empty(nc, np.int32)
    act = np.empty(nc, np.int32)  # not needed here: the waves that follow rebuild it
    to_open = np.zeros(nc, np.uint8)
    for ci in range(ncomp):
        others = _convolve(prefix[ci], suffix[ci + 1])
        feasible = results_feasible[ci]
        ok = np.zeros(feasible.shape[0], np.bool_)
        for k in range(feasible.shape[0]):
            if not feasible[k]:
                continue
            for s in range(others.shape[0]):
                x = remaining - k - s
                if others[s] and 0 <= x <= interior:
                    ok[k] = True
                    break
        a = starts[ci]
        for i in range(starts[ci + 1] - a):
            mine_possible = False
            safe_possible = False
            for k in range(feasible.shape[0]):
                if ok[k]:
                    mine_possible |= results_mine[ci][i, k]
                    safe_possible |= results_safe[ci][i, k]
            u = order[a + i]
            if not mine_possible:
                to_open[u] = 1
            elif not safe_possible:
                known[u] = 1
                settled += 1
    if interior:
        alls = prefix[ncomp]
        xmin, xmax = interior + 1, -1
        for t in range(alls.shape[0]):
            x = remaining - t
            if alls[t] and 0 <= x <= interior:
                xmin = min(xmin, x)
                xmax = max(xmax, x)
        if xmax == 0 or xmin == interior:
            for c in range(nc):
                if rev[c] == 0 and known[c] == 0 and fog[c] == 0 and front[c] == 0:
                    if xmax == 0:
                        to_open[c] = 1
                    else:
                        known[c] = 1
                        settled += 1
    for c in range(nc):
        if to_open[c] and rev[c] == 0:
            settled += 1
            _open(c, rev, num, fog, nb, nbn, queue, act, np.int64(0))
    return settled, (-1 if over else nodes_used)


@njit(cache=True, error_model="numpy")
def _close(rev, known, num, fog, mines, has_fog, W, H, nb, nbn, widen, bits):
    """The ``single_subset`` closure from the current state (in place): the
    attempt loop's compiled closure of the board's shape, on bit rows when
    the board fits them (``closure_rows``), cell by cell otherwise
    (``closure_cells``)."""
    if load_rows(bits, rev, known, mines, fog, has_fog, W, H):
        close_rows(bits, has_fog, True, H)
        store_rows(bits, rev, known, W, H)
    else:
        closure_cells_of(rev, known, num, fog, mines, has_fog, W, H, nb, nbn)


@njit(cache=True, error_model="numpy")
def full_logic(rev, known, num, fog, mines, has_fog, mines_total, safe, W, H, nb, nbn, widen, bits, budget):
    """Complete logic from the current state to its fixed point (in place):
    exact passes with the ``single_subset`` closure between them (it is cheap
    and shrinks the components). Returns ``(all safe cells revealed, nodes
    used)``; nodes is -1 when the budget was exhausted somewhere."""
    used = 0
    over = False
    while True:
        revealed = 0
        for c in range(W * H):
            revealed += rev[c]
        if revealed == safe:
            break
        settled, nodes = _exact_pass(rev, known, num, fog, mines_total, W, H, nb, nbn, max(0, budget - used))
        if nodes < 0:
            over = True
        else:
            used += nodes
        if settled == 0:
            break
        _close(rev, known, num, fog, mines, has_fog, W, H, nb, nbn, widen, bits)
    revealed = 0
    for c in range(W * H):
        revealed += rev[c]
    return revealed == safe, (-1 if over else used)


@lru_cache(maxsize=64)
def _arrays(width: int, height: int, spawn_side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Neighbour table, neighbour counts and spawn square of one board size
    (read-only: shared by every call and thread)."""
    nb, nbn = neighbour_arrays(width, height)
    spawn = np.asarray(spawn_square(width, height, spawn_side), np.int32)
    spawn.setflags(write=False)
    return nb, nbn, spawn


@njit(cache=True, error_model="numpy")
def _spawn_open(spawn, rev, num, fog, nb, nbn):
    """R0: the spawn square, chained through zeros (fog does not chain and,
    unlike a later opening, does not open its fog neighbours yet)."""
    queue = np.empty(rev.shape[0], np.int32)
    qt = 0
    for i in range(spawn.shape[0]):
        c = spawn[i]
        if rev[c] == 0:
            rev[c] = 1
            if num[c] == 0 and fog[c] == 0:
                queue[qt] = c
                qt += 1
    qh = 0
    while qh < qt:
        c = queue[qh]
        qh += 1
        for k in range(nbn[c]):
            n = nb[c, k]
            if rev[n] == 0:
                rev[n] = 1
                if num[n] == 0 and fog[n] == 0:
                    queue[qt] = n
                    qt += 1


@njit(cache=True, error_model="numpy")
def r0_state(mines, fog, spawn, nb, nbn, num, rev, known):
    """A board's numbers into ``num`` and R0 into ``rev`` (``known``
    cleared); returns ``(|S|, whether the board has fog)``."""
    safe = numbers_of(mines, nb, nbn, num)
    rev[:] = 0
    known[:] = 0
    _spawn_open(spawn, rev, num, fog, nb, nbn)
    has_fog = False
    for c in range(fog.shape[0]):
        if fog[c]:
            has_fog = True
            break
    return safe, has_fog


@njit(cache=True, error_model="numpy")
def _figures(mines, fog, spawn, W, H, nb, nbn, widen, budget, out):
    nc = W * H
    figures_state(mines, fog, spawn, W, H, nb, nbn, widen, budget, out, np.zeros(nc, np.int32),
                  np.zeros(nc, np.uint8), np.zeros(nc, np.uint8), np.zeros((BITS_ROWS, H + 2 * PAD), np.uint64))


@njit(cache=True, error_model="numpy")
def figures_state(mines, fog, spawn, W, H, nb, nbn, widen, budget, out, num, rev, known, bits):
    """``_figures`` of one board into ``out``, on the caller's arrays, which
    it leaves at the complete-logic fixed point (the perfect player goes on
    from there: ``player``); returns ``(|S|, whether the board has fog)``."""
    nc = W * H
    safe, has_fog = r0_state(mines, fog, spawn, nb, nbn, num, rev, known)
    out[0], out[1] = bbbv_openings(mines, num, nb, nbn)
    # the waves on bit rows when the board fits them (faster): the same
    # waves, counts and fixed point as the cell version
    if load_rows(bits, rev, known, mines, fog, has_fog, W, H):
        out[2], out[3] = waves_rows(bits, has_fog, H)
        store_rows(bits, rev, known, W, H)
    else:
        out[2], out[3] = waves(rev, known, num, fog, W, H, nb, nbn, widen)
    revealed = 0
    for c in range(nc):
        revealed += rev[c]
    out[5] = revealed
    total = nc - safe
    solvable, nodes = full_logic(rev, known, num, fog, mines, has_fog, total, safe, W, H, nb, nbn, widen, bits, budget)
    out[4] = 1 if solvable else 0
    out[6] = nodes
    return safe, has_fog


@njit(cache=True, error_model="numpy")
def _figures_batch(mines, fog, todo, spawn, W, H, nb, nbn, widen, budget, out):
    """``_figures`` of every board ``b`` of a batch with ``todo[b]`` (rows of
    ``mines``, ``fog`` and ``out``): one kernel call for a row's batch."""
    for b in range(mines.shape[0]):
        if todo[b]:
            _figures(mines[b], fog[b], spawn, W, H, nb, nbn, widen, budget, out[b])


def figures_batch(width: int, height: int, spawn_side: int, mines: np.ndarray, fog: np.ndarray,
                  todo: np.ndarray) -> list[dict | None]:
    """``figures`` of the boards of a batch (rows of ``mines`` and ``fog``,
    uint8 per cell) where ``todo`` is set, None elsewhere: the same figures
    as one call per board, without the per-board kernel call."""
    nb, nbn, spawn = _arrays(width, height, spawn_side)
    todo = np.ascontiguousarray(todo, np.uint8)
    out = np.zeros((mines.shape[0], 7), np.int64)
    _figures_batch(np.ascontiguousarray(mines, np.uint8), np.ascontiguousarray(fog, np.uint8), todo, spawn, width,
                   height, nb, nbn, _WIDEN, NODE_BUDGET, out)
    return [_record(r) if t else None for r, t in zip(out.tolist(), todo.tolist())]


def _record(out: list) -> dict:
    """The ``FIELDS`` of one row of ``_figures``' output, in their order."""
    bbbv, openings, rounds, subset, solvable = out[:5]
    return {"bbbv": bbbv, "openings": openings, "subset_steps": subset, "solve_rounds": rounds,
            "solvable_full_logic": bool(solvable)}


def compute(width: int, height: int, spawn_side: int, mines, fog=(), budget: int = NODE_BUDGET) -> dict:
    """Every figure of one board, plus the diagnostics the tests and the
    benchmark read (``r_infinity``: |R∞| of the waves; ``nodes``: enumeration
    nodes of the exact solver, -1 when over budget)."""
    nb, nbn, spawn = _arrays(width, height, spawn_side)
    # a batch of one board: the kernel is compiled once, for both entry points
    m = np.zeros((1, width * height), np.uint8)
    m[0] = np.frombuffer(bytes(mines), np.uint8) if isinstance(mines, (bytes, bytearray)) else mines
    f = np.zeros((1, width * height), np.uint8)
    if len(fog):
        f[0, np.asarray(list(fog), np.int64)] = 1
    out = np.zeros((1, 7), np.int64)
    _figures_batch(m, f, np.ones(1, np.uint8), spawn, width, height, nb, nbn, _WIDEN, budget, out)
    r = out[0].tolist()
    return {**_record(r), "r_infinity": r[5], "nodes": r[6]}


def figures(board) -> dict:
    """The difficulty fields of the metrics record for a
    :class:`~boardgen_pipeline.board.geometry.Board` (``FIELDS``)."""
    out = compute(board.width, board.height, board.spawn_side, board.mines, board.fog)
    return {k: out[k] for k in FIELDS}


def layout_figures(text: str, spawn_side: int = 3) -> dict:
    """The difficulty fields of a layout text (``*`` mine, ``.`` safe, ``f`` fog)."""
    w, h, mines, fog = parse_layout(text)
    out = compute(w, h, spawn_side, mines, fog)
    return {k: out[k] for k in FIELDS}
