"""The boardgen command line (SPEC 8): generate, measure, calibrate, bench."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pyarrow.parquet as pq

from boardgen_pipeline.board.generator import generate

from .test_solver_golden import GOLDEN


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", *args], capture_output=True, text=True, **kw)


METRIC_FIELDS = {
    "metric_version", "inferability", "revealed", "safe_count", "r0_size", "mines_target", "mines_actual",
    "ring_removed", "attempts_used", "r0_cap_rejected", "unreachable_rejected", "free_open_rejected", "exit",
    "degraded", "illegal", "alert", "board_type", "level_index", "node_depth", "row_key", "scope", "layout",
}


def test_generate_json_is_the_contract():
    p = run("generate", "--level", "2", "--depth", "3", "--seed", "11", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert METRIC_FIELDS <= set(out)
    assert out["row"]["key"] == [2, 3] and out["row"]["board_width"] == out["layout"].index("/")
    _, m = generate(2, 3, 11)
    assert {k: out[k] for k in m} == m


def test_generate_text_draws_the_board():
    p = run("generate", "--level", "1", "--depth", "0", "--seed", "3")
    assert p.returncode == 0
    grid = [line for line in p.stdout.splitlines() if line and line[0] in ".*12345678"]
    _, m = generate(1, 0, 3)
    assert [line.replace(" ", "").translate(str.maketrans("12345678", "........")) for line in grid] == \
        m["layout"].split("/")


def test_generate_unknown_level_is_a_clean_error():
    p = run("generate", "--level", "9", "--depth", "0", "--seed", "1")
    assert p.returncode == 1 and "level 9" in p.stderr and "Traceback" not in p.stderr


def test_measure_prints_the_counts(tmp_path):
    g = next(g for g in GOLDEN if g.name == "fifty_fifty")
    f = tmp_path / "b.txt"
    f.write_text("\n".join(g.layout.split("/")) + "\n")
    out = json.loads(run("measure", str(f)).stdout)
    assert out == {"r0_size": 32, "revealed": 32, "safe_count": 33, "inferability": [32, 33],
                   "unreachable_safe": 0, "known_mines": 2}
    single = json.loads(run("measure", str(f), "--rules", "single").stdout)
    assert single["inferability"] == [32, 33]


def test_measure_bad_layout_is_a_clean_error(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text("..*\n.x.\n")
    p = run("measure", str(f))
    assert p.returncode == 1 and "unknown cell characters" in p.stderr and "Traceback" not in p.stderr
    assert run("measure", str(tmp_path / "missing.txt")).returncode == 1


def test_calibrate_writes_parquet_and_views(tmp_path):
    wh = tmp_path / "wh"
    p = run("calibrate", "--samples", "4", "--rows", "1,0 3,4", "--warehouse", str(wh))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "all assertions hold" in p.stdout
    # the nightly's per-row table (steps.summary), read back from the warehouse
    lines = [line.split() for line in p.stdout.splitlines()]
    assert ["F4", "calibration:", "2", "rows", "x", "4", "boards"] in lines
    assert ["row", "target", "p10", "p50", "p90", "exits", "p/b/l", "retry", "F4", "ovl", "pub"] in lines
    rows = {line[0]: line for line in lines if line and line[0] in ("1-0", "3-4")}
    assert sorted(rows) == ["1-0", "3-4"] and all(r[-3:] == ["ok", "ok", "yes"] and r[5] == "4/0/0" for r in rows.values())
    t = pq.read_table(wh / "boards" / "level_index=3" / "node_depth=4" / "part.parquet")
    assert t.num_rows == 4 and "layout" in t.column_names
    con = duckdb.connect(str(wh / "boardgen.duckdb"), read_only=True)
    assert con.execute("select count(*) from boards").fetchone() == (8,)
    assert con.execute("select level_index, node_depth, samples from calibration_report order by 1").fetchall() == \
        [(1, 0, 4), (3, 4, 4)]
    assert con.execute("select min(scope) from board_metrics where level_index = 1").fetchone() == (10**9 + 2**20,)


def test_a_report_file_of_an_older_schema_fails_sql_with_what_to_do(tmp_path):
    """The views read the first file's schema (no ``union_by_name``): a file
    written by older code, lacking a column, is named as such, with the fix."""
    import pyarrow as pa

    wh = tmp_path / "wh"
    assert run("calibrate", "--samples", "4", "--rows", "1,0", "--warehouse", str(wh)).returncode == 0
    old = wh / "calibration_report" / "level_index=9" / "node_depth=0" / "part.parquet"
    old.parent.mkdir(parents=True)
    pq.write_table(pa.table({"samples": [4]}), old)
    p = run("sql", "--warehouse", str(wh), "select level_index, p50 from calibration_report")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "schema mismatch" in p.stderr and "`make run` rewrites every row's files" in p.stderr


def test_calibrate_reports_a_failing_row(tmp_path):
    from .conftest import BASE_ROW, write_table

    write_table(tmp_path / "t" / "board_gen.toml", [{**BASE_ROW, "r0_max_cap": 9, "max_gen_attempts": 2}])
    p = run("calibrate", "--samples", "3", "--tables", str(tmp_path / "t"), "--warehouse", str(tmp_path / "wh"))
    assert p.returncode == 3
    assert "1 row failed an assertion: (1,0)" in p.stdout and "all assertions hold" not in p.stdout
    row = next(line.split() for line in p.stdout.splitlines() if line.split()[:1] == ["1-0"])
    assert row[5:] == ["0/0/3", "1.00", "A", "A'", "-", "no"]  # every board illegal: A and A' fail, nothing published


def test_bench_prints_the_json_contract():
    p = run("bench", "--width", "10", "--height", "10", "--density", "0.25", "--target", "0.95", "--cap", "45",
            "--attempts", "16", "--boards", "50")
    out = json.loads(p.stdout)
    assert {"boards", "passed", "mean_attempts", "seconds", "boards_per_s"} <= set(out)
    assert out["boards"] == 50 and 0 < out["passed"] <= 50
    assert "figures_seconds" not in out  # the attempt loop alone: the work of the C baseline


def test_bench_figures_times_the_whole_entry_point_beside_the_attempt_loop():
    p = run("bench", "--width", "10", "--height", "10", "--density", "0.25", "--target", "0.95", "--cap", "45",
            "--attempts", "16", "--boards", "20", "--figures")
    out = json.loads(p.stdout)
    assert {"seconds", "boards_per_s", "figures_seconds", "figures_boards_per_s"} <= set(out)
