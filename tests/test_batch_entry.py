"""The batch entry point and the compiled fog step: the same
boards and records as the per-board API, the compiled fog step equal to its
readable reference, any attempt budget, and the exit the kernel chooses
from its attempt log equal to ``choose_exit``, its chosen attempt's measure
equal to a replay of it."""

from __future__ import annotations

import numpy as np
import pytest

from boardgen_pipeline.board import kernels
from boardgen_pipeline.board.fog import place_fog
from boardgen_pipeline.board.generator import (
    _WORKSPACES,
    EXITS,
    _attempts,
    _plan,
    choose_exit,
    generate_batch_from_row,
    generate_from_row,
)
from boardgen_pipeline.board.rng import Stream, derive_at
from boardgen_pipeline.calibration.batch import batch_scopes, run_row
from boardgen_pipeline.tables.board_gen import BoardGenRow, load_board_gen_dir

DEFAULT = load_board_gen_dir()


def row(**over) -> BoardGenRow:
    base = dict(level_index=1, node_depth=0, board_width=10, board_height=10, mine_density=0.25,
                inferability_target=0.95, solver_rules="single_subset", min_safe_count=1, max_gen_attempts=4,
                board_type="dungeon", shave_ring_radius=1, r0_max_cap=45, fog_region_count=0,
                fog_target_ratio=0.0, reserved={})
    # model_construct: budgets above the table's domain (33, 400) on purpose
    return BoardGenRow.model_construct(**{**base, **over})


ROWS = {
    "plain": row(),
    "fog": row(board_width=12, board_height=12, mine_density=0.22, r0_max_cap=72, fog_region_count=2,
               fog_target_ratio=0.08),
    "fog_many": row(board_width=16, board_height=9, mine_density=0.3, inferability_target=1.0, r0_max_cap=60,
                    fog_region_count=5, fog_target_ratio=0.2, shave_ring_radius=0, max_gen_attempts=3),
    "never_legal": row(r0_max_cap=9, max_gen_attempts=5),  # least_bad on every board
    "hard_target": row(inferability_target=1.0, mine_density=0.3, max_gen_attempts=2),  # best_legal often
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_batch_gives_the_boards_and_records_of_the_per_board_api(name):
    r = ROWS[name]
    scopes = range(500, 540)
    batch = generate_batch_from_row(r, 3, scopes, master_seed=3, dig_ap_cost=2)
    single = [generate_from_row(r, 3, derive_at("board_gen", s, 3), dig_ap_cost=2) for s in scopes]
    assert [b for b, _ in batch] == [b for b, _ in single]
    assert [m for _, m in batch] == [m for _, m in single]
    # and the records keep metrics_record's key order (the warehouse columns)
    assert all(list(a) == list(b) for (_, a), (_, b) in zip(batch, single))
    exits = {m["exit"] for _, m in batch}
    if name == "never_legal":
        assert exits == {"least_bad"}
    if name.startswith("fog"):
        assert any(m["fog_cells"] for _, m in batch)


@pytest.mark.parametrize("name", sorted(ROWS))
def test_batch_without_figures_gives_the_same_boards_and_generation_records(name):
    # what `boardgen bench` times: the attempt loop, no difficulty figures nor player
    r = ROWS[name]
    whole = generate_batch_from_row(r, 3, range(40), master_seed=5)
    bare = generate_batch_from_row(r, 3, range(40), master_seed=5, figures=False)
    assert [b for b, _ in bare] == [b for b, _ in whole]
    for (_, m), (_, full) in zip(bare, whole):
        assert m == {k: v for k, v in full.items() if k in m} and list(m) == [k for k in full if k in m]
        assert "bbbv" in full and "bbbv" not in m and "forced_guesses" not in m


def test_batch_covers_every_exit():
    seen = set()
    for name in ("plain", "never_legal", "hard_target"):
        seen |= {m["exit"] for _, m in generate_batch_from_row(ROWS[name], 3, range(60))}
    assert seen == {"passed", "best_legal", "least_bad"}


def test_default_table_fog_rows_batch_equals_per_board():
    for key in DEFAULT.keys():
        r = DEFAULT.rows[key]
        if not r.fog_region_count:
            continue
        scopes = batch_scopes(*key, 6)
        batch = generate_batch_from_row(r, DEFAULT.spawn_side, scopes, 0, DEFAULT.header.dig_ap_cost)
        single = [generate_from_row(r, DEFAULT.spawn_side, derive_at("board_gen", s), DEFAULT.header.dig_ap_cost)
                  for s in scopes]
        assert batch == single


def test_run_row_uses_the_batch_and_keeps_progress_per_board():
    calls = []
    key = (2, 2)
    recs = run_row(DEFAULT, key, 70, progress=lambda: calls.append(1))
    assert len(calls) == 70
    r = DEFAULT.rows[key]
    assert recs == [generate_from_row(r, 3, derive_at("board_gen", s), DEFAULT.header.dig_ap_cost).metrics
                    for s in batch_scopes(*key, 70)]


@pytest.mark.parametrize("budget", [1, 32, 33, 400])
def test_any_attempt_budget(budget):
    # 30x16, 99 mines (density 99/471), spawn 3x3, shave 0, target 1.0: the
    # expert board, asked for with a 400-attempt budget; most boards need more than 32 attempts
    r = row(board_width=30, board_height=16, mine_density=99 / 471, inferability_target=1.0, r0_max_cap=480,
            shave_ring_radius=0, max_gen_attempts=budget)
    scopes = range(7)
    batch = generate_batch_from_row(r, 3, scopes)
    single = [generate_from_row(r, 3, derive_at("board_gen", s)) for s in scopes]
    assert batch == single
    for _, m in batch:
        assert 1 <= m["attempts_used"] <= budget
        assert m["mines_target"] == 99 and m["mines_actual"] == 99
        assert m["exit"] != "passed" or m["revealed"] == m["safe_count"]
    if budget == 1:
        assert all(m["attempts_used"] == 1 for _, m in batch)
    if budget == 400:
        assert all(m["exit"] == "passed" for _, m in batch)
        assert max(m["attempts_used"] for _, m in batch) > 33  # the log really grew past 32 and 33


MEASURED = ("known", "revealed", "safe", "r0", "removed", "revealed_core", "fog", "placed", "unpaid", "paid")


@pytest.mark.parametrize("name", ["plain", "never_legal", "hard_target", "fog_many"])
def test_the_kernels_exit_equals_choose_exit(name):
    r = ROWS[name]
    p = _plan(r, 3)
    ws = _WORKSPACES.get(r.board_width, r.board_height, 3)
    checked = {"best_legal": 0, "least_bad": 0}
    for scope in range(80):
        stream = derive_at("board_gen", scope)
        log = ws.run_attempts(stream, p.n, p.shave, r.min_safe_count, r.r0_max_cap, r.max_gen_attempts, p.target,
                              p.fog)
        if log.passed:
            continue
        got = log.summary[0].copy()  # the replays below reuse the workspace's arrays

        def unreachable(k, log=log):  # the BFS of a fresh placement, not the kernel's row count
            ws.place(int(log.state[k]), p.n, p.shave)
            return ws.unreachable(ws.numbers())

        if not (log.revealed >= 0).any():  # least bad: the kernel counted every attempt's unreachable cells
            assert [int(u) for u in log.unreachable] == [unreachable(k) for k in range(log.ran)]
        exit_, chosen = choose_exit(_attempts(log, r, unreachable), p.target)
        assert (EXITS[got["exit"]], int(got["chosen"]), int(got["unreachable"])) == (
            exit_, chosen.k, chosen.unreachable_safe)
        replayed = ws.replay(int(log.state[chosen.k - 1]), p.n, p.shave, p.fog)[0]
        assert [int(got[f]) for f in MEASURED] == [int(replayed[f]) for f in MEASURED]
        checked[exit_] += 1
    assert sum(checked.values()) > 0
    if name == "never_legal":
        assert checked["least_bad"] > 0


@pytest.mark.parametrize("step", ["cells", "rows"])
def test_compiled_fog_step_equals_the_reference(step):
    # both compiled fog steps: cell by cell (kernels.place_fog) and on bit
    # rows (kernels.fog_step, which keeps to the cells past 58 wide); the
    # same cells, counts and draws as the readable reference
    from boardgen_pipeline.tables.board_gen import round_half_up

    rng = np.random.default_rng(5 if step == "cells" else 6)
    rolled_back = 0
    for i in range(300):
        w, h = (int(rng.integers(1, 70)), int(rng.integers(1, 12))) if i % 3 == 0 else \
            (int(rng.integers(3, 20)), int(rng.integers(3, 20)))
        ws = _WORKSPACES.get(w, h, 1)
        mines = (rng.random(w * h) < rng.uniform(0.05, 0.4)).astype(np.uint8)
        mines[ws.centre] = 0
        ws.numbers(mines)
        ws.flood_r0()
        r0 = ws.rev.copy()
        regions, ratio = int(rng.integers(1, 6)), float(rng.uniform(0.01, 0.4))
        state = int(rng.integers(0, 2**63))
        ref_stream = Stream("board_gen", 0, 0, state)
        ref = place_fog(ref_stream, mines.tobytes(), ws.num.tolist(), np.flatnonzero(r0).tolist(), w, h, regions,
                        ratio)
        st = np.array([state], np.uint64)
        dr = np.zeros(1, np.int64)
        ws.mines[:] = mines
        ws.fog[:] = 1  # whatever was there before is overwritten
        ws.fog_scratch.r0[:] = r0
        rule = kernels.FogRule(regions=regions, aim=round_half_up(ratio * w * h))
        step_kernel = kernels.place_fog if step == "cells" else kernels.fog_step
        nfog, placed = step_kernel(st, dr, ws.grid, ws.scratch, ws.fog_scratch, rule)
        assert tuple(np.flatnonzero(ws.fog).tolist()) == ref.cells, i
        assert (nfog, placed) == (len(ref.cells), ref.regions_placed), i
        assert (int(st[0]), int(dr[0])) == (ref_stream.state, ref_stream.draws), i
        rolled_back += ref.shortfall > 0 and ref.regions_placed > 0
    assert rolled_back > 0  # some region found no room (no seed, or rolled back) while others were placed


def test_word_row_unreachable_count_equals_the_bfs():
    rng = np.random.default_rng(11)
    for _ in range(300):
        w, h = int(rng.integers(1, 70)), int(rng.integers(1, 12))
        ws = _WORKSPACES.get(w, h, 1)
        mines = (rng.random(w * h) < rng.uniform(0.0, 0.6)).astype(np.uint8)
        mines[ws.centre] = 0
        safe = int((mines == 0).sum())
        bfs = kernels.unreachable_safe(mines, ws.nb, ws.nbn, ws.centre, safe, ws.seen, ws.queue)
        ws.mines[:] = mines
        words = kernels.unreachable_count(ws.grid, ws.scratch, safe)
        assert words == bfs
