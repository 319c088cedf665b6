"""The compiled closures against the readable reference (SPEC 2.3; seed 001
F1 "single_subset", fog as information source (b)).

``board/solver.py`` is the rule as written; the compiled closure is one per
board shape: bit rows for boards of at most 58 columns (``closure_rows``),
cell by cell for wider ones (``closure_cells``). On random layouts, with
fog and without it, at widths on both sides of the word, both must reveal
the same R0 and R∞ and prove the same mines as the reference."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board.measure import _measured
from boardgen_pipeline.board.solver import closures, spawn_square

WORD = 58  # the widest board the row closure holds


@st.composite
def boards(draw):
    """A layout whose spawn square holds no mine, with or without fog;
    widths around the word size and small ones, where edges dominate."""
    width = draw(st.one_of(st.integers(3, 12), st.integers(WORD - 3, WORD + 6)))
    height = draw(st.integers(3, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    density = draw(st.sampled_from([0.08, 0.15, 0.22, 0.3]))
    fog_share = draw(st.sampled_from([0.0, 0.0, 0.1, 0.25]))
    rng = np.random.default_rng(seed)
    spawn = set(spawn_square(width, height, 3))
    mines = [c for c in range(width * height) if c not in spawn and rng.random() < density]
    taken = set(mines)
    fog = [c for c in range(width * height) if c not in taken and c not in spawn and rng.random() < fog_share]
    rules = draw(st.sampled_from(["single_subset", "single"]))
    return width, height, mines, fog, rules


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boards())
def test_the_compiled_closure_of_each_shape_is_the_reference(board):
    width, height, mines, fog, rules = board
    measure, ws, _ = _measured(width, height, mines, fog, rules, 3)
    layout = [0] * (width * height)
    for c in mines:
        layout[c] = 1
    ref = closures(layout, width, height, 3, rules, fog=fog)
    assert measure.r0_size == len(ref.r0)
    assert set(np.flatnonzero(ws.rev).tolist()) == set(ref.r_infinity), "R∞ differs from the reference"
    assert set(np.flatnonzero(ws.known).tolist()) == set(ref.known_mines), "proven mines differ"


def test_both_shapes_are_drawn():
    """The strategy reaches both closures: boards of the word's width and wider."""
    assert find(boards(), lambda b: b[0] <= WORD)[0] <= WORD
    assert find(boards(), lambda b: b[0] > WORD)[0] > WORD
