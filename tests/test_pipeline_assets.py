"""The calibration graph materialized through Dagster on fixture tables
(issue 3 "Tests"): Parquet rows, DuckDB views, every check's pass/fail and
metadata; a row that cannot meet its target; an illegal row; a bad table."""

from __future__ import annotations

import duckdb
import dagster as dg
import pytest

from boardgen_pipeline import calibration, regen, warehouse
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.publish import REJECTED

from .test_pipeline_support import (
    N,
    QUIET,
    checks_of,
    copy_fixture,
    defs_for,
    expected_figures,
    materialize_all,
    materialized,
    meta,
    parquet_records,
    run_partition,
    run_validate,
    step_failures,
)

pytestmark = [pytest.mark.filterwarnings(w) for w in QUIET]

ALL_ASSETS = {"validated_rows", "seed_batches", "boards", "calibration_report"}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The small fixture (3 rows, N boards each), materialized once."""
    base = tmp_path_factory.mktemp("small")
    tables, root = copy_fixture("small", base), base / "warehouse"
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        results = materialize_all(defs, instance)
        yield {"tables": tables, "root": root, "results": results, "instance": instance,
               "table": load_catalog(tables).board_gen}


def test_every_row_gets_a_partition_and_a_successful_run(small):
    assert set(small["results"]) == {"1-0", "1-1", "2-0"}
    assert small["instance"].get_dynamic_partitions("board_gen_rows") == ["1-0", "1-1", "2-0"]
    for key, result in small["results"].items():
        assert result.success, key
        assert materialized(result) == ALL_ASSETS
        assert [e.asset_key.to_user_string() for e in result.get_asset_observation_events()] == ["table_files"]


def test_parquet_partitions_hold_n_boards_with_fingerprints(small):
    root, table = small["root"], small["table"]
    for key in table.keys():
        records = parquet_records(warehouse.partition_path(root, "boards", key))
        assert len(records) == N
        assert [r["scope"] for r in records] == list(calibration.batch_scopes(*key, N))
        fp = regen.batch_fingerprint(table.row_fingerprint(key), N, 0)
        assert {r["batch_fingerprint"] for r in records} == {fp}
        report = parquet_records(warehouse.partition_path(root, "calibration_report", key))
        assert len(report) == 1 and report[0]["batch_fingerprint"] == fp and report[0]["samples"] == N
    assert not (root / REJECTED).exists()


def test_duckdb_views_answer_over_the_parquet_files(small):
    con = duckdb.connect(str(small["root"] / warehouse.DB_NAME), read_only=True)
    try:
        views = {r[0] for r in con.sql("select view_name from duckdb_views() where not internal").fetchall()}
        assert views == {"boards", "board_metrics", "calibration_report"}
        counts = con.sql("select level_index, node_depth, count(*) from boards group by all order by all").fetchall()
        assert counts == [(1, 0, N), (1, 1, N), (2, 0, N)]
        assert "layout" not in [d[0] for d in con.sql("select * from board_metrics limit 0").description]
        rows = con.sql("select level_index, node_depth, green, illegal from calibration_report order by all").fetchall()
        assert rows == [(1, 0, True, 0), (1, 1, True, 0), (2, 0, True, 0)]
    finally:
        con.close()


def test_every_check_passes_with_its_numbers(small):
    root, table = small["root"], small["table"]
    for key in table.keys():
        pk = regen.partition_key(key)
        checks = checks_of(small["results"][pk])
        assert set(checks) == set(calibration.CHECKS)
        assert {c.partition for c in checks.values()} == {pk}
        records = parquet_records(warehouse.partition_path(root, "boards", key))
        want = expected_figures(records, table.rows[key].inferability_target)

        a = checks[calibration.CHECK_A]
        assert a.passed and meta(a)["below_target"] == 0 and meta(a)["failing_scopes"] == []
        for q in ("p10", "p50", "p90"):
            assert meta(a)[q] == pytest.approx(want[q])
        assert [meta(a)[f"exit_{e}"] for e in ("passed", "best_legal", "least_bad")] == list(want["exits"].values())
        assert "target 0.850" in meta(a)["inferability_histogram"]
        assert "R∞" in meta(a)["worst_board"] and f"`{meta(a)['worst_scope']}`" in meta(a)["worst_board"]

        assert checks[calibration.CHECK_A2].passed and meta(checks[calibration.CHECK_A2])["target"] == 0.85
        a1 = checks[calibration.CHECK_A1]
        assert a1.passed and a1.blocking and meta(a1)["illegal"] == 0 and meta(a1)["published"] is True
        fog = table.rows[key].fog_region_count > 0
        b, b1 = checks[calibration.CHECK_B], checks[calibration.CHECK_B1]
        assert b.passed and b1.passed
        assert meta(b)["applicable"] is fog and meta(b1)["applicable"] is not fog
        if fog:
            assert meta(b)["full_placement_share"] == 1.0


def test_monotone_warning_on_the_row_that_decreases(small):
    for pk, result in small["results"].items():
        e = checks_of(result)[calibration.CHECK_E]
        assert e.severity == dg.AssetCheckSeverity.WARN
        if pk == "1-1":
            assert not e.passed
            assert meta(e)["violations"] == 1 and "decreases from 0.21" in meta(e)["findings"][0]
            assert "**1**" in meta(e)["level_chain"]
        else:
            assert e.passed and meta(e)["violations"] == 0


def test_validated_rows_reports_the_table(small):
    result = small["results"]["1-0"]
    mat = next(e for e in result.get_asset_materialization_events() if e.asset_key.path == ["validated_rows"])
    m = meta(mat.materialization)
    assert m["rows"] == 3 and m["levels"] == [1, 2]
    assert len(m["monotone_warnings"]) == 1
    assert mat.materialization.tags["dagster/data_version"] == regen.tables_digest(small["tables"])[0]


def test_a_row_that_cannot_meet_its_target_fails_a_on_that_partition_only(tmp_path):
    tables, root = copy_fixture("unmeetable", tmp_path), tmp_path / "warehouse"
    with dg.instance_for_test() as instance:
        results = materialize_all(defs_for(tables, root), instance)
    good, bad = checks_of(results["1-0"]), checks_of(results["1-1"])
    assert good[calibration.CHECK_A].passed and meta(good[calibration.CHECK_A])["failing_scopes"] == []

    records = parquet_records(warehouse.partition_path(root, "boards", (1, 1)))
    want = expected_figures(records, 1.0)
    assert want["below"] and not want["illegal"]
    a = bad[calibration.CHECK_A]
    assert not a.passed and a.severity == dg.AssetCheckSeverity.ERROR
    assert meta(a)["failing_scopes"] == want["below"]
    assert meta(a)["below_target"] == meta(a)["failing_scopes_total"] == len(want["below"])
    assert meta(a)["exit_best_legal"] == want["exits"]["best_legal"] > 0
    assert " !" in meta(a)["inferability_histogram"]  # bins below target flagged
    # issue 8: the advisor's reading and real pictures ride along with the check
    assert meta(a)["advice_status"] == "fails"
    assert 0 <= meta(a)["pass_rate_ci_low"] <= meta(a)["pass_rate_per_attempt"] <= meta(a)["pass_rate_ci_high"]
    assert meta(a)["advice"].startswith("row (1,1): fails")
    assert meta(a)["inferability_chart"].startswith("![inferability histogram](data:image/png;base64,")
    assert meta(a)["worst_board_picture"].startswith("![worst board](data:image/png;base64,")
    # A is not blocking: the batch is published and the report written
    assert all(bad[c].passed for c in calibration.CHECKS if c != calibration.CHECK_A)
    assert results["1-1"].success and materialized(results["1-1"]) == ALL_ASSETS
    assert warehouse.partition_path(root, "calibration_report", (1, 1)).exists()


def test_an_illegal_row_is_blocked_and_never_published(tmp_path):
    tables, root = copy_fixture("illegal", tmp_path), tmp_path / "warehouse"
    with dg.instance_for_test() as instance:
        results = materialize_all(defs_for(tables, root), instance)
    assert results["1-0"].success and checks_of(results["1-0"])[calibration.CHECK_A1].passed

    bad = results["1-1"]
    a1 = checks_of(bad)[calibration.CHECK_A1]
    assert not a1.passed and a1.blocking
    assert meta(a1)["illegal"] == N and meta(a1)["published"] is False
    assert meta(a1)["r0_cap_rejected"] > 0 and "first illegal board" in meta(a1)["first_illegal_board"]
    assert meta(a1)["advice_status"] == "fails" and meta(a1)["pass_rate_per_attempt"] == 0
    assert "smallest r0_max_cap that passes" in meta(a1)["advice"]
    # the blocking failure stops the run: the report is never computed from these boards
    assert not bad.success
    assert "boards" in step_failures(bad)
    assert "calibration_report" not in materialized(bad)
    assert not warehouse.partition_path(root, "boards", (1, 1)).exists()
    assert not warehouse.partition_path(root, "calibration_report", (1, 1)).exists()
    rejected = parquet_records(warehouse.partition_path(root / REJECTED, "boards", (1, 1)))
    assert len(rejected) == N and all(r["illegal"] for r in rejected)
    con = duckdb.connect(str(root / warehouse.DB_NAME), read_only=True)
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
        # a partition run (e.g. launched from the UI) stops at the same gate
        instance.add_dynamic_partitions("board_gen_rows", ["1-0"])
        run = run_partition(defs, instance, "1-0")
        assert not run.success and set(step_failures(run)) == {"validated_rows"}
        assert materialized(run) == set()
    assert not root.exists() or not list(root.rglob("*.parquet"))
