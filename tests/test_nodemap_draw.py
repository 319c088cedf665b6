"""Pool draws and the first-adventure flag (SPEC 4 "Draw", "First
adventure"; SPEC 6 streams): golden draws, the save-state life cycle, scope
bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from boardgen_pipeline.board.rng import SeedSpace, derive_at
from boardgen_pipeline.nodemap import SaveState, draw_adventure, draw_template, load_pools, script_maps

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "tables"

# Master seeds 0..4, levels 1..3, adventure actions = the three level starts.
GOLDEN = {
    0: ["l1_wide_diagonal_fork", "l2_wide_twin_trunk", "l3_wide_twin_trunk"],
    1: ["l1_three_trunk_mid_corridor", "l2_single_file_fork", "l3_wide_four_gates"],
    2: ["l1_narrow_short_branch", "l2_single_file_fork", "l3_wide_four_gates"],
    3: ["l1_three_trunk_mid_corridor", "l2_narrow_short_branch", "l3_wide_twin_trunk"],
    4: ["l1_wide_diagonal_fork", "l2_three_trunk_mid_corridor", "l3_three_trunk_mid_corridor"],
}


@pytest.fixture(scope="module")
def pools():
    return load_pools(TABLES)


def test_golden_draws_for_master_seeds_0_to_4(pools):
    for seed, expected in GOLDEN.items():
        maps = draw_adventure(pools, seed, first_adventure=False)
        assert [m.template_id for m in maps] == expected, seed
        assert [m.scope for m in maps] == [0, 1, 2]
        assert [m.level for m in maps] == [1, 2, 3]


def test_every_first_adventure_gets_the_script_maps_whatever_its_seed(pools):
    script = script_maps(pools)
    assert [(m.level, m.source, m.scope) for m in script] == [(1, "fixed", None), (2, "fixed", None), (3, "fixed", None)]
    for seed in (0, 1, 7, 123, 2**40):
        assert draw_adventure(pools, seed, first_adventure=True) == script, seed


def test_a_batch_of_draw_records_redraws_through_the_game_model_on_both_branches(pools):
    from boardgen_pipeline.steps.draw_node_maps import BRANCHES, determinism_outcome, draw_records

    records = draw_records(pools, range(30))  # the script's maps built once for the batch
    assert len(records) == 30 * len(BRANCHES) * len(pools)
    out = determinism_outcome(pools, records, list(range(30)))  # every record drawn again, adventure by adventure
    assert out.passed, out.metadata


def test_draw_is_one_uniform_below_over_the_pool_in_file_order(pools):
    for seed in range(20):
        for scope in range(3):
            stream = derive_at("node_map", scope, seed)
            m = draw_template(pools[1], stream)
            index = derive_at("node_map", scope, seed).below(len(pools[1].templates))
            assert m.template_id == pools[1].templates[index].id
            assert stream.draws == 1  # slot-free templates: exactly one draw


def test_first_adventure_ends_set_the_flag_once_and_quitting_writes_nothing(pools):
    save = SaveState()
    # The game is quit mid-adventure: no convergence point, no write.
    adventure = save.start_adventure(pools, master_seed=3)
    adventure.start_level(1)
    assert save.first_adventure_done is False and save.flag_writes == 0
    # The next adventure replays the script (seed 004: 教学重放，可接受).
    adventure = save.start_adventure(pools, master_seed=3)
    assert adventure.scripted
    assert adventure.start_level(1).source == "fixed"
    save.end_adventure("abandoned")
    assert (save.first_adventure_done, save.flag_writes) == (True, 1)
    for seed in range(3):
        adventure = save.start_adventure(pools, master_seed=seed)
        assert not adventure.scripted
        assert [adventure.start_level(level).template_id for level in (1, 2, 3)] == GOLDEN[seed]
        save.end_adventure("completed")
    assert save.flag_writes == 1


def test_flag_is_read_once_at_adventure_start(pools):
    save = SaveState()
    adventure = save.start_adventure(pools, master_seed=0)
    save.first_adventure_done = True  # even a write during the adventure does not switch branch
    assert adventure.start_level(2).source == "fixed"


def test_end_adventure_rejects_unknown_outcomes_and_double_ends(pools):
    save = SaveState()
    with pytest.raises(RuntimeError):
        save.end_adventure("completed")  # nothing started
    save.start_adventure(pools, master_seed=0)
    with pytest.raises(ValueError, match="outcome"):
        save.end_adventure("quit")
    save.end_adventure("failed")
    with pytest.raises(RuntimeError):
        save.end_adventure("failed")
    with pytest.raises(RuntimeError, match="ended"):
        save.adventure.start_level(1)
    assert save.flag_writes == 1


def test_unknown_level_is_a_clear_error(pools):
    adventure = SaveState(first_adventure_done=True).start_adventure(pools, master_seed=0)
    with pytest.raises(KeyError, match="no node-map pool for level 4"):
        adventure.start_level(4)


def test_each_level_start_takes_the_next_scope_of_the_shared_counter(pools):
    space = SeedSpace(11)
    space.open_stream("board_gen")
    space.open_stream("board_gen")
    adventure = SaveState(first_adventure_done=True).start_adventure(pools, seeds=space)
    maps = [adventure.start_level(level) for level in (1, 2, 3)]
    assert [m.scope for m in maps] == [2, 3, 4]
    assert space.log[2:] == [(2, "node_map"), (3, "node_map"), (4, "node_map")]
    # Levels are drawn at their own start, not all at adventure start: the
    # same adventure replayed without the two board streams draws other scopes.
    plain = draw_adventure(pools, 11, first_adventure=False)
    assert [m.scope for m in plain] == [0, 1, 2]


def test_different_master_seeds_give_different_sequences(pools):
    seqs = {tuple(m.template_id for m in draw_adventure(pools, seed, False)) for seed in range(60)}
    assert len(seqs) > 40


def test_the_gate_refuses_a_row_set_the_validator_refuses_each_time_it_meets_it(pools):
    import dataclasses

    from boardgen_pipeline.errors import TableError
    from boardgen_pipeline.nodemap import fixed_map, gate

    m = fixed_map(pools[1])
    no_boss = tuple(dataclasses.replace(n, type="battle") if n.type == "boss" else n for n in m.nodes)
    broken = dataclasses.replace(m, nodes=no_boss)
    for _ in range(2):  # verdicts are kept per row set: the second meeting is refused too
        with pytest.raises(TableError):
            gate(broken)
    assert gate(m) is m
