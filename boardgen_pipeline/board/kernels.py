"""The compiled twin of the generator's hot loop ("the solver is the
hot loop"; SPEC 2.2-2.5), one module per stage; this module gives their
public names in one place.

One attempt = place N mines (partial Fisher-Yates over the candidate cells),
shave the ring, compute numbers, flood R0, check legality, and - only for a
legal attempt - run the ``single_subset`` closure. The kernels are numba
``njit`` functions over flat arrays; they implement exactly the rules of
``rng`` (SplitMix64, rejection sampling), ``placement``, ``solver`` and
``fog`` (the readable references), and the tests hold them equal to those on
random boards and on the golden vectors:

- ``kernel_args``: the named tuples the kernels take (``Grid``, ``Scratch``,
  ``FogScratch``, ``Plan``, ``FogRule``, ``Attempts``), a board's summary
  record (``SUMMARY``, fields by name), the attempt log's columns, and the
  checks that refuse arrays that do not fit (so no input writes out of bounds);
- ``place_numbers``: place-then-shave and the numbers;
- ``flood``: R0 and the unreachable count;
- ``closure_cells``: the closure dispatch (``closure``: bit rows of
  ``closure_rows`` up to 58 wide, the cell closure beyond) and the cell closure;
- ``fog_kernels``: the fog step (``fog_rows`` or cell by cell) and the fog budget;
- ``attempt_loop``: the attempt loop, the exit of a board no attempt passed and the replay of its
  chosen attempt, the measure;
- ``batch_driver``: many boards of one row in one call, and the attempt logs;
- ``rng_kernels``: the stream.
"""

from __future__ import annotations

from boardgen_pipeline.board.attempt_loop import (
    attempt_loop,
    measure_into,
    replay_board,
)
from boardgen_pipeline.board.batch_driver import (
    AttemptLog,
    BatchResult,
    attempt_log,
    run_batch,
)
from boardgen_pipeline.board.closure_cells import (
    PARTNER_COUNT,
    PARTNERS,
    WIDEN,
    closure,
    closure_cells,
)
from boardgen_pipeline.board.flood import (
    flood,
    flood_r0,
    unreachable_count,
    unreachable_safe,
)
from boardgen_pipeline.board.fog_kernels import (
    fog_budget,
    fog_step,
    place_fog,
)
from boardgen_pipeline.board.kernel_args import (
    GATE_ORDER,
    LOG_DRAWS,
    LOG_FOG,
    LOG_MINES,
    LOG_R0,
    LOG_REMOVED,
    LOG_REVEALED,
    LOG_REVEALED_CORE,
    LOG_SAFE,
    LOG_SIZE,
    LOG_UNREACH,
    MAX_SIDE,
    SUMMARY,
    SUMMARY_FIELDS,
    Attempts,
    FogRule,
    FogScratch,
    Grid,
    Plan,
    Scratch,
    check_arrays,
    check_board,
    check_board_arrays,
    check_fog_arrays,
    check_sizes,
)
from boardgen_pipeline.board.place_numbers import (
    numbers_from_placed,
    numbers_of,
    place,
)
from boardgen_pipeline.board.rng_kernels import (
    below,
)

__all__ = [
    "AttemptLog",
    "Attempts",
    "BatchResult",
    "FogRule",
    "FogScratch",
    "GATE_ORDER",
    "Grid",
    "LOG_DRAWS",
    "LOG_FOG",
    "LOG_MINES",
    "LOG_R0",
    "LOG_REMOVED",
    "LOG_REVEALED",
    "LOG_REVEALED_CORE",
    "LOG_SAFE",
    "LOG_SIZE",
    "LOG_UNREACH",
    "MAX_SIDE",
    "SUMMARY",
    "SUMMARY_FIELDS",
    "PARTNERS",
    "PARTNER_COUNT",
    "Plan",
    "Scratch",
    "WIDEN",
    "attempt_log",
    "attempt_loop",
    "below",
    "check_arrays",
    "check_board",
    "check_board_arrays",
    "check_fog_arrays",
    "check_sizes",
    "closure",
    "closure_cells",
    "flood",
    "flood_r0",
    "fog_budget",
    "fog_step",
    "measure_into",
    "numbers_from_placed",
    "numbers_of",
    "place",
    "place_fog",
    "replay_board",
    "run_batch",
    "unreachable_count",
    "unreachable_safe",
]
