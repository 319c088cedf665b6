"""``boardgen export --godot`` (SPEC 11: the calibrated tables reach the game
as Godot 4 text resources written by boardgen, stamped with the tables'
digest and the verdict): written on green, refused on a failing table
(exit 3, the rows named), byte-stable across runs and processes, a one-row
edit changing exactly that row's lines (and the stamp); GDScript that
gdtoolkit parses, lints and formats clean; resources that Godot's
text-resource grammar reads (godot-parser 0.1.7 where it can, this suite's
grammar check for ``;`` comments and typed arrays, which it cannot)."""

from __future__ import annotations

import difflib
import io
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import godot_parser
import pytest
from gdtoolkit.formatter import format_code
from gdtoolkit.linter import lint_code
from gdtoolkit.parser import parser as gd_parser
from pyparsing import ParseException

from boardgen_pipeline import cli
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.conformance import godot
from boardgen_pipeline.conformance.kit import KIT_VERSION
from boardgen_pipeline.export import godot as export

from . import godot_text
from .conformance_support import REPO
from .conftest import FIXTURES

SMALL = FIXTURES / "pipeline" / "small"
UNMEETABLE = FIXTURES / "pipeline" / "unmeetable"
SAMPLES = "4"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _calibrated(tables: Path, base: Path) -> Path:
    root = base / "warehouse"
    code, out, err = run("calibrate", "--tables", str(tables), "--samples", SAMPLES, "--warehouse", str(root))
    assert code in (0, 3), out + err
    return root


@pytest.fixture(scope="module")
def green(tmp_path_factory):
    base = tmp_path_factory.mktemp("green")
    tables = shutil.copytree(SMALL, base / "tables")
    return tables, _calibrated(tables, base)


@pytest.fixture(scope="module")
def failing(tmp_path_factory):
    base = tmp_path_factory.mktemp("failing")
    tables = shutil.copytree(UNMEETABLE, base / "tables")
    return tables, _calibrated(tables, base)


def _export(tables, root, target, *more) -> tuple[int, str, str]:
    return run("export", "--godot", str(target), "--tables", str(tables), "--warehouse", str(root),
               "--samples", SAMPLES, *more)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_green_table_is_exported_with_its_verdict(green, tmp_path):
    tables, root = green
    code, out, err = _export(tables, root, tmp_path / "godot")
    assert (code, err) == (0, "")
    verdict = f"green: all 3 rows pass F4 ({SAMPLES} boards a row, master seed 0)"
    files = _files(tmp_path / "godot")
    assert out == f"{len(files)} files written to {tmp_path / 'godot'} under the verdict {verdict}\n"
    assert set(files) == {"board_gen.tres", "variation.tres", "resource_weights.tres",
                          *(c.file for c in godot.CLASSES)}
    from boardgen_pipeline.calibration.fingerprints import tables_digest

    digest = tables_digest(tables)[0]
    for cls in godot.CLASSES:  # every file carries the stamp: the scripts in comments
        assert f"# Exported from tables digest {digest}, kit version {KIT_VERSION}, calibration verdict: green" in \
            files[cls.file].decode()
    for name in ("board_gen.tres", "variation.tres", "resource_weights.tres"):
        text = files[name].decode()
        assert f'calibration_verdict = "{verdict}"' in text
        assert f'tables_digest = "{digest}"' in text and f"kit_version = {KIT_VERSION}" in text
        assert f"; tables digest {digest}, kit version {KIT_VERSION}, calibration verdict: {verdict}" in text
        assert "TOML" in text and "do not edit" in text


def test_a_failing_table_is_refused_with_its_rows_named(failing, tmp_path):
    tables, root = failing
    target = tmp_path / "godot"
    code, out, err = _export(tables, root, target)
    assert (code, out) == (3, "")
    assert err == ("refused: the tables' last calibration is not green, so nothing was exported: failing: 1 of 2 rows "
                   f"(1-1: A) ({SAMPLES} boards a row, master seed 0); calibrate them (boardgen calibrate), or pass "
                   "--allow-failing to export them stamped failing\n")
    assert not target.exists()
    code, out, err = _export(tables, root, target, "--allow-failing")
    assert code == 0
    assert 'calibration_verdict = "failing: 1 of 2 rows (1-1: A)' in (target / "board_gen.tres").read_text()


def test_an_uncalibrated_table_is_refused(tmp_path):
    code, out, err = _export(SMALL, tmp_path / "empty_warehouse", tmp_path / "godot")
    assert code == 3 and "1-0: not calibrated; 1-1: not calibrated; 2-0: not calibrated" in err
    assert not (tmp_path / "godot").exists()


def test_an_export_target_that_is_a_file_is_one_sentence_and_nothing_written(green, tmp_path):
    tables, root = green
    target = tmp_path / "a_file"
    target.write_text("keep")
    code, out, err = _export(tables, root, target)
    assert (code, out, err) == (1, "", f"error: {target} is a file; the Godot resources go into a folder\n")
    assert target.read_text() == "keep"
    code, out, err = _export(tables, root, target / "inside")
    assert (code, err) == (1, f"error: {target} is a file; the Godot resources go into a folder\n")


def test_the_bytes_are_the_same_across_runs_and_processes(tmp_path):
    catalog = load_catalog(REPO / "tables")
    first = export.texts(catalog, "green: test")
    assert export.texts(load_catalog(REPO / "tables"), "green: test") == first
    code = ("import json,sys; from boardgen_pipeline.catalog import load_catalog; "
            "from boardgen_pipeline.export.godot import texts; "
            f"json.dump(texts(load_catalog({str(REPO / 'tables')!r}), 'green: test'), sys.stdout)")
    copy = shutil.copytree(REPO / "tables", tmp_path / "elsewhere")  # another folder, the same tables
    other = subprocess.run([sys.executable, "-c", code.replace(str(REPO / "tables"), str(copy))],
                           capture_output=True, text=True, check=True, timeout=600)
    import json

    assert json.loads(other.stdout) == first


def test_a_one_row_edit_changes_exactly_that_rows_lines(tmp_path):
    tables = shutil.copytree(REPO / "tables", tmp_path / "tables")
    before = export.texts(load_catalog(tables), "v")["board_gen.tres"].splitlines()
    path = tables / "board_gen.toml"
    text = path.read_text()
    anchor = "level_index = 2\nnode_depth = 3\n"
    at = text.index(anchor)
    edited = text[:at] + text[at:].replace("mine_density = 0.23", "mine_density = 0.235", 1)
    assert edited != text
    path.write_text(edited)
    after = export.texts(load_catalog(tables), "v")["board_gen.tres"].splitlines()
    changed = [line for line in difflib.unified_diff(before, after, n=0, lineterm="")
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    stamp = [line for line in changed if "tables digest" in line or line[1:].startswith("tables_digest")]
    assert len(stamp) == 4  # the comment and the property, each - and +
    rest = [line for line in changed if line not in stamp]
    assert rest == ["-mine_density = 0.23", "+mine_density = 0.235"]
    # and those lines are the (2,3) row's block
    row_block = before[before.index('[sub_resource type="Resource" id="BoardGenRow_2_3"]'):]
    assert "mine_density = 0.23" in row_block[:row_block.index("")]


def test_reserved_fields_are_carried_in_the_rows_dictionary_and_nowhere_else(tmp_path):
    tables = shutil.copytree(REPO / "tables", tmp_path / "tables")
    path = tables / "board_gen.toml"
    text = path.read_text()
    at = text.index("level_index = 2\nnode_depth = 3\n")
    path.write_text(text[:at] + text[at:].replace("r0_max_cap = ", "boss_bonus_gold = 7\nr0_max_cap = ", 1))
    lines = export.texts(load_catalog(tables), "v")["board_gen.tres"].splitlines()
    block = lines[lines.index('[sub_resource type="Resource" id="BoardGenRow_2_3"]'):]
    block = block[:block.index("")]
    assert block[-3:] == ["reserved = {", '"boss_bonus_gold": 7', "}"]  # the row's dictionary, Godot's layout
    assert sum("boss_bonus_gold" in line for line in lines) == 1  # no other row, no field of its own


def test_the_gdscript_parses_lints_and_formats_clean():
    stamp = godot.stamp("0123456789abcdef", 1, "failing: 3 of 15 rows (1-0: A; 1-2: A, B; 2-4: not calibrated) "
                        "(256 boards a row, master seed 0)", "tables/board_gen.toml")
    for cls in godot.CLASSES:
        text = godot.script(cls, stamp)
        gd_parser.parse(text)  # raises on a syntax error
        assert lint_code(text) == [], cls.file
        assert format_code(text, max_line_length=100) == text, cls.file
        assert f"class_name {cls.name}\nextends Resource\n" in text
        for f in cls.fields:
            assert re.search(rf"^@export(?:_\w+\(.*\))? var {f.name}: {re.escape(f.type)} = ", text, re.M), \
                (cls.file, f.name)
        assert "# Exported from tables digest 0123456789abcdef, kit version 1, calibration verdict: failing" in text
    row = godot.script(godot.ROW, stamp)
    assert "@export_range(8, 64) var board_width: int = 8" in row
    assert '@export_enum("dungeon", "underdark", "deep_underdark") var board_type: String = "dungeon"' in row


def test_a_gdscript_fault_is_caught():
    """The checks above fire: a broken script does not parse, a bad name lints."""
    from lark.exceptions import LarkError

    with pytest.raises(LarkError):
        gd_parser.parse("class_name X\nextends Resource\n@export var : int = 1\n")
    assert lint_code("class_name bad_name\nextends Resource\n") != []


def _strip_for_godot_parser(text: str) -> str:
    """What godot-parser 0.1.7 reads: no ``;`` comment lines, typed arrays unwrapped to plain ones."""
    text = re.sub(r"(?m)^;.*\n", "", text)
    return re.sub(r'Array\[(?:\w+|ExtResource\("[^"]*"\))\]\((\[.*?\])\)', r"\1", text)


@pytest.mark.parametrize("name", ["board_gen.tres", "variation.tres", "resource_weights.tres", "nodemap_level_1.tres"])
def test_the_resources_read_as_godot_text_resources(name):
    catalog = load_catalog(REPO / "tables")
    text = export.texts(catalog, "green: test")[name]
    parsed = godot_text.check(text)
    res = godot_parser.parse(_strip_for_godot_parser(text))
    sections = res.get_sections()
    assert sections[0].header.name == "gd_resource" and sections[0].header["format"] == 3
    assert [s.header.name for s in sections][-1] == "resource"
    assert len([s for s in sections if s.header.name == "sub_resource"]) == len(parsed["sub"])
    if name == "board_gen.tres":
        table = catalog.board_gen
        subs = {s.header["id"]: s for s in sections if s.header.name == "sub_resource"}
        for (level, depth), row in table.rows.items():
            s = subs[f"BoardGenRow_{level}_{depth}"]
            for f in godot.ROW.fields:
                want = getattr(row, f.name, None)
                if f.name in ("reserved", "min_mean_survival") or want == f.default:
                    assert f.name not in s.properties or f.name in ("reserved", "min_mean_survival")
                    continue
                assert s[f.name] == want, (level, depth, f.name)


def test_the_grammar_check_catches_what_godot_parser_cannot_read():
    text = export.texts(load_catalog(REPO / "tables"), "green: test")["board_gen.tres"]
    with pytest.raises(ParseException):
        godot_parser.parse(text)  # the comments and the typed arrays: what godot-parser 0.1.7 cannot read
    faults = {
        "a String in an Array of rows": text.replace('[SubResource("BoardGenRow_1_0"), ', '["x", '),
        "a sub_resource used before it is declared": text.replace('SubResource("BoardGenRow_1_0")',
                                                                  'SubResource("BoardGenRow_9_9")'),
        "a wrong load_steps": text.replace("load_steps=", "load_steps=1"),
        "format 2": text.replace("format=3", "format=2"),
        "a typed array of another script": text.replace('Array[ExtResource("2_board_gen_row")]',
                                                        'Array[ExtResource("1_board_gen_table")]'),
    }
    for what, bad in faults.items():
        assert bad != text, what
        with pytest.raises(godot_text.GrammarError):
            godot_text.check(bad)


def test_the_nightly_exports_on_green(small_nightly):
    root, tables, samples = small_nightly["root"], small_nightly["tables"], small_nightly["samples"]
    written = _files(root / export.NIGHT_FOLDER)
    verdict = f"green: all 3 rows pass F4 ({samples} boards a row, master seed 0)"
    assert written == {name: text.encode() for name, text in export.texts(load_catalog(tables), verdict).items()}


def test_a_failing_night_exports_nothing(failing):
    tables, root = failing
    verdict, files = export.export_on_green(root, load_catalog(tables), int(SAMPLES))
    assert (verdict.green, files) == (False, [])
    assert not (root / export.NIGHT_FOLDER).exists()
