"""Mine placement, "place then shave" (SPEC 2.2; seed 000 "出生区安全与反退化
布雷", the 先布后删 rule).

Readable reference of what ``kernels.place`` computes:

1. N is fixed first: ``round_half_up(mine_density * (W*H - spawn_cells))``.
2. The candidate cells are all cells minus the spawn square, row-major.
   N of them are drawn by a partial Fisher-Yates shuffle: for ``i`` in
   ``0..N-1`` swap position ``i`` with ``i + below(nc - i)``; the first N
   positions are the mines. Each attempt starts again from the row-major
   candidate list, so an attempt depends only on the stream state.
3. Shave: every placed mine within Chebyshev distance ``side//2 + r`` of the
   centre is removed. Only removal, no re-draw: actual mines <= N.
"""

from __future__ import annotations

from boardgen_pipeline.board.geometry import Geometry
from boardgen_pipeline.board.rng import Stream


def candidate_cells(geometry: Geometry) -> list[int]:
    spawn = set(geometry.spawn_cells)
    return [c for c in range(geometry.cells) if c not in spawn]


def draw_placed(stream: Stream, geometry: Geometry, n: int) -> list[int]:
    """The ``n`` cells of one attempt's placement, in draw order (step 2),
    drawing from ``stream``: the conformance kit's trace of placement."""
    work = candidate_cells(geometry)
    nc = len(work)
    for i in range(n):
        j = i + stream.below(nc - i)
        work[i], work[j] = work[j], work[i]
    return work[:n]


def shave(placed: list[int], geometry: Geometry, shave_ring_radius: int) -> tuple[bytes, list[int]]:
    """Step 3: ``(mines, removed)``: the placed cells outside Chebyshev
    ``side//2 + r`` of the centre are the mines; ``removed`` lists the
    others in draw order."""
    radius = geometry.spawn_side // 2 + shave_ring_radius
    mines = bytearray(geometry.cells)
    removed = []
    for c in placed:
        if geometry.chebyshev_from_centre(c) <= radius:
            removed.append(c)
        else:
            mines[c] = 1
    return bytes(mines), removed


def place_mines(stream: Stream, geometry: Geometry, n: int, shave_ring_radius: int) -> tuple[bytes, int]:
    """``(mines, ring_removed)`` of one attempt, drawing from ``stream``."""
    mines, removed = shave(draw_placed(stream, geometry, n), geometry, shave_ring_radius)
    return mines, len(removed)
