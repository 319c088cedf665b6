"""Check F and the perfect player's figures of a row, with their
pictures: report C's fairness columns against the board records they
come from, the advisory check on ``min_mean_survival`` (a warning, an error
only where the header sets ``survival_is_criterion``), its boundary, the
rows with nothing to judge, the table fields' domains, and the two pictures.

The boards are a real batch of the small pipeline fixture's fog row (2,0)
at N = 40 (fog rows force the most guesses); each test edits a copy of the
records or of the row into the case it needs.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from boardgen_pipeline.calibration import assertions, seeds
from boardgen_pipeline.calibration.assertions import RowEvidence
from boardgen_pipeline.calibration.batch import evaluate_row
from boardgen_pipeline.calibration.rates import wilson
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.pictures import fairness
from boardgen_pipeline.steps import row_checks
from boardgen_pipeline.tables.board_gen import load_board_gen

SMALL = Path(__file__).resolve().parent / "fixtures" / "pipeline" / "small" / "board_gen.toml"
N = 40


@pytest.fixture(scope="module")
def fog_row():
    table = load_board_gen(SMALL)
    batch = seeds.seed_batch(table, (2, 0), N)
    return batch, seeds.generate_batch(batch)


def _with_floor(batch, floor, criterion=False):
    row = batch.row.model_copy(update={"min_mean_survival": floor})
    return replace(batch, row=row, header=replace(batch.header, survival_is_criterion=criterion))


def _f(batch, records):
    report = evaluate_row(batch.row, records, batch.header.survival_is_criterion)
    return report, assertions.assertion_f(RowEvidence(batch, records, report))


def test_the_row_figures_are_those_of_its_boards(fog_row):
    batch, records = fog_row
    report = evaluate_row(batch.row, records)
    fair = report.fairness
    analysed = [r for r in records if r["won"] is not None]
    assert fair["fairness_boards"] == len(analysed) == N and fair["fairness_not_analysed"] == 0
    wins = sum(r["won"] for r in analysed)
    survival = sum(r["survival"] for r in analysed) / N
    assert fair["win_rate"] == wins / N
    assert fair["mean_survival"] == pytest.approx(survival, rel=1e-12)
    assert fair["mean_guesses"] == sum(r["forced_guesses"] for r in analysed) / N
    assert fair["no_guess_share"] == sum(r["forced_guesses"] == 0 for r in analysed) / N
    assert (fair["win_rate_ci_low"], fair["win_rate_ci_high"]) == wilson(wins / N, N)
    assert (fair["mean_survival_ci_low"], fair["mean_survival_ci_high"]) == wilson(fair["mean_survival"], N)
    firsts = [r["first_guess_p_safe"] for r in analysed if r["forced_guesses"]]
    assert fair["mean_first_guess_p_safe"] == pytest.approx(sum(firsts) / len(firsts), rel=1e-12)
    # the fixture's fog row makes the player guess, and lose sometimes: the figures are not trivial
    assert 0 < fair["no_guess_share"] < 1 and 0 < fair["mean_survival"] < 1
    # each board's survival is the product of its guesses' P(safe)
    for r in analysed:
        product = 1.0
        for p in r["guess_p_safe"]:
            product *= p
        assert r["survival"] == pytest.approx(product, rel=1e-12)
        assert len(r["guess_cells"]) == len(r["guess_p_safe"]) == r["forced_guesses"]


def test_f_without_a_floor_passes_as_not_applicable_and_warns_at_most(fog_row):
    batch, records = fog_row
    report, f = _f(batch, records)
    assert report.assertion_f is None and report.as_dict()["assertion_f"] is None
    assert (f.name, f.assertion, f.passed, f.severity, f.blocking) == (assertions.CHECK_F, "F", True, "warning", False)
    assert f.description.startswith("not applicable: no min_mean_survival set (mean survival ")
    assert f.metadata["applicable"] is False and f.metadata["mean_survival"] == report.fairness["mean_survival"]


def test_f_fails_below_the_floor_and_passes_at_it(fog_row):
    batch, records = fog_row
    mean = evaluate_row(batch.row, records).fairness["mean_survival"]
    report, f = _f(_with_floor(batch, round(mean + 0.001, 3)), records)
    assert report.assertion_f is False and not f.passed and f.severity == "warning"
    assert f.description == f"mean survival {mean:.3f} below min_mean_survival {round(mean + 0.001, 3)}"
    assert report.green  # advisory: it does not fail the row
    report, f = _f(_with_floor(batch, mean), records)  # exactly at the floor: passes
    assert report.assertion_f is True and f.passed
    report, f = _f(_with_floor(batch, 0.0), records)
    assert f.passed and f.metadata["applicable"] is True and f.metadata["min_mean_survival"] == 0.0


def test_f_is_an_error_and_fails_green_only_where_the_header_asks(fog_row):
    batch, records = fog_row
    report, f = _f(_with_floor(batch, 1.0, criterion=True), records)
    assert not f.passed and f.severity == "error" and f.metadata["criterion"] is True
    assert report.assertion_f is False and not report.green and report.as_dict()["green"] is False
    # the header's option alone, with no floor on the row, judges nothing
    report, f = _f(_with_floor(batch, None, criterion=True), records)
    assert f.passed and f.severity == "warning" and report.green


def test_f_fails_a_row_whose_boards_could_not_be_analysed(fog_row):
    batch, records = fog_row
    records = copy.deepcopy(records)
    for r in records:  # every position too big: no figure is claimed, so no mean to judge
        r.update(won=None, survival=None, fairness_too_big=1)
    report, f = _f(_with_floor(batch, 0.0), records)
    assert report.fairness["fairness_boards"] == 0 and report.fairness["fairness_not_analysed"] == N
    assert report.fairness["mean_survival"] is None and report.assertion_f is False and not f.passed
    assert f.description == "mean survival none analysed below min_mean_survival 0.0"
    assert f.pictures == {"survival_histogram": "_no board analysed_"}


def test_f_pictures_the_survival_histogram_and_the_least_survival_board(fog_row):
    batch, records = fog_row
    _, f = _f(batch, records)
    histogram = f.pictures["survival_histogram"]
    counts = [int(line.rsplit(" ", 1)[1]) for line in histogram.split("```")[1].strip().splitlines()[1:]]
    guessed = [r for r in records if r["forced_guesses"]]
    assert len(counts) == fairness.BINS + 1 and sum(counts) == N and counts[-1] == N - len(guessed)
    for k in range(fairness.BINS):
        assert counts[k] == sum(1 for r in guessed if min(fairness.BINS - 1, int(r["survival"] * 10)) == k)
    worst = min(guessed, key=lambda r: (r["survival"], r["scope"]))
    assert f.metadata["least_survival_scope"] == worst["scope"]
    board = f.pictures["least_survival_board"]
    grid = board.split("```")[1].strip().splitlines()
    width = batch.row.board_width
    for i, cell in enumerate(worst["guess_cells"]):  # each guessed cell lettered in order, with its odds
        assert grid[cell // width][cell % width] == fairness.LETTERS[i]
        assert f"`{fairness.LETTERS[i]}` (x {cell % width}, y {cell // width}): P(safe) " \
               f"{worst['guess_p_safe'][i]:.3f}" in board
    letters = sum(ch in fairness.LETTERS for line in grid for ch in line)
    assert letters == worst["forced_guesses"]
    # a passing row keeps F's pictures in its row_checks record (the row's page shows them)
    [record] = row_checks.records({"boards": [f]}, {"boards": "fp"})
    assert f.passed and row_checks.outcome_of(record).pictures == f.pictures


def test_the_table_fields_of_check_f_have_domains(tmp_path):
    text = SMALL.read_text()
    assert "[header]" in text
    bad = text.replace("[header]", "[header]\nsurvival_is_criterion = 1", 1)
    bad = bad.replace("node_depth = 0\n", "node_depth = 0\nmin_mean_survival = 1.5\n", 1)
    path = tmp_path / "board_gen.toml"
    path.write_text(bad)
    with pytest.raises(TableError) as info:
        load_board_gen(path)
    found = {(v.field, v.value) for v in info.value.violations}
    assert ("survival_is_criterion", 1) in found and ("min_mean_survival", 1.5) in found
    good = text.replace("node_depth = 0\n", "node_depth = 0\nmin_mean_survival = 0.5\n", 1)
    path.write_text(good)
    table = load_board_gen(path)
    key = table.keys()[0]
    assert table.rows[key].min_mean_survival == 0.5
    # unset, the field leaves a row's fingerprint as it was before check F; set, it is part of it
    plain = load_board_gen(SMALL)
    assert plain.rows[key].min_mean_survival is None
    assert "min_mean_survival" not in plain.rows[key].fields()
    assert table.row_fingerprint(key) != plain.row_fingerprint(key)
    assert table.row_fingerprint(table.keys()[1]) == plain.row_fingerprint(table.keys()[1])
    criterion = good.replace("[header]", "[header]\nsurvival_is_criterion = true", 1)
    path.write_text(criterion)
    strict = load_board_gen(path)
    assert strict.header.survival_is_criterion is True
    assert strict.row_fingerprint(key) != table.row_fingerprint(key)  # F's severity changes the row's verdicts
    assert strict.row_fingerprint(table.keys()[1]) == plain.row_fingerprint(table.keys()[1])
