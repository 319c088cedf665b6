"""The difficulty figures downstream of the board: report C's
columns, the difficulty curve chart, the stratified figures and the
advisor's "does not rise with depth" reading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boardgen_pipeline import cli
from boardgen_pipeline.calibration import advisor
from boardgen_pipeline.calibration.batch import DIFFICULTY_FIGURES, difficulty_figures, evaluate_row, run_row
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.pictures import charts
from boardgen_pipeline.steps import stratify
from boardgen_pipeline.tables.board_gen import load_board_gen_dir

from .conftest import BASE_ROW, write_table
from .test_charts import png_size

DEFAULT = load_board_gen_dir()


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pipeline"


def record(bbbv, safe, subset, rounds, solvable):
    return {"bbbv": bbbv, "safe_count": safe, "subset_steps": subset, "solve_rounds": rounds,
            "solvable_full_logic": solvable}


def test_difficulty_figures_by_hand():
    recs = [record(10 * i, 100, i % 3, i, i % 4 != 0) for i in range(1, 12)]  # bbbv 10..110
    f = difficulty_figures(recs)
    assert set(f) == set(DIFFICULTY_FIGURES)
    assert (f["bbbv_p10"], f["bbbv_p50"], f["bbbv_p90"]) == pytest.approx((20, 60, 100))
    assert (f["bbbv_per_safe_p10"], f["bbbv_per_safe_p50"], f["bbbv_per_safe_p90"]) == pytest.approx((0.2, 0.6, 1.0))
    assert f["subset_steps_p50"] == 1 and f["solve_rounds_p50"] == 6
    assert f["solvable_full_logic_share"] == pytest.approx(9 / 11)  # i = 4, 8 are not
    # records written before the difficulty figures carry none: no columns, not zeros
    assert difficulty_figures([{"safe_count": 3}]) == {}


def test_report_c_of_a_real_row_carries_the_figures():
    key = (1, 0)
    recs = run_row(DEFAULT, key, 48)
    out = evaluate_row(DEFAULT.rows[key], recs).as_dict()
    per_safe = [r["bbbv"] / r["safe_count"] for r in recs]
    assert out["bbbv_per_safe_p50"] == pytest.approx(float(np.percentile(per_safe, 50)))
    assert out["bbbv_p10"] <= out["bbbv_p50"] <= out["bbbv_p90"]
    assert out["subset_steps_p10"] <= out["subset_steps_p90"]
    assert out["solvable_full_logic_share"] == sum(r["solvable_full_logic"] for r in recs) / 48
    # every board of a passing 0.85 row clears 85%; full logic never does worse
    assert out["solvable_full_logic_share"] >= sum(r["revealed"] == r["safe_count"] for r in recs) / 48


def report(level, depth, per_safe):
    out = {"level_index": level, "node_depth": depth, "solvable_full_logic_share": 0.5}
    for stem in ("bbbv", "bbbv_per_safe", "subset_steps"):
        for q, d in ((10, -0.1), (50, 0.0), (90, 0.1)):
            out[f"{stem}_p{q}"] = per_safe * (100 if stem == "bbbv" else 1) + d
    return out


def test_advisor_names_rows_whose_difficulty_does_not_rise():
    rising = [report(1, d, 0.2 + 0.01 * d) for d in range(4)]
    assert advisor.difficulty_findings(rising) == []
    dip = rising[:2] + [report(1, 2, 0.20), report(1, 3, 0.25), report(2, 0, 0.3), report(2, 1, 0.3)]
    found = advisor.difficulty_findings(dip)
    assert len(found) == 2
    assert found[0].startswith("row (1,2): difficulty does not rise with depth") and "0.200" in found[0] \
        and "0.210 at depth 1" in found[0]
    assert found[1].startswith("row (2,1)")  # equal is not rising
    # a report without the figure (older warehouse) is skipped, not a finding
    assert advisor.difficulty_findings([{"level_index": 1, "node_depth": 0}, report(1, 1, 0.1)]) == []


def test_cli_advise_prints_the_difficulty_findings(tmp_path, capsys):
    # depth 1 is sparser than depth 0: fewer numbers, fewer clicks per cell
    rows = [{**BASE_ROW, "mine_density": 0.24}, {**BASE_ROW, "node_depth": 1, "board_width": 12, "board_height": 12,
                                                        "mine_density": 0.15, "r0_max_cap": 72}]
    tables = write_table(tmp_path / "tables" / "board_gen.toml", rows).parent
    assert cli.main(["advise", "--samples", "16", "--tables", str(tables)]) == 0
    out = capsys.readouterr().out
    table = load_board_gen_dir(tables)
    reports = [evaluate_row(table.rows[k], run_row(table, k, 16)).as_dict() for k in table.keys()]
    want = advisor.difficulty_findings(reports)
    assert len(want) == 1 and want[0].startswith("row (1,1): difficulty does not rise")
    assert " ".join(want[0].split()) in " ".join(out.split())  # the console may wrap it


def test_difficulty_curve_chart():
    rows = [report(1, d, 0.2 + 0.01 * d) for d in range(3)] + [report(2, d, 0.3) for d in range(2)]
    a = charts.difficulty_curve_png(rows)
    w, h = png_size(a)
    assert w > 600 and h > 300  # two levels of four panels
    assert a == charts.difficulty_curve_png(list(reversed(rows)))  # order-free, no timestamp
    assert a != charts.difficulty_curve_png(rows[:3])
    # reports without the figures still give a picture (empty), not an error
    png_size(charts.difficulty_curve_png([{"level_index": 1, "node_depth": 0}]))


def test_difficulty_chart_is_written(tmp_path):
    path = charts.write_difficulty_chart(tmp_path, [report(1, 0, 0.2), report(1, 1, 0.3)])
    assert path.name == charts.DIFFICULTY_CHART
    png_size(path.read_bytes())
    assert not list(tmp_path.glob(".*.tmp"))


def test_strata_average_the_difficulty_figures():
    catalog = load_catalog(FIXTURES / "pools")
    rows = {(1, 0): 0.2, (1, 1): 0.3, (1, 3): 0.5}
    reports = {k: {**report(*k, v), "p10": 0.9, "p50": 0.9, "p90": 0.9, "retry_rate": 0.0, "mean_attempts": 1.0}
               for k, v in rows.items()}
    out = {r["template_id"]: r for r in stratify.strata_records(catalog.pools, stratify.row_figures_of(reports))}
    # fork stands on rows (1,0), (1,1), (1,3); corridor on (1,0), (1,3)
    assert out["fork"]["bbbv_per_safe_p50"] == pytest.approx((0.2 + 0.3 + 0.5) / 3)
    assert out["corridor"]["bbbv_per_safe_p50"] == pytest.approx((0.2 + 0.5) / 2)
    assert out["*"]["solvable_full_logic_share"] == pytest.approx(0.5)
    names = set(stratify.dataset_schema().names)
    assert set(stratify.DIFFICULTY_FIGURES) <= names
    # a report without them (written before the difficulty figures): the figures stay empty
    del reports[(1, 1)]["bbbv_per_safe_p50"]
    figures = stratify.row_figures_of(reports)
    assert all("bbbv_per_safe_p50" not in f and "p50" in f for f in figures.values())
    out = {r["template_id"]: r for r in stratify.strata_records(catalog.pools, figures)}
    assert out["fork"]["bbbv_per_safe_p50"] is None and out["fork"]["p50"] == pytest.approx(0.9)


def test_calibrate_puts_the_figures_in_the_warehouse(tmp_path, capsys):
    import duckdb

    wh = tmp_path / "wh"
    assert cli.main(["calibrate", "--samples", "4", "--tables", str(FIXTURES / "pools"), "--warehouse", str(wh)]) == 0
    assert "all assertions hold" in capsys.readouterr().out
    con = duckdb.connect(str(wh / "boardgen.duckdb"), read_only=True)
    try:
        boards = con.execute("select bbbv, openings, subset_steps, solve_rounds, solvable_full_logic, safe_count "
                             "from board_metrics where level_index = 1 and node_depth = 0 order by scope").fetchall()
        share, p50 = con.execute("select solvable_full_logic_share, bbbv_per_safe_p50 from calibration_report "
                                 "where node_depth = 0").fetchone()
    finally:
        con.close()
    assert len(boards) == 4 and all(1 <= b[0] <= b[5] for b in boards)
    assert share == sum(b[4] for b in boards) / 4
    assert p50 == pytest.approx(float(np.percentile([b[0] / b[5] for b in boards], 50)))
    assert not (wh / charts.DIFFICULTY_CHART).exists()  # drawn on demand
    capsys.readouterr()
    assert cli.main(["chart", "--warehouse", str(wh)]) == 0
    assert capsys.readouterr().out.split() == [str(wh / "calibration_report.png"), str(wh / charts.DIFFICULTY_CHART)]
    png_size((wh / charts.DIFFICULTY_CHART).read_bytes())
    png_size((wh / "calibration_report.png").read_bytes())
