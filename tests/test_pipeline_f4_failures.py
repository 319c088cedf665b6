"""Assertion B failing through Dagster (seed 001 F4-B; SPEC 9
"asset checks"): a fog row whose region is almost never placed, calibrated by
the job in process, fails its row's B check with the share and the shortfall
the Parquet boards show, and turns the table-wide ``every_row_passes_f4`` red
naming the row and B. The plain outcomes are tested in
tests/test_f4_outcomes.py; this is the one run through the engine."""

from __future__ import annotations

from collections import Counter

import dagster as dg

from boardgen_pipeline.calibration import assertions
from boardgen_pipeline.steps.table_check import CHECK_EVERY_ROW
from boardgen_pipeline.warehouse import datasets

from .test_pipeline_support import (
    N,
    boards_observations,
    boards_partitions,
    checks_of,
    copy_fixture,
    defs_for,
    materialize_graph,
    meta,
    parquet_records,
    row_checks,
)


def test_a_fog_row_that_rarely_places_its_region_fails_b_through_dagster(tmp_path):
    tables, root = copy_fixture("fog_short", tmp_path), tmp_path / "warehouse"
    with dg.instance_for_test() as instance:
        _prepare, rows, table_run = materialize_graph(defs_for(tables, root), instance)
    # B is not blocking: the batch and its report are published; the row is red (observed, not
    # materialized), its run failed on its verdict once the row was recorded
    assert not rows.success and boards_partitions(rows) == set()
    assert boards_observations(rows)["1-0"]["F4"].value.startswith("FAIL: B: ")

    records = parquet_records(datasets.partition_path(root, "boards", (1, 0)))
    assert len(records) == N
    full = sum(1 for r in records if r["fog_regions_placed"] >= 1)
    assert full / N < 0.95  # the evidence: what the published boards show, counted here

    checks = row_checks(root, (1, 0))
    b = checks[assertions.CHECK_B]
    assert not b["passed"] and b["severity"] == "error"
    assert b["description"] == f"all 1 fog regions placed on {full / N:.1%} of boards (floor 95%)"
    m = b["figures"]
    assert m["applicable"] is True and m["fog_region_count"] == 1 and m["fog_target_ratio"] == 0.25
    assert m["full_placement_share"] == full / N and m["floor"] == 0.95
    assert m["shortfall_distribution"] == {str(k): v for k, v in sorted(Counter(r["fog_shortfall"]
                                                                                 for r in records).items())}
    # only B fails: A, A'' and A' hold, B' does not apply to a fog row
    assert [name for name in assertions.CHECKS if not checks[name]["passed"]] == [assertions.CHECK_B]
    assert checks[assertions.CHECK_B1]["figures"]["applicable"] is False
    # the table-wide B names the row with the words its own check recorded
    table_b = checks_of(table_run)[assertions.CHECK_B]
    assert not table_b.passed and table_b.severity == dg.AssetCheckSeverity.ERROR
    assert meta(table_b)["failing"] == {"1-0": b["description"]}

    report = parquet_records(datasets.partition_path(root, "calibration_report", (1, 0)))[0]
    assert report["assertion_b"] is False and report["green"] is False
    table = checks_of(table_run)[CHECK_EVERY_ROW]
    assert not table.passed
    assert meta(table)["failing"] == {"1-0": ["B"]} and meta(table)["failing_rows"] == ["1-0"]
    assert table.description.startswith("1 of 1 rows fail F4: 1-0 (B)")
