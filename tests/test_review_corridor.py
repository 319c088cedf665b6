"""``boardgen diff`` and ``watch`` name the rows a change takes out of their
corridor (SPEC 12; review.corridor): judged by the corridor's one rule on
the diff's own boards, printed in the diff's notes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from boardgen_pipeline.review import diff, watch

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "pipeline" / "small"
TARGETS = '[[targets]]\nrows = ["1,0", "1,1"]\nfigure = "win_rate"\nvalue = 0.9\ntolerance = 0.1\n'


def folders(tmp_path) -> tuple[Path, Path]:
    base, head = tmp_path / "base", tmp_path / "head"
    for folder in (base, head):
        shutil.copytree(FIXTURE, folder)
        (folder / "curve_targets.toml").write_text(TARGETS)
    text = (head / "board_gen.toml").read_text()
    # (1,0) from 0.21 to 0.3 of mines (a win rate near 0.63: out of 0.9 +- 0.1); (1,1) 0.2 -> 0.21 (stays in)
    text = text.replace("mine_density = 0.21", "mine_density = 0.3", 1).replace("mine_density = 0.2\n",
                                                                                "mine_density = 0.21\n", 1)
    (head / "board_gen.toml").write_text(text)
    return base, head


def test_diff_names_the_row_that_leaves_its_corridor(tmp_path):
    base, head = folders(tmp_path)
    done = subprocess.run([sys.executable, "-m", "boardgen_pipeline.cli", "diff", str(base), str(head), "--samples",
                           "64", "--format", "json", "--warehouse", str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    notes = [n for n in json.loads(done.stdout)["notes"] if n.startswith("corridor:")]
    assert len(notes) == 1
    assert notes[0].startswith("corridor: row 1-0 leaves its corridor: row 1-0: win_rate ")
    assert "against 0.900 +- 0.1 (target #1): OUT of its corridor by " in notes[0] and "(below)" in notes[0]
    assert notes[0].endswith(", inside)")  # it was inside at BASE


def test_watch_names_it_too(tmp_path):
    base, head = folders(tmp_path)
    preview = watch.Preview(tmp_path / "no-warehouse", diff.Settings(samples=64))
    text = preview.verdict(head)  # no stored calibration: every row is added, judged on its head boards
    lines = [line for line in text.splitlines() if "corridor:" in line]
    assert len(lines) == 1 and "row 1-0 leaves its corridor" in lines[0]
