"""Peak memory of one 256-board partition of 64x64 boards (goal: under
500 MB): generate the batch, evaluate its checks and write its Parquet
file, in a fresh process, and print the peak RSS. Not a test.

    .venv/bin/python benchmarks/memory_64x64.py [--samples 256]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import json, resource, sys, time
from pathlib import Path
from boardgen_pipeline import calibration
from boardgen_pipeline.tables import load_board_gen
tables, root, samples = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = load_board_gen(tables / "board_gen.toml")
t0 = time.perf_counter()
res = calibration.run_batch(root, calibration.seed_batch(t, (1, 0), samples))
print(json.dumps({"boards": len(res.records), "published": res.published,
                  "seconds": round(time.perf_counter() - t0, 2),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "rss_after_imports_mb": round(base / 1024, 1),
                  "parquet_mb": round(Path(res.path).stat().st_size / 2**20, 2)}))
'''

TABLE = """[header]
spawn_side = 3

[[rows]]
level_index = 1
node_depth = 0
board_width = 64
board_height = 64
mine_density = 0.18
inferability_target = 0.85
solver_rules = "single_subset"
min_safe_count = 100
max_gen_attempts = 4
board_type = "dungeon"
shave_ring_radius = 1
r0_max_cap = 2048
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=256)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tables = Path(tmp) / "tables"
        tables.mkdir()
        (tables / "board_gen.toml").write_text(TABLE)
        out = subprocess.run([sys.executable, "-c", CHILD, str(tables), str(Path(tmp) / "wh"), str(args.samples)],
                             capture_output=True, text=True, check=True).stdout
    print(out.strip())
    print(json.dumps({"limit_mb": 500, "within": json.loads(out)["peak_rss_mb"] < 500}))


if __name__ == "__main__":
    main()
