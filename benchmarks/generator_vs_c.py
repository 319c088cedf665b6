"""Generator throughput against the C baseline, side by side in one run
(the speed goal against the C baseline). Not a test: it prints figures and ratios.

For each preset of ../shared/bench/README.md (10x10 and 30x16 by default;
64x64 and 128x128 with --presets) it builds the C baseline (this repo's copy,
whose array limit is raised to 128x128 cells), then alternates rounds of it
and of `boardgen bench` (the attempt loop, the same work as the C; with
--figures also the calibration's entry point with the difficulty figures and
the player) on the same parameters in this process, and prints the median
boards/s and the median of the rounds' ratios. Usage:

    .venv/bin/python benchmarks/generator_vs_c.py [--boards 2000] [--repeat 3] [--figures]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
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
    ap.add_argument("--repeat", type=int, default=3, help="rounds, both sides alternated; the median is reported")
    ap.add_argument("--presets", default="10x10,30x16", help="comma-separated preset sizes (also 64x64, 128x128)")
    ap.add_argument("--figures", action="store_true", help="also time the entry point with figures and player")
    args = ap.parse_args()
    wanted = args.presets.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "baseline"
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(BASELINE), "-lm"], check=True)
        print(f"machine: {platform.machine()} {platform.processor() or ''} python {platform.python_version()}")
        rows = []
        for name, w, h, d, t, cap, att in PRESETS:
            if name.split()[0] not in wanted:
                continue
            boards = args.boards if w * h <= 1000 else max(50, args.boards // (10 if w * h <= 4096 else 40))
            cs, pys = [], []
            for _ in range(args.repeat):  # alternated, so a change of the machine's load hits both sides
                cs.append(c_baseline(exe, w, h, d, t, cap, att, boards))
                pys.append(bench(w, h, d, t, cap, att, boards, figures=args.figures))
            c_rate = statistics.median(r["boards_per_s"] for r in cs)
            ratios = [p["boards_per_s"] / c["boards_per_s"] for c, p in zip(cs, pys)]
            row = {"preset": name, "boards": boards, "c_boards_per_s": c_rate,
                   "boardgen_boards_per_s": statistics.median(p["boards_per_s"] for p in pys),
                   "ratio": round(statistics.median(ratios), 3), "ratios": [round(r, 3) for r in ratios],
                   "c_mean_attempts": cs[0]["mean_attempts"], "boardgen_mean_attempts": pys[0]["mean_attempts"],
                   "warmup_seconds": pys[0]["warmup_seconds"]}
            line = (f"{name:32s} C {c_rate:>9.0f}/s   attempt loop {row['boardgen_boards_per_s']:>9.0f}/s "
                    f"ratio {row['ratio']:.2f}")
            if args.figures:
                fr = [p["figures_boards_per_s"] / c["boards_per_s"] for c, p in zip(cs, pys)]
                row["figures_boards_per_s"] = statistics.median(p["figures_boards_per_s"] for p in pys)
                row["figures_ratio"] = round(statistics.median(fr), 3)
                line += f"   with figures {row['figures_boards_per_s']:>9.0f}/s ratio {row['figures_ratio']:.2f}"
            rows.append(row)
            print(line + f"   (mean attempts C {row['c_mean_attempts']:.2f}, ours {row['boardgen_mean_attempts']:.2f})")
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
