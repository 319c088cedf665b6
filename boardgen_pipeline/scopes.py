"""Where each parameter row's boards lie in the ``board_gen`` stream (SPEC 7;
seed 001 F4 "批量校准"): row ``(L, D)`` takes the scopes ``sigma(L, D) + i``,
``i < N``, with ``sigma(L, D) = 10**9 + 2**20 * L + 2**12 * D``.

The constants are bit fields: a level has ``2**20`` scopes, a depth ``2**12``
of them. So two rows share no scope exactly when every batch holds at most
:data:`DEPTH_SPACING` boards (``calibrate --samples`` in [1, 4096]) and every
depth is at most :data:`MAX_DEPTH` (255): depth 256 of level ``L`` would be
depth 0 of level ``L + 1``, and its boards that row's boards. The table
loader (``tables.board_gen``, rule ``seed_scopes``) and the command line
(``cli_args``) hold them there; ``board.rng`` re-exports :func:`sigma`.

The calibration advisor's probe boards (``calibration.advisor``) of a batch
of at most :data:`PROBE_OFFSET` boards are the row's scopes
``sigma(L, D) + PROBE_OFFSET + i``, so ``advise --probes`` stays within
``DEPTH_SPACING - PROBE_OFFSET``; a larger batch's probes have a stream label
of their own.

A module of the bottom layer, as the table loader, the stream code, the
advisor and the command line all read it (the command line without loading
the generator).
"""

from __future__ import annotations

SIGMA_BASE = 10**9
LEVEL_SPACING = 1 << 20  # scopes between two levels' depth-0 rows
DEPTH_SPACING = 1 << 12  # scopes between two adjacent depths' rows: a batch holds at most this many boards
MAX_DEPTH = LEVEL_SPACING // DEPTH_SPACING - 1  # 255: depth 256 of level L would be depth 0 of level L+1
DEFAULT_SAMPLES = 256  # N
PROBE_OFFSET = DEPTH_SPACING // 2  # 2048: the advisor's probes of a batch of at most this many boards follow it


def sigma(level_index: int, node_depth: int) -> int:
    """Batch seed base of row ``(L, D)`` (seed 001 F4): bit-packed so that the
    scope ranges of different rows never overlap, for depths up to
    :data:`MAX_DEPTH` and batches up to :data:`DEPTH_SPACING` boards."""
    return SIGMA_BASE + LEVEL_SPACING * level_index + DEPTH_SPACING * node_depth


def why_max_depth() -> str:
    """The reason for :data:`MAX_DEPTH`, as a table violation or a command-line error says it."""
    return (f"sigma(L, D) = 10^9 + 2^20*L + 2^12*D gives each depth {DEPTH_SPACING} seed scopes, so depth "
            f"{MAX_DEPTH + 1} of level L would draw the boards of depth 0 of level L+1")
