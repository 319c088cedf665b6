"""The paired calibration diff (``review.diff``; docs/review.md): rows
matched by fingerprint, null changes found null, a planted effect found and a
planted non-effect not, verdict changes first, optional stopping, margins."""

from __future__ import annotations

import re
import shutil

import pytest

from boardgen_pipeline.errors import TableError
from boardgen_pipeline.review import diff, render, sources
from boardgen_pipeline.review import figures as F
from boardgen_pipeline.tables.board_gen import load_board_gen

from .review_support import ROW, calibrate, copy_tables, field_of, grown_tables, set_field

SAMPLES = 64


def compare(base_dir, head_dir, **settings):
    base, head = sources.from_folder(base_dir, "BASE"), sources.from_folder(head_dir, "HEAD")
    return diff.compare(base, head, diff.Settings(**{"samples": SAMPLES, "resamples": 999, **settings}))


def test_null_changes_are_identical_rows(tmp_path):
    """Rows reordered, comments added and removed, whitespace changed: every row
    identical (nothing recomputed), nothing flagged, no verdict change, and the
    table reported as a layout change only."""
    base = copy_tables(tmp_path / "base")
    head = copy_tables(tmp_path / "head")
    text = (head / "board_gen.toml").read_text(encoding="utf-8")
    header, *rows = ROW.split(text)
    rows = [re.sub(r"(?m)^(\w+) = (.*)$", r"\1   =   \2   # edited", r) for r in reversed(rows)]
    (head / "board_gen.toml").write_text("# reordered\n\n" + header + "\n\n".join(rows), encoding="utf-8")
    result = compare(base, head)
    assert [r.state for r in result.rows] == ["identical"] * 15
    assert all(not r.figures and r.samples == 0 for r in result.rows)  # neither recomputed nor tested
    assert result.counts()["flagged_figures"] == 0 and result.verdict_changes == []
    assert result.tables == [{"table": "board_gen.toml", "change": "layout"}]


def test_a_field_no_board_depends_on_is_modified_with_zero_differences(tmp_path):
    """A reserved field (carried through, read by nothing that makes a board)
    changes the row's fingerprint: the row is modified, its boards are the same
    boards, every difference is zero and nothing is flagged."""
    base = copy_tables(tmp_path / "base")
    head = copy_tables(tmp_path / "head")
    set_field(head / "board_gen.toml", (2, 3), "elite_gold_bonus", 5)
    result = compare(base, head)
    [row] = result.of("modified")
    assert row.key == (2, 3) and row.changes == ["elite_gold_bonus None->5"]
    assert row.identical_boards == 1.0 and row.samples == SAMPLES
    assert all(f.size == 0 and not f.flagged for f in row.figures.values())
    assert all(f.ci in (None, (0.0, 0.0)) and f.p == 1.0 for f in row.figures.values())
    assert row.verdict_changes == [] and len(result.of("identical")) == 14


@pytest.fixture(scope="module")
def sixty(tmp_path_factory):
    base = grown_tables(tmp_path_factory.mktemp("sixty") / "base", 12)
    assert len(load_board_gen(base / "board_gen.toml").rows) == 60
    return base


def test_planted_effect_is_found_and_nowhere_else(sixty, tmp_path):
    """Density +0.05 on one row of a 60-row table: that row's win rate and
    inferability are flagged (128 boards: the smallest batch where both show
    on this row); the other 59 rows are identical, neither recomputed nor tested."""
    head = grown_tables(tmp_path / "head", 12)
    key = (7, 0)
    density = float(field_of(head / "board_gen.toml", key, "mine_density"))
    set_field(head / "board_gen.toml", key, "mine_density", round(density + 0.05, 3))
    result = compare(sixty, head, samples=128)
    [row] = result.of("modified")
    assert row.key == key and len(result.of("identical")) == 59
    assert "win_rate" in row.flagged
    assert any(name.startswith("inferability") for name in row.flagged)
    assert row.figures["win_rate"].delta < 0 and row.figures["inferability_p10"].delta < 0
    assert [r.key for r in result.flagged_rows] == [key]


def test_planted_non_effect_stays_within_what_the_fdr_allows(sixty, tmp_path):
    """50 rows changed by less than their margins (an R0 cap one lower, one attempt
    fewer, a target 0.005 higher, a density 0.005 higher: a mine more at most).
    With no effect beyond a margin every flag would be false, and
    Benjamini-Hochberg keeps the chance of any at 5%: none is flagged, where the
    same tests uncorrected would flag several rows (docs/review.md)."""
    head = grown_tables(tmp_path / "head", 12)
    table = head / "board_gen.toml"
    for i, key in enumerate(load_board_gen(table).keys()[:50]):
        if i % 4 == 0:
            set_field(table, key, "r0_max_cap", int(field_of(table, key, "r0_max_cap")) - 1)
        elif i % 4 == 1:
            set_field(table, key, "max_gen_attempts", int(field_of(table, key, "max_gen_attempts")) - 1)
        elif i % 4 == 2:
            set_field(table, key, "inferability_target", round(float(field_of(table, key, "inferability_target")) + 0.005, 3))
        else:
            set_field(table, key, "mine_density", round(float(field_of(table, key, "mine_density")) + 0.005, 3))
    result = compare(sixty, head)
    assert len(result.of("modified")) == 50
    assert result.counts()["flagged_rows"] <= int(0.05 * 50) and result.counts()["flagged_rows"] == 0
    uncorrected = {r.key for r in result.of("modified") for f in r.figures.values()
                   if f.p <= 0.05 and f.size > f.margin}
    assert len(uncorrected) >= 3  # the control is what keeps them out


def test_verdict_changes_come_first_and_an_added_failing_row_is_one(tmp_path):
    """A smaller R0 cap makes A and A' fail on (1,1): verdict changes, worse; an
    added row that fails F4 is one too (the node maps are left out: their Boss
    stands at depth 4)."""
    base = copy_tables(tmp_path / "base")
    head = copy_tables(tmp_path / "head")
    for tables in (base, head):
        shutil.rmtree(tables / "nodemaps")
    table = head / "board_gen.toml"
    set_field(table, (1, 1), "r0_max_cap", 40)
    text = table.read_text(encoding="utf-8")
    text += ("\n[[rows]]\nlevel_index = 1\nnode_depth = 5\nboard_width = 10\nboard_height = 10\nmine_density = 0.1\n"
             "inferability_target = 0.85\nsolver_rules = \"single_subset\"\nmin_safe_count = 40\nmax_gen_attempts = 2\n"
             "board_type = \"dungeon\"\nshave_ring_radius = 1\nr0_max_cap = 20\n")
    table.write_text(text, encoding="utf-8")
    result = compare(base, head)
    assert result.worse
    changes = {(v.key, v.assertion): v for v in result.verdict_changes}
    assert changes[((1, 1), "A")].base is True and changes[((1, 1), "A")].head is False
    assert changes[((1, 5), "A'")].base is None and changes[((1, 5), "A'")].worse  # every board illegal
    # the added row's density 0.1 falls below (1,4)'s: assertion E, a warning, shown and not counted as worse
    e = changes[((1, 5), "E")]
    assert e.worsened and not e.worse and e.direction.startswith("worse (a warning")
    assert [v.assertion for v in result.verdict_changes if not v.worse] == ["E"]
    assert result.verdict_changes[-1] == e  # the worse verdicts first
    [added] = result.of("added")
    assert added.key == (1, 5) and added.head_verdicts["green"] is False and added.figures["win_rate"].p is None
    # E warns beside the failing assertions; alone, it never reads as F4 failing
    assert render.f4_text(added.head_verdicts).endswith("), E warns")
    assert render.f4_text({"A": True, "A''": True, "A'": True, "B": True, "B'": True, "E": False}) == "F4 passes, E warns"
    # the Boss row of level 1 moved from depth 4 to depth 5: (1,4) is identical, its overlays are not
    boss = next(r for r in result.rows if r.key == (1, 4))
    assert boss.state == "identical" and "Boss flag" in boss.notes[0]


def test_until_decided_extends_undecided_rows_and_adjusts_for_the_looks(tmp_path):
    """32 boards cannot settle a small density step: the row is extended on its
    own further scopes; each figure's p is the looks' Bonferroni on its p at
    the last look, its interval at level 1 - alpha / looks, so that a p at
    most alpha has an interval that leaves out zero."""
    base = copy_tables(tmp_path / "base")
    head = copy_tables(tmp_path / "head")
    set_field(head / "board_gen.toml", (1, 0), "mine_density", 0.22)
    once = compare(base, head, samples=32)
    decided = compare(base, head, samples=32, until_decided=True)
    [a], [b] = once.of("modified"), decided.of("modified")
    assert a.samples == 32 and a.looks == 1
    assert b.samples > 32 and b.looks > 1 and decided.looks == diff.planned_looks(32, True) == 8
    for f in b.figures.values():
        assert len(f.looked) == b.looks
        assert f.p == pytest.approx(min(1.0, decided.looks * f.looked[-1]))
        if f.p <= 0.05 and f.ci is not None:
            assert f.ci[0] > 0 or f.ci[1] < 0, f.name
    stopped = b.samples < 4096
    assert not stopped or all(f.decided for f in b.figures.values())


def test_margins_from_the_header_and_the_command_line(tmp_path):
    head = copy_tables(tmp_path / "head")
    table = head / "board_gen.toml"
    table.write_text(table.read_text(encoding="utf-8").replace(
        "[header]\n", "[header]\nreview_margins = { win_rate = 0.5, mean_survival = 0.2 }\n"), encoding="utf-8")
    source = sources.from_folder(head, "HEAD")
    margins = diff.margins_of(source, {"mean_survival": 0.01})
    assert margins["win_rate"] == 0.5 and margins["mean_survival"] == 0.01
    assert margins["inferability_p10"] == F.DEFAULT_MARGINS["inferability_p10"]
    table.write_text(table.read_text(encoding="utf-8").replace("win_rate = 0.5", "win_rat = 0.5"), encoding="utf-8")
    with pytest.raises(TableError) as err:
        diff.margins_of(sources.from_folder(head, "HEAD"), {})
    assert "review_margins.win_rat" in str(err.value) and "unknown_figure" in str(err.value)
    assert "unknown figure 'win_rat': did you mean win_rate?" in str(err.value)  # the hint --margin gives
    # a margin that is not a number >= 0 fails the table's own load, as `boardgen validate` says it
    table.write_text(table.read_text(encoding="utf-8").replace("win_rat = 0.5", "win_rate = -0.5"), encoding="utf-8")
    with pytest.raises(TableError) as err:
        load_board_gen(table)
    assert "review_margins.win_rate" in str(err.value) and "[domain]" in str(err.value)


def test_stored_boards_serve_the_version_they_were_made_from(tmp_path):
    """Against the warehouse (``@warehouse``), the base boards of a modified row are
    the stored ones (none generated), and every unchanged row is identical."""
    tables = copy_tables(tmp_path / "tables")
    root = calibrate(tables, tmp_path / "warehouse", SAMPLES)
    set_field(tables / "board_gen.toml", (2, 1), "inferability_target", 0.9)
    head = sources.from_folder(tables, "HEAD")
    base = sources.resolve(sources.WAREHOUSE, "BASE", tables, root, like=head.table)
    assert all(row.exact for row in base.rows.values())
    result = diff.compare(base, head, diff.Settings(samples=SAMPLES, resamples=999), root)
    [row] = result.of("modified")
    assert row.key == (2, 1) and row.stored == {"base": SAMPLES, "head": 0}
    assert row.changes == ["inferability_target 0.85->0.9"]
    assert row.identical_boards > 0.3  # a target keeps the draws in step: many pairs are the same board
    assert len(result.of("identical")) == 14


def test_the_margins_published_are_the_margins_used():
    """docs/review.md's table of figures is the code's (a figure, kind or default
    margin changed in one place only fails here)."""
    from .review_support import REPO

    text = (REPO / "docs" / "review.md").read_text(encoding="utf-8")
    rows = re.findall(r"(?m)^\| `(\w+)` \| .*? \| (\w+) \| ([\d.]+) \| .*? \| .*? \|$", text)
    assert [(name, kind, float(margin)) for name, kind, margin in rows] == [
        (f.name, f.kind, f.margin) for f in F.FIGURES]
