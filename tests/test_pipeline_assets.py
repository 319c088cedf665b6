"""The calibration graph materialized through Dagster on fixture tables
(fewer, richer events):
Parquet rows, DuckDB views, each row's stored verdicts and the table-wide
checks built from them (boards and variant overlays); a row that cannot meet
its target; an illegal row; a bad table."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from boardgen_pipeline import files
from boardgen_pipeline.calibration import assertions, batch, fingerprints
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.steps.table_check import CHECK_EVERY_ROW
from boardgen_pipeline.variants import batch as overlay_batch
from boardgen_pipeline.variants import outcomes as overlay_row
from boardgen_pipeline.warehouse import datasets
from boardgen_pipeline.warehouse.publish import REJECTED

from .test_pipeline_support import (
    N,
    boards_observations,
    boards_partitions,
    checks_of,
    copy_fixture,
    defs_for,
    expected_figures,
    materialize_graph,
    materialized,
    meta,
    parquet_records,
    row_checks,
    run_rows,
    run_validate,
    step_failures,
)

ROW_ASSETS = {"seed_batches", "boards", "variant_overlays", "calibration_report"}
KEYS = ["1-0", "1-1", "2-0"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The small fixture (3 rows, N boards each), materialized once."""
    base = tmp_path_factory.mktemp("small")
    tables, root = copy_fixture("small", base), base / "warehouse"
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        prepare, rows, table = materialize_graph(defs, instance)
        yield {"tables": tables, "root": root, "prepare": prepare, "rows": rows, "table_run": table,
               "instance": instance, "table": load_catalog(tables).board_gen}


def test_every_row_gets_a_partition_and_one_run_records_them_all(small):
    assert small["instance"].get_dynamic_partitions("board_gen_rows") == KEYS
    assert small["prepare"].success and small["rows"].success and small["table_run"].success
    assert materialized(small["prepare"]) == {"validated_rows", "node_map_draws"}
    assert [e.asset_key.to_user_string() for e in small["prepare"].get_asset_observation_events()] == ["table_files"]
    # one boards materialization per row (its state per partition); the table's assets once a run
    assert boards_partitions(small["rows"]) == set(KEYS)
    mats = [(e.asset_key.to_user_string(), e.partition) for e in small["rows"].get_asset_materialization_events()]
    assert sorted(mats) == sorted([("boards", k) for k in KEYS] + [("seed_batches", None), ("variant_overlays", None),
                                                                   ("calibration_report", None)])
    # a rows run evaluates no check: the table run does, once each, over every row
    assert checks_of(small["rows"]) == {}
    assert set(checks_of(small["table_run"])) == {*assertions.CHECKS, *overlay_row.CHECKS, CHECK_EVERY_ROW,
                                                  "strata_cover_every_template", "boards_deterministic", "curve_within_corridor"}


def test_a_rows_run_records_about_two_events_a_row(small, tmp_path):
    """A run's bookkeeping grows by one planned and one recorded
    materialization a row, whatever else it checks."""
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        assert run_validate(defs, instance).success
        one = run_rows(defs, instance, ["1-0"])
        three = run_rows(defs, instance, KEYS)
        count = {r: len(instance.all_logs(r.run_id)) for r in (one, three)}
    assert count[three] - count[one] == 2 * (len(KEYS) - 1)


def test_the_boards_materialization_carries_the_rows_figures_and_verdicts(small):
    root, table = small["root"], small["table"]
    for e in small["rows"].get_asset_materialization_events():
        if e.asset_key != dg.AssetKey("boards"):
            continue
        key = fingerprints.row_key(e.partition)
        m = meta(e.materialization)
        want = expected_figures(parquet_records(datasets.partition_path(root, "boards", key)),
                                table.rows[key].inferability_target)
        for q in ("p10", "p50", "p90"):
            # rounded for reading to 4 decimals (0.9767, not 0.9766791303143609); the warehouse keeps them whole
            assert m[q] == round(want[q], 4) and m[q] == pytest.approx(want[q], abs=5e-5)
            assert isinstance(e.materialization.metadata[q], dg.FloatMetadataValue)  # plotted by partition
        # the row's verdict leads its partition page: one line, then each assertion, as text
        entries = list(e.materialization.metadata)
        assert entries[0] == "F4" and m["F4"] in ("pass", "pass (warning: E)")
        shown = entries[1:1 + len(assertions.CHECKS)]
        assert [k.split("(")[1].rstrip(")") for k in shown] == list(assertions.CHECKS)
        assert all(m[k] == ("warning" if k.startswith("E ") and m["F4"] != "pass" else "pass") for k in shown)
        assert m["published"] is True
        assert m["batch_fingerprint"] == fingerprints.batch_fingerprint(table.row_fingerprint(key), N, 0)
        assert e.materialization.tags["dagster/code_version"] == "metric_v2"
        # what a perfect player risks on the row: plotted, and check F's pictures on its page
        records = parquet_records(datasets.partition_path(root, "boards", key))
        survival = sum(r["survival"] for r in records) / len(records)
        assert m["mean_survival"] == round(survival, 4)
        assert isinstance(e.materialization.metadata["mean_survival"], dg.FloatMetadataValue)
        assert isinstance(e.materialization.metadata["survival_histogram"], dg.MarkdownMetadataValue)
        assert f"mean survival {survival:.3f}" in e.materialization.metadata["survival_histogram"].value
        digest = files.sha256_file(datasets.partition_path(root, "boards", key))
        assert e.materialization.tags["dagster/data_version"] == digest[:16]


def test_parquet_partitions_hold_n_boards_with_fingerprints(small):
    root, table = small["root"], small["table"]
    for key in table.keys():
        records = parquet_records(datasets.partition_path(root, "boards", key))
        assert len(records) == N
        assert [r["scope"] for r in records] == list(batch.batch_scopes(*key, N))
        fp = fingerprints.batch_fingerprint(table.row_fingerprint(key), N, 0)
        assert {r["batch_fingerprint"] for r in records} == {fp}
        report = parquet_records(datasets.partition_path(root, "calibration_report", key))
        assert len(report) == 1 and report[0]["batch_fingerprint"] == fp and report[0]["samples"] == N
    assert not (root / REJECTED).exists()


def test_duckdb_views_answer_over_the_parquet_files(small):
    con = duckdb.connect(str(small["root"] / datasets.DB_NAME), read_only=True)
    try:
        views = {r[0] for r in con.sql("select view_name from duckdb_views() where not internal").fetchall()}
        # node_map_draws and calibration_strata: empty files (the fixture has no node-map pools);
        # calibration_history: one version of each row's report; row_checks
        assert views == {"boards", "board_metrics", "variant_overlays", "calibration_report", "node_map_draws",
                         "calibration_strata", "calibration_history", "row_checks"}
        counts = con.sql("select level_index, node_depth, count(*) from boards group by all order by all").fetchall()
        assert counts == [(1, 0, N), (1, 1, N), (2, 0, N)]
        assert "layout" not in [d[0] for d in con.sql("select * from board_metrics limit 0").description]
        rows = con.sql("select level_index, node_depth, green, illegal from calibration_report order by all").fetchall()
        assert rows == [(1, 0, True, 0), (1, 1, True, 0), (2, 0, True, 0)]
        # which rows fail what, in SQL: E warns on (1,1), nothing else fails
        failing = con.sql("select level_index, node_depth, \"check\" from row_checks where not passed").fetchall()
        assert failing == [(1, 1, assertions.CHECK_E)]
        assert con.execute("select count(*) from row_checks").fetchone() == (3 * (len(assertions.CHECKS)
                                                                              + len(overlay_row.CHECKS)),)
    finally:
        con.close()


def test_each_rows_verdicts_are_stored_with_their_numbers(small):
    root, table = small["root"], small["table"]
    for key in table.keys():
        checks = row_checks(root, key)
        assert set(checks) == set(assertions.CHECKS) | set(overlay_row.CHECKS)
        fp = fingerprints.batch_fingerprint(table.row_fingerprint(key), N, 0)
        assert {checks[c]["fingerprint"] for c in assertions.CHECKS} == {fp}
        records = parquet_records(datasets.partition_path(root, "boards", key))
        want = expected_figures(records, table.rows[key].inferability_target)

        a = checks[assertions.CHECK_A]
        assert a["passed"] and a["figures"]["below_target"] == 0 and a["figures"]["failing_scopes"] == []
        for q in ("p10", "p50", "p90"):
            assert a["figures"][q] == pytest.approx(want[q])
        exits = [a["figures"][f"exit_{e}"] for e in ("passed", "best_legal", "least_bad")]
        assert exits == list(want["exits"].values())
        assert a["pictures"] == {}  # a passing row keeps its numbers, not its pictures
        if a["figures"]["advice_status"] == "ok":  # passes with margin: the worst board named, not drawn
            assert a["figures"]["worst_board_command"].endswith(f"--seed {a['figures']['worst_scope']}")
        assert checks[assertions.CHECK_A2]["passed"] and checks[assertions.CHECK_A2]["figures"]["target"] == 0.85
        a1 = checks[assertions.CHECK_A1]
        assert a1["passed"] and a1["figures"]["illegal"] == 0 and a1["figures"]["published"] is True
        fog = table.rows[key].fog_region_count > 0
        b, b1 = checks[assertions.CHECK_B], checks[assertions.CHECK_B1]
        assert b["passed"] and b1["passed"]
        assert b["figures"]["applicable"] is fog and b1["figures"]["applicable"] is not fog


def test_every_table_check_passes_with_its_numbers(small):
    checks = checks_of(small["table_run"])
    for name in (*assertions.CHECKS, *overlay_row.CHECKS):
        c = checks[name]
        want_asset = "boards" if name in assertions.CHECKS else "variant_overlays"
        assert c.asset_key == dg.AssetKey(want_asset) and c.partition is None
        if name == assertions.CHECK_E:
            continue
        assert c.passed and meta(c)["judged"] == 3 and meta(c)["failing_count"] == 0, name
        assert c.description == "all 3 rows pass"
    assert checks[CHECK_EVERY_ROW].passed


def test_monotone_warning_names_the_row_that_decreases(small):
    e = checks_of(small["table_run"])[assertions.CHECK_E]
    assert e.severity == dg.AssetCheckSeverity.WARN and not e.passed
    assert meta(e)["failing"] == {"1-1": row_checks(small["root"], (1, 1))[assertions.CHECK_E]["description"]}
    stored = row_checks(small["root"], (1, 1))[assertions.CHECK_E]
    assert stored["figures"]["violations"] == 1 and "decreases from 0.21" in stored["figures"]["findings"][0]
    assert "**1**" in stored["pictures"]["level_chain"]
    assert e.description.startswith("1 of 3 rows fail: 1-1: ")
    for key in ((1, 0), (2, 0)):
        assert row_checks(small["root"], key)[assertions.CHECK_E]["passed"]


def test_validated_rows_reports_the_table(small):
    mat = next(e for e in small["prepare"].get_asset_materialization_events() if e.asset_key.path == ["validated_rows"])
    m = meta(mat.materialization)
    assert m["rows"] == 3 and m["levels"] == [1, 2]
    assert len(m["monotone_warnings"]) == 1
    assert mat.materialization.tags["dagster/data_version"] == fingerprints.tables_digest(small["tables"])[0]


def test_a_row_that_cannot_meet_its_target_fails_a_naming_that_row_only(tmp_path):
    tables, root = copy_fixture("unmeetable", tmp_path), tmp_path / "warehouse"
    with dg.instance_for_test() as instance:
        _prepare, rows, table_run = materialize_graph(defs_for(tables, root), instance)
        status = instance.get_status_by_partition(dg.AssetKey("boards"), ["1-0", "1-1"],
                                                  dg.DynamicPartitionsDefinition(name="board_gen_rows"))
    good, bad = row_checks(root, (1, 0)), row_checks(root, (1, 1))
    assert good[assertions.CHECK_A]["passed"] and good[assertions.CHECK_A]["figures"]["failing_scopes"] == []

    records = parquet_records(datasets.partition_path(root, "boards", (1, 1)))
    want = expected_figures(records, 1.0)
    assert want["below"] and not want["illegal"]
    a = bad[assertions.CHECK_A]
    assert not a["passed"] and a["severity"] == "error"
    assert a["figures"]["failing_scopes"] == want["below"]
    assert a["figures"]["below_target"] == a["figures"]["failing_scopes_total"] == len(want["below"])
    assert a["figures"]["exit_best_legal"] == want["exits"]["best_legal"] > 0
    # the advisor's reading and real pictures are stored with the failing verdict
    assert a["figures"]["advice_status"] == "fails"
    assert a["pictures"]["advice"].startswith("row (1,1): fails")
    assert " !" in a["pictures"]["inferability_histogram"]  # bins below target flagged
    assert a["pictures"]["inferability_chart"].startswith("![inferability histogram](data:image/png;base64,")
    # the table-wide A fails on (1,1) alone, with its numbers and its pictures
    table_a = checks_of(table_run)[assertions.CHECK_A]
    assert not table_a.passed and table_a.severity == dg.AssetCheckSeverity.ERROR
    assert meta(table_a)["failing"] == {"1-1": a["description"]} and meta(table_a)["first_failing_row"] == "1-1"
    assert meta(table_a)["first_failing_figures"]["failing_scopes"] == want["below"]
    assert meta(table_a)["1-1 inferability_chart"].startswith("![inferability histogram]")
    # A is not blocking: the batch is published and its report written
    assert all(bad[c]["passed"] for c in assertions.CHECKS if c != assertions.CHECK_A)
    assert datasets.partition_path(root, "boards", (1, 1)).exists()
    assert datasets.partition_path(root, "calibration_report", (1, 1)).exists()
    # the failing row is red where a designer looks: its verdict is observed, not materialized, and its
    # run fails once every row is recorded, so its partition reads as failed (the passing row's does not)
    assert boards_partitions(rows) == {"1-0"} and not rows.success
    assert status == {"1-0": dg.AssetPartitionStatus.MATERIALIZED, "1-1": dg.AssetPartitionStatus.FAILED}
    failure = step_failures(rows)["calibrate"].user_failure_data
    assert failure.description.startswith("F4 fails on 1 of 2 rows: 1-1 (A).")
    assert meta(failure)["verdict_only"] is True and meta(failure)["failing_rows"] == {"1-1": {"A": a["description"]}}
    # its partition page leads with the verdict, as text
    page = boards_observations(rows)
    assert list(page) == ["1-1"] and list(page["1-1"])[0] == "F4"
    assert page["1-1"]["F4"].value == f"FAIL: A: {a['description']}"
    assert page["1-1"]["A (a_no_board_below_target)"].value == "FAIL"
    assert page["1-1"]["published"].value.startswith("yes")
    passing = {e.partition: e.materialization.metadata for e in rows.get_asset_materialization_events()
               if e.asset_key == dg.AssetKey("boards")}
    assert passing["1-0"]["F4"].value == "pass"
    assert not checks_of(table_run)[CHECK_EVERY_ROW].passed


def test_an_illegal_row_is_withheld_and_reads_as_failed_beside_its_failing_a_prime(tmp_path):
    tables, root = copy_fixture("illegal", tmp_path), tmp_path / "warehouse"
    with dg.instance_for_test() as instance:
        _prepare, rows, table_run = materialize_graph(defs_for(tables, root), instance)
        status = instance.get_status_by_partition(dg.AssetKey("boards"), ["1-0", "1-1"],
                                                  dg.DynamicPartitionsDefinition(name="board_gen_rows"))
    assert row_checks(root, (1, 0))[assertions.CHECK_A1]["passed"]
    a1 = row_checks(root, (1, 1))[assertions.CHECK_A1]
    assert not a1["passed"] and a1["figures"]["illegal"] == N and a1["figures"]["published"] is False
    assert a1["figures"]["r0_cap_rejected"] > 0 and "first illegal board" in a1["pictures"]["first_illegal_board"]
    assert a1["figures"]["advice_status"] == "fails" and a1["figures"]["pass_rate_per_attempt"] == 0
    # withheld: no boards materialization, its verdict observed, its run failed: the row reads as failed
    assert not rows.success and boards_partitions(rows) == {"1-0"}
    assert status == {"1-0": dg.AssetPartitionStatus.MATERIALIZED, "1-1": dg.AssetPartitionStatus.FAILED}
    page = boards_observations(rows)["1-1"]
    assert page["F4"].value.startswith("FAIL: A: ") and f"A': {a1['description']}" in page["F4"].value
    assert page["published"].value == "no: the batch is withheld (A'), in _rejected/"
    table_a1 = checks_of(table_run)[assertions.CHECK_A1]
    assert not table_a1.passed and list(meta(table_a1)["failing"]) == ["1-1"]
    assert not datasets.partition_path(root, "boards", (1, 1)).exists()
    assert not datasets.partition_path(root, "calibration_report", (1, 1)).exists()
    assert not datasets.partition_path(root, "variant_overlays", (1, 1)).exists()
    rejected = parquet_records(datasets.partition_path(root / REJECTED, "boards", (1, 1)))
    assert len(rejected) == N and all(r["illegal"] for r in rejected)
    con = duckdb.connect(str(root / datasets.DB_NAME), read_only=True)
    try:
        assert con.sql("select distinct node_depth from boards").fetchall() == [(0,)]
        assert con.execute("select count(*) from calibration_report").fetchone() == (1,)
    finally:
        con.close()


def test_a_bad_table_fails_validation_with_the_validate_message(tmp_path, capsys):
    from boardgen_pipeline.cli import main as boardgen

    tables, root = copy_fixture("bad", tmp_path), tmp_path / "warehouse"
    with pytest.raises(TableError) as err:
        load_catalog(tables)
    assert boardgen(["validate", "--tables", str(tables)]) == 1
    assert capsys.readouterr().err.strip() == err.value.report()

    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        validate = run_validate(defs, instance)
        assert not validate.success
        failure = step_failures(validate)["validated_rows"]
        assert failure.user_failure_data.description == err.value.report()
        assert instance.get_dynamic_partitions("board_gen_rows") == []
        # a rows run (e.g. launched from the UI) stops at the same gate
        instance.add_dynamic_partitions("board_gen_rows", ["1-0"])
        run = run_rows(defs, instance, ["1-0"])
        assert not run.success and set(step_failures(run)) == {"calibrate"}
        assert step_failures(run)["calibrate"].user_failure_data.description == err.value.report()
        assert materialized(run) == set()
    assert not root.exists() or not list(root.rglob("*.parquet"))


# --- variant overlays ----------------------------------------------------------------------------


def _overlays(root, key):
    return parquet_records(datasets.partition_path(root, "variant_overlays", key))


def _components(cells, width):
    """8-connected pieces of ``cells``, computed here on their own."""
    left, out = set(cells), []
    while left:
        todo, piece = [left.pop()], set()
        while todo:
            c = todo.pop()
            piece.add(c)
            x, y = c % width, c // width
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    n = (y + dy) * width + (x + dx)
                    if (dx or dy) and 0 <= x + dx < width and n in left:
                        left.discard(n)
                        todo.append(n)
        out.append(piece)
    return out


def test_overlay_partitions_hold_one_overlay_per_published_board(small):
    from boardgen_pipeline.board.geometry import parse_layout
    from boardgen_pipeline.board.solver import reveal_r0

    root, table = small["root"], small["table"]
    schema = overlay_batch.overlay_dataset_schema()
    for key in table.keys():
        boards = parquet_records(datasets.partition_path(root, "boards", key))
        overlays = _overlays(root, key)
        import pyarrow.parquet as pq
        assert pq.read_schema(datasets.partition_path(root, "variant_overlays", key)).remove_metadata() == schema
        assert [o["board_scope"] for o in overlays] == [b["scope"] for b in boards]
        assert {o["batch_fingerprint"] for o in overlays} == {boards[0]["batch_fingerprint"]}
        for board, ov in zip(boards, overlays):
            w, h, mines, fog = parse_layout(board["layout"])
            r0 = reveal_r0(mines, w, h, 3, frozenset(fog))
            assert not set(ov["cells"]) & (r0 | set(fog) | {c for c in range(w * h) if mines[c]})
            assert sorted(c for p in ov["packs"] for c in p) == ov["cells"]
            for pack in ov["packs"]:
                assert 2 <= len(pack) <= 4 and len(_components(pack, w)) == 1
            assert len(_components(ov["cells"], w)) == len(ov["packs"])  # packs never touch
            assert ov["shortfall"] == ov["target"] - len(ov["cells"]) >= 0
    # (1,0): a level-1 dungeon battle row draws one of the two dungeon region types
    assert {o["variant_type"] for o in _overlays(root, (1, 0))} <= {"bramble", "vine_tangle"}
    assert all(o["scope"] == "region" and o["cell_count"] > 0 for o in _overlays(root, (1, 0)))
    # (1,1): level 1's Boss row: immune to the global type, falls back to region placement
    assert all(o["is_boss"] and o["global_variant"] is None and o["global_fallback"] for o in _overlays(root, (1, 1)))
    # (2,0): level 2's Boss row: the whole-board type, zero cells, zero draws
    assert all((o["is_boss"], o["global_variant"], o["variant_type"], o["scope"], o["cell_count"], o["draws"])
               == (True, "skewed_veins", "skewed_veins", "global", 0, 0) for o in _overlays(root, (2, 0)))


def test_variant_overlays_view_joins_the_boards(small):
    con = duckdb.connect(str(small["root"] / datasets.DB_NAME), read_only=True)
    try:
        got = con.sql("select level_index, node_depth, count(*), sum(cell_count), count(global_variant) "
                      "from variant_overlays group by all order by all").fetchall()
        want = []
        for key in small["table"].keys():
            ovs = _overlays(small["root"], key)
            want.append((*key, N, sum(o["cell_count"] for o in ovs), sum(o["global_variant"] is not None for o in ovs)))
        assert got == want
        joined = con.execute("select count(*) from variant_overlays o join boards b on b.scope = o.board_scope and "
                             "b.level_index = o.level_index and b.node_depth = o.node_depth").fetchone()
        assert joined == (3 * N,)
        cols = [d[0] for d in con.sql("select * from variant_overlays limit 0").description]
        for c in ("variant_type", "scope", "cells", "packs", "shortfall", "global_variant"):
            assert c in cols
    finally:
        con.close()


def test_every_overlay_check_passes_with_its_numbers(small):
    from collections import Counter

    root = small["root"]
    for key in small["table"].keys():
        checks = row_checks(root, key)
        ovs = _overlays(root, key)
        for name in overlay_row.CHECKS:
            assert checks[name]["passed"] and checks[name]["asset"] == "variant_overlays", (key, name)
        dom = checks[overlay_row.CHECK_DOMAIN]["figures"]
        assert dom["variant_cells"] == sum(o["cell_count"] for o in ovs) and dom["issues"] == 0
        assert dom["failing_scopes"] == [] and dom["boards"] == N
        # a passing check names a board to rebuild; the drawing is for a failing one
        assert "overlaid_board" not in dom and dom["example_board"].startswith(f"boardgen generate --level {key[0]}")
        packs = checks[overlay_row.CHECK_PACKS]["figures"]
        sizes = Counter(len(p) for o in ovs for p in o["packs"])
        assert packs["pack_size_distribution"] == {str(k): v for k, v in sorted(sizes.items())}
        assert packs["shortfall_cells"] == sum(o["shortfall"] for o in ovs)
        assert (packs["pack_min"], packs["pack_max"]) == (2, 4)
        one = checks[overlay_row.CHECK_ONE_TYPE]["figures"]
        assert one["type_counts"] == dict(sorted(Counter(o["variant_type"] for o in ovs).items()))
        boss = checks[overlay_row.CHECK_BOSS]["figures"]
        assert boss["applicable"] is True and boss["is_boss"] is small["table"].is_boss_row(key)
        skew = checks[overlay_row.CHECK_SKEW]["figures"]
        assert skew["effect_values"] == [0, 30] and skew["totals"] == {"0": 77, "30": 77}
        assert skew["off_state_identical"] is True and "weights" not in skew  # the table is drawn when it fails
    boss = row_checks(root, (2, 0))[overlay_row.CHECK_BOSS]["figures"]
    assert boss["global_variants"] == {"skewed_veins": N} and boss["expected"].startswith("the global type")
    assert row_checks(root, (1, 1))[overlay_row.CHECK_BOSS]["figures"]["global_fallback_boards"] == N
    overlays = meta(next(e.materialization for e in small["rows"].get_asset_materialization_events()
                         if e.asset_key == dg.AssetKey("variant_overlays")))
    assert overlays["boards"] == 3 * N and overlays["rows_made"] == 3
    assert overlays["variant_cells"] == sum(o["cell_count"] for k in small["table"].keys() for o in _overlays(root, k))


def test_the_prepare_run_writes_empty_node_map_datasets_without_pools(small):
    checks = checks_of(small["prepare"])
    assert all(c.passed for c in checks.values()) and len(checks) == 4
    assert "not applicable" in checks["node_map_draws_uniform"].description
    assert checks_of(small["table_run"])["strata_cover_every_template"].passed
    con = duckdb.connect(str(small["root"] / datasets.DB_NAME), read_only=True)
    try:
        assert con.execute("select count(*) from node_map_draws").fetchone() == (0,)
        assert con.execute("select count(*) from calibration_strata").fetchone() == (0,)
    finally:
        con.close()


def test_runs_of_one_row_each_write_the_warehouse_one_range_writes(small, tmp_path):
    """The same bytes whatever the runs cover."""
    from .test_pipeline_support import files_state

    root = tmp_path / "warehouse"
    defs = defs_for(small["tables"], root)  # the same tables: E's words name the file
    with dg.instance_for_test() as instance:
        assert run_validate(defs, instance).success
        for key in KEYS:
            assert run_rows(defs, instance, [key]).success
    mine = {k: v[0] for k, v in files_state(root).items() if not k.startswith(("calibration_history", "node_map",
                                                                                  "calibration_strata"))}
    theirs = {k: v[0] for k, v in files_state(small["root"]).items() if k in mine}
    assert mine == theirs and len(mine) == 3 * 4
