"""The target curve's file (SPEC 12; tables.curve_targets): loaded with the
tables, every violation listed (file, target, field, value, rule), and
``boardgen tune``'s refusals: one clear sentence, exit 1, nothing written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.tables.board_gen import load_board_gen
from boardgen_pipeline.tables.curve_targets import load_curve_targets

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def tables(tmp_path) -> Path:
    folder = tmp_path / "tables"
    shutil.copytree(REPO / "tables", folder)
    return folder


def write(folder: Path, text: str) -> Path:
    path = folder / "curve_targets.toml"
    path.write_text(text)
    return path


def violations(folder: Path, text: str) -> list[str]:
    path = write(folder, text)
    with pytest.raises(TableError) as err:
        load_curve_targets(path, load_board_gen(folder / "board_gen.toml"))
    return [str(v) for v in err.value.violations]


def test_the_shipped_targets_validate_with_the_tables():
    catalog = load_catalog(REPO / "tables")
    assert catalog.targets.severity == "warning"
    assert catalog.targets.keys() == catalog.board_gen.keys()
    first = catalog.targets.rows[(1, 0)]
    assert (first.figure, first.value, first.tolerance, first.knob, first.target) == ("win_rate", 0.91, 0.06,
                                                                                         "mine_density", 1)


def test_value_by_depth_and_linear_give_each_row_its_value(tables):
    path = write(tables, '[[targets]]\nrows = ["2,0", "2,1"]\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.03\n'
                         '[[targets]]\nlevel_index = 1\nfigure = "no_guess_share"\nby_depth = [0.9, 0.8, 0.7, 0.6, '
                         '0.5]\ntolerance = 0.05\nknob = "inferability_target"\n'
                         '[[targets]]\nlevel_index = 3\nfigure = "mean_guesses"\nlinear = { from = 0.5, to = 2.5 }\n'
                         'tolerance = 0.2\n')
    t = load_curve_targets(path, load_board_gen(tables / "board_gen.toml"))
    assert [(k, t.rows[k].value) for k in [(2, 0), (2, 1)]] == [((2, 0), 0.9), ((2, 1), 0.9)]
    assert [t.rows[(1, d)].value for d in range(5)] == [0.9, 0.8, 0.7, 0.6, 0.5]
    assert t.rows[(1, 3)].knob == "inferability_target" and t.rows[(1, 3)].direction == 1
    # linear from 0.5 at depth 0 to 2.5 at the last depth (4): 0.5 a depth
    assert [t.rows[(3, d)].value for d in range(5)] == [0.5, 1.0, 1.5, 2.0, 2.5]
    assert t.rows[(3, 0)].direction == 1 and t.rows[(2, 0)].direction == -1


F = "curve_targets.toml"


@pytest.mark.parametrize("text,expected", [
    ('[[targets]]\nlevel_index = 1\nfigure = "winrate"\nvalue = 0.9\ntolerance = 0.03\n',
     f"{F}: target #1: field figure = 'winrate': [unknown_figure] did you mean win_rate? must be one of win_rate, mean_survival, "
     "no_guess_share, mean_guesses, inferability_p10, inferability_p50, bbbv_p50, retry_rate"),
    ('[[targets]]\nlevel_index = 1\nfigure = "bbbv_p50"\nvalue = 30\ntolerance = 2\nknob = "inferability_target"\n',
     f"{F}: target #1: field knob = 'inferability_target': [knob_does_not_move_figure] bbbv_p50 does not move one "
     "way with inferability_target; the knobs that move it: mine_density"),
    ('[[targets]]\nlevel_index = 1\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0\n',
     f"{F}: target #1: field tolerance = 0: [tolerance] must be a number > 0 (the corridor's half-width, in the "
     "figure's unit)"),
    ('[[targets]]\nlevel_index = 1\nfigure = "win_rate"\nvalue = 0.9\ntolerance = -0.1\n',
     f"{F}: target #1: field tolerance = -0.1: [tolerance] must be a number > 0 (the corridor's half-width, in the "
     "figure's unit)"),
    ('[[targets]]\nlevel_index = 2\nfigure = "win_rate"\nby_depth = [0.9, 0.8]\ntolerance = 0.03\n',
     f"{F}: target #1: field by_depth = [0.9, 0.8]: [by_depth_length] has 2 values for 5 targeted rows (depths 0, "
     "1, 2, 3, 4): one value a row"),
    ('[[targets]]\nlevel_index = 7\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.03\n',
     f"{F}: target #1: field level_index = 7: [unknown_level] no row of BOARD has this level (levels: [1, 2, 3])"),
    ('[[targets]]\nlevel_index = 1\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.03\nknob = "fog_target_ratio"\n',
     f"{F}: target #1: field knob = 'fog_target_ratio': [knob_domain] row (1,0) has no fog (fog_region_count = 0), "
     "so its fog_target_ratio must stay 0 (board_gen field domain, F2)"),
    ('[[targets]]\nlevel_index = 1\nfigure = "retry_rate"\nvalue = 0.5\ntolerance = 0.1\n',
     f"{F}: target #1: field knob = 'mine_density': [knob_does_not_move_figure] retry_rate does not move one way "
     "with mine_density; the knobs that move it: inferability_target"),
    ('[[targets]]\nlevel_index = 1\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.03\nknob = "board_width"\n',
     f"{F}: target #1: field knob = 'board_width': [unknown_knob] must be one of mine_density, inferability_target, "
     "fog_target_ratio (default mine_density)"),
    ('[[targets]]\nrows = ["1,9"]\nfigure = "win_rate"\nvalue = 1.5\ntolerance = 0.03\n',
     None),
])
def test_a_bad_target_is_one_sentence_naming_file_target_field_and_rule(tables, text, expected):
    found = violations(tables, text)
    if expected is None:  # two faults of one target: both listed
        assert [v.split(": ", 2)[2] for v in found] == [
            "field rows = '1,9': [unknown_row] no row (1,9) in BOARD".replace("BOARD", str(tables / "board_gen.toml")),
            "field value = 1.5: [domain] win_rate takes values in [0, 1]"]
        return
    board = str(tables / "board_gen.toml")
    assert found == [expected.replace(F, str(tables / F), 1).replace("BOARD", board)]


def test_every_violation_of_the_file_is_listed(tables):
    found = violations(tables, '[header]\nseverity = "loud"\n'
                               '[[targets]]\nlevel_index = 1\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.03\n'
                               '[[targets]]\nrows = ["1,2"]\nfigure = "win_rate"\nvalue = 0.8\ntolerance = 0.03\n'
                               '[[targets]]\nlevel_index = 2\nfigur = "win_rate"\n')
    rules = [v.split("[")[1].split("]")[0] for v in found]
    assert rules == ["domain", "one_target_per_row", "unknown_field", "missing_field", "missing_field", "target_value"]
    assert any("row (1,2) is already aimed at by target #1" in v for v in found)


def run_tune(tables: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "tune", "--tables", str(tables),
                           "--workers", "1", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("text,rule", [
    ('[[targets]]\nlevel_index = 1\nfigure = "winrate"\nvalue = 0.9\ntolerance = 0.03\n', "unknown_figure"),
    ('[[targets]]\nlevel_index = 1\nfigure = "bbbv_p50"\nvalue = 30\ntolerance = 2\nknob = "inferability_target"\n',
     "knob_does_not_move_figure"),
    ('[[targets]]\nlevel_index = 1\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0\n', "tolerance"),
    ('[[targets]]\nlevel_index = 2\nfigure = "win_rate"\nby_depth = [0.9, 0.8]\ntolerance = 0.03\n', "by_depth_length"),
    ('[[targets]]\nlevel_index = 7\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.03\n', "unknown_level"),
])
def test_tune_refuses_bad_targets_with_exit_1_and_writes_nothing(tables, text, rule):
    write(tables, text)
    before = (tables / "board_gen.toml").read_bytes()
    done = run_tune(tables, "--apply")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "1 table violation:"
    assert len(lines) == 2 and lines[1].startswith(f"  - {tables / 'curve_targets.toml'}: target #1: field ")
    assert f"[{rule}]" in lines[1]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert (tables / "board_gen.toml").read_bytes() == before
