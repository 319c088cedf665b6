"""What the compiled generator kernels take and give, by name, and the
checks that refuse arrays that do not fit (no input may make a
kernel write out of bounds; arguments by name, so none is swapped).

A kernel that reads the workspace takes it as named tuples and reads every
array by its field name (``s.mines``, ``g.nb``): ``Grid`` (the board size's
geometry tables), ``Scratch`` (the board an attempt builds and the closure's
scratch), ``FogScratch`` (the fog step's), ``Plan`` (the row's numbers),
``FogRule`` and ``Attempts`` (one board's attempt log). The tuples are built
once, field by field, by :class:`~boardgen_pipeline.board.workspace.Workspace`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit


class Grid(NamedTuple):
    """One board size and spawn side: the tables every kernel reads and none
    writes. ``cx, cy`` is the spawn centre, ``centre`` its cell."""

    width: int
    height: int
    cx: int
    cy: int
    centre: int
    spawn: np.ndarray  # int32 [spawn cells]: the spawn square, where R0 starts
    cand: np.ndarray  # int32 [W*H - spawn cells]: the cells a mine may be drawn on, in order
    nb: np.ndarray  # int32 [W*H, 8]: each cell's neighbours (-1 past the count)
    nbn: np.ndarray  # int32 [W*H]: how many neighbours each cell has
    widen: np.ndarray  # uint64 [512]: WIDEN
    partners: np.ndarray  # int8 [512, 24]: PARTNERS
    partner_count: np.ndarray  # int8 [512]: PARTNER_COUNT


class Scratch(NamedTuple):
    """The board an attempt builds and what the closure needs to measure it,
    one entry a cell unless said otherwise. After a passing attempt (or a
    replay, or a measure) the first five hold its board."""

    mines: np.ndarray  # uint8: the board's mines
    num: np.ndarray  # int32: every cell's number
    rev: np.ndarray  # uint8: revealed cells, R0 and then R∞
    known: np.ndarray  # uint8: cells proven mines
    fog: np.ndarray  # uint8: fog cells
    seen: np.ndarray  # uint8: the unreachable count's marks
    work: np.ndarray  # int32 [max(1, W*H)]: the candidates shuffled by the placement
    queue: np.ndarray  # int32: the flood's queue, then the closure's list of constraints waiting for the subset rule
    stack: np.ndarray  # int32: the closure's list of changed constraints
    fq: np.ndarray  # int32: the queue of a reveal inside the closure
    inq: np.ndarray  # uint8: the closure's flags (1 queued, 2 stale, 4 waiting for the subset rule)
    cmask: np.ndarray  # int64: cached constraint masks
    cm: np.ndarray  # int32: cached mines still to find
    ccnt: np.ndarray  # int32: cached unknown counts
    rows: np.ndarray  # uint64 [2 H]: the unreachable count's word rows
    bits: np.ndarray  # uint64 [FOG_BITS_ROWS, H + 2 PAD]: the closure's and the fog step's bit rows


class FogScratch(NamedTuple):
    """The fog step's arrays (seed 001; SPEC 5), one entry a cell unless said
    otherwise."""

    r0: np.ndarray  # uint8: R0 flooded through no fog, the fog step's and the fog budget's input
    allowed: np.ndarray  # uint8: cells fog may take
    wcount: np.ndarray  # int32 [max(1, (W-2)(H-2))]: fog cells in each 3x3 window
    comp: np.ndarray  # int32: component sizes of the free allowed cells
    buf: np.ndarray  # int32: candidate cells
    region: np.ndarray  # int32: the cells of the region being grown
    mark: np.ndarray  # int64: frontier stamps
    chain: np.ndarray  # uint8: Chain0 of the fog budget


class Plan(NamedTuple):
    """A row's numbers as the attempt loop reads them (SPEC 2.2-2.5)."""

    mines_target: int  # N
    shave: int  # Chebyshev radius shaved around the centre: side // 2 + shave_ring_radius
    min_safe: int
    r0_cap: int
    budget: int  # attempts at most
    target_num: int  # the inferability target as a fraction
    target_den: int


class FogRule(NamedTuple):
    """A row's fog (seed 001; SPEC 5): no fog when ``regions`` is 0."""

    regions: int
    aim: int  # round_half_up(ratio x W x H), before the 8 x mines cap


class Attempts(NamedTuple):
    """One board's attempt log, one row an attempt run."""

    state: np.ndarray  # uint64 [budget]: the stream state at each attempt's start (to replay it)
    log: np.ndarray  # int64 [budget, LOG_SIZE]: LOG_* columns
    summary: np.ndarray  # SUMMARY [1]: the board's summary record

# The legality gates in the order an attempt meets them (SPEC 2.4), cheapest
# first; each rejected attempt counts under the first one it fails. Free-open
# comes before the cap: a free-open board (R0 = S) nearly always exceeds the
# cap too, and "free open" is the more telling name for it.
GATE_ORDER = ("free_open", "r0_cap", "min_safe", "unreachable")

# one board's summary, a record (numpy record dtype; the kernels read and
# write its fields by name): counts of the run, then what the passing attempt
# measured (valid when ``passed`` is 1)
SUMMARY_FIELDS = (
    "ran",  # attempts run
    "passed",  # 1 when the last one passed
    "r0_cap_rejected", "unreachable_rejected", "free_open_rejected", "min_safe_rejected",  # per first failed gate
    "known",  # mines the closure proved
    "revealed", "safe", "r0", "removed", "unreachable", "revealed_core", "fog", "placed",
    "unpaid", "paid",  # the fog budget (seed 001 F3), on a fog row
    "exit",  # the board's exit, an index of EXITS
    "chosen",  # the attempt the board is (1-based)
)

# the exits of SPEC 2.5 (the metrics record's ``exit``), numbered in the summary's ``exit`` field by
# their place here
EXITS = ("passed", "best_legal", "least_bad")
EXIT_PASSED, EXIT_BEST_LEGAL, EXIT_LEAST_BAD = range(len(EXITS))


SUMMARY = np.dtype([(name, np.int64) for name in SUMMARY_FIELDS])


@njit(cache=True, error_model="numpy")
def clear_summary(out):
    """Every field of summary record ``out`` to 0."""
    out.ran = 0
    out.passed = 0
    out.r0_cap_rejected = 0
    out.unreachable_rejected = 0
    out.free_open_rejected = 0
    out.min_safe_rejected = 0
    out.known = 0
    out.revealed = 0
    out.safe = 0
    out.r0 = 0
    out.removed = 0
    out.unreachable = 0
    out.revealed_core = 0
    out.fog = 0
    out.placed = 0
    out.unpaid = 0
    out.paid = 0
    out.exit = 0
    out.chosen = 0

# attempt_loop's per-attempt log (one row an attempt; the stream state at the
# attempt's start is kept apart, in a uint64 array)
(LOG_DRAWS, LOG_REMOVED, LOG_MINES, LOG_SAFE, LOG_R0, LOG_UNREACH, LOG_REVEALED, LOG_REVEALED_CORE,
 LOG_FOG) = range(9)


LOG_SIZE = 9


@njit(cache=True, error_model="numpy")
def check_arrays(g, s):
    """Refuse a workspace whose tables or scratch do not fit its board
    (no input may make a kernel write out of bounds)."""
    W = g.width
    H = g.height
    NC = W * H
    if W < 1 or H < 1:
        raise ValueError("board width and height must be >= 1")
    if (g.nb.shape[0] != NC or g.nb.shape[1] != 8 or g.nbn.shape[0] != NC
            or g.cand.shape[0] + g.spawn.shape[0] != NC):
        raise ValueError("workspace tables do not match the board size")
    if not (0 <= g.cx < W and 0 <= g.cy < H and g.centre == g.cy * W + g.cx):
        raise ValueError("the spawn centre must lie on the board")
    for i in range(g.spawn.shape[0]):
        if g.spawn[i] < 0 or g.spawn[i] >= NC:
            raise ValueError("spawn and candidate cells must lie on the board")
    for i in range(g.cand.shape[0]):
        if g.cand[i] < 0 or g.cand[i] >= NC:
            raise ValueError("spawn and candidate cells must lie on the board")
    if g.widen.shape[0] != 512 or g.partners.shape[0] != 512 or g.partners.shape[1] != 24 \
            or g.partner_count.shape[0] != 512:
        raise ValueError("the window tables must cover every 3x3 mask")
    for a in (s.mines, s.rev, s.known, s.fog, s.seen, s.inq):
        if a.shape[0] != NC:
            raise ValueError("workspace arrays do not match the board size")
    for b in (s.num, s.queue, s.stack, s.fq, s.cm, s.ccnt):
        if b.shape[0] != NC:
            raise ValueError("workspace arrays do not match the board size")
    if s.cmask.shape[0] != NC or s.work.shape[0] < g.cand.shape[0]:
        raise ValueError("workspace arrays do not match the board size")


@njit(cache=True, error_model="numpy")
def check_fog_arrays(g, f):
    """``check_arrays`` for the fog step's scratch."""
    W = g.width
    H = g.height
    NC = W * H
    for a in (f.r0, f.allowed, f.chain):
        if a.shape[0] != NC:
            raise ValueError("fog arrays do not match the board size")
    for b in (f.comp, f.buf, f.region):
        if b.shape[0] != NC:
            raise ValueError("fog arrays do not match the board size")
    if f.mark.shape[0] != NC or f.wcount.shape[0] < max(1, (W - 2) * (H - 2)):
        raise ValueError("fog arrays do not match the board size")


@njit(cache=True, error_model="numpy")
def check_board_arrays(g, plan, s, f):
    """``check_arrays`` and ``check_fog_arrays``, and the plan's mines fit
    the candidate cells."""
    check_arrays(g, s)
    check_fog_arrays(g, f)
    if plan.mines_target < 0 or plan.mines_target > g.cand.shape[0]:
        raise ValueError("mine count must lie in [0, candidate cells]")


@njit(cache=True, error_model="numpy")
def check_sizes(g, plan, s, f, attempts):
    """Refuse a call whose arguments do not fit its arrays (no
    input may make a kernel write out of bounds)."""
    check_board_arrays(g, plan, s, f)
    if (plan.budget < 1 or plan.budget > attempts.state.shape[0] or plan.budget > attempts.log.shape[0]
            or attempts.log.shape[1] != LOG_SIZE or attempts.summary.shape[0] != 1):
        raise ValueError("attempt budget must be >= 1 and fit the attempt log")


MAX_SIDE = 1024  # widest board the workspace accepts (a 128x128 benchmark board is well inside)


def check_board(width: int, height: int, spawn_side: int, mines: int | None = None, budget: int | None = None) -> None:
    """ValueError unless the kernels can run this board: the spawn square
    fits, the mines fit the candidate cells, the budget is at least one
    attempt (refused before any kernel is called)."""
    for name, v in (("width", width), ("height", height), ("spawn side", spawn_side)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise ValueError(f"board {name} must be an integer, got {v!r}")
    if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
        raise ValueError(f"board size {width}x{height} is outside [1, {MAX_SIDE}] on a side")
    if spawn_side < 1 or spawn_side % 2 == 0 or spawn_side > min(width, height):
        raise ValueError(f"spawn side {spawn_side} must be odd, >= 1 and fit a {width}x{height} board")
    free = width * height - spawn_side**2
    if mines is not None and not 0 <= mines <= free:
        raise ValueError(f"{mines} mines do not fit the {free} cells outside the spawn square of a "
                         f"{width}x{height} board")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1):
        raise ValueError(f"attempt budget must be an integer >= 1, got {budget!r}")
