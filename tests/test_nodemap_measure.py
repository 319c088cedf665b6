"""Draw records, uniformity test, stratified figures and text drawing (SPEC 4
"Stratified measurement"; seed 004 测量对账), and the library's hygiene rules
(SPEC 6: no global random state; STYLE: no Dagster in the library)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.nodemap import (
    chi_square_uniform,
    draw_adventure,
    draw_adventure_text,
    draw_uniformity,
    load_pools,
    regularized_gamma_q,
    render_map,
    simulate_draws,
    stratify,
)

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "tables"
FIXTURES = ROOT / "tests" / "fixtures" / "nodemaps"
DEFAULT_KEYS = {(level, depth) for level in (1, 2, 3) for depth in range(5)}


@pytest.fixture(scope="module")
def pools():
    return load_pools(TABLES, DEFAULT_KEYS)


def test_regularized_gamma_matches_closed_forms():
    for x in [0.0, 1e-6, 0.01, 0.3, 1.0, 2.5, 7.0, 25.0, 120.0]:
        assert regularized_gamma_q(1.0, x) == pytest.approx(math.exp(-x), rel=1e-12, abs=1e-300)
        assert regularized_gamma_q(0.5, x) == pytest.approx(math.erfc(math.sqrt(x)), rel=1e-9, abs=1e-300)
        # Q(2, x) = (1 + x) e^-x: chi-square with 4 degrees of freedom.
        assert regularized_gamma_q(2.0, x) == pytest.approx((1 + x) * math.exp(-x), rel=1e-10, abs=1e-300)
    with pytest.raises(ValueError):
        regularized_gamma_q(0, 1)


def test_chi_square_uniform_known_values():
    flat = chi_square_uniform([10, 10, 10])
    assert (flat.statistic, flat.dof, flat.p_value) == (0.0, 2, pytest.approx(1.0))
    two = chi_square_uniform([20, 30])
    assert (two.statistic, two.dof) == (2.0, 1)
    assert two.p_value == pytest.approx(math.erfc(1.0), rel=1e-9)
    # Critical value of 4 degrees of freedom at 5 %: 9.4877.
    assert regularized_gamma_q(2.0, 9.4877 / 2) == pytest.approx(0.05, abs=1e-4)
    assert chi_square_uniform([100, 0, 0, 0, 0]).p_value < 1e-30
    assert chi_square_uniform([]).p_value == 1.0


def test_simulate_draws_records_fit_a_parquet_table(pools, tmp_path):
    records = simulate_draws(range(20), (True, False), pools=pools)
    assert len(records) == 20 * 2 * 3
    first = [r for r in records if r["first_adventure"]]
    assert all(r["source"] == "fixed" and r["scope"] is None for r in first)
    assert {r["template_id"] for r in first} == {p.fixed.id for p in pools.values()}
    drawn = [r for r in records if not r["first_adventure"]]
    assert [r["scope"] for r in drawn[:3]] == [0, 1, 2]
    r0 = next(r for r in drawn if r["master_seed"] == 0 and r["level"] == 1)
    assert r0["template_id"] == "l1_wide_diagonal_fork"
    assert r0["board_node_ids"] == [1, 2, 4, 6, 8, 10]
    assert r0["board_node_depths"] == [0, 1, 2, 2, 3, 4]
    assert r0["board_node_types"][-1] == "boss"
    assert r0["layer_widths"] == "1-2-4-2-1" and r0["routes"] == 5
    table = pa.Table.from_pylist(records)
    pq.write_table(table, tmp_path / "draws.parquet")
    back = pq.read_table(tmp_path / "draws.parquet").to_pylist()
    assert back == records


def test_draws_are_uniform_over_each_pool(pools):
    records = simulate_draws(range(1500), False, pools=pools)
    result = draw_uniformity(records, pools)
    for level, (counts, chi) in result.items():
        assert list(counts) == [t.id for t in pools[level].templates]
        assert sum(counts.values()) == 1500 and chi.dof == 4
        assert chi.p_value > 1e-3, (level, counts, chi)
    # The check does fail on a skewed draw.
    skewed = [dict(r, template_id=pools[r["level"]].fixed.id) if r["master_seed"] % 3 == 0 else r for r in records]
    assert all(chi.p_value < 1e-6 for _, chi in draw_uniformity(skewed, pools).values())


def test_stratify_template_figures_and_weighted_pool_figure(pools):
    figures = {key: {"pass_rate": key[1] / 10, "boards": 256.0} for key in DEFAULT_KEYS}
    pool = pools[1]
    s = stratify(figures, pool)
    fixed = pool.fixed  # depths of its boards: 0, 1, 2, 2, 4
    assert s.template_rows[fixed.id] == [(1, 0), (1, 1), (1, 2), (1, 2), (1, 4)]
    assert s.template_figures[fixed.id]["pass_rate"] == pytest.approx((0 + 1 + 2 + 2 + 4) / 50)
    assert s.template_figures[fixed.id]["boards"] == 256.0
    mean = sum(f["pass_rate"] for f in s.template_figures.values()) / 5
    assert s.pool_figures["pass_rate"] == pytest.approx(mean)
    probs = {t.id: (0.6 if t.fixed else 0.1) for t in pool.templates}
    w = stratify(figures, pool, probs)
    assert w.pool_figures["pass_rate"] == pytest.approx(
        sum(probs[t] * f["pass_rate"] for t, f in w.template_figures.items()))
    records = w.records()
    assert len(records) == 6 and records[-1]["template_id"] == "*"
    with pytest.raises(ValueError, match="sum to 1"):
        stratify(figures, pool, {t.id: 0.5 for t in pool.templates})
    with pytest.raises(ValueError, match=r"l1_wide_twin_trunk/9 -> row \(1, 4\)"):
        stratify({k: v for k, v in figures.items() if k != (1, 4)}, pool)


def test_stratify_counts_a_battle_slot_by_its_chance_of_being_a_battle():
    pools = load_pools(FIXTURES / "slots")
    figures = {(1, d): {"x": float(d)} for d in range(5)}
    s = stratify(figures, pools[1])
    # three_slots boards: 1@0, 2@1, 4@2, 6@2, 7@2 (slot battle/reward/rest: 1/3), 9@4.
    expected = (0 + 1 + 2 + 2 + 2 / 3 + 4) / (5 + 1 / 3)
    assert s.template_figures["three_slots"]["x"] == pytest.approx(expected)


def test_render_map_draws_layers_nodes_and_every_edge(pools):
    m = draw_adventure(pools, 0, first_adventure=False)[0]
    text = render_map(m)
    lines = text.splitlines()
    assert lines[0] == "level 1: l1_wide_diagonal_fork (draw, node_map scope 0)"
    assert lines[1] == "  layer widths 1-2-4-2-1, 5 routes entry -> boss"
    assert lines[2] == "  d0 | 1 battle [tutorial] -> 2 3"
    assert lines[-1] == "  d4 | 10 boss"
    written = {(int(a), int(b)) for a, kids in re.findall(r"(\d+) \w+(?: \[\w+\])* -> ([\d ]+)", text)
               for b in kids.split()}
    assert written == set(m.edges)


def test_draw_adventure_text(pools):
    text = draw_adventure_text(0, False, TABLES, DEFAULT_KEYS)
    for tid in ["l1_wide_diagonal_fork", "l2_wide_twin_trunk", "l3_wide_twin_trunk"]:
        assert tid in text
    assert "master seed 0" in text and text.count("node_map scope") == 3
    scripted = draw_adventure_text(0, True, TABLES)
    assert scripted.count("first-adventure script, no draw") == 3
    assert draw_adventure_text(0, False, TABLES) == text


LIB = ROOT / "boardgen_pipeline" / "nodemap"


def test_library_has_no_global_random_state_and_no_dagster():
    banned = re.compile(r"^\s*(import random\b|from random\b|import numpy|from numpy|import dagster|from dagster)"
                        r"|np\.random|numpy\.random", re.M)
    files = sorted(LIB.glob("*.py"))
    assert len(files) >= 8
    for f in files:
        assert not banned.search(f.read_text(encoding="utf-8")), f.name


def test_every_module_opens_with_a_docstring_citing_its_rule():
    for f in sorted(LIB.glob("*.py")):
        head = f.read_text(encoding="utf-8").lstrip()
        assert head.startswith('"""'), f.name
        doc = head[3:head.index('"""', 3)]
        assert "SPEC" in doc or "seed 004" in doc, f.name
