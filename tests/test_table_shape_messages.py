"""The shape checks' and the TOML reader's violations whole (one
clear sentence naming file, row, field, value and rule; asked by
the mutation run of ``tables/shape.py`` and ``tables/tomlio.py``:
docs/testing.md). tests/test_table_shapes.py feeds every document shape to
every loader and checks a violation comes out; here each message, value and
hint is held to what a designer must read."""

from __future__ import annotations

import datetime
import os

import pytest

from boardgen_pipeline.errors import TableError
from boardgen_pipeline.tables.shape import SHAPE, array_of_tables, int_key_violation, kind, table_violation
from boardgen_pipeline.tables.tomlio import load_toml

KINDS = [
    (True, "a boolean"), (1, "an integer"), (1.5, "a float"), ("x", "a string"),
    (datetime.date(2026, 1, 2), "a date/time"), (datetime.time(3, 4), "a date/time"), ({}, "a table"),
    ([{}], "an array of tables"), ([{}, 1], "an array"), ([1], "an array"), ([], "an array"), (None, "NoneType"),
]


@pytest.mark.parametrize("value,words", KINDS, ids=[w + f" {i}" for i, (_, w) in enumerate(KINDS)])
def test_each_toml_kind_in_words(value, words):
    assert kind(value) == words


def whole(v) -> tuple:
    return (v.file, v.row, v.field, v.value, v.rule, v.message)


def test_a_header_written_as_an_array_of_tables_gets_the_fix():
    assert table_violation("t.toml", "-", "header", {"a": 1}, "header") is None
    assert whole(table_violation("t.toml", "-", "header", [{"a": 1}], "header")) == (
        "t.toml", "-", "header", [{"a": 1}], SHAPE, "[header] must be a table, got an array of tables; "
                                                      "write [header], not [[header]]")
    assert whole(table_violation("t.toml", "-", "header", [1], "header")) == (
        "t.toml", "-", "header", [1], SHAPE, "[header] must be a table, got an array")
    assert whole(table_violation("t.toml", "(1,0)", "header", 3, "header")) == (
        "t.toml", "(1,0)", "header", 3, SHAPE, "[header] must be a table, got an integer")


def test_rows_written_as_one_table_get_the_fix_and_bad_entries_are_each_named():
    found = []
    assert array_of_tables("t.toml", "rows", {"a": 1}, found) == []
    assert array_of_tables("t.toml", "rows", "x", found) == []
    assert [whole(v) for v in found] == [
        ("t.toml", "-", "rows", {"a": 1}, SHAPE, "rows must be an array of tables ([[rows]]), got a table; "
                                                  "write [[rows]], not [rows]"),
        ("t.toml", "-", "rows", "x", SHAPE, "rows must be an array of tables ([[rows]]), got a string"),
    ]
    found = []
    assert array_of_tables("t.toml", "rows", [{"a": 1}, 7, {"b": 2}, [1]], found) == [(1, {"a": 1}), (3, {"b": 2})]
    assert [whole(v) for v in found] == [
        ("t.toml", "#2", "rows", 7, SHAPE, "entry #2 of rows must be a table, got an integer"),
        ("t.toml", "#4", "rows", [1], SHAPE, "entry #4 of rows must be a table, got an array"),
    ]


def test_a_key_field_must_be_a_plain_integer():
    assert int_key_violation("t.toml", "(1,0)", "level_index", 1) is None
    assert int_key_violation("t.toml", "(1,0)", "level_index", None) is None  # missing: another rule's
    assert whole(int_key_violation("t.toml", "(1,0)", "level_index", True)) == (
        "t.toml", "(1,0)", "level_index", True, SHAPE, "key field level_index must be an integer, got a boolean")
    assert whole(int_key_violation("t.toml", "(1,0)", "node_depth", "0")) == (
        "t.toml", "(1,0)", "node_depth", "0", SHAPE, "key field node_depth must be an integer, got a string")


def refusal(path) -> tuple:
    with pytest.raises(TableError) as caught:
        load_toml(path)
    (v,) = caught.value.violations
    return whole(v)


def test_a_missing_file_a_folder_and_an_unreadable_file(tmp_path):
    assert refusal(tmp_path / "none.toml") == (str(tmp_path / "none.toml"), "-", "-", None, "file_missing",
                                               "table file not found")
    assert refusal(tmp_path) == (str(tmp_path), "-", "-", None, "file_missing", "a directory, not a table file")
    loop = tmp_path / "loop.toml"
    os.symlink(loop, loop)  # a link to itself: unreadable even for root
    assert refusal(loop) == (str(loop), "-", "-", None, "file_unreadable",
                             "cannot read: Too many levels of symbolic links")


def test_bad_text_and_bad_syntax_name_the_file(tmp_path):
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"a = '\xe9'\n")
    file, row, field, value, rule, message = refusal(latin)
    assert (file, row, field, value, rule) == (str(latin), "-", "-", None, "encoding")
    assert message == "not UTF-8 text (byte 0xe9 at offset 5: invalid continuation byte); save it as UTF-8"
    broken = tmp_path / "broken.toml"
    broken.write_text("a = \n", encoding="utf-8")
    file, row, field, value, rule, message = refusal(broken)
    assert (file, row, field, value, rule) == (str(broken), "-", "-", None, "toml_syntax")
    assert "line 1" in message
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbfa = 1\n")  # a byte-order mark is not part of the text
    assert load_toml(bom) == {"a": 1}
