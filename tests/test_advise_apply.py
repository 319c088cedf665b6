"""``boardgen advise --row L,D --apply``: the advisor's fix written
into a copy of the tables, one value of one row, every comment kept; the row
then passes F4 in a real calibration; ``--dry-run`` and every refusal leave
the file as it was."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from boardgen_pipeline import files
from boardgen_pipeline.calibration import fix
from boardgen_pipeline.calibration.advisor import Advice, PassRate
from boardgen_pipeline.calibration.assertions import CHECK_A, check_outcomes
from boardgen_pipeline.calibration.seeds import generate_batch, seed_batch
from boardgen_pipeline.cli import main
from boardgen_pipeline.steps.table_check import every_row_outcome
from boardgen_pipeline.tables import edit
from boardgen_pipeline.tables.board_gen import load_board_gen

from .conftest import REPO

FAST = ["--samples", "32", "--probes", "32"]  # the advisor's batch and probes, small: the module runs in seconds
ROW = (1, 2)
CAP_LINE = "r0_max_cap = 30  # too small for a 10x10 board: R0 is ~40, so attempts are illegal"


def _set(text: str, key: tuple[int, int], field: str, line: str) -> str:
    """``text`` with the ``field`` line of row ``key`` replaced by ``line`` (a plain text edit)."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, s in enumerate(lines) if s.startswith("level_index = ") and int(s.split("=")[1]) == key[0]
                 and lines[i + 1].split("#")[0].strip() == f"node_depth = {key[1]}")
    i = next(i for i in range(start, len(lines)) if lines[i].startswith(f"{field} = "))
    lines[i] = line + "\n"
    return "".join(lines)


def _line_of(text: str, key: tuple[int, int], field: str) -> int:
    marked = _set(text, key, field, "@@MARK@@").splitlines()
    return marked.index("@@MARK@@")


@pytest.fixture
def tables(tmp_path) -> Path:
    """A copy of the repository's tables whose row (1,2) fails A and A': its
    R0 cap (30, with a comment on its line) is below a 10x10 board's opening."""
    out = tmp_path / "tables"
    shutil.copytree(REPO / "tables", out)
    path = out / "board_gen.toml"
    path.write_text(_set(path.read_text(encoding="utf-8"), ROW, "r0_max_cap", CAP_LINE), encoding="utf-8")
    return out


def advise(capsys, tables: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["advise", "--tables", str(tables), *FAST, *argv])
    out, err = capsys.readouterr()
    return code, out, err


def calibrate(capsys, tables: Path, warehouse: Path, rows: str) -> int:
    code = main(["calibrate", "--tables", str(tables), "--rows", rows, "--samples", "32", "--workers", "1",
                 "--warehouse", str(warehouse)])
    capsys.readouterr()
    return code


def snapshot(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_ino


def no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(files.TEMP_SUFFIX)]


# ---------------------------------------------------------------- the round trip


def test_apply_writes_one_value_of_one_row_keeps_every_comment_and_the_row_then_passes_f4(tables, tmp_path, capsys):
    path = tables / "board_gen.toml"
    before = path.read_text(encoding="utf-8")
    old_table = load_board_gen(path)
    assert calibrate(capsys, tables, tmp_path / "wh0", "1,2") == 3, "the planted row no longer fails F4"
    inode = path.stat().st_ino
    # the UI path: the table-wide check and the row's failing A name the command; it is the one run here
    command = f"boardgen advise --row 1,2 --apply --tables {tables} --samples 32"
    assert f"; the advisor's fix, written into the table: `{command}`" in \
        every_row_outcome(tmp_path / "wh0", old_table, 32).description
    batch = seed_batch(old_table, ROW, 32)
    a = {o.name: o for o in check_outcomes(batch, generate_batch(batch))}[CHECK_A]
    assert not a.passed and a.metadata["fix_command"] == command

    code, out, err = advise(capsys, tables, *shlex.split(command)[2:])

    assert code == 0, err
    after = path.read_text(encoding="utf-8")
    a, b = before.splitlines(), after.splitlines()
    changed = _line_of(before, ROW, "r0_max_cap")
    assert len(a) == len(b) and [i for i in range(len(a)) if a[i] != b[i]] == [changed]
    value, comment = b[changed].split("#", 1)
    cap = int(value.split("=")[1])
    assert value == f"r0_max_cap = {cap}  " and "#" + comment == CAP_LINE.split("  ", 1)[1]  # its comment kept
    assert 30 < cap <= 50
    # the diff printed is that one line
    assert f"-{CAP_LINE}" in out.splitlines() and f"+{b[changed]}" in out.splitlines()
    assert "fails A, A'" in out and "wrote" in out
    # every other row as it was; the table validates
    new_table = load_board_gen(path)
    assert new_table.rows[ROW] == old_table.rows[ROW].model_copy(update={"r0_max_cap": cap})
    assert {k: r for k, r in new_table.rows.items() if k != ROW} == {k: r for k, r in old_table.rows.items() if k != ROW}
    # replaced by a rename, not written in place (a reader never sees half a table); no temporary file left
    assert path.stat().st_ino != inode and no_temp_files(tables)
    # the row passes F4 in a real calibration at the advisor's sample count
    assert calibrate(capsys, tables, tmp_path / "wh1", "1,2") == 0


def test_dry_run_prints_the_diff_and_writes_nothing(tables, capsys):
    path = tables / "board_gen.toml"
    before = snapshot(path)
    code, out, err = advise(capsys, tables, "--row", "1,2", "--apply", "--dry-run")
    assert code == 0, err
    assert f"-{CAP_LINE}" in out.splitlines() and any(line.startswith("+r0_max_cap = ") for line in out.splitlines())
    assert "dry run: nothing written" in out
    assert snapshot(path) == before and no_temp_files(tables)


def test_all_fixes_every_failing_row_density_first_and_leaves_passing_rows_alone(tables, capsys):
    path = tables / "board_gen.toml"
    path.write_text(_set(path.read_text(encoding="utf-8"), (1, 3), "mine_density", "mine_density = 0.45"),
                    encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    old = load_board_gen(path)
    code, out, err = advise(capsys, tables, "--all", "--apply")
    assert code == 0, err
    new = load_board_gen(path)
    changed = {k for k in old.rows if new.rows[k] != old.rows[k]}
    assert changed == {ROW, (1, 3)}
    # (1,3): too dense, and a density passes: the density is the fix, lowered
    assert new.rows[(1, 3)] == old.rows[(1, 3)].model_copy(update={"mine_density": new.rows[(1, 3)].mine_density})
    assert new.rows[(1, 3)].mine_density < 0.45
    # (1,2): no density passes with a cap of 30, so the cap is the fix
    assert new.rows[ROW] == old.rows[ROW].model_copy(update={"r0_max_cap": new.rows[ROW].r0_max_cap})
    a, b = before.splitlines(), path.read_text(encoding="utf-8").splitlines()
    assert [i for i in range(len(a)) if a[i] != b[i]] == sorted([_line_of(before, ROW, "r0_max_cap"),
                                                                 _line_of(before, (1, 3), "mine_density")])
    assert f"{len(old.rows) - 2} of {len(old.rows)} rows pass F4" in out


def test_the_fix_is_the_first_of_density_cap_target_that_changes_the_row_and_passes(tables):
    """The order (density, then cap, then target), and the batch's own verdict on each candidate:
    a value equal to the row's is no change; a candidate that fails the row's
    F4 batch is passed over."""
    table = load_board_gen(tables / "board_gen.toml")
    row = table.rows[ROW]

    def chosen(density=None, cap=None, target=None):
        advice = Advice(ROW, "fails", PassRate(0, 1), row.max_gen_attempts, density, cap, target, searched=True)
        change = fix.choose_change(table, row, advice, samples=32)
        return change and (change.field, change.new)

    assert chosen(cap=46, target=0.9) == ("r0_max_cap", 46)
    assert chosen(density=0.2, cap=46) == ("r0_max_cap", 46)  # density 0.2 keeps the cap of 30: still fails
    assert chosen(density=row.mine_density, cap=46) == ("r0_max_cap", 46)  # equal: no change
    assert chosen(cap=30, target=0.85) is None  # the row's own values: nothing changes
    rescued = table.rows[ROW].model_copy(update={"r0_max_cap": 50})
    good = fix.choose_change(table, rescued, Advice(ROW, "fails", PassRate(0, 1), 32, 0.21, 46, 0.9, searched=True), 32)
    assert (good.field, good.new) == ("mine_density", 0.21)  # density first when it passes


def test_a_row_that_already_passes_is_left_alone(tables, capsys):
    path = tables / "board_gen.toml"
    before = snapshot(path)
    code, out, err = advise(capsys, tables, "--row", "1,0", "--apply")
    assert code == 0, err
    assert "row (1,0) already passes F4 on its 32 calibration boards: nothing to apply" in out
    assert snapshot(path) == before


def test_no_fix_in_the_domain_says_so_and_writes_nothing(tables, capsys):
    path = tables / "board_gen.toml"
    text = path.read_text(encoding="utf-8")
    for field, line in (("max_gen_attempts", "max_gen_attempts = 1"), ("inferability_target", "inferability_target = 1.0"),
                        ("mine_density", "mine_density = 0.3")):
        text = _set(text, (1, 3), field, line)
    path.write_text(text, encoding="utf-8")
    before = snapshot(path)
    code, out, err = advise(capsys, tables, "--row", "1,3", "--apply")
    assert code == 3
    assert "row (1,3) fails" in out and "no mine_density, r0_max_cap or inferability_target in the domain" in out
    assert snapshot(path) == before


def test_advice_names_what_the_edit_changed_and_the_value_to_restore(tables, tmp_path, capsys):
    """Row (1,3) calibrated as it ships, then edited so that it fails with no fix
    in the domain (one attempt): advise says which fields the edit changed since
    that calibration and what to restore, with and without --apply, and counts
    attempts in words that read right (1 attempt)."""
    path = tables / "board_gen.toml"
    warehouse = tmp_path / "wh"
    assert calibrate(capsys, tables, warehouse, "1,3") == 0
    text = path.read_text(encoding="utf-8")
    for field, line in (("max_gen_attempts", "max_gen_attempts = 1"), ("inferability_target", "inferability_target = 1.0")):
        text = _set(text, (1, 3), field, line)
    path.write_text(text, encoding="utf-8")
    told = ("row (1,3) edited since its calibration of {day} (F4 passed then): inferability_target 0.85 -> 1 "
            "(restore 0.85), max_gen_attempts 32 -> 1 (restore 32)")
    for argv in (("--row", "1,3"), ("--row", "1,3", "--apply", "--dry-run")):
        code, out, err = advise(capsys, tables, *argv, "--warehouse", str(warehouse))
        line = next(line for line in out.splitlines() if line.startswith("row (1,3) edited since"))
        assert line == told.format(day=line.split("calibration of ")[1][:10]), line
        words = " ".join(out.split())  # the terminal wraps long lines
        assert "within 1 attempt " in words and "1 attempts" not in words
    # without a calibration to compare with, nothing is claimed about an edit
    code, out, err = advise(capsys, tables, "--row", "1,3", "--warehouse", str(tmp_path / "none"))
    assert "edited since" not in out


# ---------------------------------------------------------------- refusals: one sentence, nothing written


def refused(capsys, tables: Path, *argv: str, code: int = 1) -> str:
    path = tables / "board_gen.toml"
    before = snapshot(path)
    got, out, err = advise(capsys, tables, *argv)
    assert got == code, (out, err)
    assert out == "", "refused after work began"  # no advice computed, nothing printed
    assert "Traceback" not in err and snapshot(path) == before and no_temp_files(tables)
    return err


def test_a_table_that_does_not_validate_is_refused(tables, capsys):
    path = tables / "board_gen.toml"
    path.write_text(_set(path.read_text(encoding="utf-8"), (2, 0), "mine_density", "mine_density = 0.9"),
                    encoding="utf-8")
    err = refused(capsys, tables, "--row", "1,2", "--apply")
    assert err.count("\n") == 1 and "the table does not validate, so --apply writes nothing" in err
    assert f"{path}: row (2,0): field mine_density = 0.9" in err


def test_an_unknown_row_is_refused(tables, capsys):
    err = refused(capsys, tables, "--row", "9,9", "--apply")
    assert err == f"error: --row: no row (9,9) in {tables / 'board_gen.toml'}\n"


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_table_is_refused_before_any_work(tables, capsys, what):
    target = tables / "board_gen.toml" if what == "file" else tables
    mode = target.stat().st_mode
    target.chmod(0o444 if what == "file" else 0o555)  # root could still write it: the mode itself decides
    try:
        err = refused(capsys, tables, "--row", "1,2", "--apply")
    finally:
        target.chmod(mode)
    assert err.count("\n") == 1 and f"the {what} {target} is read-only; nothing written" in err


@pytest.mark.parametrize("argv, option", [
    (["--apply"], "--apply"),
    (["--dry-run", "--row", "1,2"], "--dry-run"),
    (["--all"], "--all"),
    (["--all", "--apply", "--row", "1,2"], "--all"),
    (["--apply", "--row", " "], "--row"),
])
def test_apply_arguments_are_checked_before_any_work(tables, capsys, argv, option):
    err = refused(capsys, tables, *argv, code=2)
    assert err.startswith("1 command-line violation:") and f"field {option} = " in err


def test_an_edit_that_would_not_validate_is_refused_and_the_file_untouched(tables):
    path = tables / "board_gen.toml"
    before = snapshot(path)
    too_big = edit.RowChange(ROW, "r0_max_cap", 30, 51)  # above floor(W*H/2) = 50
    with pytest.raises(edit.EditRefused, match=r"would not validate: .*row \(1,2\): field r0_max_cap = 51"):
        edit.apply_changes(path, [too_big])
    assert snapshot(path) == before and no_temp_files(tables)


def test_an_edit_that_would_touch_another_line_is_refused(tables, monkeypatch):
    """The promise "every comment kept" is checked on the text itself: had
    tomlkit dropped a comment elsewhere, nothing would be written."""
    path = tables / "board_gen.toml"
    before = snapshot(path)
    made = edit.edited_text
    monkeypatch.setattr(edit, "edited_text", lambda text, changes, p: made(text, changes, p).replace("  # Boss row", ""))
    with pytest.raises(edit.EditRefused, match="would change more than the values' lines"):
        edit.apply_changes(path, [edit.RowChange(ROW, "r0_max_cap", 30, 46)])
    assert snapshot(path) == before and no_temp_files(tables)


def test_a_row_changed_since_its_advice_is_not_overwritten(tables):
    path = tables / "board_gen.toml"
    advised_on = load_board_gen(path)
    edit.apply_changes(path, [edit.RowChange(ROW, "mine_density", 0.22, 0.21)], based_on=advised_on)
    before = snapshot(path)
    with pytest.raises(edit.EditRefused, match=r"row \(1,2\) changed since its advice was computed"):
        edit.apply_changes(path, [edit.RowChange(ROW, "r0_max_cap", 30, 46)], based_on=advised_on)
    assert snapshot(path) == before
    # another row's change is made on the file as it is now: the first edit is kept
    edit.apply_changes(path, [edit.RowChange((1, 3), "r0_max_cap", 50, 48)], based_on=advised_on)
    now = load_board_gen(path)
    assert now.rows[ROW].mine_density == 0.21 and now.rows[(1, 3)].r0_max_cap == 48


def test_two_applies_at_once_both_land_in_a_whole_table(tables):
    """Two ``--apply`` processes on two failing rows, started together: the
    table ends whole (it validates) with both fixes, no temporary file left."""
    path = tables / "board_gen.toml"
    path.write_text(_set(path.read_text(encoding="utf-8"), (1, 3), "r0_max_cap", "r0_max_cap = 30"), encoding="utf-8")
    cmd = [sys.executable, "-m", "boardgen_pipeline.cli", "advise", "--tables", str(tables), *FAST, "--apply", "--row"]
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    procs = [subprocess.Popen([*cmd, row], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for row in ("1,2", "1,3")]
    results = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    table = load_board_gen(path)
    assert table.rows[ROW].r0_max_cap > 30 and table.rows[(1, 3)].r0_max_cap > 30
    assert no_temp_files(tables)


# ---------------------------------------------------------------- the UI path


def test_the_command_the_checks_name(tables):
    assert fix.apply_command([(2, 4)], REPO / "tables" / "board_gen.toml", 256) == \
        "boardgen advise --row 2,4 --apply --samples 256"
    assert fix.apply_command([(1, 2), (1, 3)], tables / "board_gen.toml", 32, master_seed=7) == \
        f"boardgen advise --row '1,2 1,3' --apply --tables {tables} --samples 32 --master-seed 7"
    assert fix.apply_command(None, REPO / "tables" / "board_gen.toml", 4096) == \
        "boardgen advise --all --apply --samples 4096"
