"""The generator: seed 000's acceptance lines ("验收标准") by name, whole-board
golden vectors, the three exits and property tests."""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board import kernels
from boardgen_pipeline.board.generator import generate, generate_from_row, target_fraction
from boardgen_pipeline.board.geometry import Geometry, neighbour_table, parse_layout
from boardgen_pipeline.board.placement import place_mines
from boardgen_pipeline.board.rng import SeedSpace, derive_at
from boardgen_pipeline.board.solver import closures, reveal_r0, unreachable_safe
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.tables.board_gen import BoardGenRow, load_board_gen, load_board_gen_dir, mines_target

from .conftest import BASE_ROW, FIXTURES, write_table

GOLDEN_TABLE = load_board_gen(FIXTURES / "tables" / "golden" / "board_gen.toml")
DEFAULT = load_board_gen_dir()


def row(**over) -> BoardGenRow:
    return BoardGenRow(**{**BASE_ROW, **over})


def batch(table, key, n=16):
    r = table.rows[key]
    return [generate_from_row(r, table.spawn_side, derive_at("board_gen", 10**6 + i)) for i in range(n)]


def replay(r: BoardGenRow, spawn_side: int, scope: int, master_seed: int = 0):
    """Every attempt of a generate call, rebuilt with the readable reference
    code (Python stream, placement and solver): (mines, measure) per attempt
    until the first pass."""
    g = Geometry(r.board_width, r.board_height, spawn_side)
    stream = derive_at("board_gen", scope, master_seed)
    n = mines_target(r.mine_density, r.board_width, r.board_height, spawn_side)
    target = target_fraction(r.inferability_target)
    out = []
    for k in range(1, r.max_gen_attempts + 1):
        mines, removed = place_mines(stream, g, n, r.shave_ring_radius)
        c = closures(mines, g.width, g.height, spawn_side)
        safe = g.cells - sum(mines)
        unreach = unreachable_safe(mines, g.width, g.height)
        legal = unreach == 0 and safe >= r.min_safe_count and len(c.r0) <= r.r0_max_cap and len(c.r0) != safe
        out.append(dict(k=k, mines=mines, removed=removed, safe=safe, r0=len(c.r0), revealed=len(c.r_infinity),
                        unreach=unreach, legal=legal))
        if legal and Fraction(len(c.r_infinity), safe) >= target:
            break
    return out, stream


# ---------------------------------------------------------------- golden vectors

GOLDEN_VECTORS = [
    # (level, depth, scope, master seed) -> layout and integer metrics
    ((1, 0, 0, 0), ".*......../..*...*.../*......*../.*.....*.*/.........*/........../.......*.*/*..*....../"
                   "....***.*./......*.*.", dict(revealed=79, safe_count=81, r0_size=40, mines_target=23,
                   mines_actual=19, ring_removed=4, attempts_used=2, exit="passed", r0_cap_rejected=1,
                   unreachable_rejected=0, known_mines=18, chosen_attempt=2)),
    ((1, 0, 1, 0), "*....**.*./..**....../.*.....*../**......../.*......../.......*../........*./*.*..*..../"
                   "..**....*./...*.*...*", dict(revealed=78, safe_count=78, r0_size=28, mines_target=23,
                   mines_actual=22, ring_removed=1, attempts_used=3, exit="passed", r0_cap_rejected=2,
                   unreachable_rejected=0, known_mines=22, chosen_attempt=3)),
    ((1, 3, 5, 0), "***......**...../.*..*....*...*../................/..*........*..../...*............/"
                   "**.........*..../*..........*..*./...........*..../*.............*./.***.....*....../"
                   "..*...*..**..*../.*.**...........", dict(revealed=157, safe_count=159, r0_size=73,
                   mines_target=37, mines_actual=33, ring_removed=4, attempts_used=2, exit="passed",
                   r0_cap_rejected=1, unreachable_rejected=0, known_mines=31, chosen_attempt=2)),
    ((1, 0, 0, 99), ".........*/....***.../.*......../*........./........../*........./........*./..******../"
                    "....*.*.../.*...*....", dict(revealed=76, safe_count=82, r0_size=45, mines_target=23,
                    mines_actual=18, ring_removed=5, attempts_used=16, exit="best_legal", r0_cap_rejected=10,
                    unreachable_rejected=0, known_mines=14, chosen_attempt=4)),
    ((2, 0, 3, 0), "..*..***./......*../..*....*./.**.....*/.**....../*.....*../......*../..*.**.*.",
     dict(revealed=44, safe_count=53, r0_size=21, mines_target=19, mines_actual=19, ring_removed=0,
          attempts_used=3, exit="best_legal", r0_cap_rejected=0, unreachable_rejected=0, known_mines=15,
          chosen_attempt=1)),
]


@pytest.mark.parametrize("key,layout,expected", GOLDEN_VECTORS, ids=lambda v: str(v) if isinstance(v, tuple) else None)
def test_whole_board_golden_vectors(key, layout, expected):
    level, depth, scope, master = key
    board, m = generate(level, depth, scope, master_seed=master, table=GOLDEN_TABLE)
    assert m["layout"] == layout == board.layout
    assert {k: m[k] for k in expected} == expected


def test_golden_vectors_agree_with_the_reference_implementation():
    """The compiled path and the readable reference (Python stream, placement
    and solver) choose the same attempt and the same board."""
    for (level, depth, scope, master), layout, expected in GOLDEN_VECTORS:
        r = GOLDEN_TABLE.resolve(level, depth)
        attempts, _ = replay(r, 3, scope, master)
        assert len(attempts) == expected["attempts_used"]
        chosen = attempts[expected["chosen_attempt"] - 1]
        w, h, mines, _ = parse_layout(layout)
        assert chosen["mines"] == mines


# ---------------------------------------------------------------- seed 000 验收标准

def test_ac_deterministic_reproduction():
    """确定性复现: same row and seed twice -> same cells and metrics, also in
    another process; another seed -> not the same board."""
    a = generate(1, 2, 77, table=DEFAULT)
    b = generate(1, 2, 77, table=DEFAULT)
    assert a.board == b.board and a.metrics == b.metrics
    code = ("import json;from boardgen_pipeline.board.generator import generate;"
            "print(json.dumps(generate(1, 2, 77).metrics))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == a.metrics
    assert generate(1, 2, 78, table=DEFAULT).board.mines != a.board.mines


def test_ac_spawn_safety():
    """出生区安全: no mine in the spawn square nor in R0, on every board of a batch."""
    for key in DEFAULT.keys():
        for board, m in batch(DEFAULT, key, 8):
            g = board.geometry
            assert not any(board.mines[c] for c in g.spawn_cells)
            assert not any(board.mines[c] for c in reveal_r0(board.mines, g.width, g.height))


def test_ac_numbers_true():
    """数字恒真: the compiled kernel's numbers equal a direct count."""
    for board, _ in batch(DEFAULT, (2, 3), 8):
        nb, nbn = __import__("boardgen_pipeline.board.geometry", fromlist=["x"]).neighbour_arrays(board.width, board.height)
        num = np.zeros(board.width * board.height, np.int32)
        kernels.numbers_of(np.frombuffer(board.mines, np.uint8), nb, nbn, num)
        table = neighbour_table(board.width, board.height)
        assert list(num) == [sum(board.mines[n] for n in table[c]) for c in range(len(board.mines))]
        assert board.numbers == list(num)


def test_ac_mine_discipline():
    """布雷纪律: N >= 1, actual mines <= N, |S| >= min_safe_count."""
    for key in DEFAULT.keys():
        r = DEFAULT.rows[key]
        for board, m in batch(DEFAULT, key, 8):
            assert m["mines_target"] >= 1
            assert board.mine_count == m["mines_actual"] <= m["mines_target"]
            assert m["safe_count"] >= r.min_safe_count


def test_ac_no_free_open_board():
    """无开局白给板: free-open attempts are rejected and retried; no legal
    output has R0 == S. A sparse row (N = 2, both usually shaved) makes
    free-open attempts common."""
    r = row(mine_density=0.05, r0_max_cap=50, board_width=8, board_height=8, min_safe_count=10)
    outs = [generate_from_row(r, 3, derive_at("board_gen", i)) for i in range(64)]
    assert sum(m["free_open_rejected"] for _, m in outs) > 0
    for _, m in outs:
        if not m["illegal"]:
            assert m["r0_size"] != m["safe_count"]


def test_ac_clearable_and_legality_before_quality():
    """可清图: legal outputs have no unreachable safe cell; an unreachable
    attempt is never scored (the kernel leaves its |R∞| unset) nor chosen by
    best_legal."""
    for key in DEFAULT.keys():
        for board, m in batch(DEFAULT, key, 8):
            if not m["illegal"]:
                assert unreachable_safe(board.mines, board.width, board.height) == 0
    r = GOLDEN_TABLE.resolve(1, 0)
    _, m = generate(1, 0, 0, master_seed=99, table=GOLDEN_TABLE)  # best_legal after 16 attempts
    attempts, _ = replay(r, 3, 0, 99)
    chosen = attempts[m["chosen_attempt"] - 1]
    assert m["exit"] == "best_legal" and chosen["legal"]
    best_illegal = max(Fraction(a["revealed"], a["safe"]) for a in attempts if not a["legal"])
    assert m["inferability"] < best_illegal  # a better-scoring illegal attempt was passed over
    rejected = sum(m[f] for f in ("r0_cap_rejected", "unreachable_rejected", "free_open_rejected",
                                  "min_safe_rejected"))
    assert rejected == sum(1 for a in attempts if not a["legal"])


def test_ac_pass_line():
    """及格线: every board of the default table meets its row's target, and
    every target is >= 0.85."""
    for key in DEFAULT.keys():
        r = DEFAULT.rows[key]
        assert r.inferability_target >= 0.85
        for _, m in batch(DEFAULT, key, 32):
            assert m["exit"] == "passed"
            assert Fraction(m["revealed"], m["safe_count"]) >= target_fraction(r.inferability_target)


def test_ac_bounded_retries_in_one_stream():
    """重试有界: attempts_used in [1, max_gen_attempts]; the retries of one
    call draw from the one stream the call opened (the counter moves by 1)."""
    space = SeedSpace(master_seed=5)
    for i in range(20):
        before = space.counter
        stream = space.open_stream("board_gen")
        _, m = generate(1, 0, stream, table=GOLDEN_TABLE)
        assert space.counter == before + 1
        assert 1 <= m["attempts_used"] <= 16
        assert m["scope"] == i
        again = generate(1, 0, i, master_seed=5, table=GOLDEN_TABLE)
        assert again.metrics == m


def test_ac_cost_gate(tmp_path):
    """成本闸: attempts x W x H > 16384 is rejected at load."""
    path = write_table(tmp_path / "board_gen.toml", [{**BASE_ROW, "board_width": 64, "board_height": 64,
                                                       "max_gen_attempts": 5, "r0_max_cap": 100}])
    with pytest.raises(TableError) as exc:
        load_board_gen(path)
    assert [v.rule for v in exc.value.violations] == ["cost_gate"]
    ok = write_table(tmp_path / "ok.toml", [{**BASE_ROW, "board_width": 64, "board_height": 64,
                                             "max_gen_attempts": 4, "r0_max_cap": 100}])
    assert load_board_gen(ok).rows[(1, 0)].max_gen_attempts == 4


def test_ac_honest_degradation():
    """降级诚实: with no legal attempt the call still returns a whole board,
    flagged illegal with the critical alert; the chosen attempt is the least
    bad by (unreachable, min_safe gap, cap excess, [R0 == S], k)."""
    r = row(r0_max_cap=9, max_gen_attempts=6)  # R0 >= 25 with the ring shaved: never legal
    for scope in range(5):
        board, m = generate_from_row(r, 3, derive_at("board_gen", scope))
        assert (m["exit"], m["illegal"], m["alert"], m["degraded"]) == ("least_bad", True, "critical", False)
        assert len(board.layout) == 10 * 10 + 9
        attempts, _ = replay(r, 3, scope)
        keys = [(a["unreach"], max(0, r.min_safe_count - a["safe"]), max(0, a["r0"] - r.r0_max_cap),
                 int(a["r0"] == a["safe"]), a["k"]) for a in attempts]
        assert m["chosen_attempt"] == min(keys)[-1]
        assert m["attempts_used"] == 6 and m["r0_cap_rejected"] == 6


def test_best_legal_takes_the_earliest_maximum():
    """接受最优: no attempt passes a target of 1.0 at this density; the exit is
    best_legal, flagged degraded with a warning, and the chosen attempt is
    the first one with the highest inferability."""
    r = row(inferability_target=1.0, mine_density=0.3, max_gen_attempts=8, r0_max_cap=50, min_safe_count=20)
    seen = 0
    for scope in range(40):
        _, m = generate_from_row(r, 3, derive_at("board_gen", scope))
        if m["exit"] != "best_legal":
            continue
        seen += 1
        assert (m["degraded"], m["illegal"], m["alert"]) == (True, False, "warning")
        attempts, _ = replay(r, 3, scope)
        legal = [a for a in attempts if a["legal"]]
        best = max(Fraction(a["revealed"], a["safe"]) for a in legal)
        assert m["chosen_attempt"] == next(a["k"] for a in legal if Fraction(a["revealed"], a["safe"]) == best)
        assert Fraction(m["revealed"], m["safe_count"]) == best
    assert seen >= 5


def test_ac_load_time_validation(tmp_path):
    """加载期校验: N >= 1, count feasibility and an empty board type are fatal."""
    path = write_table(tmp_path / "board_gen.toml", [
        {**BASE_ROW, "mine_density": 0.001},
        {**BASE_ROW, "node_depth": 1, "min_safe_count": 95},
        {**BASE_ROW, "node_depth": 2, "board_type": ""},
    ])
    with pytest.raises(TableError) as exc:
        load_board_gen(path)
    assert sorted(v.rule for v in exc.value.violations) == ["domain", "min_safe_feasible", "mines_at_least_one"]


def test_ac_r0_cap_gate():
    """R₀≤cap 闸: every output has R0 <= cap, or carries the illegal flag;
    rejections are counted in r0_cap_rejected."""
    total = 0
    for key in DEFAULT.keys():
        r = DEFAULT.rows[key]
        for _, m in batch(DEFAULT, key, 16):
            assert m["r0_size"] <= r.r0_max_cap or m["illegal"]
            total += m["r0_cap_rejected"]
    assert total > 0


@pytest.mark.parametrize("radius", [0, 1, 2])
def test_ac_shave_ring_parametrized(radius):
    """剃雷域参数化: no mine within Chebyshev 1 + r of the centre, and
    ring_removed <= (3 + 2r)**2 - 9."""
    r = row(shave_ring_radius=radius, board_width=12, board_height=12, r0_max_cap=72, min_safe_count=30)
    removed = []
    for scope in range(32):
        board, m = generate_from_row(r, 3, derive_at("board_gen", scope))
        g = board.geometry
        assert not any(board.mines[c] for c in g.square(1 + radius))
        assert 0 <= m["ring_removed"] <= (3 + 2 * radius) ** 2 - 9
        assert m["mines_actual"] == m["mines_target"] - m["ring_removed"]
        removed.append(m["ring_removed"])
    assert (max(removed) == 0) == (radius == 0)


def test_ac_table_matches_field_definition():
    """表实一致: the default table's rows carry exactly the schema's fields."""
    import tomllib

    raw = tomllib.loads((Path(DEFAULT.path)).read_text())
    schema = set(BoardGenRow.model_fields) - {"reserved", "fog_region_count", "fog_target_ratio", "min_mean_survival"}
    for r in raw["rows"]:
        assert schema <= set(r) <= set(BoardGenRow.model_fields)


# ---------------------------------------------------------------- properties

@st.composite
def rows(draw):
    w = draw(st.integers(8, 20))
    h = draw(st.integers(8, 20))
    return row(board_width=w, board_height=h, mine_density=draw(st.sampled_from([0.1, 0.15, 0.2, 0.25, 0.3, 0.4])),
               inferability_target=draw(st.sampled_from([0.85, 0.9, 0.95, 1.0])),
               max_gen_attempts=draw(st.integers(1, 8)), shave_ring_radius=draw(st.integers(0, 2)),
               r0_max_cap=draw(st.integers(9, (w * h) // 2)), min_safe_count=draw(st.integers(1, 40)))


@settings(max_examples=60, deadline=None)
@given(rows(), st.integers(0, 10**9))
def test_generated_boards_keep_their_invariants(r, scope):
    board, m = generate_from_row(r, 3, derive_at("board_gen", scope))
    g = board.geometry
    assert board.mine_count == m["mines_actual"] <= m["mines_target"]
    assert not any(board.mines[c] for c in g.spawn_cells)
    c = closures(board.mines, g.width, g.height)
    assert not any(board.mines[x] for x in c.r0)
    assert (len(c.r0), len(c.r_infinity), len(c.known_mines)) == (m["r0_size"], m["revealed"], m["known_mines"])
    assert 1 <= m["attempts_used"] <= r.max_gen_attempts
    assert m["exit"] in ("passed", "best_legal", "least_bad")
    # every illegal attempt is counted once, under the first gate it fails
    attempts, _ = replay(r, 3, scope)
    gates = {"free_open": 0, "r0_cap": 0, "min_safe": 0, "unreachable": 0}
    for a in attempts:
        if a["r0"] == a["safe"]:
            gates["free_open"] += 1
        elif a["r0"] > r.r0_max_cap:
            gates["r0_cap"] += 1
        elif a["safe"] < r.min_safe_count:
            gates["min_safe"] += 1
        elif a["unreach"] > 0:
            gates["unreachable"] += 1
    assert (m["free_open_rejected"], m["r0_cap_rejected"], m["min_safe_rejected"], m["unreachable_rejected"]) == \
        (gates["free_open"], gates["r0_cap"], gates["min_safe"], gates["unreachable"])
