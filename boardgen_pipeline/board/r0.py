"""R0 of a whole batch of boards, compiled (SPEC 2.3 "R0 = the spawn square
plus its flood through zero cells"; seed 001 F1 operator ①: a fog cell can be
opened but never chains; SPEC 3 setup order: generate -> R0 -> variant cells).

``solver.reveal_r0`` is the readable reference, one board at a time over
Python sets; :func:`r0_batch` gives the same cell set for every board of a
batch in one kernel call, as a ``uint8`` mask a row (the tests hold the two
equal on every board of default rows, fog rows included). The overlay
placement and the overlay checks both need R0 of 256 boards a row: per board
in Python it cost more than generating the boards.

:func:`layouts_to_arrays` reads the boards back from their layout texts
(``geometry.format_layout``: ``*`` mine, ``.`` safe, ``f`` fog, rows joined
by ``/``) without a per-cell loop.

Every array handed to the kernel is checked here first (ValueError), so no
input makes it index out of bounds (the kernels are fuzzed under
``NUMBA_BOUNDSCHECK``). The kernel takes its arrays by name:
the boards as :class:`Layouts`, the board size's tables as :class:`Cells`,
so that a board's fog cannot be read as its mines nor the spawn square as
the neighbour counts.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from boardgen_pipeline.board.geometry import neighbour_arrays
from boardgen_pipeline.board.solver import spawn_square


class Layouts(NamedTuple):
    """The boards of a batch, one row of W*H cells a board (uint8 masks)."""

    mines: np.ndarray
    fog: np.ndarray


class Cells(NamedTuple):
    """One board size's tables, read-only."""

    spawn: np.ndarray  # int32: the spawn square's cells
    nb: np.ndarray  # int32 [W*H, 8]: each cell's neighbours
    nbn: np.ndarray  # int32 [W*H]: how many


@njit(cache=True, inline="always", error_model="numpy")
def _no_mine_around(c, m, nb, nbn):
    n = 0
    for q in range(nbn[c]):
        n += m[nb[c, q]] != 0
    return n == 0


@njit(cache=True, error_model="numpy")
def _r0_rows(layouts, cells, out):
    """R0 of each board (row) of ``layouts`` into ``out`` (all zero on
    entry). A cell's number is only needed once it is opened, so it is
    counted then (and only whether it is zero)."""
    mines = layouts.mines
    fog = layouts.fog
    spawn = cells.spawn
    nb = cells.nb
    nbn = cells.nbn
    nc = mines.shape[1]
    if fog.shape != mines.shape or out.shape != mines.shape:
        raise ValueError("fog and R0 arrays must have the shape of the mines")
    if nb.shape[0] != nc or nbn.shape[0] != nc:
        raise ValueError("the neighbour table must hold one entry a cell")
    queue = np.empty(nc, np.int32)
    for i in range(spawn.shape[0]):
        if spawn[i] < 0 or spawn[i] >= nc:
            raise ValueError("spawn cells must lie on the board")
    for b in range(mines.shape[0]):
        m = mines[b]
        f = fog[b]
        rev = out[b]
        qt = 0
        # the spawn square is opened whatever it holds (the generator keeps
        # it mine-free; the reference does not look)
        for i in range(spawn.shape[0]):
            c = spawn[i]
            if rev[c] == 0:
                rev[c] = 1
                if f[c] == 0 and _no_mine_around(c, m, nb, nbn):
                    queue[qt] = c
                    qt += 1
        qh = 0
        while qh < qt:
            src = queue[qh]
            qh += 1
            for k in range(nbn[src]):
                c = nb[src, k]
                if rev[c] == 0:
                    rev[c] = 1
                    if f[c] == 0 and _no_mine_around(c, m, nb, nbn):
                        queue[qt] = c
                        qt += 1


def _board_arrays(name: str, a, boards: int | None, nc: int) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 2 or arr.shape[1] != nc or (boards is not None and arr.shape[0] != boards):
        want = f"[{boards if boards is not None else 'B'}, {nc}]"
        raise ValueError(f"{name} must be an array of shape {want} (one row of W*H cells a board), got {arr.shape}")
    if arr.dtype != np.uint8:
        arr = arr != 0
    return np.ascontiguousarray(arr, dtype=np.uint8)


def check_geometry(width, height) -> int:
    """``W*H``, or ValueError for a size no kernel can hold."""
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"board {name} must be an integer >= 1, got {v!r}")
    return int(width) * int(height)


def board_arrays(mines, fog, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mines, fog)`` as C-contiguous ``uint8 [B, W*H]`` arrays, or
    ValueError when their shapes disagree with the board size or each
    other (``fog=None``: no fog)."""
    nc = check_geometry(width, height)
    m = _board_arrays("mines", mines, None, nc)
    f = np.zeros_like(m) if fog is None else _board_arrays("fog", fog, m.shape[0], nc)
    return m, f


def r0_batch(mines, fog, width: int, height: int, spawn_side: int = 3) -> np.ndarray:
    """``uint8 [B, W*H]``: row ``b`` is 1 exactly on
    ``solver.reveal_r0(mines[b], W, H, spawn_side, fog cells of b)``.

    ``mines`` and ``fog`` are ``[B, W*H]`` row-major masks (non-zero = mine /
    fog cell; ``fog=None``: no fog). Fog cells are opened when reached but
    never chain."""
    m, f = board_arrays(mines, fog, width, height)
    if isinstance(spawn_side, bool) or not isinstance(spawn_side, (int, np.integer)):
        raise ValueError(f"spawn side must be an integer, got {spawn_side!r}")
    nb, nbn = neighbour_arrays(int(width), int(height))
    spawn = np.asarray(spawn_square(int(width), int(height), int(spawn_side)), dtype=np.int32)
    out = np.zeros(m.shape, np.uint8)
    if m.shape[0]:
        _r0_rows(Layouts(mines=m, fog=f), Cells(spawn=spawn, nb=nb, nbn=nbn), out)
    return out


_SLASH, _MINE, _SAFE, _FOG = (ord(ch) for ch in "/*.f")


def layouts_to_arrays(layouts, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mines, fog)``, each ``uint8 [B, W*H]``, of layout texts in
    ``geometry.format_layout``'s form (exactly ``H`` rows of ``W`` cells from
    ``*.f`` joined by ``/``; the form the ``boards`` dataset stores). The
    same cells as ``geometry.parse_layout``; any other text is a ValueError
    naming the first bad layout."""
    nc = check_geometry(width, height)
    layouts = list(layouts)
    boards = len(layouts)
    if not boards:
        return np.zeros((0, nc), np.uint8), np.zeros((0, nc), np.uint8)
    step = height * (width + 1)  # a layout and the separator after it
    lengths = np.fromiter(map(len, layouts), dtype=np.int64, count=boards)
    wrong = np.flatnonzero(lengths != step - 1)
    if wrong.size:
        i = int(wrong[0])
        raise ValueError(f"layout {i} has {lengths[i]} characters; a {width}x{height} layout has {step - 1}")
    try:
        data = ("/".join(layouts) + "/").encode("ascii")
    except UnicodeEncodeError as exc:
        raise ValueError(f"layouts hold a character that is not one of * . f /: {exc}") from None
    grid = np.frombuffer(data, dtype=np.uint8).reshape(boards, height, width + 1)
    cells = grid[:, :, :width]
    ok = (grid[:, :, width] == _SLASH).all(axis=1) & ((cells == _MINE) | (cells == _SAFE) | (cells == _FOG)).all(axis=(1, 2))
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise ValueError(f"layout {i} is not {height} rows of {width} cells from '*', '.', 'f' joined by '/': "
                         f"{layouts[i][:80]!r}")
    flat = cells.reshape(boards, nc)
    return (flat == _MINE).view(np.uint8), (flat == _FOG).view(np.uint8)
