"""Tables and warehouses for the calibration diff's tests (docs/review.md):
the repo's tables grown to more levels, a row's field edited in place, a
warehouse calibrated by the library's own publishing path."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROW = re.compile(r"(?m)^(?=\[\[rows\]\])")


def grown_tables(dest: Path, levels: int) -> Path:
    """``board_gen.toml`` of the repo with ``levels`` levels of 5 rows (levels
    4.. copy level 3's rows), alone in ``dest`` (no other table: the diff
    compares board rows)."""
    text = (REPO / "tables" / "board_gen.toml").read_text(encoding="utf-8")
    head, *blocks = ROW.split(text)
    level_of = [int(re.search(r"(?m)^level_index\s*=\s*(\d+)", b).group(1)) for b in blocks]
    kept = [b for b, lv in zip(blocks, level_of) if lv <= levels]
    level3 = [b for b, lv in zip(blocks, level_of) if lv == 3]
    for lv in range(4, levels + 1):
        kept += [re.sub(r"(?m)^level_index\s*=\s*3\b", f"level_index = {lv}", b) for b in level3]
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "board_gen.toml").write_text(head + "".join(kept), encoding="utf-8")
    return dest


def copy_tables(dest: Path) -> Path:
    shutil.copytree(REPO / "tables", dest)
    return dest


def row_block(text: str, key: tuple[int, int]) -> tuple[int, int]:
    """Where row ``key``'s ``[[rows]]`` entry starts and ends in the table's text."""
    starts = [m.start() for m in ROW.finditer(text)] + [len(text)]
    for a, b in zip(starts, starts[1:]):
        block = text[a:b]
        if (re.search(rf"(?m)^level_index\s*=\s*{key[0]}\b", block)
                and re.search(rf"(?m)^node_depth\s*=\s*{key[1]}\b", block)):
            return a, b
    raise KeyError(key)


def field_of(path: Path, key: tuple[int, int], name: str) -> str:
    text = path.read_text(encoding="utf-8")
    a, b = row_block(text, key)
    return re.search(rf"(?m)^{name}\s*=\s*([^#\n]*?)\s*(#.*)?$", text[a:b]).group(1)


def set_field(path: Path, key: tuple[int, int], name: str, value) -> None:
    """Row ``key``'s ``name = value`` (added when the row has none)."""
    text = path.read_text(encoding="utf-8")
    a, b = row_block(text, key)
    block = text[a:b]
    literal = f'"{value}"' if isinstance(value, str) else repr(value)
    line = re.compile(rf"(?m)^{name}\s*=.*$")
    block = line.sub(f"{name} = {literal}", block) if line.search(block) else block.rstrip("\n") + \
        f"\n{name} = {literal}\n\n"
    path.write_text(text[:a] + block + text[b:], encoding="utf-8")


def calibrate(tables: Path, root: Path, samples: int, keys=None) -> Path:
    """Calibrate ``keys`` (default: every row) into ``root`` through the
    library's publishing path, as ``boardgen calibrate`` does, in this process."""
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.steps.publish_rows import publish_rows
    from boardgen_pipeline.warehouse import views

    catalog = load_catalog(tables)
    publish_rows(root, catalog, keys or catalog.board_gen.keys(), samples)
    views.refresh_views_atomic(root)
    return root
