"""Placement and numbers, compiled (SPEC 2.2): place-then-shave by partial
Fisher-Yates from the row's stream (the twin of ``placement``), and every
cell's number. Held equal to the readable references by the golden vectors
and ``tests/test_kernel_fields.py``.
"""

from __future__ import annotations

from numba import njit

from boardgen_pipeline.board.rng_kernels import below


@njit(cache=True, error_model="numpy")
def place(st, draws, g, s, N, shave_radius):
    """Place-then-shave (SPEC 2.2) into ``s.mines``: N distinct cells of
    ``g.cand`` by partial Fisher-Yates, then drop those within Chebyshev
    ``shave_radius`` of the centre. Returns the number removed
    (``ring_removed``)."""
    cand = g.cand
    work = s.work
    mines = s.mines
    W = g.width
    cx = g.cx
    cy = g.cy
    nc = cand.shape[0]
    for i in range(nc):
        work[i] = cand[i]
    mines[:] = 0
    for i in range(N):
        j = i + below(st, draws, nc - i)
        t = work[i]
        work[i] = work[j]
        work[j] = t
    removed = 0
    for i in range(N):
        c = work[i]
        x = c % W
        y = c // W
        if abs(x - cx) <= shave_radius and abs(y - cy) <= shave_radius:
            removed += 1
        else:
            mines[c] = 1
    return removed


@njit(cache=True, error_model="numpy")
def numbers_from_placed(g, s, N):
    """Numbers of a freshly placed board by scattering from its mines (the
    first N cells of ``s.work`` that were not shaved): 8 increments a mine
    instead of 8 loads a cell. Returns |S|."""
    work = s.work
    mines = s.mines
    num = s.num
    nb = g.nb
    nbn = g.nbn
    num[:] = 0
    placed = 0
    for i in range(N):
        c = work[i]
        if mines[c] == 1:
            placed += 1
            for k in range(nbn[c]):
                num[nb[c, k]] += 1
    return mines.shape[0] - placed


@njit(cache=True, error_model="numpy")
def numbers_of(mines, nb, nbn, num):
    safe = 0
    for c in range(mines.shape[0]):
        n = 0
        for k in range(nbn[c]):
            n += mines[nb[c, k]]
        num[c] = n
        if mines[c] == 0:
            safe += 1
    return safe
