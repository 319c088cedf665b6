"""The exact mine-probability engine: hand-worked positions with
their probabilities derived in the comments, a brute-force count of every
layout on small positions (fog included), ms-toollib's
``cal_probability_onboard`` on hundreds of positions from real boards of
the default tables, the compiled combination held equal to the Python one,
and the node budget: a position over it claims nothing."""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import ms_toollib
import numpy as np
import pytest

from boardgen_pipeline import generate
from boardgen_pipeline.board import limbs, player
from boardgen_pipeline.board import probability as pr
from boardgen_pipeline.board.geometry import neighbour_table
from boardgen_pipeline.board.solver import closures
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

DEFAULT = load_board_gen_dir()

F = Fraction


def probs(text: str, mines: int) -> dict:
    """``{(x, y): P(mine)}`` of every closed cell of a drawn position."""
    p = pr.position_from_text(text, mines)
    r = pr.probabilities(p)
    closed = np.flatnonzero((p.revealed == 0) & (p.fog == 0))
    return {(c % p.width, c // p.width): r.p_mine(int(c)) for c in closed}


def test_one_two_one_and_the_interior_behind_it():
    # ???   row 0: no number touches it (the interior, 3 cells)
    # ???   row 1: the frontier
    # 121   row 2
    # 000   row 3 (zeros: their neighbours are all opened)
    # Left 1: a + b = 1; the 2: a + b + c = 2; right 1: b + c = 1 (a, b, c
    # the frontier left to right). 2 - left 1 gives c = 1, 2 - right 1
    # gives a = 1, so b = 0: one frontier layout with 2 mines. The third
    # mine is one of the 3 interior cells: 3 layouts, 1/3 each.
    got = probs("???/???/121/000", 3)
    assert [got[(x, 1)] for x in range(3)] == [1, 0, 1]
    assert [got[(x, 0)] for x in range(3)] == [F(1, 3)] * 3
    r = pr.probabilities(pr.position_from_text("???/???/121/000", 3))
    assert r.total == 3 and r.p_interior() == F(1, 3)


def test_one_one_from_the_edge():
    # ????   row 0
    # 11??   row 1
    # (0,1)=1 sees {(0,0), (1,0)}; (1,1)=1 sees those and {(2,0), (2,1)}:
    # the first set is inside the second with the same count, so (2,0) and
    # (2,1) are safe (the 1-1 pattern) and {(0,0), (1,0)} holds the 1
    # frontier mine, 2 ways. (3,0) and (3,1) touch no number: the interior,
    # holding the other mine of 2: 2 ways. 4 layouts: 1/2, 1/2, 0, 0, and
    # 1/2 for both interior cells.
    got = probs("????/11??", 2)
    assert got == {(0, 0): F(1, 2), (1, 0): F(1, 2), (2, 0): 0, (3, 0): F(1, 2), (2, 1): 0, (3, 1): F(1, 2)}


def test_an_isolated_fifty_fifty():
    # ??    both 1s see exactly the two closed cells: one mine, two places,
    # 11    no other cell can ever tell them apart
    # 00
    assert probs("??/11/00", 1) == {(0, 0): F(1, 2), (1, 0): F(1, 2)}


@pytest.mark.parametrize("mines,expected", [
    # ???   (0,1)=1 sees {(0,0), (1,0), (1,1)}, (2,1)=1 sees {(1,0), (2,0), (1,1)}.
    # 1?1   Either a shared cell (1,0) or (1,1) is the mine (1 mine, 2
    #       layouts) or both outer cells (0,0), (2,0) are (2 mines, 1 layout).
    # With 1 mine on the board: the shared pair, 1/2 each, outer cells 0.
    (1, {(0, 0): 0, (1, 0): F(1, 2), (2, 0): 0, (1, 1): F(1, 2)}),
    # With 2: only the outer pair; the count alone settles every cell.
    (2, {(0, 0): 1, (1, 0): 0, (2, 0): 1, (1, 1): 0}),
])
def test_only_the_global_mine_count_settles_it(mines, expected):
    assert probs("???/1?1", mines) == expected


TWO_GADGETS = "???????/???f???/1?1f1?1"


def test_two_frontier_components_share_the_remaining_mines():
    # Row 0 touches no number: 7 interior cells. Rows 1-2 hold two copies of
    # the "1?1" gadget above, split by a fog column (known safe, no
    # number): components A (x 0-2) and B (x 4-6), each 1 mine in 2 ways
    # (a shared cell) or 2 mines in 1 way (the outer pair). 4 mines: with
    # kA, kB mines in A, B and x = 4 - kA - kB in the interior,
    #   (1,1,2): 2 * 2 * C(7,2) = 84   (1,2,1): 2 * 1 * 7 = 14
    #   (2,1,1): 1 * 2 * 7 = 14        (2,2,0): 1 * 1 * 1 = 1    total 113.
    # An outer cell of A is a mine when kA = 2: 14 + 1 = 15 -> 15/113.
    # A shared cell of A when kA = 1 and it is that cell: 1*2*21 + 1*1*7 = 49.
    # An interior cell: E[x] / 7 = (84*2 + 14 + 14) / 113 / 7 = 28/113.
    # (Check: 4 outer * 15 + 4 shared * 49 + 7 * 28 = 452 = 4 mines * 113.)
    r = pr.probabilities(pr.position_from_text(TWO_GADGETS, 4))
    assert r.total == 113 and r.components == 2
    w = 7
    outer = [(0, 1), (2, 1), (4, 1), (6, 1)]
    shared = [(1, 1), (1, 2), (5, 1), (5, 2)]
    assert [r.p_mine(y * w + x) for x, y in outer] == [F(15, 113)] * 4
    assert [r.p_mine(y * w + x) for x, y in shared] == [F(49, 113)] * 4
    assert r.p_interior() == F(28, 113)
    assert [r.p_mine(y * w + 3) for y in (1, 2)] == [0, 0]  # fog: known safe
    # the lowest: the outer cells tie at 15/113, the first in row-major order wins
    assert r.lowest() == (1 * w + 0, F(15, 113))


def brute_force(p: pr.Position) -> tuple[int, dict]:
    """Every layout of the unknown cells (not opened, not proven, not fog)
    holding the mines not yet proven, checked against every opened number:
    ``(layouts, {cell: layouts with a mine there})``."""
    table = neighbour_table(p.width, p.height)
    known = set(np.flatnonzero(p.known_mines).tolist())
    unknown = [c for c in range(p.width * p.height) if not p.revealed[c] and not p.fog[c] and c not in known]
    numbered = [c for c in range(p.width * p.height) if p.revealed[c] and not p.fog[c]]
    r = p.mines_total - len(known)
    layouts, hits = 0, dict.fromkeys(unknown, 0)
    for chosen in itertools.combinations(unknown, r) if 0 <= r <= len(unknown) else ():
        mines = known | set(chosen)
        if all(sum(n in mines for n in table[c]) == p.numbers[c] for c in numbered):
            layouts += 1
            for c in chosen:
                hits[c] += 1
    return layouts, hits


HAND = [("???/???/121/000", 3), ("????/11??", 2), ("??/11/00", 1), ("???/1?1", 1), ("???/1?1", 2),
        (TWO_GADGETS, 4), (TWO_GADGETS, 3), (TWO_GADGETS, 2), ("f???/1?1f/??f?", 1), ("f???/1?1f/??f?", 2)]


@pytest.mark.parametrize("text,mines", HAND)
def test_hand_positions_agree_with_counting_every_layout(text, mines):
    p = pr.position_from_text(text, mines)
    layouts, hits = brute_force(p)
    r = pr.probabilities(p)
    assert r.total == layouts
    assert {c: r.weights[c] for c in hits} == hits


def small_positions(count: int, seed: int):
    """Positions of small random boards (a few mines, some safe cells
    opened, some fog), from one seeded generator (no global state)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    out = []
    while len(out) < count:
        w, h = int(rng.integers(3, 6)), int(rng.integers(3, 5))
        nc = w * h
        mines = np.zeros(nc, np.uint8)
        mines[rng.choice(nc, int(rng.integers(1, nc // 3 + 1)), replace=False)] = 1
        safe = np.flatnonzero(mines == 0)
        fog = np.zeros(nc, np.uint8)
        fog[rng.choice(safe, int(rng.integers(0, 3)), replace=False)] = 1
        opened = np.zeros(nc, np.uint8)
        opened[rng.choice(safe, int(rng.integers(1, len(safe) + 1)), replace=False)] = 1
        opened &= 1 - fog
        table = neighbour_table(w, h)
        num = np.array([sum(mines[n] for n in table[c]) for c in range(nc)], np.int32)
        known = mines & (rng.random(nc) < 0.3)
        if nc - opened.sum() - fog.sum() <= 14:
            out.append(pr.Position(w, h, opened, num * opened, known.astype(np.uint8), fog, int(mines.sum())))
    return out


def test_random_small_positions_agree_with_counting_every_layout():
    for p in small_positions(300, 30):
        layouts, hits = brute_force(p)
        r = pr.probabilities(p)
        assert r.total == layouts
        assert all(r.weights[c] == k for c, k in hits.items())


def test_an_inconsistent_position_is_refused():
    with pytest.raises(ValueError, match="inconsistent"):
        pr.probabilities(pr.position_from_text("??/11/00", 2))  # two mines where the 1s allow one
    with pytest.raises(ValueError, match="mines_total"):
        pr.probabilities(pr.position_from_text("*?/11/00", 0))


@pytest.mark.parametrize("bad", ["??/1x", "???/12", ""])
def test_a_drawing_that_is_not_a_position_is_refused(bad):
    with pytest.raises(ValueError):
        pr.position_from_text(bad, 1)


def compiled(p: pr.Position) -> tuple[int, list[int], int]:
    """The compiled combination's ``(total, weights, interior weight)`` as Python integers."""
    kind, cells, starts, coff, counts, moff, cc, interior, over, _ = pr.tables(*pr._arrays(p), pr.NODE_BUDGET)
    remaining = p.mines_total - int(p.known_mines.sum())
    ok, total, weights, inner = pr.combine(counts, coff, cc, moff, starts, interior, remaining,
                                           limbs.limbs_for(p.width * p.height))
    assert ok
    return limbs.to_int(total), [limbs.to_int(w) for w in weights], limbs.to_int(inner)


def board_positions(per_row: int, fog_rows: bool):
    """Positions from boards of the default tables: the state at R∞ and at
    the player's first forced guesses (skipping those with nothing unknown)."""
    out = []
    for (level, depth), row in sorted(DEFAULT.rows.items()):
        if bool(row.fog_region_count) != fog_rows:
            continue
        for seed in range(per_row):
            b = generate(level, depth, 7000 + seed).board
            c = closures(b.mines, b.width, b.height, b.spawn_side, fog=b.fog)
            rev = np.zeros(b.width * b.height, np.uint8)
            rev[list(c.r_infinity)] = 1
            known = np.zeros_like(rev)
            known[list(c.known_mines)] = 1
            fog = np.zeros_like(rev)
            fog[list(b.fog)] = 1
            num = np.asarray(b.numbers, np.int32)
            found = [pr.Position(b.width, b.height, rev, num * rev, known, fog, b.mine_count)]
            for g in range(4):
                q = player.position_at_guess(b, g)
                if q is None:
                    break
                found.append(q)
            out += [q for q in found if ((q.revealed == 0) & (q.known_mines == 0) & (q.fog == 0)).any()]
    return out


@functools.cache
def fog_free() -> list[pr.Position]:
    return board_positions(50, fog_rows=False)


@functools.cache
def with_fog() -> list[pr.Position]:
    return board_positions(8, fog_rows=True)


def game_board(p: pr.Position) -> list[list[int]]:
    """A position as ms-toollib reads it: rows of the shown number, 10
    closed, 11 a proven mine."""
    g = np.where(p.revealed == 1, p.numbers, 10)
    g = np.where(p.known_mines == 1, 11, g)
    return g.reshape(p.height, p.width).tolist()


def test_hundreds_of_real_positions_agree_with_ms_toollib():
    # ms-toollib enumerates a block exactly up to 55 cells (ENUM_LIMIT) and
    # averages beyond; only positions whose components all stay well inside
    # are compared. It has no fog (its "known safe" code 12 is reset by its
    # own marking), so the positions come from the rows without fog.
    compared = 0
    for p in fog_free():
        t = pr.enumerate_position(p)
        if max((len(c) for c in t.components), default=0) > 40:
            continue
        r = pr.probabilities(p)
        theirs, _ = ms_toollib.cal_probability_onboard(game_board(p), float(p.mines_total))
        flat = [x for row in theirs for x in row]
        for c in range(p.width * p.height):
            assert abs(float(r.p_mine(c)) - flat[c]) < 1e-9, (p, c)
        compared += 1
    assert compared >= 300


def test_the_compiled_combination_equals_the_python_one():
    for p in fog_free() + with_fog():
        t = pr.enumerate_position(p)
        total, comp_weights, inner = pr.combine_exact(t)
        ctotal, cweights, cinner = compiled(p)
        assert ctotal == total
        assert cweights == [w for ws in comp_weights for w in ws]
        assert cinner == (inner if t.interior else 0)


def test_every_weight_sums_to_the_mines_times_the_layouts():
    # each layout counted holds exactly r unknown mines
    for p in fog_free() + with_fog():
        r = pr.probabilities(p)
        unknown = r.frontier + r.interior
        assert sum(r.weights[c] for c in unknown) == (p.mines_total - int(p.known_mines.sum())) * r.total


def sandwich(width: int) -> pr.Position:
    """A row of 1s between two closed rows: one component of ``2 * width``
    cells whose layouts double with every third column."""
    return pr.position_from_text("?" * width + "/" + "1" * width + "/" + "?" * width, (width + 1) // 3)


def test_over_the_node_budget_nothing_is_claimed():
    p = pr.position_from_text(TWO_GADGETS, 4)
    used = pr.probabilities(p).nodes
    assert pr.probabilities(p, budget=used).exact  # exactly the nodes it needs fit
    r = pr.probabilities(p, budget=used - 1)
    assert (r.too_big, r.components, r.total, r.weights) == (1, 2, 0, ())
    assert pr.probabilities(p, budget=0).too_big == 2
    for claim in (lambda: r.p_mine(0), r.p_interior, r.lowest):
        with pytest.raises(ValueError, match="over the node budget"):
            claim()


def test_a_position_built_to_exceed_the_default_budget_is_flagged():
    # s_x = mines in column x (above or below the 1s): every 1 sees three
    # columns, so s is 1 every third column, from column 0 or from column 1
    # (both fit widths 20 and 62), each 1 either above or below. Width 20:
    # 7 mines, 2 * 2**7 = 256 layouts. Width 62: 2 * 2**21 layouts, each a
    # leaf of the search: more than the node budget.
    small = pr.probabilities(sandwich(20))
    assert small.exact and small.total == 256
    big = pr.probabilities(sandwich(62))
    assert big.too_big == 1 and not big.exact and big.total == 0


@pytest.mark.parametrize("change,message", [
    (dict(width=0), "outside"),
    (dict(revealed=np.zeros(3, np.uint8)), "must hold"),
    (dict(fog=np.full(6, 2, np.uint8)), "0 or 1"),
    (dict(numbers=np.full(6, 9, np.int32)), "0..8"),
    (dict(known_mines=np.ones(6, np.uint8)), "proven mine"),
])
def test_a_position_the_kernels_cannot_read_is_refused(change, message):
    p = pr.position_from_text("??/11/00", 1)._replace(**change)
    with pytest.raises(ValueError, match=message):
        pr.probabilities(p)
    with pytest.raises(ValueError, match="budget"):
        pr.probabilities(pr.position_from_text("??/11/00", 1), budget=-1)
