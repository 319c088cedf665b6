"""Tables of any shape end in a TableError listing violations, never in a
traceback (issue 15 "Every table is first checked for shape").

Hypothesis feeds every table loader, and ``boardgen validate``, documents of
arbitrary shape and the shipped tables with values of the wrong kind
anywhere inside; the named cases of the issue are regression tests.
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
from boardgen_pipeline.nodemap.templates import load_pool_file, read_pools
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

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
    doc = data.draw(mutated(BASES[name]))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tables"
        shutil.copytree(TABLES, root)
        (root / name).write_text(dump(doc), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["validate", "--tables", str(root)])
        assert code in (0, 1)
        if code == 1:
            assert "table violation" in err.getvalue()
