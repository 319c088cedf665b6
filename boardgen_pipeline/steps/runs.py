"""How a calibration over many rows is cut into runs (SPEC 9 "Scale-out: one
partition = one unit of work"; docs/pipeline.md "One nightly").

A run records its own rows (their boards' materializations) in its own
process, so runs are what spreads the recording over cores and machines. A
run covers a contiguous range of row partitions in registration order (the
engine's partition range); the rows of a range are computed one after
another by the run. :func:`plan` cuts the rows into ranges of about equal
*cost* (a row costs about its boards' cells times its batch size: the
generator, the overlays and the encoding are all per cell), at most
``max_rows`` rows each so that what a run holds stays bounded, and deals them
to ``slots`` lanes (the runs that may execute at once: local worker
processes, or the run launcher's concurrency on a cluster), each lane's
ranges in order.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

MAX_ROWS_PER_RUN = 1000  # a run keeps its step's events until it ends (the engine's): bounded here
ROW_FIXED_CELLS = 64  # a board's cost besides its cells (records, checks), in cells
# the night's node-map draws cost about this many cells per simulated adventure, so the lane that draws
# them gets fewer rows: in one process, one core, the 2,000 adventures' draws and their checks took 1.09 s
# of CPU and the default table's 15 rows' chains (885,760 cells) 0.81-0.87 s, 0.92-0.99 us a cell: ~590
# cells an adventure (2026-12-03; 920 before the first-adventure script's maps were built once a batch)
ADVENTURE_CELLS = 600


@dataclass(frozen=True)
class Range:
    """One run's rows: partition keys ``first`` .. ``last`` in registration
    order, ``rows`` of them."""

    first: str
    last: str
    rows: int


def row_cost(row, samples: int) -> float:
    """What one row costs to calibrate, in cells: its batch of boards."""
    return float(samples) * (row.board_width * row.board_height + ROW_FIXED_CELLS)


def row_costs(table, samples: int) -> dict[str, float]:
    """Every row's cost (:func:`row_cost`), by partition key."""
    return {f"{k[0]}-{k[1]}": row_cost(row, samples) for k, row in table.rows.items()}


def draws_cost(adventures: int) -> float:
    """What the night's node-map draws cost, in cells (``ADVENTURE_CELLS``)."""
    return float(adventures) * ADVENTURE_CELLS


def _cuts(costs: list[float], pieces: int) -> list[int]:
    """Indices that cut ``costs`` into ``pieces`` contiguous, non-empty runs
    of about equal sums (each cut where the running sum passes the next
    share)."""
    total = sum(costs) or 1.0
    cuts, running, k = [0], 0.0, 1
    for i, c in enumerate(costs):
        running += c
        while k < pieces and running >= total * k / pieces and i + 1 < len(costs) and i + 1 > cuts[-1]:
            cuts.append(i + 1)
            k += 1
    return cuts + [len(costs)]


def plan(order: list[str], cost: dict[str, float], slots: int, max_rows: int = MAX_ROWS_PER_RUN,
         tail: float = 0.0) -> list[list[Range]]:
    """``slots`` lanes of ranges covering ``order`` (the registered partition
    keys; a key without a cost, a row no longer in the table, costs nothing
    and stays inside its range: the run skips it). Empty lanes are dropped.
    ``tail`` is work the last lane does besides its rows (the night's
    draws): the cuts share it out as if it were one more row at the end, so
    that lane gets fewer rows, or none when it costs a lane's share."""
    if not order:
        return []
    slots = max(1, min(slots, len(order)))
    pieces = max(slots, math.ceil(len(order) / max(1, max_rows)))
    pieces = slots * math.ceil(pieces / slots)  # every lane gets the same number of ranges
    costs = [cost.get(k, 0.0) for k in order]
    if tail > 0:
        cuts = _cuts([*costs, tail], min(pieces, len(order) + 1))
        cuts = sorted({min(c, len(order)) for c in cuts})
    else:
        cuts = _cuts(costs, min(pieces, len(order)))
    ranges = [Range(order[a], order[b - 1], b - a) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]
    # a range longer than max_rows (one very cheap stretch of rows) is split again, evenly
    bounded = []
    for r in ranges:
        a = order.index(r.first)
        parts = math.ceil(r.rows / max(1, max_rows))
        for j in range(parts):
            lo, hi = a + r.rows * j // parts, a + r.rows * (j + 1) // parts
            bounded.append(Range(order[lo], order[hi - 1], hi - lo))
    lanes: list[list[Range]] = [[] for _ in range(slots)]
    per_lane = math.ceil(len(bounded) / slots)
    for i, r in enumerate(bounded):  # consecutive ranges to one lane: each lane walks the table in order
        lanes[min(slots - 1, i // per_lane)].append(r)
    return [lane for lane in lanes if lane]


def keys_of(order: list[str], r: Range) -> list[str]:
    """The partition keys of a range."""
    a, b = order.index(r.first), order.index(r.last)
    return order[a:b + 1]


def process_alive(pid: int, since: float) -> bool:
    """Whether process ``pid`` is running and is the one that was running at
    ``since`` (a pid reused by a later process does not count)."""
    import psutil

    if pid == os.getpid():
        return True
    try:
        proc = psutil.Process(pid)
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE and proc.create_time() <= since + 1
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return True
