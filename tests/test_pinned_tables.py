"""A night calibrates the tables it started with (``steps.pinned_tables``):
a copy per content, made once, read by every run of the night, let go by
retention when no night has used it for two days."""

from __future__ import annotations

import time

from boardgen_pipeline.calibration.fingerprints import tables_digest
from boardgen_pipeline.steps import pinned_tables

from .test_pipeline_support import copy_fixture


def test_the_same_tables_pin_to_one_copy_and_an_edit_pins_another(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    first = pinned_tables.pin(root, tables)
    assert first == pinned_tables.pin(root, tables) == root / "_tables" / tables_digest(tables)[0]
    assert tables_digest(first) == tables_digest(tables)
    path = tables / "board_gen.toml"
    path.write_text(path.read_text() + "\n# an edit at 03:00\n")
    second = pinned_tables.pin(root, tables)
    assert second != first and tables_digest(second) == tables_digest(tables)
    assert "# an edit at 03:00" not in (first / "board_gen.toml").read_text()  # the night's copy did not move
    assert not [p for p in (root / "_tables").iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_retention_lets_go_of_copies_no_night_used_for_two_days_but_the_current_one(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    old = pinned_tables.pin(root, tables)
    (tables / "board_gen.toml").write_text((tables / "board_gen.toml").read_text() + "\n# edited\n")
    new = pinned_tables.pin(root, tables)
    later = time.time() + pinned_tables.KEEP_SECONDS + 60
    assert pinned_tables.forget(root, {new.name}, now=later) == [old.name]
    assert new.is_dir() and not old.exists()
    assert pinned_tables.forget(root, set(), now=time.time()) == []  # a young copy stays (a night may run)
