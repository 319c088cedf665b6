"""An edited row's figures against its previous version, for the edit run's
check metadata (``review.edit_report``; docs/review.md "In the UI"): the
changed fields first, then the verdict and the flagged figures; paired where
the previous version can be rebuilt, unpaired (and saying so) where it
cannot; a batch A' withheld compared with the row's last calibration too;
"no previous version" only when the history holds no other."""

from __future__ import annotations

import pytest

from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.review import edit_report
from boardgen_pipeline.review.paired import BEYOND, FLAG_RULE

from .review_support import calibrate, copy_tables, set_field

SAMPLES = 64


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """The default tables calibrated, then three edits, each calibrated again
    (as the table-edit run does): (1,3) denser, (1,0) with one attempt fewer,
    and the header's dig_ap_cost (the price of a fog cell, in the fingerprint of
    the fog rows) with fog row (2,2) recalibrated; then (3,0) given one attempt
    and an R0 cap no board meets, so its batch is illegal and withheld (A')."""
    base = tmp_path_factory.mktemp("edited")
    tables = copy_tables(base / "tables")
    root = calibrate(tables, base / "warehouse", SAMPLES)
    table = tables / "board_gen.toml"
    set_field(table, (1, 3), "mine_density", 0.31)
    set_field(table, (1, 0), "max_gen_attempts", 31)
    table.write_text(table.read_text(encoding="utf-8").replace("[header]\n", "[header]\ndig_ap_cost = 2\n"),
                     encoding="utf-8")
    calibrate(tables, root, SAMPLES, keys=[(1, 3), (1, 0), (2, 2)])
    set_field(table, (3, 0), "max_gen_attempts", 1)
    set_field(table, (3, 0), "r0_max_cap", 9)
    calibrate(tables, root, SAMPLES, keys=[(3, 0)])
    return root, load_catalog(tables)


def test_paired_against_the_rebuilt_previous_version(edited):
    root, catalog = edited
    out = edit_report.markdown_against_previous(root, catalog, [(1, 3)], SAMPLES)
    text = out["1-3"]
    # what the edit changed comes first, then the verdict and the flagged figures, then the table
    head, verdict, flagged, against, *_ = text.split("\n\n")
    assert head == "**Row (1,3) edited: mine_density 0.23 -> 0.31**"
    assert verdict == "F4: F4 passes -> F4 passes"
    assert flagged.startswith("flagged: ") and "win_rate" in flagged  # a perfect player wins less on denser boards
    assert "**paired** on the same 64 scopes" in against
    lines = [line for line in text.splitlines() if line.startswith("| win_rate ")]
    # flagged, and its interval [-0.406, -0.125] beyond the margin: the mark that says so, and the legend's rule
    assert len(lines) == 1 and lines[0].endswith("| * |")
    assert "| inferability_p90 |" in text and sum(line.endswith(("| * |", "| *? |")) for line in text.splitlines()) >= 2
    assert f"* {FLAG_RULE}; {BEYOND}" in text
    assert text.index("flagged: ") < text.index("| figure |")


def test_unpaired_when_the_previous_version_cannot_be_rebuilt(edited):
    """The history keeps the row's parameters, not the header: (2,2)'s previous
    boards were made at dig_ap_cost 1, which today's header no longer says."""
    root, catalog = edited
    text = edit_report.markdown_against_previous(root, catalog, [(2, 2)], SAMPLES)["2-2"]
    assert text.startswith("**Row (2,2) edited: no field the history keeps**")  # the header changed, not the row
    assert "**unpaired** (the previous version's boards cannot be rebuilt" in text
    table = next(block for block in text.split("\n\n") if block.startswith("| figure |"))
    assert table.splitlines()[0] == "| figure | previous | now | Δ | margin | |" and "interval" not in table


def test_unpaired_past_the_edit_budget_and_nothing_for_a_first_version(edited, monkeypatch):
    root, catalog = edited
    monkeypatch.setattr(edit_report, "PAIRED_ROWS", 1)
    out = edit_report.markdown_against_previous(root, catalog, [(1, 0), (1, 3), (3, 1)], SAMPLES)
    assert "**paired**" in out["1-0"] and out["1-0"].startswith("**Row (1,0) edited: max_gen_attempts 32 -> 31**")
    assert "**unpaired** (more rows were edited than the edit budget pairs)" in out["1-3"]
    assert out["1-3"].startswith("**Row (1,3) edited: mine_density 0.23 -> 0.31**")
    # calibrated once, as it is: the only case with nothing to compare
    assert out["3-1"] == ("**Row (3,1)**: no previous version in `calibration_history` to compare with: its only "
                          "version is the row as it is now")


def test_a_withheld_batch_is_compared_with_the_rows_last_calibration(edited, monkeypatch):
    """The edit's batch is illegal: no report, no version; the row's previous
    version is still there (the first calibration), and the edit's diff says
    what changed and what broke, paired and unpaired (from the rejected boards)."""
    root, catalog = edited
    text = edit_report.markdown_against_previous(root, catalog, [(3, 0)], SAMPLES)["3-0"]
    assert "no previous version" not in text
    assert text.startswith("**Row (3,0) edited: r0_max_cap 128 -> 9, max_gen_attempts 32 -> 1**")
    assert "verdict changes: " in text and "A': pass -> FAIL" in text and "**paired**" in text
    monkeypatch.setattr(edit_report, "PAIRED_ROWS", 0)
    text = edit_report.markdown_against_previous(root, catalog, [(3, 0)], SAMPLES)["3-0"]
    assert text.startswith("**Row (3,0) edited: r0_max_cap 128 -> 9, max_gen_attempts 32 -> 1**")
    assert "A': pass -> FAIL" in text and "**unpaired**" in text
    illegal = next(line for line in text.splitlines() if line.startswith("| illegal |"))
    assert "| 0 |" in illegal and "⚑ moved" in illegal
