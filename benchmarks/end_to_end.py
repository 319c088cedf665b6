"""End-to-end timing of the nightly (goal: <= 60 s wall on 2 cores): `make run`'s
materialization of the default tables (all rows x 256, overlays, node-map
draws, strata) through Dagster, in a fresh warehouse and DAGSTER_HOME, with
the split between board generation and orchestration that the nightly
prints. Not a test.

    .venv/bin/python benchmarks/end_to_end.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BOARDGEN_WAREHOUSE=str(Path(tmp) / "warehouse"), DAGSTER_HOME=str(Path(tmp) / "home"))
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "boardgen_dagster.nightly"], cwd=REPO, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    lines = [line for line in p.stdout.splitlines() if line.startswith(("wall", "  board generation", "checks:"))]
    print("\n".join(lines))
    print(f"end to end (process start to exit): {wall:.1f} s, exit code {p.returncode}")


if __name__ == "__main__":
    main()
