"""Tables of any shape end in a TableError listing violations, never in a
traceback (every table is first checked for shape).

Hypothesis feeds every table loader, and ``boardgen validate``, documents of
arbitrary shape and the shipped tables with values of the wrong kind
anywhere inside; the named cases once reported are regression tests.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.cli import main
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.nodemap.templates import load_pool_file
from boardgen_pipeline.tables.board_gen import load_board_gen
from boardgen_pipeline.variants.skew import load_resource_weights
from boardgen_pipeline.variants.table import load_variation_table
from tests.toml_documents import documents, dump, mutated, read

TABLES = Path(__file__).resolve().parent.parent / "tables"

BASES = {
    "board_gen.toml": read(TABLES / "board_gen.toml"),
    "variation.toml": read(TABLES / "variation.toml"),
    "resource_weights.toml": read(TABLES / "resource_weights.toml"),
    "nodemaps/level_1.toml": read(TABLES / "nodemaps" / "level_1.toml"),
}

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load(name: str, path: Path):
    if name == "board_gen.toml":
        return load_board_gen(path)
    if name == "variation.toml":
        return load_variation_table(path)
    if name == "resource_weights.toml":
        return load_resource_weights(path)
    pool, violations = load_pool_file(path)
    if violations:
        raise TableError(violations)
    return pool


def _only_table_errors(name: str, doc: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(doc), encoding="utf-8")
        try:
            _load(name, path)
        except TableError as exc:
            assert exc.violations
            for v in exc.violations:
                assert v.file == str(path) and v.rule and v.message
                str(v)  # every violation prints


@pytest.mark.parametrize("name", sorted(BASES))
@FUZZ
@given(data=st.data())
def test_any_document_gives_violations_not_a_traceback(name, data):
    _only_table_errors(name, data.draw(documents))


@pytest.mark.parametrize("name", sorted(BASES))
@FUZZ
@given(data=st.data())
def test_a_shipped_table_with_any_value_replaced_gives_violations(name, data):
    _only_table_errors(name, data.draw(mutated(BASES[name])))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(BASES)), data=st.data())
def test_validate_on_any_broken_table_exits_1_with_the_report(name, data):
    """The exact verdict: exit 1 with the loaders' report (every violation of
    the file's own loader among it) when the tables do not load together,
    else exit 0 with the ``ok`` lines (a mutation may leave a valid table)."""
    doc = data.draw(mutated(BASES[name]))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tables"
        shutil.copytree(TABLES, root)
        (root / name).write_text(dump(doc), encoding="utf-8")
        try:
            _load(name, root / name)
            own = []
        except TableError as exc:
            own = exc.violations
        try:
            load_catalog(root)
            report = None
        except TableError as exc:
            report = exc.report()
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["validate", "--tables", str(root)])
        if report is None:
            assert not own
            assert (code, err.getvalue()) == (0, "")
            assert f"ok: {root / 'board_gen.toml'}: " in out.getvalue()
        else:
            assert (code, err.getvalue(), out.getvalue()) == (1, report + "\n", "")
            # whole lines of the report, found as text: a key may hold a line break of its own
            assert all(f"\n  - {v}\n" in f"\n{report}\n" for v in own)


# --- the reported cases, through `boardgen validate` and `boardgen calibrate` ---------------------

HEADER = '[header]\nspawn_side = 3  # odd side of the mine-free spawn square (3 or 5)\n'
FIRST_KEY = "level_index = 1\nnode_depth = 0\n"

CASES = {
    # name: (edit of board_gen.toml, (row, field, rule) that must be reported, the whole report's lines)
    "header = 3": (lambda t: "header = 3\n" + t.replace(HEADER, "").replace("monotone_in_depth", "# "),
                   ("header", "header", "shape"),
                   ["row header: field header = 3: [shape] [header] must be a table, got an integer"]),
    "[[header]]": (lambda t: t.replace("[header]", "[[header]]"), ("header", "header", "shape"),
                   ["row header: field header = [{'spawn_side': 3, 'monotone_in_depth': ['mine_density', "
                    "'inferability_target']}]: [shape] [header] must be a table, got an array of tables; write "
                    "[header], not [[header]]"]),
    "rows = [1, 2]": (lambda t: "rows = [1, 2]\n" + t.split("\n[[rows]]")[0], ("#2", "rows", "shape"),
                      ["row #1: field rows = 1: [shape] entry #1 of rows must be a table, got an integer",
                       "row #2: field rows = 2: [shape] entry #2 of rows must be a table, got an integer"]),
    "level_index = [1]": (lambda t: t.replace(FIRST_KEY, "level_index = [1]\nnode_depth = 0\n", 1),
                          ("#1", "level_index", "shape"),
                          ["row #1: field level_index = [1]: [shape] key field level_index must be an integer, "
                           "got an array"]),
    "node_depth = [0]": (lambda t: t.replace(FIRST_KEY, "level_index = 1\nnode_depth = [0]\n", 1),
                         ("#1", "node_depth", "shape"),
                         ["row #1: field node_depth = [0]: [shape] key field node_depth must be an integer, "
                          "got an array"]),
    "level_index = {a = 1}": (lambda t: t.replace(FIRST_KEY, "level_index = {a = 1}\nnode_depth = 0\n", 1),
                              ("#1", "level_index", "shape"),
                              ["row #1: field level_index = {'a': 1}: [shape] key field level_index must be an "
                               "integer, got a table"]),
    "level_index = true": (lambda t: t.replace(FIRST_KEY, "level_index = true\nnode_depth = 0\n", 1),
                           ("#1", "level_index", "shape"),
                           ["row #1: field level_index = True: [shape] key field level_index must be an integer, "
                            "got a boolean"]),
    "[rows]": (lambda t: t.split("\n[[rows]]")[0] + "[rows]\nlevel_index = 1\n", ("-", "rows", "shape"),
               ["row -: field rows = {'level_index': 1}: [shape] rows must be an array of tables ([[rows]]), got a "
                "table; write [[rows]], not [rows]"]),
}


def report(path: Path, lines: list[str]) -> str:
    """The report ``boardgen validate`` prints for ``lines`` of one file, on stderr."""
    head = f"{len(lines)} table violation{'s' if len(lines) != 1 else ''}:"
    return "\n".join([head, *(f"  - {path}: {line}" for line in lines)]) + "\n"


def _tables_with(tmp_path: Path, name: str, text: str) -> Path:
    root = tmp_path / "tables"
    shutil.copytree(TABLES, root)
    (root / name).write_text(text, encoding="utf-8")
    return root


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_bad_shape_of_the_issue_is_a_violation_in_validate(tmp_path, case):
    edit, (row, field, rule), lines = CASES[case]
    root = _tables_with(tmp_path, "board_gen.toml", edit((TABLES / "board_gen.toml").read_text(encoding="utf-8")))
    code, out, err = _run(["validate", "--tables", str(root)])
    assert (code, out) == (1, "")
    assert err == report(root / "board_gen.toml", lines)
    assert any(line.startswith(f"row {row}: field {field} = ") and f": [{rule}] " in line for line in lines)


@pytest.mark.parametrize("case", ["header = 3", "rows = [1, 2]", "level_index = [1]", "[[header]]"])
def test_calibrate_stops_on_a_bad_shape_and_writes_nothing(tmp_path, case):
    edit, _, lines = CASES[case]
    root = _tables_with(tmp_path, "board_gen.toml", edit((TABLES / "board_gen.toml").read_text(encoding="utf-8")))
    warehouse = tmp_path / "warehouse"
    code, out, err = _run(["calibrate", "--tables", str(root), "--warehouse", str(warehouse), "--samples", "2"])
    assert (code, out, err) == (1, "", report(root / "board_gen.toml", lines))
    assert not warehouse.exists() or not any(warehouse.rglob("*"))


def test_a_key_of_the_wrong_kind_is_reported_once_with_the_other_violations(tmp_path):
    text = (TABLES / "board_gen.toml").read_text(encoding="utf-8")
    text = text.replace(FIRST_KEY, "level_index = [1]\nnode_depth = 0\n", 1).replace("[header]", "[[header]]")
    path = tmp_path / "board_gen.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as err:
        load_board_gen(path)
    found = [(v.row, v.field, v.rule) for v in err.value.violations]
    assert ("header", "header", "shape") in found
    assert found.count(("#1", "level_index", "shape")) == 1
    assert not any(v.field == "level_index" and v.rule == "domain" for v in err.value.violations)
    header = next(v for v in err.value.violations if v.field == "header")
    assert "write [header], not [[header]]" in header.message


def test_a_utf8_bom_is_accepted(tmp_path):
    for name in ("board_gen.toml", "variation.toml", "resource_weights.toml", "nodemaps/level_1.toml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"\xef\xbb\xbf" + (TABLES / name).read_bytes())
    shutil.copy(TABLES / "nodemaps" / "level_2.toml", tmp_path / "nodemaps")
    shutil.copy(TABLES / "nodemaps" / "level_3.toml", tmp_path / "nodemaps")
    bom = load_catalog(tmp_path)
    plain = load_catalog(TABLES)
    assert bom.board_gen.rows == plain.board_gen.rows
    assert bom.variation.types == plain.variation.types
    assert bom.resources.rows == plain.resources.rows
    assert [t.id for t in bom.pools[1].templates] == [t.id for t in plain.pools[1].templates]


OTHER_TABLES = {
    # other tables: (file, text, the whole report's lines) for a wrong shape of their containers
    "variation header = 3": ("variation.toml", "header = 3\n",
                             ["row header: field header = 3: [shape] [header] must be a table, got an integer"]),
    "variation [[header]]": ("variation.toml", "[[header]]\npercent_of_cells = 8\n",
                             ["row header: field header = [{'percent_of_cells': 8}]: [shape] [header] must be a "
                              "table, got an array of tables; write [header], not [[header]]"]),
    "variation types = [1]": ("variation.toml", "types = [1]\n[header]\npercent_of_cells = 8\nper_level_bonus = 1\n"
                              "pack_min = 2\npack_max = 4\n",
                              ["row #1: field types = 1: [field_type] each [[types]] entry must be a table, got an "
                               "integer"]),
    "resources = 3": ("resource_weights.toml", "resources = 3\n",
                      ["row -: field resources = 3: [field_type] resources must be [[resources]] tables"]),
    "resources = [1]": ("resource_weights.toml", "resources = [1]\n",
                        ["row #1: field - = 1: [field_type] each [[resources]] entry must be a table"]),
    "nodemap level = [1]": ("nodemaps/level_1.toml", "level = [1]\n",
                            ["row -: field level = [1]: [bad_value] level is an integer >= 1"]),
    "nodemap templates = 3": ("nodemaps/level_1.toml", "level = 1\ntemplates = 3\n",
                              ["row -: field templates = 3: [bad_value] templates is an array of tables ([[templates]])",
                               "row level 1: field templates = 0: [empty_pool] level 1: a pool holds N >= 1 templates"]),
    "nodemap [[procedural]]": ("nodemaps/level_1.toml", "level = 1\n[[procedural]]\nenabled = false\n",
                               ["row level 1/procedural: field procedural = [{'enabled': False}]: [bad_value] "
                                "[procedural] is a table",
                                "row level 1: field templates = 0: [empty_pool] level 1: a pool holds N >= 1 "
                                "templates"]),
}


@pytest.mark.parametrize("case", sorted(OTHER_TABLES))
def test_the_other_tables_report_a_wrong_shape_in_validate(tmp_path, case):
    name, text, lines = OTHER_TABLES[case]
    root = _tables_with(tmp_path, name, text)
    code, out, err = _run(["validate", "--tables", str(root)])
    assert (code, out, err) == (1, "", report(root / name, lines))


def test_a_table_path_that_is_a_directory_or_a_broken_link_is_a_violation(tmp_path):
    (tmp_path / "board_gen.toml").mkdir()
    with pytest.raises(TableError) as err:
        load_board_gen(tmp_path / "board_gen.toml")
    assert [v.rule for v in err.value.violations] == ["file_missing"]
    link = tmp_path / "variation.toml"
    link.symlink_to(tmp_path / "nowhere" / "variation.toml")
    with pytest.raises(TableError) as err:
        load_variation_table(link)
    assert [v.rule for v in err.value.violations] == ["file_missing"]
