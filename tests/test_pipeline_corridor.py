"""The target curve through Dagster (SPEC 12; SPEC 9 asset checks): the
corridor check of the nightly's table run goes red, at the targets file's
severity, when a row is edited out of its corridor, and names the row; an
edit run asks for it; the ``tune`` job records each tuned row and the
proposal with its diff."""

from __future__ import annotations

import dagster as dg

from boardgen_dagster.names import PROPOSAL, REPORT, TUNE_JOB, TUNED, check_keys
from boardgen_pipeline.check_names import CHECK_CORRIDOR
from boardgen_pipeline.words import rounded

from .test_pipeline_support import checks_of, copy_fixture, defs_for, execute, materialize_graph, meta, run_rows, run_table

SAMPLES = 64
TARGETS = ('[header]\nseverity = "error"\n'
           '[[targets]]\nrows = ["1,0"]\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.1\n')


def test_the_corridor_goes_red_when_a_row_is_edited_out_of_it_and_names_it(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    (tables / "curve_targets.toml").write_text(TARGETS)
    defs = defs_for(tables, root, SAMPLES)
    with dg.instance_for_test() as instance:
        _prepare, rows, table_run = materialize_graph(defs, instance)
        assert rows.success
        green = checks_of(table_run)[CHECK_CORRIDOR]
        assert green.passed and green.severity == dg.AssetCheckSeverity.ERROR
        assert green.asset_key == dg.AssetKey(REPORT)
        assert meta(green)["rows_out"] == [] and meta(green)["rows"] == 1
        # the edit: (1,0) from 0.21 to 0.3 of mines, a win rate near 0.63 (docs/decisions/tuning.md)
        text = (tables / "board_gen.toml").read_text()
        (tables / "board_gen.toml").write_text(text.replace("mine_density = 0.21", "mine_density = 0.3", 1))
        assert run_rows(defs, instance, ["1-0"]).success
        red = checks_of(run_table(defs, instance))[CHECK_CORRIDOR]
    assert not red.passed and red.severity == dg.AssetCheckSeverity.ERROR
    m = meta(red)
    assert m["rows_out"] == ["1-0"]
    verdict = m["verdicts"][0]
    assert verdict["state"] == "out" and verdict["interval"][1] < 0.8  # its whole interval below 0.9 - 0.1
    by = 0.8 - verdict["value"]
    assert verdict["out_by"] == rounded(by)  # the metadata's figures are rounded for reading (words.rounded)
    assert red.description.startswith(f"1 of 1 targeted rows left their corridor: 1-0 win_rate {verdict['value']:.3f} "
                                      f"out by {by:.3f} (below 0.900 +- 0.1)")


def test_an_edit_run_and_the_nightly_table_run_ask_for_the_corridor():
    assert dg.AssetCheckKey(dg.AssetKey(REPORT), CHECK_CORRIDOR) in check_keys()
    from boardgen_dagster.definitions import defs

    table = defs.resolve_job_def("calibration_table")
    assert dg.AssetCheckKey(dg.AssetKey(REPORT), CHECK_CORRIDOR) in table.asset_layer.asset_graph.asset_check_keys
    nightly_assets = {k.to_user_string() for k in defs.resolve_job_def("calibration_job").asset_layer.executable_asset_keys}
    assert TUNED not in nightly_assets and PROPOSAL not in nightly_assets  # tuning is launched, never nightly


def test_the_tune_job_records_each_row_and_the_proposal_with_its_diff(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    (tables / "curve_targets.toml").write_text(TARGETS.replace("value = 0.9", "value = 0.6"))
    defs = defs_for(tables, root, SAMPLES)
    before = (tables / "board_gen.toml").read_bytes()
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("board_gen_rows", ["1-0", "1-1", "2-0"])
        result = execute(defs, instance, TUNE_JOB, partition_key="1-0")
        assert result.success
        events = result.get_asset_materialization_events()
    tuned = [e for e in events if e.asset_key == dg.AssetKey(TUNED)]
    assert [e.partition for e in tuned] == ["1-0"]
    row = meta(tuned[0].materialization)["row"]
    assert row["key"] == "1-0" and row["state"] == "reached" and row["new"] > 0.21
    proposal = meta(next(e for e in events if e.asset_key == dg.AssetKey(PROPOSAL)).materialization)
    assert "| 1-0 | win_rate | 0.600 ± 0.1 | mine_density | 0.21 |" in proposal["proposal"]
    assert f"-mine_density = 0.21\n+mine_density = {row['new']}" in proposal["table_diff"]
    assert f"**(1,0) modified: mine_density 0.21->{row['new']}" in proposal["calibration_diff"]
    assert "with the proposal" in proposal["calibration_diff"].splitlines()[0]
    assert (tables / "board_gen.toml").read_bytes() == before  # the job writes no table
