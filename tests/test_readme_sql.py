"""The README's SQL commands work right after a calibration, with what the
project installs (right after ``make run``), and the report
carries the row's table parameters with typed columns."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from boardgen_pipeline import cli
from boardgen_pipeline.exits import Exit

from .test_pipeline_support import N, copy_fixture

REPO = Path(__file__).resolve().parent.parent


def readme_sql_commands() -> list[list[str]]:
    """Every ``.venv/bin/boardgen sql ...`` line of the README's quick start."""
    text = (REPO / "README.md").read_text()
    lines = [ln.split("#")[0].strip() for ln in text.splitlines() if ln.strip().startswith(".venv/bin/boardgen sql")]
    return [shlex.split(ln)[1:] for ln in lines]


def test_the_readme_sql_commands_answer(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    assert cli.main(["calibrate", "--tables", str(tables), "--warehouse", str(root), "--samples", str(N)]) == 0
    commands = readme_sql_commands()
    assert len(commands) >= 2, "the README shows no boardgen sql command"
    for args in commands:
        assert args[0] == "sql"
        out = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", *args], cwd=REPO, text=True,
                             capture_output=True, env={"BOARDGEN_WAREHOUSE": str(root), "PATH": "/usr/bin:/bin"})
        assert out.returncode == 0, out.stderr
        assert "level_index" in out.stdout and out.stdout.count("\n") >= 3, out.stdout
    csv = [a for a in commands if "--format" in a][0]
    out = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", *csv], cwd=REPO, text=True,
                         capture_output=True, env={"BOARDGEN_WAREHOUSE": str(root), "PATH": "/usr/bin:/bin"})
    rows = out.stdout.strip().splitlines()
    assert rows[0] == "level_index,node_depth,p10,p50,p90,green" and len(rows) == 1 + 3


def test_sql_errors_are_one_line_and_a_missing_warehouse_is_named(tmp_path, capsys):
    assert cli.main(["sql", "--warehouse", str(tmp_path), "select 1"]) == Exit.INPUT
    assert "no warehouse database" in capsys.readouterr().err
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    assert cli.main(["calibrate", "--tables", str(tables), "--warehouse", str(root), "--samples", "2",
                     "--rows", "1,0"]) == 0
    capsys.readouterr()
    assert cli.main(["sql", "--warehouse", str(root), "select nope from boards"]) == Exit.INPUT
    err = capsys.readouterr().err
    assert err.startswith("error: SQL: ") and len(err.strip().splitlines()) == 1


def test_the_report_carries_the_table_parameters_with_typed_columns(tmp_path, capsys):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    assert cli.main(["calibrate", "--tables", str(tables), "--warehouse", str(root), "--samples", str(N)]) == 0
    capsys.readouterr()
    assert cli.main(["sql", "--warehouse", str(root), "--format", "csv",
                     "select column_name, column_type from (describe calibration_report)"]) == 0
    types = dict(line.split(",", 1) for line in capsys.readouterr().out.strip().splitlines()[1:])
    for column, kind in (("board_width", "BIGINT"), ("board_height", "BIGINT"), ("mine_density", "DOUBLE"),
                         ("inferability_target", "DOUBLE"), ("r0_max_cap", "BIGINT"), ("max_gen_attempts", "BIGINT"),
                         ("advice_density", "DOUBLE"), ("advice_r0_max_cap", "BIGINT"), ("advice_target", "DOUBLE")):
        assert types.get(column) == kind, (column, types.get(column))
    assert "NULL" not in types.values() and '"NULL"' not in types.values()
    # the parameters are the row's own: one query shows cause and effect
    assert cli.main(["sql", "--warehouse", str(root), "--format", "csv",
                     "select level_index, node_depth, mine_density, board_width from calibration_report order by all"]) == 0
    text = (tables / "board_gen.toml").read_text()
    densities = [float(v) for v in re.findall(r"(?m)^mine_density = ([\d.]+)", text)]
    shown = [float(line.split(",")[2]) for line in capsys.readouterr().out.strip().splitlines()[1:]]
    assert sorted(shown) == sorted(densities)
