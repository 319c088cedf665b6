"""No input can crash the compiled kernels.

Impossible sizes, densities and budgets are refused with ValueError before
any kernel runs (and by the kernels themselves); every array is sized from
the call's arguments. The fuzz runs the generator in a subprocess with
``NUMBA_BOUNDSCHECK=1`` and a cache directory of its own (so the cached,
unchecked kernels are not reused): an out-of-bounds index there raises
IndexError instead of writing past an array."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from boardgen_pipeline.board import kernels
from boardgen_pipeline.board.bench import bench
from boardgen_pipeline.board.generator import _WORKSPACES, generate_batch_from_row, generate_from_row
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.tables.board_gen import BoardGenRow

REPO = Path(__file__).resolve().parent.parent


def row(**over) -> BoardGenRow:
    base = dict(level_index=1, node_depth=0, board_width=10, board_height=10, mine_density=0.2,
                inferability_target=0.9, solver_rules="single_subset", min_safe_count=1, max_gen_attempts=4,
                board_type="dungeon", shave_ring_radius=1, r0_max_cap=100, fog_region_count=0,
                fog_target_ratio=0.0, reserved={})
    return BoardGenRow.model_construct(**{**base, **over})


@pytest.mark.parametrize("args,match", [
    (dict(density=2.0), "density"),
    (dict(width=0), "board size"),
    (dict(height=-3), "board size"),
    (dict(attempts=0), "attempt budget"),
    (dict(width=2, height=2), "spawn side"),  # the 3x3 spawn square does not fit
    (dict(cap=-1), "cap"),
    (dict(boards=0), "boards"),
])
def test_bench_refuses_impossible_parameters(args, match):
    kw = dict(width=10, height=10, density=0.2, target=0.9, cap=45, attempts=4, boards=3)
    with pytest.raises(ValueError, match=match):
        bench(**{**kw, **args})


@pytest.mark.parametrize("over,match", [
    (dict(mine_density=2.0), "mine_density"),
    (dict(board_width=0), "board size"),
    (dict(max_gen_attempts=0), "attempt budget"),
    (dict(board_width=2), "spawn side"),
    (dict(fog_region_count=-1), "fog_region_count"),
])
def test_generator_refuses_impossible_rows(over, match):
    with pytest.raises(ValueError, match=match):
        generate_from_row(row(**over), 3, derive_at("board_gen", 0))
    with pytest.raises(ValueError, match=match):
        generate_batch_from_row(row(**over), 3, range(2))


def test_every_mine_density_up_to_all_candidates_is_accepted():
    # density 1: every cell outside the spawn square is a mine (then shaved)
    _, m = generate_from_row(row(mine_density=1.0, shave_ring_radius=0), 3, derive_at("board_gen", 0))
    assert m["mines_actual"] == 100 - 9
    assert m["exit"] == "least_bad"


def test_kernels_refuse_arguments_that_do_not_fit_their_arrays():
    ws = _WORKSPACES.get(6, 6, 3)
    states = np.zeros(1, np.uint64)
    batch = kernels.BatchResult(
        summary=np.zeros(1, kernels.SUMMARY), draws=np.zeros(1, np.int64), state=np.zeros(1, np.uint64),
        mines=np.zeros((1, 36), np.uint8), fog=np.zeros((1, 36), np.uint8),
        attempt_state=np.zeros((1, 4), np.uint64), log=np.zeros((1, 4, kernels.LOG_SIZE), np.int64))
    no_fog = kernels.FogRule(regions=0, aim=0)

    def call(n, budget, grid=ws.grid, scratch=ws.scratch, fog_scratch=ws.fog_scratch, log=batch.log):
        plan = kernels.Plan(mines_target=n, shave=1, min_safe=1, r0_cap=36, budget=budget, target_num=1,
                            target_den=1)
        kernels.run_batch(states, grid, plan, no_fog, scratch, fog_scratch, batch._replace(log=log))

    with pytest.raises(ValueError, match="mine count"):
        call(28, 2)  # 27 candidate cells
    with pytest.raises(ValueError, match="attempt budget"):
        call(5, 5)  # the log holds 4 attempts
    with pytest.raises(ValueError, match="attempt budget"):
        call(5, 2, log=np.zeros((1, 4, kernels.LOG_SIZE - 1), np.int64))
    with pytest.raises(ValueError, match="board size"):
        call(5, 2, grid=ws.grid._replace(width=7))
    # every scratch array is checked, not only the board's: a short one
    # would be written past its end
    for name in kernels.Scratch._fields:
        if name not in ("rows", "bits"):  # their users fall back to the cells when they are short
            need = ws.cand.shape[0] if name == "work" else 36  # the shuffle holds the candidates
            short = np.zeros(need - 1, getattr(ws.scratch, name).dtype)
            with pytest.raises(ValueError, match="board size"):
                call(5, 2, scratch=ws.scratch._replace(**{name: short}))
    for name in kernels.FogScratch._fields:
        short = np.zeros(getattr(ws.fog_scratch, name).shape[0] - 1, getattr(ws.fog_scratch, name).dtype)
        with pytest.raises(ValueError, match="board size"):
            call(5, 2, fog_scratch=ws.fog_scratch._replace(**{name: short}))
    with pytest.raises(ValueError, match="lie on the board"):
        call(5, 2, grid=ws.grid._replace(cand=ws.grid.cand + 9))
    with pytest.raises(ValueError, match="mines do not fit"):
        ws.place(0, 28, 1)
    call(5, 4)
    assert 1 <= batch.summary[0]["ran"] <= 4


FUZZ = textwrap.dedent("""
    import json, sys
    import numpy as np
    from numba import config
    assert config.BOUNDSCHECK, "the fuzz must run with NUMBA_BOUNDSCHECK=1"
    from boardgen_pipeline.board import player, probability
    from boardgen_pipeline.board.generator import generate_batch_from_row, generate_from_row
    from boardgen_pipeline.board.rng import derive_at
    from boardgen_pipeline.tables.board_gen import BoardGenRow
    rng = np.random.default_rng(int(sys.argv[1]))
    seen = {"cases": 0, "boards": 0, "exits": set(), "played": 0, "positions": 0}
    # 58 and 59 wide: the widest board the closure's bit rows hold, and one more
    sizes = [(1, 1, 1), (1, 7, 1), (2, 2, 1), (3, 3, 3), (4, 9, 3), (9, 4, 1), (7, 7, 5), (58, 5, 3), (59, 5, 3),
             (65, 3, 3), (30, 16, 3)]
    for w, h, spawn in sizes + [(int(rng.integers(3, 24)), int(rng.integers(3, 24)), 3) for _ in range(8)]:
        for budget in (1, 2, 33, 40):
            density = float(rng.choice([0.0, 1.0, rng.uniform(0, 1)]))
            regions = int(rng.choice([0, 0, 1, 3, 9]))
            row = BoardGenRow.model_construct(
                level_index=1, node_depth=0, board_width=w, board_height=h, mine_density=density,
                inferability_target=float(rng.choice([0.0, 0.9, 1.0])), solver_rules="single_subset",
                min_safe_count=int(rng.integers(0, w * h + 1)), max_gen_attempts=budget, board_type="dungeon",
                shave_ring_radius=int(rng.integers(0, 3)), r0_max_cap=int(rng.integers(0, w * h + 1)),
                fog_region_count=regions, fog_target_ratio=float(rng.uniform(0, 1)) if regions else 0.0,
                reserved={})
            outs = generate_batch_from_row(row, spawn, range(3))
            outs.append(generate_from_row(row, spawn, derive_at("board_gen", 99)))
            for board, m in outs:
                assert len(board.mines) == w * h and 1 <= m["attempts_used"] <= budget
                seen["exits"].add(m["exit"])
                seen["boards"] += 1
            # the perfect player and the probability engine on the same boards
            # with a node budget of none, a little, the default
            mines = np.stack([np.frombuffer(b.mines, np.uint8) for b, _ in outs])
            fog = np.zeros_like(mines)
            for i, (b, _) in enumerate(outs):
                fog[i, list(b.fog)] = 1
            nodes = (0, 50, probability.NODE_BUDGET)[seen["cases"] % 3]
            seen["played"] += len(player.play_batch(w, h, spawn, mines, fog, budget=nodes)["won"])
            p = player.position_at_guess(outs[0][0], 0, budget=nodes)
            if p is not None:
                probability.probabilities(p, budget=nodes)
                seen["positions"] += 1
            seen["cases"] += 1
    seen["exits"] = sorted(seen["exits"])
    print(json.dumps(seen))
""")


FUZZ_KEY = pytest.StashKey()


def start_fuzz(workdir: Path) -> subprocess.Popen:
    """Start the fuzz in a subprocess writing to ``workdir``. Most of its time
    is compiling every kernel with bounds checks, so ``conftest`` starts it
    as soon as a session has collected the test: the compilation then runs
    on the second core while the other tests run."""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "BOARDGEN_NUMBA_CACHE": str(workdir / "numba-cache"),
           "PYTHONPATH": str(REPO)}
    with open(workdir / "stdout", "w") as out, open(workdir / "stderr", "w") as err:
        return subprocess.Popen([sys.executable, "-c", FUZZ, "7"], env=env, stdout=out, stderr=err, text=True,
                                cwd=workdir)


@pytest.mark.slow  # every kernel compiled again with bounds checks
def test_fuzz_the_kernels_under_numba_boundscheck(request, tmp_path):
    proc, workdir = request.config.stash.get(FUZZ_KEY, (None, None))
    if proc is None:  # not started with the session (e.g. run through another entry point)
        proc, workdir = start_fuzz(tmp_path), tmp_path
    returncode = proc.wait(timeout=900)
    stdout, stderr = (workdir / "stdout").read_text(), (workdir / "stderr").read_text()
    assert returncode == 0, stderr[-3000:]
    seen = json.loads(stdout.strip().splitlines()[-1])
    assert seen["cases"] == 19 * 4
    assert seen["boards"] == 19 * 4 * 4
    assert seen["played"] == seen["boards"] and seen["positions"] > 0
    assert set(seen["exits"]) == {"passed", "best_legal", "least_bad"}
