"""Each node-map rule's violation whole (SPEC 4 "Validation"; one
clear sentence naming file, row, field, value and rule; asked by
the mutation run of ``nodemap/validate.py``: docs/testing.md).
tests/test_nodemap_validate.py checks each bad fixture's rule and row; here
the same violation's file, field, value and message are held to what was
read off each fixture (tests/fixtures/nodemaps/bad/) and written down once:
a rule that fires while naming the wrong field or value misleads the
designer who reads it."""

from __future__ import annotations

import pytest

from boardgen_pipeline.nodemap import load_pool_file

from .test_nodemap_validate import BAD, CASES

# fixture -> (field, value, message) of its violation (rule and row: CASES)
WHOLE = {
    "bad_value": ('id', '6',
        "template 'bad_bad_value' node '6': id '6' is not an integer; ids are node numbers"),
    "boss_count": ('type', [9, 10],
        "template 'bad_boss_count' node 10: exactly one boss node is required, found 2: [9, 10]"),
    "boss_only_sink": ('edges', [],
        "template 'bad_boss_only_sink' node 10: node 10 has no children; the boss (node 9) is the only sink"),
    "cannot_reach_boss": ('edges', None,
        "template 'bad_cannot_reach_boss' node 11: no path from node 11 to the boss (node 9)"),
    "cycle": ('edges', [2, 4],
        "template 'bad_cycle' node 2: nodes [2, 4] lie on a directed cycle; a node map is acyclic"),
    "duplicate_edge": ('edges', [2, 4],
        "template 'bad_duplicate_edge' node 2: edge 2 -> 4 is listed 2 times"),
    "duplicate_node_id": ('id', 5,
        "template 'bad_duplicate_node_id' node 5: id 5 is used by 2 nodes; ids are unique in the level"),
    "duplicate_template_id": ('id', 'base',
        "template 'base' appears 2 times in the level 1 pool"),
    "empty_pool": ('templates', 0,
        'level 1: a pool holds N >= 1 templates'),
    "entry_count": ('edges', [1, 10],
        "template 'bad_entry_count' node 10: exactly one entry (node without parents) is required, found 2: [1, 10]"),
    "fanout_violation": ('edges', [2, 3, 10],
        "template 'bad_fanout' node 1: out-degree 3 > 2 (children [2, 3, 10])"),
    "fixed_count": ('fixed', ['base', 'bad_fixed_count'],
        "level 1: exactly one template is flagged fixed = true (the rollback member), found 2: ['base', 'bad_fixed_count']"),
    "layer_width": ('depth 3', 5,
        "template 'bad_layer_width' node 8: BFS layer 3 holds 5 nodes [8, 9, 10, 11, 12]; the width limit is 4"),
    "missing_field": ('type', None,
        "template 'bad_missing_field' node 5: no type (one of battle, reward, rest, shop, boss)"),
    "procedural_domain": ('layers', 2,
        'level 1 [procedural] layers: an integer in [3, 12] (entry, middle layers, shop, boss)'),
    "shop_boss_parent": ('edges', [7, 9],
        "template 'bad_shop_boss_parent' node 7: node 7 is a parent of the boss (node 9); the shop (node 8) must be its only parent"),
    "shop_count": ('type', [7, 8],
        "template 'bad_shop_count' node 7: exactly one shop node per level is required, found 2: [7, 8]"),
    "shop_every_path": ('edges', [1, 3, 7, 9],
        "template 'bad_shop_every_path' node 8: route 1 -> 3 -> 7 -> 9 reaches the boss without the shop (node 8)"),
    "slot_candidates": ('slot', ['reward', 'shop'],
        "template 'bad_slot_candidates' node 3: candidates ['shop'] are not slot types ['battle', 'reward', 'rest']"),
    "slot_on_fixed": ('slot', ['reward', 'rest'],
        "template 'bad_slot_on_fixed' node 3: the fixed template is the rollback member and must equal today's map bit for bit: no slots"),
    "slot_on_shop": ('slot', ['shop', 'rest'],
        "template 'bad_slot_on_shop' node 8: the shop may not be a slot: it is the boss's fixed gate"),
    "tutorial_not_battle": ('tutorial', True,
        "template 'bad_tutorial_not_battle' node 3: the tutorial mark belongs to a battle node with a fixed type "
        "(the first battle of the skeleton)"),
    "unknown_field": ('tpye', 'battle',
        "template 'bad_unknown_field' node 4: unknown field 'tpye' (allowed: id, slot, tutorial, type)"),
    "unknown_node": ('edges', [4, 42],
        "template 'bad_unknown_node' node 4: edge 4 -> 42 names node 42, which does not exist"),
    "unknown_type": ('type', 'elite',
        "template 'bad_unknown_type' node 6: type 'elite' is not one of battle, reward, rest, shop, boss"),
    "unreachable": ('edges', None,
        "template 'bad_unreachable' node 10: node 10 is not reachable from the entry (node 1)"),
}


def test_every_fixture_has_its_whole_violation():
    assert set(WHOLE) == set(CASES)


@pytest.mark.parametrize("name", sorted(WHOLE))
def test_the_violation_names_file_field_value_and_says_why(name):
    rule, row = CASES[name]
    field, value, message = WHOLE[name]
    _, violations = load_pool_file(BAD / f"{name}.toml")
    hits = [v for v in violations if v.rule == rule and v.row == row]
    assert hits, [str(v) for v in violations]  # the first of the row's violations of that rule
    v = hits[0]
    assert (v.file, v.row, v.field, v.value, v.rule, v.message) == (str(BAD / f"{name}.toml"), row, field, value,
                                                                      rule, message)
