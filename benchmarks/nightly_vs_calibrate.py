"""The nightly through Dagster against ``boardgen calibrate`` on the same rows,
side by side in one run (issue 12 "Cost"). Not a test: it prints figures.

It builds a table of ``--levels`` x 5 depths (default 12 x 5 = 60 rows: the
repo's tables with levels 4..12 copied from level 3's rows), then runs, each
in a fresh warehouse, ``boardgen calibrate`` and ``python -m assets.nightly``
on it (and, with ``--small-levels``, both again on a smaller table, to get
the cost of one extra row). It prints wall and CPU seconds, the ratio
nightly / calibrate, the orchestration CPU per extra row, and whether both
published bit-identical boards. Usage:

    .venv/bin/python benchmarks/nightly_vs_calibrate.py [--levels 12] [--samples 256] [--small-levels 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable


def make_tables(dest: Path, levels: int) -> Path:
    """The repo's tables with levels 4..``levels`` copied from level 3's rows
    (``levels`` <= 3 keeps the first ``levels`` levels)."""
    tables = dest / "tables"
    shutil.copytree(REPO / "tables", tables)
    text = (tables / "board_gen.toml").read_text()
    head, *rows = re.split(r"(?m)^(?=\[\[rows\]\])", text)
    level_of = [int(re.search(r"(?m)^level_index\s*=\s*(\d+)", r).group(1)) for r in rows]
    kept = [r for r, lv in zip(rows, level_of, strict=True) if lv <= levels]
    level3 = [r for r, lv in zip(rows, level_of, strict=True) if lv == 3]
    for lv in range(4, levels + 1):
        kept += [re.sub(r"(?m)^level_index\s*=\s*3\b", f"level_index = {lv}", r) for r in level3]
    (tables / "board_gen.toml").write_text(head + "".join(kept))
    return tables


def timed(cmd: list[str], env: dict) -> dict:
    """Wall and CPU seconds (the child's user + system) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 3):  # 3: an F4 check failed, the run itself is complete
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return {"wall": wall, "cpu": cpu}


def boards_digest(root: Path) -> dict:
    import pyarrow.parquet as pq

    out = {}
    for path in sorted((root / "boards").rglob("part.parquet")):
        table = pq.read_table(path, columns=["scope", "layout", "batch_fingerprint"])
        out[str(path.relative_to(root))] = table.to_pylist()
    return out


def measure(tables: Path, work: Path, samples: int, label: str) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cal_root, night_root = work / f"{label}-calibrate", work / f"{label}-nightly"
    cal = timed([PY, "-m", "boardgen_pipeline.cli", "calibrate", "--tables", str(tables), "--warehouse",
                 str(cal_root), "--samples", str(samples)], env)
    night = timed([PY, "-m", "assets.nightly", "--tables", str(tables), "--warehouse", str(night_root),
                   "--samples", str(samples), "--dagster-home", str(work / f"{label}-dagster")], env)
    same = boards_digest(cal_root) == boards_digest(night_root)
    return {"calibrate": cal, "nightly": night, "same_boards": same}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--levels", type=int, default=12, help="levels of the big table, 5 depths each (default: 12)")
    p.add_argument("--small-levels", type=int, default=3,
                   help="levels of the small table for the per-row cost (default: 3; 0 skips it)")
    p.add_argument("--samples", type=int, default=256, help="boards per row (default: 256)")
    args = p.parse_args(argv)
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="boardgen-bench-") as tmp:
        work = Path(tmp)
        # one throwaway run so that both sides load compiled kernels from numba's cache
        subprocess.run([PY, "-c", "from boardgen_pipeline.board.generator import warm_up; warm_up()"], check=True)
        results = {}
        for levels in [args.levels] + ([args.small_levels] if args.small_levels else []):
            tables = make_tables(work / f"t{levels}", levels)
            rows = len(re.findall(r"(?m)^\[\[rows\]\]", (tables / "board_gen.toml").read_text()))
            results[rows] = r = measure(tables, work, args.samples, f"r{rows}")
            ratio = r["nightly"]["wall"] / r["calibrate"]["wall"]
            print(f"{rows:3d} rows x {args.samples} boards: calibrate {r['calibrate']['wall']:6.1f} s wall "
                  f"{r['calibrate']['cpu']:6.1f} s CPU | nightly {r['nightly']['wall']:6.1f} s wall "
                  f"{r['nightly']['cpu']:6.1f} s CPU | nightly/calibrate {ratio:.2f}x (goal <= 2x) | "
                  f"same boards: {'yes' if r['same_boards'] else 'NO'}")
        if len(results) == 2:
            (big, rb), (small, rs) = sorted(results.items(), reverse=True)
            extra = ((rb["nightly"]["cpu"] - rs["nightly"]["cpu"]) - (rb["calibrate"]["cpu"] - rs["calibrate"]["cpu"]))
            print(f"orchestration CPU per extra row (nightly minus calibrate, {small} -> {big} rows): "
                  f"{extra / (big - small):.3f} s (goal <= 0.3 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
