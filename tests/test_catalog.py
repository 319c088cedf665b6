"""All tables together: `boardgen validate`, cross-table content
discipline, `generate --variants`, `nodemap draw` (SPEC 2.7, 3, 4, 8)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from boardgen_pipeline.board.generator import generate
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.catalog import load_catalog
from boardgen_pipeline.errors import TableError
from boardgen_pipeline.variants.checks import check_overlay, count_issues
from boardgen_pipeline.variants.overlays import overlay_for

from .conftest import REPO


def run(*args):
    return subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", *args], capture_output=True, text=True)


def test_validate_covers_every_table():
    p = run("validate")
    assert p.returncode == 0, p.stderr
    for word in ("board_gen.toml", "variation.toml", "resource_weights.toml", "node-map pools"):
        assert word in p.stdout


def test_content_discipline_across_tables(tmp_path):
    """Drop the board_gen rows of depth 2: every battle node at depth 2 in
    the templates now lacks its row; all are reported together with the
    board_gen problems, and the CLI exits 1 without a traceback."""
    tables = tmp_path / "tables"
    shutil.copytree(REPO / "tables", tables)
    text = (tables / "board_gen.toml").read_text()
    blocks = text.split("\n[[rows]]\n")
    kept = [b for b in blocks[1:] if "node_depth = 2\n" not in b]
    (tables / "board_gen.toml").write_text("\n[[rows]]\n".join([blocks[0], *kept]))
    (tables / "curve_targets.toml").unlink()  # its targets name the depth-2 rows too (tests/test_curve_targets.py)
    with pytest.raises(TableError) as exc:
        load_catalog(tables)
    assert {v.rule for v in exc.value.violations} == {"missing_board_gen_row"}
    # every level's templates have battle nodes at depth 2
    assert {v.file.rsplit("/", 1)[-1] for v in exc.value.violations} == {"level_1.toml", "level_2.toml", "level_3.toml"}
    p = run("validate", "--tables", str(tables))
    assert p.returncode == 1 and "Traceback" not in p.stderr


def test_generate_with_variants_json_and_text():
    p = run("generate", "--level", "2", "--depth", "1", "--seed", "2", "--variants", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    ov = out["overlay"]
    assert ov["stream_label"] == "variant_place" and ov["stream_scope"] == 2
    mines = out["layout"].replace("/", "")
    assert all(mines[c] == "." for c in ov["cells"])
    text = run("generate", "--level", "2", "--depth", "1", "--seed", "2", "--variants").stdout
    assert "variant" in text


def test_overlays_of_generated_boards_pass_the_overlay_checks():
    cat = load_catalog()
    for key in cat.board_gen.keys():
        for scope in range(6):
            board, m = generate(*key, scope, table=cat.board_gen)
            ov = overlay_for(board, m, cat.board_gen, cat.variation)
            r0 = reveal_r0(board.mines, board.width, board.height, 3)
            assert not set(ov.cells) & set(board.fog)
            assert count_issues(check_overlay(board, r0, ov)) == {k: 0 for k in count_issues(check_overlay(board, r0, ov))}


def test_nodemap_draw_cli():
    a = run("nodemap", "draw", "--seed", "3")
    b = run("nodemap", "draw", "--seed", "3")
    first = run("nodemap", "draw", "--seed", "3", "--first-adventure")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert a.stdout.count("level ") >= 3 and "boss" in a.stdout
    assert first.stdout != a.stdout
