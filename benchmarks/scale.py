"""The pipeline at scale against the generator alone, side by side in one run
(goal: the pipeline costs what the generator costs). Not a test: it prints figures.

For each table size (15 rows: the repo's tables; 60, 600, 6,000: the repo's
tables with levels 4.. copied from level 3's rows, 5 rows a level) it

1. times the generator alone on the table's boards: the batch entry point
   (``generate_batch_from_row``) over every row's 256 scopes, in this
   process, one core (CPU seconds);
2. runs each path (``python -m boardgen_dagster.nightly`` in a fresh warehouse and
   Dagster home; ``boardgen calibrate`` in a fresh warehouse) with each
   worker count, and measures wall seconds, CPU seconds (the path's whole
   process tree), peak memory (the largest process's RSS, and the process
   tree's summed PSS: pages shared between processes counted once), bytes
   written to storage by the tree (``/proc/self/io``: the kernel adds a
   reaped child's writes to its parent's) and the bytes the path leaves
   (warehouse + Dagster home);
3. prints one line per run with the ratios: wall / generator-alone, and
   bytes written / bytes kept;
4. for the nightly (bookkeeping that scales out): the CPU of the
   ``python -m boardgen_dagster.nightly`` process itself (``getrusage(RUSAGE_SELF)`` at
   its exit: what only one process does) over the CPU of its whole process
   tree, and a projected wall for K = 2, 8 and 32 lanes, ``serial +
   parallel / K``: serial = the coordinator's CPU and the table run (it
   follows every row), parallel = the rest of the tree's CPU (the lanes'
   runs), beside the measured 2-lane wall.

    .venv/bin/python benchmarks/scale.py                       # 15, 60, 600 rows; 1 and N workers; both paths
    .venv/bin/python benchmarks/scale.py --rows 6000 --workers 2 --paths nightly
    .venv/bin/python benchmarks/scale.py --dask tcp://127.0.0.1:8786   # the rows on a Dask cluster too

Goals: the nightly within 2.5x the generator alone at 600 and
6,000 rows with CPU >= 180% on 2 cores, its coordinator <= 10% of the tree's
CPU, >= 1.7x faster on every core than with ``--workers 1``; ``calibrate``
within 1.5x; peak memory flat in the number of rows; bytes written <= 3x the
bytes kept.
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
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
BOARDGEN = str(Path(PY).with_name("boardgen"))


def make_tables(dest: Path, rows: int) -> Path:
    """The repo's tables with ``rows / 5`` levels: levels 4.. copied from level 3's rows."""
    levels = max(1, rows // 5)
    tables = dest / "tables"
    shutil.copytree(REPO / "tables", tables)
    text = (tables / "board_gen.toml").read_text()
    head, *blocks = re.split(r"(?m)^(?=\[\[rows\]\])", text)
    level_of = [int(re.search(r"(?m)^level_index\s*=\s*(\d+)", b).group(1)) for b in blocks]
    kept = [b for b, lv in zip(blocks, level_of, strict=True) if lv <= levels]
    level3 = [b for b, lv in zip(blocks, level_of, strict=True) if lv == 3]
    for lv in range(4, levels + 1):
        kept += [re.sub(r"(?m)^level_index\s*=\s*3\b", f"level_index = {lv}", b) for b in level3]
    (tables / "board_gen.toml").write_text(head + "".join(kept))
    return tables


def generator_alone(tables: Path, samples: int) -> float:
    """CPU seconds of generating every row's boards through the batch entry point."""
    from boardgen_pipeline.board.generator import generate_batch_from_row, warm_up
    from boardgen_pipeline.calibration.batch import batch_scopes
    from boardgen_pipeline.tables.board_gen import load_board_gen_dir

    warm_up()
    table = load_board_gen_dir(tables)
    t0 = time.process_time()
    for key, row in table.rows.items():
        generate_batch_from_row(row, table.spawn_side, batch_scopes(*key, samples), 0, table.header.dig_ap_cost)
    return time.process_time() - t0


def _written_bytes() -> int:
    with open("/proc/self/io") as fh:
        return int(next(line for line in fh if line.startswith("write_bytes")).split()[1])


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


# Runs the nightly in this wrapper process and prints, at its exit, the CPU it used itself (all its
# threads, none of its children): the coordinator's share of the work.
COORDINATOR = (
    "import resource, runpy, sys\n"
    "sys.argv = ['boardgen_dagster.nightly', *sys.argv[1:]]\n"
    "code = 0\n"
    "try:\n"
    "    runpy.run_module('boardgen_dagster.nightly', run_name='__main__')\n"
    "except SystemExit as exc:\n"
    "    code = exc.code or 0\n"
    "ru = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(f'COORDINATOR_CPU {ru.ru_utime + ru.ru_stime:.3f}', file=sys.stderr)\n"
    "sys.exit(code)\n")


def table_run_seconds(home: Path) -> float:
    """Wall seconds of the nightly's table run (strata and table-wide checks), read from its Dagster home."""
    code = ("import dagster as dg\n"
            "with dg.DagsterInstance.get() as i:\n"
            "    r = [r for r in i.get_run_records(dg.RunsFilter(job_name='calibration_table'))][0]\n"
            "    print(r.end_time - r.start_time)\n")
    out = subprocess.run([PY, "-c", code], env={**os.environ, "DAGSTER_HOME": str(home)}, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def become_subreaper() -> None:
    """Adopt the descendants that outlive their parent (Linux): the nightly's
    lanes fork from a server that exits just after the nightly, unwaited, so
    their CPU and their writes reach ``RUSAGE_CHILDREN`` and ``/proc/self/io``
    only through the process that reaps it: this one (``reap_orphans``)."""
    import ctypes

    PR_SET_CHILD_SUBREAPER = 36
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}")


def reap_orphans() -> None:
    """Wait for every adopted descendant (``become_subreaper``)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def measure(cmd: list[str], env: dict, keeps: list[Path]) -> dict:
    """Run ``cmd`` and measure it (module docstring)."""
    import psutil

    written0 = _written_bytes()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = {"pss": 0, "rss": 0}

    def sample():
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                procs = [root, *root.children(recursive=True)]
                pss = rss = 0
                for p in procs:
                    info = p.memory_full_info()
                    pss += info.pss
                    rss = max(rss, info.rss)
                peak["pss"], peak["rss"] = max(peak["pss"], pss), max(peak["rss"], rss)
            except psutil.Error:
                pass
            time.sleep(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output = proc.communicate()[0]
    sampler.join()
    wall = time.perf_counter() - t0
    reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 3):  # 3: an F4 check failed; the run itself is complete
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{output[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    found = re.search(r"COORDINATOR_CPU ([\d.]+)", output)
    return {"wall": wall, "cpu": cpu, "pss": peak["pss"], "rss": peak["rss"],
            "written": _written_bytes() - written0, "kept": sum(_tree_bytes(p) for p in keeps),
            "coordinator": float(found.group(1)) if found else None}


def run_path(path: str, tables: Path, work: Path, samples: int, workers: int | None, dask: str | None) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("BOARDGEN_DASK", None)
    where = ["--dask", dask] if dask else ["--workers", str(workers)]
    label = f"{path}-{'dask' if dask else workers}"
    root, home = work / f"{label}-warehouse", work / f"{label}-home"
    if path == "nightly":
        cmd = [PY, "-c", COORDINATOR, "--tables", str(tables), "--warehouse", str(root), "--samples",
               str(samples), "--dagster-home", str(home), *where]
        out = measure(cmd, env, [root, home])
        out["table_run"] = table_run_seconds(home)
        return out
    cmd = [BOARDGEN, "calibrate", "--tables", str(tables), "--warehouse", str(root), "--samples", str(samples), *where]
    return measure(cmd, env, [root])


def projection(rows: int, r: dict) -> str:
    """The coordinator's share and the projected walls (module docstring, 4)."""
    serial = r["coordinator"] + r["table_run"]
    parallel = max(0.0, r["cpu"] - serial)
    walls = ", ".join(f"K={k} {serial + parallel / k:.1f} s" for k in (2, 8, 32))
    return (f"{rows:>5} {'':<9} {'':>7} | coordinator {r['coordinator']:.2f} s CPU = "
            f"{100 * r['coordinator'] / max(1e-9, r['cpu']):.1f}% of the tree; table run {r['table_run']:.1f} s; "
            f"projected {walls} (measured, 2 lanes: see the row above)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, nargs="+", default=[15, 60, 600], help="table sizes (default: 15 60 600)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, os.cpu_count() or 1],
                   help="local worker counts (default: 1 and every core)")
    p.add_argument("--paths", nargs="+", choices=("nightly", "calibrate"), default=["nightly", "calibrate"])
    p.add_argument("--samples", type=int, default=256, help="boards per row (default: 256)")
    p.add_argument("--dask", help="also run each path on this Dask scheduler")
    args = p.parse_args(argv)
    become_subreaper()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform()}")
    print(f"{'rows':>5} {'path':<9} {'workers':>7} | {'wall s':>7} {'CPU':>5} | {'x gen':>6} | "
          f"{'PSS MB':>6} {'max RSS':>7} | {'written MB':>10} {'kept MB':>8} {'w/k':>5}")
    with tempfile.TemporaryDirectory(prefix="boardgen-scale-") as tmp:
        # one throwaway process so that every run below loads the compiled kernels from numba's cache
        subprocess.run([PY, "-c", "from boardgen_pipeline.steps.chain import warm_up; warm_up()"], check=True)
        for rows in args.rows:
            work = Path(tmp) / f"r{rows}"
            tables = make_tables(work, rows)
            gen = generator_alone(tables, args.samples)
            print(f"{rows:>5} {'generator':<9} {1:>7} | {gen:7.1f} {'100%':>5} | {1:6.2f} | "
                  f"{'-':>6} {'-':>7} | {'-':>10} {'-':>8} {'-':>5}", flush=True)
            places = [(w, None) for w in args.workers] + ([(None, args.dask)] if args.dask else [])
            for path in args.paths:
                for workers, dask in places:
                    r = run_path(path, tables, work, args.samples, workers, dask)
                    print(f"{rows:>5} {path:<9} {'dask' if dask else workers:>7} | {r['wall']:7.1f} "
                          f"{100 * r['cpu'] / r['wall']:4.0f}% | {r['wall'] / gen:6.2f} | "
                          f"{r['pss'] / 2**20:6.0f} {r['rss'] / 2**20:7.0f} | {r['written'] / 2**20:10.1f} "
                          f"{r['kept'] / 2**20:8.1f} {r['written'] / max(1, r['kept']):5.2f}", flush=True)
                    if r.get("coordinator") is not None:
                        print(projection(rows, r), flush=True)
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
