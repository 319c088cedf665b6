"""The ``boardgen diff`` of a proposed table edit (SPEC 12: the tuner's
proposal reviewed as any table change is; docs/review.md): the tables with
the edit against the tables as they are, every row paired on the same
scopes, computed on a copy so that nothing of the tables folder is written
(``boardgen tune --apply`` prints it beside the edit it writes; the ``tune``
job shows it as markdown)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from boardgen_pipeline.review import diff, sources
from boardgen_pipeline.tables.board_gen import DEFAULT_TABLE, BoardGenTable
from boardgen_pipeline.tables.edit import RowChange, apply_changes


def calibration_diff(tables_dir: Path | str, changes: Sequence[RowChange], based_on: BoardGenTable, samples: int,
                     master_seed: int = 0, root: Path | str | None = None) -> diff.CalibrationDiff:
    """The diff of ``tables_dir`` with ``changes`` made (on a copy) against
    ``tables_dir`` as it is; ``root``: the warehouse whose stored boards serve
    the unchanged side."""
    tables_dir = Path(tables_dir)
    with tempfile.TemporaryDirectory(prefix="boardgen-proposal-") as scratch:
        head_dir = Path(scratch) / "tables"
        shutil.copytree(tables_dir, head_dir)
        apply_changes(head_dir / DEFAULT_TABLE, changes, based_on=based_on)
        base = sources.from_folder(tables_dir, "BASE")
        head = sources.from_folder(head_dir, "HEAD")
        head.spec, head.label = f"{tables_dir} + proposal", f"tables folder {tables_dir} with the proposal"
        stored = Path(root) if root is not None and Path(root).is_dir() else None
        return diff.compare(base, head, diff.Settings(samples, master_seed), stored)
