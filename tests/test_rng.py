"""Streams: golden vectors, rejection sampling, scopes (SPEC 6; seed 001 AC-5)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardgen_pipeline.board import kernels, rng
from boardgen_pipeline.board.rng import SeedSpace, Stream, derive_at, sigma, splitmix64


def test_golden_first_outputs_of_a_stream():
    s = derive_at("board_gen", 0, 0)
    assert s.state == 0x77D49BD984B250E8
    assert [s.next_u64() for _ in range(4)] == [
        0x5AA4B62D65ABE919, 0x08062D612BE9B563, 0x366ABBC9FADBBF35, 0xEBC3A82C6A90FE60]
    assert s.draws == 4


def test_golden_bounded_draws():
    s = derive_at("variant_place", 7, 42)
    assert s.state == 0x10BB80C8AEEFDC37
    assert [s.below(10) for _ in range(8)] == [8, 3, 8, 8, 5, 7, 1, 3]


def test_splitmix64_reference_vector():
    """SplitMix64 from state 0: the published first output 0xE220A8397B1DCDAF."""
    assert splitmix64(0)[1] == 0xE220A8397B1DCDAF


def test_streams_are_identical_in_another_process():
    code = ("from boardgen_pipeline.board.rng import derive_at;s=derive_at('node_map',123,9);"
            "print([s.next_u64() for _ in range(5)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    s = derive_at("node_map", 123, 9)
    assert out.strip() == str([s.next_u64() for _ in range(5)])


def test_labels_scopes_and_master_seeds_give_different_streams():
    first = {derive_at(label, scope, ms).next_u64()
             for label in ("board_gen", "variant_place", "node_map") for scope in range(20) for ms in (0, 1)}
    assert len(first) == 3 * 20 * 2


def test_ac_5_open_stream_equals_derive_at_and_counts_one_per_call():
    space = SeedSpace(master_seed=42)
    a = space.open_stream("board_gen")
    b = space.open_stream("board_gen")
    assert (a.scope, b.scope) == (0, 1)
    assert a.state == derive_at("board_gen", 0, 42).state
    assert b.state == derive_at("board_gen", 1, 42).state
    assert space.counter == 2 and space.log == [(0, "board_gen"), (1, "board_gen")]


def test_below_rejects_the_biased_low_outputs():
    """With n = 3 * 2**62 the threshold is 2**64 mod n = 2**62: outputs
    below it are redrawn, so every value of [0, n) is equally likely."""
    n = 3 * 2**62

    class Fixed(Stream):
        def __init__(self, outs):
            super().__init__("t", 0, 0, 0)
            self.outs = list(outs)

        def next_u64(self):
            self.draws += 1
            return self.outs.pop(0)

    s = Fixed([5, 2**62 - 1, 2**62 + 7])
    assert s.below(n) == (2**62 + 7) % n
    assert s.draws == 3


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(1, 2**40))
def test_compiled_below_equals_the_reference(scope, n):
    ref = derive_at("board_gen", scope)
    state = np.array([ref.state], dtype=np.uint64)
    draws = np.zeros(1, dtype=np.int64)
    for _ in range(5):
        assert kernels.below(state, draws, n) == ref.below(n)
    assert int(state[0]) == ref.state and int(draws[0]) == ref.draws


def test_sigma_ranges_are_disjoint_for_all_rows():
    assert sigma(1, 0) == 10**9 + 2**20
    starts = sorted(sigma(level, depth) for level in range(1, 4) for depth in range(256))
    assert all(b - a >= 2**12 for a, b in zip(starts, starts[1:]))


@given(st.sampled_from(rng.LABELS), st.lists(st.integers(0, 2**63 - 1), max_size=40), st.integers(0, 2**40))
def test_a_batch_of_initial_states_is_each_scopes_own(label, scopes, master_seed):
    """``initial_states`` hashes the name's common prefix once: every state
    must still be the one ``initial_state`` gives its scope alone."""
    got = rng.initial_states(label, scopes, master_seed)
    assert got.dtype == np.uint64 and got.tolist() == [rng.initial_state(label, s, master_seed) for s in scopes]


def test_a_batch_of_initial_states_refuses_a_negative_scope_or_seed():
    with pytest.raises(ValueError):
        rng.initial_states("board_gen", [3, -1])
    with pytest.raises(ValueError):
        rng.initial_states("board_gen", [3], master_seed=-1)
    assert rng.initial_states("board_gen", []).tolist() == []
