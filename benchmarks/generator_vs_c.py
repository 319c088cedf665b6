"""Generator throughput against the C baseline, side by side in one run
(issue 2 "Speed", issue 7). Not a test: it prints figures and ratios.

For each preset of ../shared/bench/README.md (and 128x128) it builds the C
baseline (this repo's copy, whose array limit is raised to 128x128 cells),
runs it, runs `boardgen bench` on the same parameters in this process, and
prints both boards/s and the ratio. Usage:

    .venv/bin/python benchmarks/generator_vs_c.py [--boards 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import tempfile
from pathlib import Path

from boardgen_pipeline.board.bench import bench

REPO = Path(__file__).resolve().parent.parent
# the repo's copy of ../shared/bench/baseline.c: the same program with MAXC
# raised from 4096 to 16384 cells, so that it runs the 128x128 preset
BASELINE = REPO / "benchmarks" / "baseline.c"

PRESETS = [
    # name, width, height, density, target, cap, attempts
    ("10x10 d=0.25 t=.95 cap 45", 10, 10, 0.25, 0.95, 45, 16),
    ("30x16 d=0.206 t=.85 cap 240", 30, 16, 0.206, 0.85, 240, 16),
    ("64x64 d=0.18 t=.85 cap 2048", 64, 64, 0.18, 0.85, 2048, 4),
    ("128x128 d=0.18 t=.85 cap 8192", 128, 128, 0.18, 0.85, 8192, 4),
]


def c_baseline(exe: Path, w, h, d, t, cap, attempts, boards) -> dict:
    out = subprocess.run([str(exe), str(w), str(h), str(d), str(t), str(cap), str(attempts), str(boards)],
                         capture_output=True, text=True, check=True).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", out)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs, for both sides")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "baseline"
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(BASELINE), "-lm"], check=True)
        print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
        rows = []
        for name, w, h, d, t, cap, att in PRESETS:
            boards = args.boards if w * h <= 1000 else max(50, args.boards // (10 if w * h <= 4096 else 40))
            c = max((c_baseline(exe, w, h, d, t, cap, att, boards) for _ in range(args.repeat)),
                    key=lambda r: r["boards_per_s"])
            py = max((bench(w, h, d, t, cap, att, boards) for _ in range(args.repeat)),
                     key=lambda r: r["boards_per_s"])
            ratio = py["boards_per_s"] / c["boards_per_s"]
            rows.append({"preset": name, "boards": boards, "c_boards_per_s": c["boards_per_s"],
                         "boardgen_boards_per_s": py["boards_per_s"], "ratio": round(ratio, 3),
                         "c_mean_attempts": c["mean_attempts"], "boardgen_mean_attempts": py["mean_attempts"],
                         "warmup_seconds": py["warmup_seconds"]})
            print(f"{name:32s} C {c['boards_per_s']:>9.0f}/s   boardgen {py['boards_per_s']:>9.0f}/s   "
                  f"ratio {ratio:.2f}   (mean attempts C {c['mean_attempts']:.2f}, ours {py['mean_attempts']:.2f})")
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
