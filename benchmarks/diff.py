"""What the calibration diff costs (docs/review.md "Cost"). Not a test: it
prints figures and ratios.

1. **A one-row change on the 600-row table** (``scale.py``'s ``make_tables``:
   levels 4.. repeat level 3's rows), the table calibrated first into a
   warehouse: ``boardgen diff BASE --tables HEAD --warehouse W`` (the base's
   boards of the changed row read from W, the head's generated, 599 rows
   identical), as a ratio to ``boardgen calibrate --rows L,D`` of the same
   row on the head table (into a scratch warehouse). Both are whole commands
   (a process each, its imports and kernel loading included), best of
   ``--repeat``; the same two in this process (``diff.compare`` against
   ``publish_rows`` of the row), best of ``--repeat``.
2. **``--format html`` on 600 rows**: what the page adds (the stored
   reports' points read, ``render.html`` of every level's curve) as a ratio
   to the diff itself (both states loaded and compared), in this process,
   warm; and the two commands, ``--format html`` against the terminal's.
   Target: at most 2x.
3. **``boardgen watch``**: a process watching a copy of the default tables
   against their stored calibration; each of ``--edits`` one-row saves, the
   time from the save (the file written) to the line that shows its verdict.
   Target: within 2 s after start-up.

    .venv/bin/python benchmarks/diff.py                  # all three, 600 rows
    .venv/bin/python benchmarks/diff.py --rows 60 --repeat 2 --edits 3
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOARDGEN = str(Path(sys.executable).with_name("boardgen"))
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

CHANGED = (7, 2)  # a fog row of a level that copies level 3 (16x16): among the costliest rows to generate


def edit_density(tables: Path, key: tuple[int, int], step: float) -> None:
    """Row ``key``'s density moved by ``step``, saved by the table editor of
    ``advise --apply`` (validated, then renamed into place, as many editors save)."""
    from boardgen_pipeline.tables import edit
    from boardgen_pipeline.tables.board_gen import load_board_gen

    path = tables / "board_gen.toml"
    old = load_board_gen(path).rows[key].mine_density
    edit.apply_changes(path, [edit.RowChange(key, "mine_density", old, round(old + step, 3))])


def best_of(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return min(times)


def command(*argv) -> None:
    done = subprocess.run([BOARDGEN, *map(str, argv)], capture_output=True, text=True)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{argv}: exit {done.returncode}\n{done.stderr}")


def one_row_change(work: Path, rows: int, repeat: int) -> dict:
    from scale import make_tables

    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.review import diff, render, sources
    from boardgen_pipeline.steps.publish_rows import publish_rows

    base = make_tables(work / "base", rows)
    head = work / "head" / "tables"
    shutil.copytree(base, head)
    key = CHANGED if rows >= 40 else (2, 2)
    edit_density(head, key, 0.02)
    root = work / "warehouse"
    t0 = time.perf_counter()
    command("calibrate", "--tables", base, "--warehouse", root)
    calibrated = time.perf_counter() - t0
    scratch = work / "scratch"
    row = f"{key[0]},{key[1]}"
    cmd_diff = best_of(repeat, lambda: command("diff", base, "--tables", head, "--warehouse", root))
    cmd_html = best_of(repeat, lambda: command("diff", base, "--tables", head, "--warehouse", root, "--format", "html"))
    cmd_calibrate = best_of(repeat, lambda: command("calibrate", "--tables", head, "--warehouse", scratch,
                                                    "--rows", row, "--workers", "1"))
    catalog = load_catalog(head)
    result = None

    def run_diff():  # what the command does besides its imports: both states loaded, every row compared
        nonlocal result
        b, h = sources.from_folder(base, "BASE"), sources.from_folder(head, "HEAD")
        result = diff.compare(b, h, diff.Settings(), root)

    run_diff()  # the first call in a process imports the statistics and loads the kernels: not timed
    lib_diff = best_of(repeat, run_diff)
    publish_rows(scratch, catalog, [key], 256)
    lib_calibrate = best_of(repeat, lambda: publish_rows(scratch, catalog, [key], 256))
    page = ""

    def run_html():  # what --format html adds: the stored reports' points read, the page rendered
        nonlocal page
        page = render.html(result, sources.report_columns(root, render.REPORT_COLUMNS))

    lib_html = best_of(repeat, run_html)
    [changed] = result.of("modified")
    return {"rows": rows, "row": key, "calibrate_all": calibrated, "cmd_diff": cmd_diff, "cmd_html": cmd_html,
            "cmd_calibrate": cmd_calibrate, "lib_diff": lib_diff, "lib_calibrate": lib_calibrate, "html": lib_html,
            "stored": changed.stored, "identical": len(result.of("identical")), "page_bytes": len(page)}


def watch_latency(work: Path, edits: int) -> list[float]:
    tables = work / "watch" / "tables"
    shutil.copytree(REPO / "tables", tables)
    root = work / "watch" / "warehouse"
    command("calibrate", "--tables", tables, "--warehouse", root, "--workers", "1")
    proc = subprocess.Popen([BOARDGEN, "watch", "--tables", str(tables), "--warehouse", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    seen: list[tuple[float, str]] = []

    def read():
        for line in proc.stdout:
            seen.append((time.perf_counter(), line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        while not any(line.startswith("* flagged") for _, line in seen):  # start-up: the first verdict printed
            time.sleep(0.05)
        latencies = []
        for i in range(edits):
            time.sleep(1.0)
            mark = len(seen)
            edit_density(tables, (1, 1 + i % 4), 0.01 if i % 2 == 0 else -0.01)
            saved = time.perf_counter()
            while not any(line.startswith("verdict:") for _, line in seen[mark:]):
                time.sleep(0.005)
            shown = next(t for t, line in seen[mark:] if line.startswith("verdict:"))
            latencies.append(shown - saved)
        return latencies
    finally:
        proc.send_signal(2)
        proc.wait(timeout=30)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=600, help="rows of the table of the one-row change (default: 600)")
    p.add_argument("--repeat", type=int, default=3, help="rounds of each timing, the best kept (default: 3)")
    p.add_argument("--edits", type=int, default=6, help="one-row saves the watch is timed on (default: 6)")
    args = p.parse_args(argv)
    print(f"{platform.node()}: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="boardgen-diff-bench-") as tmp:
        r = one_row_change(Path(tmp), args.rows, args.repeat)
        print(f"\n1. one-row change of row {r['row']} on {r['rows']} rows ({r['identical']} identical; the base's "
              f"{r['stored']['base']} boards read from the warehouse, calibrated in {r['calibrate_all']:.1f} s)")
        print(f"   boardgen diff:             {r['cmd_diff']:6.2f} s")
        print(f"   boardgen calibrate --rows: {r['cmd_calibrate']:6.2f} s   ratio {r['cmd_diff'] / r['cmd_calibrate']:.2f}")
        print(f"   in process (warm): the diff {r['lib_diff']:.3f} s, publish_rows of the row {r['lib_calibrate']:.3f} s"
              f"   ratio {r['lib_diff'] / r['lib_calibrate']:.2f}")
        print(f"\n2. --format html on {r['rows']} rows: rendering {r['html']:.3f} s ({r['page_bytes'] / 1e6:.1f} MB) "
              f"against the diff's {r['lib_diff']:.3f} s: ratio {r['html'] / r['lib_diff']:.2f} (target <= 2); "
              f"the command: {r['cmd_html']:.2f} s against {r['cmd_diff']:.2f} s, ratio {r['cmd_html'] / r['cmd_diff']:.2f}")
        lat = watch_latency(Path(tmp), args.edits)
        print(f"\n3. boardgen watch, save to verdict over {len(lat)} one-row saves: median "
              f"{statistics.median(lat):.2f} s, max {max(lat):.2f} s (target <= 2 s): "
              + ", ".join(f"{x:.2f}" for x in lat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
