"""Template validation (SPEC 4 "Validation"): one bad fixture per rule, the
file and folder rules, and the default content's shape."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from boardgen_pipeline.errors import TableError
from boardgen_pipeline.nodemap import (
    check_content_discipline,
    instantiate,
    load_pool_file,
    load_pools,
    read_pools,
    validate_tables,
)

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "tables"
BAD = ROOT / "tests" / "fixtures" / "nodemaps" / "bad"
DEFAULT_KEYS = {(level, depth) for level in (1, 2, 3) for depth in range(5)}

# fixture file -> (rule, row naming the template and node)
CASES = {
    "cycle": ("cycle", "bad_cycle/2"),
    "entry_count": ("entry_count", "bad_entry_count/10"),
    "boss_count": ("boss_count", "bad_boss_count/10"),
    "boss_only_sink": ("boss_only_sink", "bad_boss_only_sink/10"),
    "unreachable": ("unreachable", "bad_unreachable/10"),
    "cannot_reach_boss": ("cannot_reach_boss", "bad_cannot_reach_boss/11"),
    "fanout_violation": ("fanout_violation", "bad_fanout/1"),
    "layer_width": ("layer_width", "bad_layer_width/8"),
    "shop_count": ("shop_count", "bad_shop_count/7"),
    "shop_boss_parent": ("shop_boss_parent", "bad_shop_boss_parent/7"),
    "shop_every_path": ("shop_every_path", "bad_shop_every_path/8"),
    "duplicate_node_id": ("duplicate_node_id", "bad_duplicate_node_id/5"),
    "unknown_type": ("unknown_type", "bad_unknown_type/6"),
    "unknown_node": ("unknown_node", "bad_unknown_node/4"),
    "duplicate_edge": ("duplicate_edge", "bad_duplicate_edge/2"),
    "slot_on_shop": ("slot_on_shop", "bad_slot_on_shop/8"),
    "slot_candidates": ("slot_candidates", "bad_slot_candidates/3"),
    "slot_on_fixed": ("slot_on_fixed", "bad_slot_on_fixed/3"),
    "tutorial_not_battle": ("tutorial_not_battle", "bad_tutorial_not_battle/3"),
    "unknown_field": ("unknown_field", "bad_unknown_field/4"),
    "bad_value": ("bad_value", "bad_bad_value/6"),
    "missing_field": ("missing_field", "bad_missing_field/5"),
    "fixed_count": ("fixed_count", "bad_fixed_count"),
    "duplicate_template_id": ("duplicate_template_id", "base"),
    "empty_pool": ("empty_pool", "level 1"),
    "procedural_domain": ("procedural_domain", "level 1/procedural"),
}


def test_every_bad_fixture_is_covered():
    assert {p.stem for p in BAD.glob("*.toml")} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_fixture_names_rule_template_and_node(name):
    rule, row = CASES[name]
    pool, violations = load_pool_file(BAD / f"{name}.toml")
    hits = [v for v in violations if v.rule == rule and v.row == row]
    assert hits, [str(v) for v in violations]
    text = str(hits[0])
    assert f"[{rule}]" in text and row in text
    template_id, _, node_id = row.partition("/")
    assert template_id in hits[0].message
    if node_id and row.startswith("bad_"):
        assert f"node {node_id}" in hits[0].message.replace("'", "")
    assert all(v.severity == "fatal" for v in violations)
    # The base template shipped with each fixture is clean: nothing else is blamed.
    assert not [v for v in violations if v.row.startswith("base/")]


def test_bad_fixture_messages_carry_the_evidence():
    _, vs = load_pool_file(BAD / "shop_every_path.toml")
    assert any("1 -> 3 -> 7 -> 9" in v.message for v in vs if v.rule == "shop_every_path")
    _, vs = load_pool_file(BAD / "layer_width.toml")
    assert any(v.value == 5 and "[8, 9, 10, 11, 12]" in v.message for v in vs)
    _, vs = load_pool_file(BAD / "cycle.toml")
    assert any(v.value == [2, 4] for v in vs)
    _, vs = load_pool_file(BAD / "unknown_node.toml")
    assert any("42" in v.message for v in vs)


def test_all_violations_of_all_files_are_reported_together(tmp_path):
    folder = tmp_path / "nodemaps"
    folder.mkdir()
    shutil.copy(BAD / "cycle.toml", folder / "level_1.toml")
    text = (BAD / "fanout_violation.toml").read_text(encoding="utf-8").replace("level = 1", "level = 2")
    (folder / "level_2.toml").write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as err:
        load_pools(tmp_path)
    assert {"cycle", "fanout_violation"} <= {v.rule for v in err.value.violations}
    report = err.value.report()
    assert "bad_cycle/2" in report and "bad_fanout/1" in report
    assert report.startswith(f"{len(err.value.violations)} table violations:")
    assert validate_tables(tmp_path) == err.value.violations


def _pool_file(folder: Path, name: str, level: int) -> None:
    text = (TABLES / "nodemaps" / "level_1.toml").read_text(encoding="utf-8")
    (folder / name).write_text(text.replace("level = 1", f"level = {level}", 1), encoding="utf-8")


def test_folder_rules(tmp_path):
    assert [v.rule for v in read_pools(tmp_path)[1]] == ["no_pools"]
    folder = tmp_path / "nodemaps"
    folder.mkdir()
    _pool_file(folder, "level_1.toml", 1)
    _pool_file(folder, "level_2.toml", 3)   # says level 3
    _pool_file(folder, "level_01.toml", 1)  # a second level 1
    _pool_file(folder, "level_x.toml", 4)
    (folder / "level_5.toml").write_text("level = [", encoding="utf-8")
    rules = {v.rule for v in read_pools(tmp_path)[1]}
    assert {"level_mismatch", "duplicate_level", "file_name", "toml_syntax", "level_gap"} <= rules


def test_default_content_shape():
    pools = load_pools(TABLES, DEFAULT_KEYS)
    for level, pool in pools.items():
        widths = [instantiate(t, source="x", scope=None).layer_widths() for t in pool.templates]
        assert len(set(widths)) == 5, f"level {level}: layer-width sequences repeat"
        assert all(len(w) == 5 and w[-1] == 1 and max(w) <= 4 for w in widths)
        assert sum(t.fixed for t in pool.templates) == 1
        assert not any(n.slot for t in pool.templates for n in t.nodes)  # step 1 ships slot-free
        assert pool.procedural.enabled is False
        assert pool.fixed.id == f"l{level}_wide_twin_trunk"
    named = {"-".join(map(str, instantiate(t, source="x", scope=None).layer_widths()))
             for pool in pools.values() for t in pool.templates}
    assert {"1-2-4-1-1", "1-2-3-2-1", "1-2-2-2-1"} <= named
    for pool in pools.values():
        for t in pool.templates:
            tutorial = [n for n in t.nodes if n.tutorial]
            assert len(tutorial) == 1 and tutorial[0].type == "battle"
    assert check_content_discipline(pools, DEFAULT_KEYS) == []


def test_content_discipline_counts_slots_that_can_roll_a_battle():
    pools = load_pools(ROOT / "tests" / "fixtures" / "nodemaps" / "slots")
    # three_slots node 7 (a rest slot that can roll a battle) stands at depth 2.
    vs = check_content_discipline(pools, {(1, 0), (1, 1), (1, 3), (1, 4)})
    rows = {v.row for v in vs}
    assert "three_slots/7" in rows
    assert "three_slots/5" not in rows  # rest/reward slot: never a board


def test_content_discipline_of_an_enabled_step_3_pool():
    pools = load_pools(ROOT / "tests" / "fixtures" / "nodemaps" / "procedural")
    assert check_content_discipline(pools, {(1, d) for d in range(5)}) == []
    vs = [v for v in check_content_discipline(pools, {(1, d) for d in range(4)}) if v.rule == "missing_board_gen_row"]
    # The templates' bosses (the fallback) and step 3's boss depth are all named.
    assert {v.row for v in vs} == {"level 1/procedural", "fixed_plain/9", "narrow/8"}
    vs = check_content_discipline(pools, {(1, d) for d in range(6)})
    assert ("level 1/procedural", "boss_row_mismatch") in {(v.row, v.rule) for v in vs}
    # Battles can stand beside the shop (depth 3) in a step-3 map.
    vs = check_content_discipline(pools, {(1, d) for d in (0, 1, 2, 4)})
    assert any(v.row == "level 1/procedural" and "depth 3" in v.message for v in vs)


def test_exactly_one_rules_also_catch_none():
    from boardgen_pipeline.nodemap import Node, Template, validate_template

    base = load_pool_file(BAD / "cycle.toml")[0].template("base")
    no_shop = Template("no_shop", 1, tuple(Node(n.id, "rest" if n.type == "shop" else n.type, n.tutorial)
                                           for n in base.nodes), base.edges)
    no_boss = Template("no_boss", 1, tuple(Node(n.id, "battle" if n.type == "boss" else n.type, n.tutorial)
                                           for n in base.nodes), base.edges)
    loop = Template("no_entry", 1, base.nodes, base.edges + ((9, 1),))
    for t, rule in [(no_shop, "shop_count"), (no_boss, "boss_count"), (loop, "entry_count")]:
        hits = [v for v in validate_template(t) if v.rule == rule]
        assert [v.row for v in hits] == [t.id], (rule, [str(v) for v in validate_template(t)])
        assert "found 0" in hits[0].message
