"""An edited row's figures against its previous version, for the edit run's
check metadata (``review.edit_report``; docs/review.md "In the UI"): paired
where the previous version can be rebuilt, unpaired (and saying so) where it
cannot, nothing to compare for a first version."""

from __future__ import annotations

import pytest

from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.review import edit_report

from .review_support import calibrate, copy_tables, set_field

SAMPLES = 64


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    """The default tables calibrated, then three edits, each calibrated again
    (as the table-edit run does): (1,3) denser, (1,0) with one attempt fewer,
    and the header's dig_ap_cost (the price of a fog cell, in the fingerprint of
    the fog rows) with fog row (2,2) recalibrated."""
    base = tmp_path_factory.mktemp("edited")
    tables = copy_tables(base / "tables")
    root = calibrate(tables, base / "warehouse", SAMPLES)
    table = tables / "board_gen.toml"
    set_field(table, (1, 3), "mine_density", 0.31)
    set_field(table, (1, 0), "max_gen_attempts", 31)
    table.write_text(table.read_text(encoding="utf-8").replace("[header]\n", "[header]\ndig_ap_cost = 2\n"),
                     encoding="utf-8")
    calibrate(tables, root, SAMPLES, keys=[(1, 3), (1, 0), (2, 2)])
    return root, load_catalog(tables)


def test_paired_against_the_rebuilt_previous_version(edited):
    root, catalog = edited
    out = edit_report.markdown_against_previous(root, catalog, [(1, 3)], SAMPLES)
    text = out["1-3"]
    assert "**paired** on the same 64 scopes" in text and "changed: mine_density 0.23->0.31" in text
    lines = [line for line in text.splitlines() if line.startswith("| win_rate ")]
    assert len(lines) == 1 and "⚑ moved" in lines[0]  # a perfect player wins less on the denser boards
    assert "| inferability_p90 |" in text and text.count("⚑ moved") >= 2


def test_unpaired_when_the_previous_version_cannot_be_rebuilt(edited):
    """The history keeps the row's parameters, not the header: (2,2)'s previous
    boards were made at dig_ap_cost 1, which today's header no longer says."""
    root, catalog = edited
    text = edit_report.markdown_against_previous(root, catalog, [(2, 2)], SAMPLES)["2-2"]
    assert "**unpaired** (the previous version's boards cannot be rebuilt" in text
    assert "| figure | previous | now | Δ | margin | |" in text and "interval" not in text.split("\n\n")[2]


def test_unpaired_past_the_edit_budget_and_nothing_for_a_first_version(edited, monkeypatch):
    root, catalog = edited
    monkeypatch.setattr(edit_report, "PAIRED_ROWS", 1)
    out = edit_report.markdown_against_previous(root, catalog, [(1, 0), (1, 3), (3, 1)], SAMPLES)
    assert "**paired**" in out["1-0"] and "changed: max_gen_attempts 32->31" in out["1-0"]
    assert "**unpaired** (more rows were edited than the edit budget pairs)" in out["1-3"]
    assert "no previous version" in out["3-1"]
