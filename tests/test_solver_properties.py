"""Property tests of the closures (SPEC 2.3): soundness, order
independence, and the compiled solver equal to the reference one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board.geometry import neighbour_table
from boardgen_pipeline.board.measure import measure_cells
from boardgen_pipeline.board.solver import _chain, closures, constraints, spawn_square


@st.composite
def layouts(draw, max_side=14):
    w = draw(st.integers(4, max_side))
    h = draw(st.integers(4, max_side))
    d = draw(st.sampled_from([0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4]))
    bits = draw(st.lists(st.floats(0, 1), min_size=w * h, max_size=w * h))
    mines = bytearray(1 if b < d else 0 for b in bits)
    for c in spawn_square(w, h, 3):
        mines[c] = 0
    return w, h, bytes(mines)


@settings(max_examples=300, deadline=None)
@given(layouts(), st.sampled_from(["single_subset", "single"]))
def test_solver_never_reveals_a_mine_nor_marks_a_safe_cell(layout, rules):
    w, h, mines = layout
    c = closures(mines, w, h, 3, rules)
    assert all(not mines[x] for x in c.r_infinity)
    assert all(mines[x] for x in c.known_mines)
    assert c.r0 <= c.r_infinity


@settings(max_examples=300, deadline=None)
@given(layouts(), st.sampled_from(["single_subset", "single"]))
def test_compiled_solver_equals_reference(layout, rules):
    w, h, mines = layout
    ref = closures(mines, w, h, 3, rules)
    m = measure_cells(w, h, [i for i, v in enumerate(mines) if v], rules=rules)
    assert (m.r0_size, m.revealed, m.known_mines) == (len(ref.r0), len(ref.r_infinity), len(ref.known_mines))
    assert m.safe_count == w * h - sum(mines)


def one_fact_at_a_time(mines, w, h, order_seed: int):
    """R∞ built by firing ONE rule application at a time, picked in an order
    driven by ``order_seed`` (a permutation of the candidates each step)."""
    table = neighbour_table(w, h)
    numbers = [sum(mines[n] for n in table[c]) for c in range(w * h)]
    revealed: set[int] = set()
    _chain(spawn_square(w, h, 3), revealed, numbers, table)
    known: set[int] = set()
    step = 0
    while True:
        cons = constraints(revealed, known, numbers, table)
        facts = []
        for cells, m in cons:
            if m == 0:
                facts += [("safe", c) for c in cells]
            elif m == len(cells):
                facts += [("mine", c) for c in cells]
        for ua, ma in cons:
            for ub, mb in cons:
                if ua < ub:
                    diff, dm = ub - ua, mb - ma
                    if dm == 0:
                        facts += [("safe", c) for c in diff]
                    elif dm == len(diff):
                        facts += [("mine", c) for c in diff]
        facts = sorted(set(facts))
        if not facts:
            return frozenset(revealed), frozenset(known)
        kind, cell = facts[(order_seed * 7919 + step * 104729) % len(facts)]
        step += 1
        if kind == "mine":
            known.add(cell)
        else:
            _chain([cell], revealed, numbers, table)


@settings(max_examples=120, deadline=None)
@given(layouts(max_side=10), st.integers(0, 10**6))
def test_r_infinity_does_not_depend_on_rule_order(layout, order_seed):
    w, h, mines = layout
    ref = closures(mines, w, h, 3)
    assert one_fact_at_a_time(mines, w, h, order_seed) == (ref.r_infinity, ref.known_mines)


@settings(max_examples=100, deadline=None)
@given(layouts())
def test_numbers_are_true(layout):
    from boardgen_pipeline.board.geometry import Board

    w, h, mines = layout
    b = Board(w, h, 3, mines)
    for c, n in enumerate(b.numbers):
        x, y = c % w, c // w
        assert n == sum(mines[yy * w + xx] for yy in range(y - 1, y + 2) for xx in range(x - 1, x + 2)
                        if (xx, yy) != (x, y) and 0 <= xx < w and 0 <= yy < h)
