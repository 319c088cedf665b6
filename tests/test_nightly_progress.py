"""``make run`` shows what it is doing while it runs (live
progress; the bar counts the rows the runs have recorded, from
the engine's run statistics): in a terminal, the nightly says so from its
first line, then a progress bar counts rows (done / total), boards per
second and time left while the lanes run, then the summary."""

from __future__ import annotations

import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

from tests.nightly_support import BOARDGEN

from .test_pipeline_support import copy_fixture

pytestmark = pytest.mark.integration  # a nightly on a terminal

REPO = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


def test_the_progress_bar_moves_while_the_rows_run(tmp_path):
    tables = copy_fixture("small", tmp_path)
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm", "BOARDGEN_PROGRESS_SECONDS": "0.1"}
    proc = subprocess.Popen([BOARDGEN, "nightly", "--tables", str(tables), "--warehouse",
                             str(tmp_path / "wh"), "--dagster-home", str(tmp_path / "home"), "--samples", "64"],
                            cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=600) == 0
    os.close(master)
    text = ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
    frames = [f.strip() for f in re.split(r"[\r\n]", text) if "rows" in f and "boards/s" in f]
    assert text.lstrip().startswith("boardgen nightly:"), text[:200]  # says what it does from the start
    # the bar was drawn from the start of the runs, and ends with every row counted, with a rate
    assert re.match(r"calibrating\s.*\b0/3 rows\s+- boards/s\s+2 lane", frames[0]), frames  # the draws beside the rows
    assert re.match(r"calibrating\s.*\b3/3 rows\s+\d[\d,]* boards/s", frames[-1]), frames
    counts = [int(re.search(r"(\d)/3 rows", f).group(1)) for f in frames]
    assert counts == sorted(counts)  # it never counts back
    # the summary follows the bar
    assert text.index("F4 calibration: 3 rows x 64 boards") > text.rindex("3/3 rows")
