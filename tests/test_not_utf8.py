"""A file that is not UTF-8 text (never a traceback): every
file a command reads from a person (a layout, a table, the table ``advise
--apply`` rewrites, the warehouse files ``history`` and ``sql`` open) fails
in one sentence naming the file and the cause, with the exit code of its
kind of error (1 a user's input, 5 a damaged warehouse file), never a
``UnicodeDecodeError`` traceback."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import pytest

from boardgen_pipeline.cli import main
from boardgen_pipeline.tables import edit

from .conftest import REPO

NOT_UTF8 = b"\xff\xfe\x00\x2e"  # UTF-16's byte-order mark and a '.': what a Windows editor may save
CAUSE = "not UTF-8 text (byte 0xff at offset 0: invalid start byte); save it as UTF-8"


def run(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(err: str, *, head: str = "error: ") -> str:
    assert "Traceback" not in err and "UnicodeDecodeError" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(head), err
    return lines[0]


@pytest.fixture
def tables(tmp_path) -> Path:
    out = tmp_path / "tables"
    shutil.copytree(REPO / "tables", out)
    return out


def test_measure_a_file_that_is_not_utf8(tmp_path, capsys):
    f = tmp_path / "layout.txt"
    f.write_bytes(NOT_UTF8)
    code, out, err = run(capsys, "measure", str(f))
    assert code == 1 and out == ""
    assert one_sentence(err) == f"error: {f}: {CAUSE}"


def test_measure_stdin_that_is_not_utf8(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(NOT_UTF8)))
    code, _, err = run(capsys, "measure", "-")
    assert code == 1 and one_sentence(err) == f"error: -: {CAUSE}"


def test_measure_takes_a_utf8_byte_order_mark(tmp_path, capsys):
    f = tmp_path / "layout.txt"
    f.write_bytes(b"\xef\xbb\xbf" + b"........\n" * 8)
    code, out, _ = run(capsys, "measure", str(f))
    assert code == 0 and '"safe_count": 64' in out


@pytest.mark.parametrize("name", ["board_gen.toml", "variation.toml", "resource_weights.toml", "nodemaps/level_2.toml"])
def test_a_table_file_that_is_not_utf8(tables, capsys, name):
    (tables / name).write_bytes(NOT_UTF8)
    code, out, err = run(capsys, "validate", "--tables", str(tables))
    assert code == 1 and "Traceback" not in err
    assert err.splitlines() == ["1 table violation:",
                                f"  - {tables / name}: row -: field -: [encoding] {CAUSE}"]


@pytest.mark.parametrize("argv", [["generate", "--level", "1", "--depth", "0", "--seed", "1"],
                                  ["nodemap", "draw", "--seed", "1"],
                                  ["calibrate", "--samples", "1"],
                                  ["advise", "--row", "1,0", "--samples", "1", "--probes", "1"]])
def test_every_command_reading_the_tables_says_it_in_one_violation(tables, capsys, argv, tmp_path):
    (tables / "board_gen.toml").write_bytes(NOT_UTF8)
    code, _, err = run(capsys, *argv, "--tables", str(tables),
                       *(["--warehouse", str(tmp_path / "wh")] if argv[0] == "calibrate" else []))
    assert code == 1 and "Traceback" not in err and f"{tables / 'board_gen.toml'}: row -: field -: " \
        f"[encoding] {CAUSE}" in err


def test_advise_apply_on_a_table_that_is_not_utf8(tables, capsys):
    path = tables / "board_gen.toml"
    path.write_bytes(NOT_UTF8)
    code, _, err = run(capsys, "advise", "--row", "1,0", "--apply", "--tables", str(tables))
    assert code == 1
    assert one_sentence(err) == (f"error: the table does not validate, so --apply writes nothing: {path}: row -: "
                                 f"field -: [encoding] {CAUSE}")
    assert path.read_bytes() == NOT_UTF8


def test_the_table_editor_reads_the_file_again_and_refuses_bytes_that_are_not_utf8(tables):
    """The editor reads the table again under its lock (another run may have
    written it since the advice): bytes that are not text are refused there."""
    path = tables / "board_gen.toml"
    path.write_bytes(NOT_UTF8)
    with pytest.raises(edit.EditRefused) as err:
        edit.apply_changes(path, [edit.RowChange((1, 0), "r0_max_cap", 50, 49)])
    assert str(err.value) == f"{path}: {CAUSE}; nothing written"
    assert path.read_bytes() == NOT_UTF8


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("wh")
    assert main(["calibrate", "--samples", "2", "--rows", "1,0 2,0", "--warehouse", str(root), "--workers", "1"]) == 0
    return root


def test_history_leaves_out_version_files_and_digests_that_are_not_what_was_written(warehouse, tmp_path, capsys):
    root = tmp_path / "wh"
    shutil.copytree(warehouse, root)
    version = next((root / "calibration_history" / "level_index=1" / "node_depth=0").glob("*.parquet"))
    version.write_bytes(NOT_UTF8)
    code, _, err = run(capsys, "history", "--row", "1,0", "--warehouse", str(root))
    assert code == 1 and one_sentence(err).startswith("error: row (1,0) has no published report version in ")
    assert "(1 damaged version file: `boardgen verify`)" in err
    digest = next((root / "_manifest" / "calibration_history" / "level_index=2" / "node_depth=0").glob("*.sha256"))
    digest.write_bytes(NOT_UTF8)
    code, _, err = run(capsys, "history", "--row", "2,0", "--warehouse", str(root))
    assert code == 1 and "(1 damaged version file" in one_sentence(err)


def test_sql_on_a_database_file_that_is_not_one(warehouse, tmp_path, capsys):
    root = tmp_path / "wh"
    shutil.copytree(warehouse, root)
    (root / "boardgen.duckdb").write_bytes(NOT_UTF8)
    code, _, err = run(capsys, "sql", "--warehouse", str(root), "select 1")
    assert code == 5  # a damaged warehouse file: the storage fault's code, as boardgen verify's
    assert one_sentence(err) == (f"error: storage fault at {root / 'boardgen.duckdb'}: not a DuckDB database file "
                                 "(damaged or overwritten: `boardgen calibrate` or `make run` writes it again).")


def test_sql_over_a_users_file_that_is_not_text(warehouse, tmp_path, capsys):
    f = tmp_path / "data.csv"
    f.write_bytes(b"a,b\n" + NOT_UTF8 + b",1\n")
    code, _, err = run(capsys, "sql", "--warehouse", str(warehouse), f"select * from read_csv('{f}')")
    assert code == 1 and one_sentence(err).startswith("error: SQL: Invalid Input Error: ")
