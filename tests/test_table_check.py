"""The table-wide F4 verdict ``every_row_passes_f4`` tested on its own (the
failures in front; SPEC 7 "assertions"), without Dagster
or the browser: a warehouse is laid out here with the publishing functions
(real boards of the small pipeline fixture, report records whose F4 flags
the test sets), and the check's verdict, description, metadata and pictures
are compared with what that warehouse holds.

What the check must say (``steps/table_check.py``): a row whose current
report has a false F4 flag fails that assertion; a row whose current batch
was rejected fails A'; a row without a current report (never run, or run for
another table version) is "not calibrated"; every other row passes.
"""

from __future__ import annotations

import base64
import copy
import struct
from pathlib import Path

import pytest

from boardgen_pipeline.calibration import seeds
from boardgen_pipeline.calibration.batch import evaluate_row, judged_inferability
from boardgen_pipeline.calibration.fix import apply_command
from boardgen_pipeline.calibration.report import report_record
from boardgen_pipeline.pictures import charts, thumbnails
from boardgen_pipeline.steps import table_check
from boardgen_pipeline.steps.table_check import every_row_outcome, failing_row_overview, row_verdicts
from boardgen_pipeline.tables.board_gen import load_board_gen
from boardgen_pipeline.warehouse import datasets, publish

SMALL = Path(__file__).resolve().parent / "fixtures" / "pipeline" / "small" / "board_gen.toml"
N = 8
PNG = "](data:image/png;base64,"


@pytest.fixture(scope="module")
def small():
    """The small fixture's table and a real batch of each of its rows."""
    table = load_board_gen(SMALL)
    rows = {}
    for key in table.keys():
        batch = seeds.seed_batch(table, key, N)
        rows[key] = (batch, seeds.generate_batch(batch))
    return table, rows


def _report(batch, records, **changes) -> dict:
    """The row's report C record as the pipeline writes it, with ``changes``."""
    return {**report_record(batch, evaluate_row(batch.row, records)), **changes}


def publish_row(root, batch, records, **changes) -> dict:
    """A published batch and its report (``changes`` applied to the report)."""
    publish.publish_boards(root, batch.key, datasets.encode(datasets.records_table(records)))
    report = _report(batch, records, **changes)
    publish.write_row_file(root, "calibration_report", batch.key, datasets.encode(datasets.records_table([report])))
    return report


def reject_row(root, batch, records, illegal: int) -> list[dict]:
    """A rejected batch: its first ``illegal`` boards left through least_bad."""
    records = copy.deepcopy(records)
    for r in records[:illegal]:
        r["illegal"], r["exit"] = True, "least_bad"
    publish.reject_boards(root, batch.key, datasets.encode(datasets.records_table(records)))
    return records


# ---------------------------------------------------------------- the passing verdict


def test_every_row_green_passes(small, tmp_path):
    table, rows = small
    for batch, records in rows.values():
        publish_row(tmp_path, batch, records)
    assert row_verdicts(tmp_path, table, N) == {"1-0": [], "1-1": [], "2-0": []}
    outcome = every_row_outcome(tmp_path, table, N)
    assert (outcome.name, outcome.assertion, outcome.passed, outcome.severity, outcome.blocking) == (
        "every_row_passes_f4", "F4", True, "error", False)
    assert outcome.description == "all 3 rows pass F4 (A, A'', A', B, B')"
    assert outcome.metadata == {"rows": 3, "failing_rows": [], "failing": {}}
    assert outcome.pictures == {"failing_rows": "_every row passes_"}


# ---------------------------------------------------------------- the failing verdict


@pytest.mark.parametrize("flag,name", [("assertion_a", "A"), ("assertion_a2", "A''"), ("assertion_a1", "A'"),
                                       ("assertion_b", "B"), ("assertion_b1", "B'")])
def test_a_false_flag_in_a_current_report_fails_that_assertion(small, tmp_path, flag, name):
    table, rows = small
    for key, (batch, records) in rows.items():
        publish_row(tmp_path, batch, records, **({flag: False} if key == (1, 1) else {}))
    assert row_verdicts(tmp_path, table, N) == {"1-0": [], "1-1": [name], "2-0": []}


def test_the_failing_rows_and_assertions_are_named_and_the_rejected_row_counted(small, tmp_path):
    table, rows = small
    publish_row(tmp_path, *rows[(1, 0)])
    bad = publish_row(tmp_path, *rows[(1, 1)], assertion_a=False, assertion_b1=False, below_target=3,
                      advice_status="fails", pass_rate_per_attempt=0.25, required_rate_per_attempt=0.35,
                      advice_density=0.18, advice_r0_max_cap=None, advice_target=0.9)
    rejected = reject_row(tmp_path, *rows[(2, 0)], illegal=2)
    assert row_verdicts(tmp_path, table, N) == {"1-0": [], "1-1": ["A", "B'"], "2-0": ["A'"]}

    outcome = every_row_outcome(tmp_path, table, N)
    assert not outcome.passed and outcome.severity == "error" and not outcome.blocking
    assert outcome.description.startswith("2 of 3 rows fail F4: 1-1 (A, B'); 2-0 (A')")
    assert outcome.metadata["rows"] == 3 and outcome.metadata["failing_rows"] == ["1-1", "2-0"]
    assert outcome.metadata["failing"] == {"1-1": ["A", "B'"], "2-0": ["A'"]}
    assert outcome.pictures["failing_rows"] == "- row 1-1: A, B'\n- row 2-0: A'"
    shown = "\n\n".join(v for k, v in outcome.pictures.items() if k != "failing_rows")
    assert "**row 1-1 fails A, B':" in shown and "**row 2-0 fails A': batch rejected" in shown

    # what a person reads first of each failing row: its verdict, the advisor's fix, its pictures
    first = failing_row_overview(tmp_path, "1-1", ["A", "B'"], table.spawn_side)
    assert first.startswith(f"**row 1-1 fails A, B': 3 of {N} boards below target 0.85, {bad['illegal']} illegal** "
                            f"(p10 {bad['p10']:.3f}, p50 {bad['p50']:.3f})  \n")
    assert ("advisor: fails, pass rate per attempt 0.250 (needs 0.350) · largest mine_density that passes: 0.18 · "
            "smallest r0_max_cap that passes: none in the domain · largest inferability_target: 0.9") in first
    assert first.count(PNG) == 2 and "![inferability histogram" in first and "![worst board" in first
    second = failing_row_overview(tmp_path, "2-0", ["A'"], table.spawn_side)
    illegal = sum(1 for r in rejected if r["illegal"])
    assert illegal == 2
    assert second.startswith(f"**row 2-0 fails A': batch rejected, {illegal} of {N} boards illegal**")
    assert second.count(PNG) == 1 and "![worst board" in second  # no report: no histogram


def test_a_row_without_a_current_report_is_not_calibrated(small, tmp_path):
    table, rows = small
    publish_row(tmp_path, *rows[(1, 0)])
    # (1,1): boards and report of another table version (a different batch fingerprint)
    stale_batch, stale_records = rows[(1, 1)]
    stale = [{**r, "batch_fingerprint": "0123456789abcdef"} for r in stale_records]
    publish_row(tmp_path, stale_batch, stale, batch_fingerprint="0123456789abcdef")
    # (2,0): never run at all
    assert row_verdicts(tmp_path, table, N) == {"1-0": [], "1-1": ["not calibrated"], "2-0": ["not calibrated"]}
    outcome = every_row_outcome(tmp_path, table, N)
    assert not outcome.passed
    assert outcome.description == "2 of 3 rows fail F4: 1-1 (not calibrated); 2-0 (not calibrated)"
    assert outcome.metadata["failing"] == {"1-1": ["not calibrated"], "2-0": ["not calibrated"]}
    assert "overview" not in outcome.pictures  # nothing of the current version to draw


def test_a_rejected_batch_of_another_version_is_not_calibrated_rather_than_failing_a_prime(small, tmp_path):
    table, rows = small
    for key in ((1, 0), (1, 1)):
        publish_row(tmp_path, *rows[key])
    batch, records = rows[(2, 0)]
    reject_row(tmp_path, batch, [{**r, "batch_fingerprint": "0123456789abcdef"} for r in records], illegal=1)
    assert row_verdicts(tmp_path, table, N)["2-0"] == ["not calibrated"]
    # the same rejected batch, current: A'
    reject_row(tmp_path, batch, records, illegal=1)
    assert row_verdicts(tmp_path, table, N)["2-0"] == ["A'"]


def test_the_verdict_is_read_for_the_samples_and_master_seed_asked(small, tmp_path):
    table, rows = small
    for batch, records in rows.values():
        publish_row(tmp_path, batch, records)
    assert set(map(tuple, row_verdicts(tmp_path, table, N + 1).values())) == {("not calibrated",)}
    assert set(map(tuple, row_verdicts(tmp_path, table, N, master_seed=1).values())) == {("not calibrated",)}
    assert every_row_outcome(tmp_path, table, N, master_seed=0).passed


# ---------------------------------------------------------------- order and the drawn rows


def _table(tmp_path, levels) -> object:
    """A table of one row per level, each the small fixture's row (1,0), written here."""
    text = "[header]\nspawn_side = 3\n"
    for level in levels:
        text += (f"\n[[rows]]\nlevel_index = {level}\nnode_depth = 0\nboard_width = 10\nboard_height = 10\n"
                 "mine_density = 0.21\ninferability_target = 0.85\nsolver_rules = \"single_subset\"\n"
                 "min_safe_count = 40\nmax_gen_attempts = 32\nboard_type = \"dungeon\"\nshave_ring_radius = 1\n"
                 "r0_max_cap = 50\n")
    path = tmp_path / "board_gen.toml"
    path.write_text(text)
    return load_board_gen(path)


def test_failing_rows_are_listed_in_row_order_and_only_the_first_three_drawn(tmp_path):
    levels = (2, 10, 3, 1)
    table = _table(tmp_path, levels)
    root = tmp_path / "warehouse"
    for level in levels:
        batch = seeds.seed_batch(table, (level, 0), 4)
        publish_row(root, batch, seeds.generate_batch(batch), assertion_a=False)
    outcome = every_row_outcome(root, table, 4)
    # numeric row order (level 10 after level 3), not the text order of the keys
    assert outcome.metadata["failing_rows"] == ["1-0", "2-0", "3-0", "10-0"]
    assert outcome.description.startswith("4 of 4 rows fail F4: 1-0 (A); 2-0 (A); 3-0 (A); 10-0 (A)")
    assert table_check.OVERVIEW_ROWS == 3
    shown = "\n\n".join(v for k, v in outcome.pictures.items() if k != "failing_rows")
    drawn = {f"{level}-0" for level in levels if f"**row {level}-0 fails" in shown}
    assert drawn == {"1-0", "2-0", "3-0"}
    # more than three rows to fix: the command fixes them all
    assert outcome.metadata["fix_command"] == apply_command(None, table.path, 4)
    assert outcome.metadata["fix_command"].startswith("boardgen advise --all --apply")
    assert f"the advisor's fix, written into the table: `{outcome.metadata['fix_command']}`" in outcome.description


# ---------------------------------------------------------------- what the mutation run asked (docs/testing.md)


def test_published_boards_without_their_report_are_not_calibrated_rather_than_failing_a_prime(small, tmp_path):
    table, rows = small
    batch, records = rows[(1, 0)]
    # the run died between the boards and the report: the boards are current, the report is missing
    publish.publish_boards(tmp_path, batch.key, datasets.encode(datasets.records_table(records)))
    assert row_verdicts(tmp_path, table, N)["1-0"] == ["not calibrated"]


def test_up_to_three_rows_to_fix_are_named_in_the_command(small, tmp_path):
    table, rows = small
    for key, (batch, records) in rows.items():
        publish_row(tmp_path, batch, records, assertion_a=False)
    outcome = every_row_outcome(tmp_path, table, N)
    assert outcome.metadata["fix_command"] == apply_command([(1, 0), (1, 1), (2, 0)], table.path, N)
    assert outcome.metadata["fix_command"].startswith("boardgen advise --row '1,0 1,1 2,0' --apply")


def test_not_calibrated_rows_have_no_fix_command(small, tmp_path):
    table, _ = small
    outcome = every_row_outcome(tmp_path, table, N)
    assert not outcome.passed and "fix_command" not in outcome.metadata and "`" not in outcome.description


def test_the_fix_command_carries_the_master_seed_judged(small, tmp_path):
    table, _ = small
    for key in table.keys():
        batch = seeds.seed_batch(table, key, N, master_seed=1)
        publish_row(tmp_path, batch, seeds.generate_batch(batch), assertion_b=False)
    assert set(map(tuple, every_row_outcome(tmp_path, table, N).metadata["failing"].values())) == {
        ("not calibrated",)}  # judged for master seed 0, these batches are of another one
    outcome = every_row_outcome(tmp_path, table, N, master_seed=1)
    assert outcome.metadata["failing"] == {"1-0": ["B"], "1-1": ["B"], "2-0": ["B"]}
    assert outcome.metadata["fix_command"].endswith(" --master-seed 1")


@pytest.mark.parametrize("count,tail", [(8, ""), (9, "; 1 more (metadata `failing`)"),
                                        (10, "; 2 more (metadata `failing`)")])
def test_the_verdict_line_names_eight_rows_and_counts_the_rest(tmp_path, count, tail):
    assert table_check.NAMED_ROWS == 8
    table = _table(tmp_path, range(1, count + 1))
    outcome = every_row_outcome(tmp_path / "empty", table, 4)  # nothing run: every row not calibrated
    named = "; ".join(f"{level}-0 (not calibrated)" for level in range(1, 9))
    assert outcome.description == f"{count} of {count} rows fail F4: {named}{tail}"
    assert len(outcome.metadata["failing"]) == count


def _png(markdown: str) -> bytes:
    """The PNG of one ``![alt](data:image/png;base64,...)``."""
    return base64.b64decode(markdown.split(PNG, 1)[1].rstrip(")"))


def _size(png: bytes) -> tuple[int, int]:
    return struct.unpack(">II", png[16:24])


def _overview_rows(small, tmp_path, **changes):
    table, rows = small
    batch, records = rows[(1, 1)]
    report = publish_row(tmp_path, batch, records, **changes)
    worst = min(records, key=lambda r: (r["inferability"], r["scope"]))
    return table, records, report, worst


def test_the_overview_full_size_is_its_histogram_and_worst_board_after_the_verdict(small, tmp_path):
    table, records, report, worst = _overview_rows(small, tmp_path, assertion_a=False)
    text = failing_row_overview(tmp_path, "1-1", ["A"], 7)  # full size unless asked to fit
    values = [judged_inferability(r) for r in records]  # what A judges, and A's count in the title
    below = report["below_target"]
    histogram = charts.png_markdown(charts.inferability_histogram_png(
        values, 0.85, f"row 1-1: {N} boards, {below} below target", size=(3.6, 1.9), below=below),
        "inferability histogram")
    board = charts.png_markdown(charts.board_png(worst["layout"], 7, cell_inches=0.16,
                                                 title=f"worst board, scope {worst['scope']}"), "worst board")
    assert board != charts.png_markdown(charts.board_png(worst["layout"], 3, cell_inches=0.16,
                                                         title=f"worst board, scope {worst['scope']}"), "worst board")
    head, pictures = text.split("\n\n")
    assert head.startswith("**row 1-1 fails A: ")
    assert pictures == f"{histogram} {board}"
    assert _size(_png(histogram))[1] > thumbnails.HEIGHT_PX  # not a thumbnail


def test_the_overview_fitted_is_two_thumbnails(small, tmp_path):
    table, records, report, worst = _overview_rows(small, tmp_path, assertion_a=False)
    text = failing_row_overview(tmp_path, "1-1", ["A"], 7, fitted=True)
    histogram = charts.png_markdown(thumbnails.histogram_thumbnail([judged_inferability(r) for r in records], 0.85,
                                                                   below=report["below_target"]),
                                    "inferability histogram")
    board = charts.png_markdown(thumbnails.board_thumbnail(worst["layout"], 7,
                                                           title=f"worst board\nscope {worst['scope']}"),
                                "worst board")
    assert board != charts.png_markdown(thumbnails.board_thumbnail(worst["layout"], 3,
                                                                   title=f"worst board\nscope {worst['scope']}"),
                                        "worst board")
    assert board != charts.png_markdown(thumbnails.board_thumbnail(worst["layout"], 7), "worst board")
    head, pictures = text.split("\n\n")
    assert pictures == f"{histogram} {board}"
    assert [_size(_png(p))[1] for p in (histogram, board)] == [thumbnails.HEIGHT_PX] * 2


def test_a_report_without_the_advisors_figures_reads_zero(small, tmp_path):
    table, rows = small
    # report C as report_record writes it: the advisor's reading is added by the chain (steps/chain.py)
    report = publish_row(tmp_path, *rows[(1, 1)], assertion_a=False)
    assert not any(k.startswith("advice_") or k.endswith("_rate_per_attempt") for k in report)
    head = failing_row_overview(tmp_path, "1-1", ["A"], 3).split("\n\n")[0]
    assert head.endswith("  \nadvisor: None, pass rate per attempt 0.000 (needs 0.000)")


def test_a_rejected_batch_names_every_failing_assertion(small, tmp_path):
    table, rows = small
    reject_row(tmp_path, *rows[(2, 0)], illegal=1)
    text = failing_row_overview(tmp_path, "2-0", ["A'", "B"], 3)
    assert text.startswith(f"**row 2-0 fails A', B: batch rejected, 1 of {N} boards illegal**\n\n![worst board")


def test_the_table_wide_check_shows_the_first_row_fitted_and_every_shown_row_full_size(small, tmp_path):
    table, rows = small
    fails = {(1, 1): {"assertion_a": False}, (2, 0): {"assertion_a": False, "assertion_b": False}}
    for key, (batch, records) in rows.items():
        publish_row(tmp_path, batch, records, **fails.get(key, {}))
    outcome = every_row_outcome(tmp_path, table, N)
    assert set(outcome.pictures) == {"failing_rows", "overview", "failing_row_pictures"}
    assert outcome.pictures["overview"] == failing_row_overview(tmp_path, "1-1", ["A"], 3, fitted=True)
    assert outcome.pictures["failing_row_pictures"] == "\n\n".join(
        [failing_row_overview(tmp_path, "1-1", ["A"], 3), failing_row_overview(tmp_path, "2-0", ["A", "B"], 3)])

