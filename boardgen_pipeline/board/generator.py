"""The generator: parameter snapshot -> place -> generate-verify -> output
(SPEC 2.4-2.6; seed 000 "四阶段管线", "生成重试与成本闸"; seed 001 F5 and the
least-bad order).

``generate(level_index, node_depth, seed)`` is a pure function: it opens one
``board_gen`` stream and uses it for every attempt (retries never open a new
stream), checks legality before quality, and leaves through one of three
exits:

- ``passed``: the first legal attempt whose inferability meets the target
  (the earliest, not the best);
- ``best_legal``: none passed but some were legal: the legal attempt with the
  highest inferability, ties to the earliest; flagged ``degraded``, alert
  ``warning``;
- ``least_bad``: nothing legal: the attempt minimising
  ``(unreachable_safe, min_safe gap, cap excess, [R0 == S], k)``; flagged
  ``illegal``, alert ``critical``. A board is still returned: the player is
  never stuck, and the flag is never silent.

Wall-clock time never influences the output. The attempt loop runs in the
compiled kernels of ``kernels``; this module holds the rules for choosing
the exit and for the metrics record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from boardgen_pipeline.board import kernels, player, workspace
from boardgen_pipeline.board.geometry import Board, Geometry, neighbour_arrays
from boardgen_pipeline.board.kernel_args import EXITS, SUMMARY_FIELDS
from boardgen_pipeline.board.placement import candidate_cells
from boardgen_pipeline.board.rng import Stream, derive_at, initial_states
from boardgen_pipeline.board.solver import METRIC_VERSION
from boardgen_pipeline.tables.board_gen import (
    BoardGenRow,
    BoardGenTable,
    load_board_gen_dir,
    mines_target,
    round_half_up,
)

ALERTS = {"passed": "none", "best_legal": "warning", "least_bad": "critical"}


class Generated(NamedTuple):
    board: Board
    metrics: dict


@dataclass(frozen=True)
class Attempt:
    """What one attempt measured (``revealed`` is None when it was illegal:
    an illegal attempt is never scored)."""

    k: int
    ring_removed: int
    mines_actual: int
    safe_count: int
    r0_size: int
    unreachable_safe: int
    revealed: int | None
    min_safe_gap: int
    cap_excess: int
    free_open: bool
    revealed_core: int | None = None  # |R∞ - F| (fog rows only)
    safe_core: int | None = None  # |S - F|

    @property
    def legal(self) -> bool:
        return self.revealed is not None

    @property
    def inferability(self) -> Fraction:
        return Fraction(self.revealed or 0, max(1, self.safe_count))

    @property
    def inferability_core(self) -> Fraction:
        if self.safe_core is None:
            return self.inferability
        return Fraction(self.revealed_core or 0, max(1, self.safe_core))

    def passes(self, target: Fraction) -> bool:
        """Seed 001 F5: legal, and both inferability and its core meet the target."""
        return self.legal and self.inferability >= target and self.inferability_core >= target

    def badness(self) -> tuple:
        """The least-bad order of SPEC 2.5 (lexicographic, smaller is better)."""
        return (self.unreachable_safe, self.min_safe_gap, self.cap_excess, int(self.free_open), self.k)


@lru_cache(maxsize=1024)
def target_fraction(target: float) -> Fraction:
    """The target as the decimal the designer wrote (0.95 -> 19/20), so the
    pass test ``|R∞| / |S| >= target`` is exact integer arithmetic."""
    return Fraction(repr(float(target)))


def choose_exit(attempts: list[Attempt], target: Fraction) -> tuple[str, Attempt]:
    """Exit and chosen attempt among the attempts run (SPEC 2.5)."""
    for a in attempts:
        if a.passes(target):
            return "passed", a
    legal = [a for a in attempts if a.legal]
    if legal:
        best = max(a.inferability for a in legal)
        return "best_legal", next(a for a in legal if a.inferability == best)
    return "least_bad", min(attempts, key=Attempt.badness)


class _Workspaces(threading.local):
    """One :class:`workspace.Workspace` per board size and spawn side, reused
    across calls; each thread gets its own (the arrays are scratch)."""

    def get(self, width: int, height: int, spawn_side: int) -> workspace.Workspace:
        cache = self.__dict__.setdefault("cache", {})
        ws = cache.get((width, height, spawn_side))
        if ws is None:
            g = Geometry(width, height, spawn_side)
            ws = cache[(width, height, spawn_side)] = workspace.Workspace(
                width, height, g.spawn_cells, candidate_cells(g), *neighbour_arrays(width, height))
        return ws


_WORKSPACES = _Workspaces()


class _Plan(NamedTuple):
    """Stage 1, the parameter snapshot of a row: N fixed first, the target
    as an exact fraction, the shave radius, the fog rule for the kernels."""

    n: int
    target: Fraction
    shave: int
    fog: tuple[int, int]  # (regions, aimed cells before the 8 x mines cap)


def _plan(row: BoardGenRow, spawn_side: int) -> _Plan:
    """The snapshot, or ValueError for a row no kernel can run (it is
    refused before any kernel is called, whatever the caller validated)."""
    W, H = row.board_width, row.board_height
    kernels.check_board(W, H, spawn_side, None, row.max_gen_attempts)
    for name in ("mine_density", "inferability_target", "fog_target_ratio"):
        v = getattr(row, name)
        if not (isinstance(v, (int, float)) and 0.0 <= v <= 1.0):
            raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
    for name in ("shave_ring_radius", "fog_region_count", "min_safe_count", "r0_max_cap"):
        v = getattr(row, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
    n = mines_target(row.mine_density, W, H, spawn_side)
    kernels.check_board(W, H, spawn_side, n, row.max_gen_attempts)
    aim = round_half_up(row.fog_target_ratio * W * H) if row.fog_region_count else 0
    return _Plan(n, target_fraction(row.inferability_target), spawn_side // 2 + row.shave_ring_radius,
                 (row.fog_region_count, aim))


def generate_from_row(row: BoardGenRow, spawn_side: int, stream: Stream, dig_ap_cost: int = 1) -> Generated:
    """Run the generate-verify loop of one row on ``stream`` (advanced in place).

    Stages 2-3 (place, generate-verify; with fog, seed 001's fog step in
    every attempt) run compiled up to the first pass, and the exit of a board
    that did not pass is chosen there too; stage 4 builds the board and its
    metrics record."""
    p = _plan(row, spawn_side)
    ws = _WORKSPACES.get(row.board_width, row.board_height, spawn_side)
    log = ws.run_attempts(stream, p.n, p.shave, row.min_safe_count, row.r0_max_cap, row.max_gen_attempts,
                          p.target, p.fog)
    # the workspace holds the board whatever its exit: the passing attempt, or the one the exit chose
    s = summary_of(log.summary[0])
    return _output(row, spawn_side, stream, p, s, EXITS[s["exit"]], s["chosen"], log.ran, log.rejected,
                   ws.mines.tobytes(), ws.fog, dig_ap_cost)


def _output(row: BoardGenRow, spawn_side: int, stream: Stream, p: _Plan, s: dict, exit_: str, chosen: int,
            attempts_used: int, rejections: dict, mines: bytes, fog: np.ndarray, dig_ap_cost: int,
            layout: str | None = None, figures: dict | None = None) -> Generated:
    """Stage 4: the board and its metrics record from a kernel summary ``s``
    (``summary_of``) of the chosen attempt; ``figures`` None reads the board's
    figures (``board_figures``), a dict gives them."""
    W, H = row.board_width, row.board_height
    fog_result = budget = None
    fog_cells: tuple[int, ...] = ()
    if row.fog_region_count:
        from boardgen_pipeline.board.fog import FogBudget, FogResult

        fog_cells = tuple(np.flatnonzero(fog).tolist())
        regions = row.fog_region_count
        fog_result = FogResult(fog_cells, s["placed"], regions - s["placed"],
                               min(p.fog[1], 8 * (p.n - s["removed"])))
        budget = FogBudget(s["unpaid"], s["paid"], dig_ap_cost)
    if layout is None:
        layout = _layouts(np.frombuffer(mines, np.uint8)[None], fog[None], W, H)[0] if fog_cells else fast_layout(mines, W)
    safe = s["safe"]
    metrics = metrics_record(
        row, stream, p.n, revealed=s["revealed"], safe=safe, revealed_core=s["revealed_core"],
        safe_core=safe - len(fog_cells), r0=s["r0"], removed=s["removed"],
        unreachable=max(0, s["unreachable"]), known=s["known"], attempts_used=attempts_used,
        rejections=rejections, chosen=chosen, exit_=exit_, layout=layout, fog=fog_result, budget=budget)
    board = Board(W, H, spawn_side, mines, fog_cells)
    return Generated(board, {**metrics, **(board_figures(board) if figures is None else figures)})


def board_figures(board: Board) -> dict:
    """The figures read off a final board, besides the generator's own: its
    difficulty and what a perfect player risks on it;
    diagnostics, never a pass criterion."""
    mines, fog = player.board_rows(board)
    return player.board_figures_batch(board.width, board.height, board.spawn_side, mines, fog, [1])[0]


_LAYOUT_LUT = np.frombuffer(b".*f", dtype=np.uint8)


def _layouts(mines: np.ndarray, fog: np.ndarray, width: int, height: int) -> list[str]:
    """``format_layout`` of every board of a batch (rows of ``mines`` and
    ``fog``) in one numpy pass."""
    boards = mines.shape[0]
    grid = np.full((boards, height, width + 1), ord("/"), dtype=np.uint8)
    grid[:, :, :width] = _LAYOUT_LUT[mines + 2 * fog].reshape(boards, height, width)
    text = grid.tobytes().decode("ascii")
    step = height * (width + 1)
    return [text[i : i + step - 1] for i in range(0, boards * step, step)]


BATCH_CELLS = 1 << 22  # cells held per kernel call of a batch (4 MB of mines, 4 MB of fog)


BATCH_ATTEMPTS = 1 << 18  # attempt-log rows held per kernel call of a batch (21 MB)


# the metrics fields that vary between the passing boards of one row, in
# metrics_record's order, and the summary field each comes from
_PER_BOARD = (("revealed", "revealed"), ("safe_count", "safe"),
              ("revealed_core", "revealed_core"), ("r0_size", "r0"),
              ("ring_removed", "removed"), ("known_mines", "known"),
              ("attempts_used", "ran"), ("r0_cap_rejected", "r0_cap_rejected"),
              ("unreachable_rejected", "unreachable_rejected"), ("free_open_rejected", "free_open_rejected"),
              ("min_safe_rejected", "min_safe_rejected"), ("chosen_attempt", "ran"))
_PER_BOARD_KEYS = tuple(key for key, _ in _PER_BOARD)
_PER_BOARD_COLUMNS = tuple(column for _, column in _PER_BOARD)


def summary_of(record) -> dict:
    """A kernel's summary record as a dict of Python ints, by field name."""
    return dict(zip(SUMMARY_FIELDS, record.tolist()))


def generate_batch_from_row(row: BoardGenRow, spawn_side: int, scopes, master_seed: int = 0,
                            dig_ap_cost: int = 1, figures: bool = True) -> list[Generated]:
    """``generate_from_row(row, spawn_side, derive_at("board_gen", s,
    master_seed), dig_ap_cost)`` for every scope ``s`` of ``scopes``, in
    order, with the same boards and records, in one kernel call per chunk
    of scopes: the per-call cost of a kernel and most of the per-board
    Python are paid once. A board that did not pass comes out of the kernel
    with its exit chosen and its chosen attempt replayed, as in the
    per-board path.

    ``figures`` False leaves out the difficulty figures and the perfect
    player (``board_figures``): the records hold only what the attempt loop
    measured (what ``boardgen bench`` times against the C baseline)."""
    p = _plan(row, spawn_side)
    W, H = row.board_width, row.board_height
    ws = _WORKSPACES.get(W, H, spawn_side)
    scopes = list(scopes)
    chunk = max(1, min(BATCH_CELLS // (W * H), BATCH_ATTEMPTS // row.max_gen_attempts))
    regions = row.fog_region_count
    cells = W * H
    template = None
    out: list[Generated] = []
    for start in range(0, len(scopes), chunk):
        part = scopes[start : start + chunk]
        states = initial_states("board_gen", part, master_seed)
        res = ws.run_batch(states, p.n, p.shave, row.min_safe_count, row.r0_max_cap, row.max_gen_attempts,
                           p.target, p.fog)
        col = {name: res.summary[name].tolist() for name in SUMMARY_FIELDS}  # a column of Python ints a field
        per_board = list(zip(*(col[c] for c in _PER_BOARD_COLUMNS)))
        passed = col["passed"]
        draws = res.draws.tolist()
        layouts = _layouts(res.mines, res.fog, W, H)
        fog_cells = _fog_cells(res.fog) if regions else None
        mines = res.mines.tobytes()  # every board's mines: a board's are a slice of it
        # the difficulty figures, and a perfect player where complete logic leaves a guess (one kernel call)
        if figures:
            board_figs = player.board_figures_batch(W, H, spawn_side, res.mines, res.fog, np.ones(len(part), np.uint8))
        else:
            board_figs = None
        for i, scope in enumerate(part):
            if not passed[i] or template is None:
                s = {name: col[name][i] for name in SUMMARY_FIELDS}
                stream = Stream("board_gen", scope, master_seed, int(res.state[i]), draws[i])
                rejected = {"r0_cap_rejected": s["r0_cap_rejected"], "unreachable_rejected": s["unreachable_rejected"],
                            "free_open_rejected": s["free_open_rejected"], "min_safe_rejected": s["min_safe_rejected"]}
                g = _output(row, spawn_side, stream, p, s, EXITS[s["exit"]], s["chosen"], s["ran"], rejected,
                            mines[i * cells : (i + 1) * cells], res.fog[i], dig_ap_cost, layouts[i],
                            board_figs[i] if figures else {})
                if s["passed"]:
                    template = g.metrics
                out.append(g)
                continue
            # a passing board: the record of the row's first passing board
            # with this board's figures put in (the same keys in the same
            # order as metrics_record gives them, the same arithmetic)
            m = template.copy()
            m.update(zip(_PER_BOARD_KEYS, per_board[i]))
            revealed, safe = col["revealed"][i], col["safe"][i]
            m["inferability"] = revealed / safe
            m["mines_actual"] = p.n - col["removed"][i]
            m["unreachable_safe"] = max(0, col["unreachable"][i])
            m["scope"] = scope
            m["layout"] = layouts[i]
            if regions:
                fog = fog_cells[i]
                safe_core = safe - len(fog)
                unpaid = col["unpaid"][i]
                m["inferability_core"] = col["revealed_core"][i] / max(1, safe_core)
                m["safe_core"] = safe_core
                m["fog_cells"] = len(fog)
                m["fog_ratio"] = len(fog) / cells
                m["fog_regions_placed"] = col["placed"][i]
                m["fog_shortfall"] = regions - col["placed"][i]
                m["delta_budget_fog"] = unpaid * dig_ap_cost
                m["fog_burden_ratio"] = unpaid / col["paid"][i]
            else:
                fog = ()
                m["inferability_core"] = revealed / safe
                m["safe_core"] = safe
            if figures:
                m.update(board_figs[i])  # the template's keys, this board's difficulty figures
            out.append(Generated(Board(W, H, spawn_side, mines[i * cells:(i + 1) * cells], fog), m))
    return out


def _fog_cells(fog: np.ndarray) -> list[tuple[int, ...]]:
    """The fog cells of every board of a batch (rows of ``fog``), sorted."""
    rows, cols = np.nonzero(fog)
    ends = np.cumsum(np.bincount(rows, minlength=fog.shape[0])).tolist()
    flat = cols.tolist()
    out, start = [], 0
    for end in ends:
        out.append(tuple(flat[start:end]))
        start = end
    return out


def metrics_record(row: BoardGenRow, stream: Stream, n: int, *, revealed: int, safe: int, revealed_core: int,
                   safe_core: int, r0: int, removed: int, unreachable: int, known: int, attempts_used: int,
                   rejections: dict, chosen: int, exit_: str, layout: str, fog=None, budget=None) -> dict:
    """The metrics record of one board (SPEC 2.6, with seed 001's fog
    metrics of SPEC 5; rows without fog report them as 0 and core =
    inferability). Field names are a contract: ``generate --json`` and the
    warehouse carry them as they are."""
    W, H = row.board_width, row.board_height
    return {
        "metric_version": METRIC_VERSION,
        "inferability": revealed / safe,
        "revealed": revealed,
        "safe_count": safe,
        "inferability_core": revealed_core / max(1, safe_core),
        "revealed_core": revealed_core,
        "safe_core": safe_core,
        "r0_size": r0,
        "mines_target": n,
        "mines_actual": n - removed,
        "ring_removed": removed,
        "unreachable_safe": unreachable,
        "known_mines": known,
        "attempts_used": attempts_used,
        **rejections,
        "chosen_attempt": chosen,
        "exit": exit_,
        "degraded": exit_ == "best_legal",
        "illegal": exit_ == "least_bad",
        "alert": ALERTS[exit_],
        "board_type": row.board_type,
        "inferability_target": row.inferability_target,
        "level_index": row.level_index,
        "node_depth": row.node_depth,
        "row_key": row.key_text,
        "label": stream.label,
        "scope": stream.scope,
        "master_seed": stream.master_seed,
        "width": W,
        "height": H,
        "fog_cells": len(fog.cells) if fog else 0,
        "fog_ratio": len(fog.cells) / (W * H) if fog else 0.0,
        "fog_regions_placed": fog.regions_placed if fog else 0,
        "fog_shortfall": fog.shortfall if fog else 0,
        "delta_budget_fog": budget.delta_budget_fog if budget else 0,
        "fog_burden_ratio": budget.fog_burden_ratio if budget else 0.0,
        "layout": layout,
    }


_LAYOUT_CHARS = bytes.maketrans(b"\x00\x01", b".*")


def fast_layout(mines: bytes, width: int) -> str:
    """``format_layout`` for boards without fog, without a per-cell loop."""
    text = mines.translate(_LAYOUT_CHARS).decode("ascii")
    return "/".join(text[i : i + width] for i in range(0, len(text), width))


def _attempts(log: kernels.AttemptLog, row: BoardGenRow, unreachable=None) -> list[Attempt]:
    """The attempt records of a kernel run. ``unreachable(k)`` supplies the
    unreachable count the kernel skipped (-1: an earlier gate rejected the
    attempt); it is only needed to rank attempts for the least-bad exit.
    On a fog row every attempt also carries its core figures (seed 001 F5)."""
    fog = bool(row.fog_region_count)
    if unreachable is not None and not (log.revealed >= 0).any():
        for k in range(log.ran):
            if log.unreachable[k] < 0:
                log.unreachable[k] = unreachable(k)
    return [
        Attempt(
            k=k + 1,
            ring_removed=int(log.removed[k]),
            mines_actual=int(log.mines[k]),
            safe_count=int(log.safe[k]),
            r0_size=int(log.r0[k]),
            unreachable_safe=max(0, int(log.unreachable[k])),
            revealed=None if log.revealed[k] < 0 else int(log.revealed[k]),
            min_safe_gap=max(0, row.min_safe_count - int(log.safe[k])),
            cap_excess=max(0, int(log.r0[k]) - row.r0_max_cap),
            free_open=int(log.r0[k]) == int(log.safe[k]),
            revealed_core=(None if log.revealed[k] < 0 else int(log.revealed_core[k])) if fog else None,
            safe_core=int(log.safe[k]) - int(log.fog[k]) if fog else None,
        )
        for k in range(log.ran)
    ]


def generate(
    level_index: int,
    node_depth: int,
    seed: int | Stream,
    *,
    master_seed: int = 0,
    table: BoardGenTable | None = None,
    tables_dir: Path | str | None = None,
) -> Generated:
    """A board for node ``(level_index, node_depth)``.

    ``seed`` is the ``board_gen`` scope under ``master_seed``
    (``derive_at("board_gen", seed, master_seed)``), or an already opened
    stream (``SeedSpace.open_stream("board_gen")``). The row is resolved by
    the floor rule and snapshotted for the whole call."""
    table = table or load_board_gen_dir(tables_dir)
    row = table.resolve(level_index, node_depth)
    stream = seed if isinstance(seed, Stream) else derive_at("board_gen", seed, master_seed)
    out = generate_from_row(row, table.spawn_side, stream, table.header.dig_ap_cost)
    out.metrics["level_index"] = level_index
    out.metrics["node_depth"] = node_depth
    return out


def first_failed_gate(a: Attempt) -> str | None:
    """The gate that rejected an attempt, in ``kernels.GATE_ORDER``."""
    failed = {"r0_cap": a.cap_excess > 0, "free_open": a.free_open, "min_safe": a.min_safe_gap > 0,
              "unreachable": a.unreachable_safe > 0}
    return next((g for g in kernels.GATE_ORDER if failed[g]), None)


def rejection_counts(attempts: list[Attempt]) -> dict:
    """Rejected attempts per gate (each counted once, under its first failed
    gate): the four counts add up to the illegal attempts."""
    gates = [first_failed_gate(a) for a in attempts]
    return {
        "r0_cap_rejected": gates.count("r0_cap"),
        "unreachable_rejected": gates.count("unreachable"),
        "free_open_rejected": gates.count("free_open"),
        "min_safe_rejected": gates.count("min_safe"),
    }


def legality_reasons(measure, min_safe_count: int, r0_max_cap: int) -> list[str]:
    """Why a measured layout is illegal (SPEC 2.4), in the order of the
    least-bad key; empty when legal. The attempt loop applies the same gates
    in ``kernels.attempt_loop``."""
    reasons = []
    if measure.unreachable_safe > 0:
        reasons.append("unreachable")
    if measure.safe_count < min_safe_count:
        reasons.append("min_safe")
    if measure.r0_size > r0_max_cap:
        reasons.append("r0_cap")
    if measure.r0_size == measure.safe_count:
        reasons.append("free_open")
    return reasons


def warm_up(from_the_other_end: bool = False) -> None:
    """Compile (or load from numba's on-disk cache) the kernels a row's
    boards need: the attempt loop (with and without fog) and the figures.
    Calling it once before starting worker processes lets them load the
    cache instead of compiling side by side. The exit of a board that no
    attempt passed and the replay of its chosen attempt are part of the
    attempt loop's kernel call, so they are compiled here too.

    ``from_the_other_end``: the steps last to first, as the second process
    of a cold compile runs them, after :func:`warm_up_figures`
    (``kernel_cache``)."""
    base = dict(level_index=1, node_depth=0, board_width=8, board_height=8, mine_density=0.12,
                inferability_target=0.85, min_safe_count=1, board_type="dungeon", shave_ring_radius=1,
                r0_max_cap=60, max_gen_attempts=8)
    rows = [BoardGenRow(**{**base, **extra}) for extra in ({}, {"fog_region_count": 1, "fog_target_ratio": 0.05})]
    # the attempt loop first, the figures last: the other end of a cold compile reaches the figures early
    steps = ([lambda row=row: generate_batch_from_row(row, 3, range(2), figures=False) for row in rows]
             + [lambda row=row: generate_from_row(row, 3, derive_at("board_gen", 0)) for row in rows]
             + [lambda row=row: generate_batch_from_row(row, 3, range(2)) for row in rows])
    for step in reversed(steps) if from_the_other_end else steps:
        step()


def warm_up_figures() -> None:
    """Compile (or load) the figures' kernels alone (difficulty, probability,
    the perfect player): half of a cold compile, which :func:`warm_up`
    reaches after the attempt loop, the other half."""
    mines = np.zeros((1, 64), np.uint8)
    mines[0, [0, 7, 56, 63]] = 1  # the corners: outside the spawn square
    player.board_figures_batch(8, 8, 3, mines, np.zeros_like(mines), [1])
