"""The node-map draws and the stratified figures through Dagster
on the ``pools`` fixture: one level, rows at
depths 0, 1 and 3, a pool of two templates of which one has no battle at
depth 1. Dataset rows, the DuckDB views, determinism, chi-square metadata,
figures computed here by hand; each check function failing on hand-built bad
input; the sensor asking for the pools run when a pool changes."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections import Counter

import dagster as dg
import duckdb
import pytest

from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.nodemap import Node, Template, fixed_map, replay_level
from boardgen_pipeline.steps import draw_node_maps, stratify
from boardgen_pipeline.warehouse import datasets
from boardgen_pipeline.words import rounded

from .test_pipeline_support import (
    checks_of,
    copy_fixture,
    defs_for,
    materialize_graph,
    materialized,
    meta,
    parquet_records,
    run_pools,
    settings_for,
)

ADVENTURES = 300
FIGURES = stratify.FIGURES


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    base = tmp_path_factory.mktemp("pools")
    tables, root = copy_fixture("pools", base), base / "warehouse"
    defs = defs_for(tables, root, node_map_adventures=ADVENTURES)
    with dg.instance_for_test() as instance:
        prepare, rows, table_run = materialize_graph(defs, instance)
        pools_run = run_pools(defs, instance)
        yield {"tables": tables, "root": root, "defs": defs, "instance": instance, "results": [prepare, rows, table_run],
               "run": pools_run, "catalog": load_catalog(tables),
               "settings": settings_for(tables, root, node_map_adventures=ADVENTURES)}


def draws_path(root):
    return datasets.flat_path(root, "node_map_draws", "draws")


def strata_path(root):
    return datasets.flat_path(root, "calibration_strata", "strata")


def reports(root) -> dict:
    return {key: parquet_records(datasets.partition_path(root, "calibration_report", key))[0]
            for key in ((1, 0), (1, 1), (1, 3))}


def test_the_pools_run_materializes_draws_and_strata(pools):
    assert all(r.success for r in pools["results"])
    run = pools["run"]
    assert run.success and materialized(run) == {"node_map_draws", "calibration_strata"}
    assert set(checks_of(run)) == set(draw_node_maps.CHECKS) | {stratify.CHECK_COMPLETE}
    assert all(c.passed for c in checks_of(run).values())
    assert all(c.partition is None for c in checks_of(run).values())
    # no chart is drawn by the run (`boardgen chart` draws them on demand)
    assert not list(pools["root"].glob("*.png"))
    strata_mat = next(e for e in run.get_asset_materialization_events()
                      if e.asset_key.to_user_string() == "calibration_strata")
    assert "report_chart" not in strata_mat.materialization.metadata


def test_draws_hold_every_adventure_on_both_branches(pools):
    records = parquet_records(draws_path(pools["root"]))
    pool = pools["catalog"].pools[1]
    assert len(records) == ADVENTURES * 2
    assert Counter((r["master_seed"], r["first_adventure"]) for r in records) == {
        (s, f): 1 for s in range(ADVENTURES) for f in (False, True)}
    scripted = [r for r in records if r["first_adventure"]]
    assert {(r["template_id"], r["source"], r["scope"]) for r in scripted} == {("fork", "fixed", None)}
    drawn = [r for r in records if not r["first_adventure"]]
    assert {r["source"] for r in drawn} == {"draw"} and {r["scope"] for r in drawn} == {0}  # level 1: first scope
    assert {r["template_id"] for r in drawn} == {"fork", "corridor"}
    depths = {r["template_id"]: r["board_node_depths"] for r in records}
    assert depths == {"fork": [0, 1, 3], "corridor": [0, 3]}  # the corridor has no battle at depth 1
    assert {r["pools_digest"] for r in records} == {draw_node_maps.pools_digest(pools["catalog"].pools)}
    fixed_digest = hashlib.sha256(fixed_map(pool).rows()).hexdigest()[:16]
    assert {r["map_digest"] for r in scripted} == {fixed_digest}
    for r in drawn[:20]:  # each drawn level replays alone from its seed and scope
        m = replay_level(pool, r["master_seed"], r["scope"])
        assert (m.template_id, hashlib.sha256(m.rows()).hexdigest()[:16]) == (r["template_id"], r["map_digest"])


def test_node_map_draws_view(pools):
    records = parquet_records(draws_path(pools["root"]))
    want = Counter(r["template_id"] for r in records if not r["first_adventure"])
    con = duckdb.connect(str(pools["root"] / datasets.DB_NAME), read_only=True)
    try:
        got = dict(con.execute("select template_id, count(*) from node_map_draws where not first_adventure "
                               "group by all").fetchall())
        assert got == dict(want)
        assert con.execute("select count(*), count(distinct master_seed) from node_map_draws").fetchone() == (
            2 * ADVENTURES, ADVENTURES)
    finally:
        con.close()


def test_uniformity_check_carries_the_chi_square_computed_here(pools):
    records = parquet_records(draws_path(pools["root"]))
    counts = Counter(r["template_id"] for r in records if not r["first_adventure"])
    expected = ADVENTURES / 2
    stat = sum((counts[t] - expected) ** 2 / expected for t in ("fork", "corridor"))
    p = math.erfc(math.sqrt(stat / 2))  # chi-square survival function, 1 degree of freedom
    m = meta(checks_of(pools["run"])[draw_node_maps.CHECK_UNIFORM])
    # shown rounded for reading (words.rounded): four decimals, four significant digits below 1
    assert m["statistics"] == {"1": rounded(stat)} and m["statistics"]["1"] == pytest.approx(stat, abs=5e-5)
    assert m["dof"] == {"1": 1}
    assert m["p_values"]["1"] == rounded(p) and m["p_values"]["1"] == pytest.approx(p, rel=1e-3)
    assert m["levels"]["1"]["counts"] == {"fork": counts["fork"], "corridor": counts["corridor"]}
    assert m["alpha"] == 0.001 and m["min_p_value"] == rounded(p)
    assert f"chi2 {stat:.3f}, dof 1" in m["draw_counts"]


def test_template_determinism_and_procedural_checks_carry_their_numbers(pools):
    checks = checks_of(pools["run"])
    t = meta(checks[draw_node_maps.CHECK_TEMPLATES])
    assert (t["templates"], t["templates_per_level"], t["fixed_templates"], t["violations"]) == (
        2, {"1": 2}, {"1": "fork"}, 0)
    assert "| 1 | `corridor` corridor |  | 1-1-1-1 | 1 battle d0, 4 boss d3 |" in t["template_table"]
    d = meta(checks[draw_node_maps.CHECK_DETERMINISTIC])
    assert d["sample_adventures"] == draw_node_maps.DETERMINISM_SAMPLE + 1 and d["mismatches"] == 0
    assert d["replayed_scopes"] == d["sample_adventures"]  # one drawn level per adventure
    p = meta(checks[draw_node_maps.CHECK_PROCEDURAL])
    assert p["seeds_per_level"] == draw_node_maps.PROCEDURAL_SAMPLE and p["invalid_maps"] == 0
    assert p["levels"]["1"]["maps"] == draw_node_maps.PROCEDURAL_SAMPLE and p["levels"]["1"]["enabled"] is False


def test_a_rerun_writes_the_same_draws_and_compares_with_the_previous_file(pools):
    before = draws_path(pools["root"]).read_bytes()
    run = run_pools(pools["defs"], pools["instance"])
    assert run.success and draws_path(pools["root"]).read_bytes() == before
    d = meta(checks_of(run)[draw_node_maps.CHECK_DETERMINISTIC])
    assert checks_of(run)[draw_node_maps.CHECK_DETERMINISTIC].passed
    assert d["previous_records_compared"] == 2 * ADVENTURES


def test_stratified_figures_are_the_means_computed_here(pools):
    root = pools["root"]
    f = reports(root)
    fork = {k: (f[(1, 0)][k] + f[(1, 1)][k] + f[(1, 3)][k]) / 3 for k in FIGURES}
    corridor = {k: (f[(1, 0)][k] + f[(1, 3)][k]) / 2 for k in FIGURES}
    pool = {k: (fork[k] + corridor[k]) / 2 for k in FIGURES}
    records = {r["template_id"]: r for r in parquet_records(strata_path(root))}
    assert set(records) == {"fork", "corridor", "*"}
    for name, want in (("fork", fork), ("corridor", corridor), ("*", pool)):
        assert records[name]["complete"] is True
        for k in FIGURES:
            assert records[name][k] == pytest.approx(want[k]), (name, k)
    assert records["fork"]["rows"] == ["1-0", "1-1", "1-3"] and records["corridor"]["rows"] == ["1-0", "1-3"]
    assert records["fork"]["draw_probability"] == records["corridor"]["draw_probability"] == 0.5
    draws = [r for r in parquet_records(draws_path(root)) if not r["first_adventure"]]
    assert records["fork"]["observed_draw_share"] == pytest.approx(
        sum(r["template_id"] == "fork" for r in draws) / len(draws))
    assert records["*"]["kind"] == "pool" and records["fork"]["kind"] == "template"
    con = duckdb.connect(str(root / datasets.DB_NAME), read_only=True)
    try:
        assert con.execute("select p50 from calibration_strata where kind = 'pool' and level_index = 1"
                           ).fetchone()[0] == pytest.approx(pool["p50"])
        # the per-row report is untouched by the strata: one record per row
        assert con.execute("select count(*) from calibration_report").fetchone() == (3,)
    finally:
        con.close()
    m = meta(checks_of(pools["run"])[stratify.CHECK_COMPLETE])
    assert m["templates"] == 2 and m["incomplete_templates"] == 0 and m["pools_complete"] == 1


def test_a_missing_report_leaves_its_templates_without_figures_and_the_sensor_asks_again(pools):
    from boardgen_dagster.automation import table_edit_sensor
    from boardgen_dagster.names import DRAWS, ROW_ASSETS, STRATA, TABLES

    row_selection = [dg.AssetKey(a) for a in (*TABLES, *ROW_ASSETS, STRATA)]
    pools_selection = [dg.AssetKey(a) for a in (*TABLES, DRAWS, STRATA)]

    from .test_pipeline_support import edit_row, run_request

    root, instance, defs, settings = pools["root"], pools["instance"], pools["defs"], pools["settings"]

    def tick(cursor=None):
        with dg.build_sensor_context(instance=instance, definitions=defs, cursor=cursor,
                                     resources={"settings": settings}) as context:
            result = table_edit_sensor(context)
        return list(getattr(result, "run_requests", None) or []), result.cursor

    requests, cursor = tick()
    assert requests == []  # everything current
    report_11 = datasets.partition_path(root, "calibration_report", (1, 1))
    saved = report_11.read_bytes()
    report_11.unlink()
    requests, cursor = tick(cursor)
    # a lost report file: its row is regenerated, then the figures, in one run;
    # the draws do not read reports: not redrawn
    assert [(r.partition_key, list(r.asset_selection)) for r in requests] == [("1-1", row_selection)]
    assert tick(cursor)[0] == []  # requested once per version
    run = run_pools(defs, instance)  # the figures without that report, before the sensor's run
    assert run.success
    records = {r["template_id"]: r for r in parquet_records(strata_path(root))}
    assert records["fork"]["complete"] is False and records["fork"]["missing_rows"] == ["1-1"]
    assert records["fork"]["p50"] is None and records["*"]["p50"] is None
    assert records["corridor"]["complete"] is True and records["corridor"]["p50"] is not None
    check = checks_of(run)[stratify.CHECK_COMPLETE]
    assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
    assert meta(check)["missing_rows"] == ["1-1"]

    assert run_request(defs, instance, requests[0]).success
    assert report_11.read_bytes() == saved  # the same row, the same report

    # a row's parameters edited: the row and the figures, never the draws, whose inputs are the
    # pools, the adventures and the row keys
    draws_before = draws_path(root).stat()
    edit_row(pools["tables"], (1, 1), "mine_density", 0.21)
    requests, cursor = tick(cursor)
    assert [(r.partition_key, list(r.asset_selection)) for r in requests] == [("1-1", row_selection)]
    assert run_request(defs, instance, requests[0]).success
    assert tick(cursor)[0] == []
    assert (draws_path(root).stat().st_ino, draws_path(root).stat().st_mtime_ns) == (
        draws_before.st_ino, draws_before.st_mtime_ns)

    # a pool edit: the draws and figures are stale, the boards are not
    path = pools["tables"] / "nodemaps" / "level_1.toml"
    path.write_text(path.read_text().replace('{ id = 2, type = "reward" }', '{ id = 2, type = "rest" }'))
    requests, cursor = tick(cursor)
    assert [(r.partition_key, list(r.asset_selection)) for r in requests] == [(None, pools_selection)]
    assert run_pools(defs, instance).success
    assert tick(cursor)[0] == []
    records = {r["template_id"]: r for r in parquet_records(strata_path(root))}
    assert all(r["complete"] for r in records.values())


# --- the check functions on hand-built bad input --------------------------------------------------


@pytest.fixture(scope="module")
def catalog():
    from .test_pipeline_support import FIXTURES

    return load_catalog(FIXTURES / "pools")


def test_templates_check_fails_on_a_broken_template_and_on_content_discipline(catalog):
    pools, keys = catalog.pools, set(catalog.board_gen.keys())
    assert draw_node_maps.templates_outcome(pools, keys).passed
    out = draw_node_maps.templates_outcome(pools, keys - {(1, 1)})  # fork's battle at depth 1 has no row
    assert not out.passed and out.metadata["violations_by_rule"] == {"missing_board_gen_row": 1}
    pool = pools[1]
    fan = Template("fan", 1, (Node(1, "battle", True), Node(2, "battle"), Node(3, "rest"), Node(4, "reward"),
                              Node(5, "shop"), Node(6, "boss")),
                   ((1, 2), (1, 3), (1, 4), (2, 5), (3, 5), (4, 5), (5, 6)))
    broken = {1: dataclasses.replace(pool, templates=(*pool.templates, fan))}
    out = draw_node_maps.templates_outcome(broken, keys)
    assert not out.passed and out.metadata["violations_by_rule"]["fanout_violation"] == 1


def _draw(seed, template, first=False):
    return {"master_seed": seed, "first_adventure": first, "level_index": 1, "template_id": template,
            "source": "fixed" if first else "draw", "scope": None if first else 0}


def test_uniformity_check_fails_on_lopsided_draws(catalog):
    records = [_draw(s, "fork" if s < 100 else "corridor") for s in range(110)]
    out = draw_node_maps.uniformity_outcome(catalog.pools, records)
    assert not out.passed and out.metadata["failing_levels"] == [1]
    assert out.metadata["statistics"]["1"] == pytest.approx((45 ** 2 + 45 ** 2) / 55)
    assert out.metadata["p_values"]["1"] < 0.001
    even = [_draw(s, "fork" if s % 2 else "corridor") for s in range(110)]
    assert draw_node_maps.uniformity_outcome(catalog.pools, even).passed


def test_determinism_check_fails_on_a_record_that_does_not_redraw(catalog):
    records = draw_node_maps.draw_records(catalog.pools, range(20))
    assert draw_node_maps.determinism_outcome(catalog.pools, records, list(range(20)), records).passed
    tampered = [dict(r) for r in records]
    target = next(r for r in tampered if not r["first_adventure"])
    target["template_id"] = "corridor" if target["template_id"] == "fork" else "fork"
    out = draw_node_maps.determinism_outcome(catalog.pools, tampered, list(range(20)))
    assert not out.passed and out.metadata["mismatches"] == 2  # the re-draw and the replay both disagree
    out = draw_node_maps.determinism_outcome(catalog.pools, records, [0], previous=tampered)
    assert not out.passed and out.metadata["first_mismatches"][0].startswith("previous file differs")


def test_procedural_check_fails_when_step_three_returns_an_invalid_map(catalog, monkeypatch):
    keys = set(catalog.board_gen.keys())
    assert draw_node_maps.procedural_outcome(catalog.pools, keys, range(8)).passed
    loop = dataclasses.replace(fixed_map(catalog.pools[1]), edges=fixed_map(catalog.pools[1]).edges + ((5, 1),))
    monkeypatch.setattr(draw_node_maps, "build_procedural", lambda pool, stream, params=None: loop)
    out = draw_node_maps.procedural_outcome(catalog.pools, keys, range(8))
    assert not out.passed and out.metadata["invalid_maps"] == 8


def test_stratified_figures_by_hand_on_a_pool_of_two(catalog):
    """fork: rows (1,0), (1,1), (1,3); corridor: (1,0), (1,3) (no battle at depth 1)."""
    rows = {(1, 0): 0.9, (1, 1): 0.8, (1, 3): 0.6}
    figures = {k: {name: v for name in FIGURES} for k, v in rows.items()}
    out = {r["template_id"]: r for r in stratify.strata_records(catalog.pools, figures, {(1, "fork"): 0.48})}
    assert out["fork"]["p50"] == pytest.approx((0.9 + 0.8 + 0.6) / 3)  # 0.7667
    assert out["corridor"]["p50"] == pytest.approx((0.9 + 0.6) / 2)  # 0.75
    assert out["*"]["p50"] == pytest.approx(((0.9 + 0.8 + 0.6) / 3 + 0.75) / 2)  # 0.7583
    assert out["fork"]["observed_draw_share"] == 0.48 and out["corridor"]["observed_draw_share"] is None
    del figures[(1, 1)]
    out = {r["template_id"]: r for r in stratify.strata_records(catalog.pools, figures)}
    assert (out["fork"]["complete"], out["fork"]["p50"], out["fork"]["missing_rows"]) == (False, None, ["1-1"])
    assert out["corridor"]["p50"] == pytest.approx(0.75) and out["*"]["p50"] is None
    assert stratify.complete_outcome(list(out.values()), stale=[]).passed is False
