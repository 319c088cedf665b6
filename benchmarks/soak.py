"""Many nightlies into one Dagster home (a home that stops growing).
Not a test: it prints figures.

Runs ``python -m boardgen_dagster.nightly`` ``--nights`` times (default 40) on a table of
``--rows`` rows (default 600: the repo's tables with levels copied, as
``benchmarks/scale.py`` builds them) into one warehouse and one Dagster home,
with a retention window of ``--keep-runs`` runs (default 12: three nightlies
of two lanes), and prints the home's size after each night. Then it starts
``dagster-webserver`` on the home and times, in headless Chromium, the first
and a second load of the ``boards`` asset's Checks and Partitions pages
(until the page shows what it is for), and the same pages' GraphQL answers.

Goals: the home's size after the last night within 10% of its size once the
window is full (the night after which retention first deletes runs), and
every page within 3 s.

    .venv/bin/python benchmarks/soak.py
    .venv/bin/python benchmarks/soak.py --nights 5 --rows 60 --keep-runs 8
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import make_tables  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
CHROMIUM = os.environ.get("BOARDGEN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def serve(home: Path, tables: Path, root: Path, work: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    workspace = work / "workspace.yaml"
    workspace.write_text("load_from:\n  - python_module:\n      module_name: boardgen_dagster.definitions\n"
                         f"      attribute: defs\n      working_directory: {REPO}\n      location_name: boardgen\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "BOARDGEN_TABLES": str(tables), "BOARDGEN_WAREHOUSE": str(root)}
    proc = subprocess.Popen([str(Path(PY).with_name("dagster-webserver")), "-w", str(workspace), "-h", "127.0.0.1",
                             "-p", str(port)], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            data = graphql(port, "{ workspaceOrError { ... on Workspace { locationEntries { "
                                 "locationOrLoadError { __typename } } } } }")
            entries = data["data"]["workspaceOrError"]["locationEntries"]
            if entries and entries[0]["locationOrLoadError"]["__typename"] == "RepositoryLocation":
                return proc, port
        except OSError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("dagster-webserver did not load the code location")


def time_pages(port: int) -> dict[str, float]:
    """Seconds until the boards Checks page lists its checks and the Partitions
    page shows its partitions: a first load and a second, in one browser."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1500, "height": 950})
            context.add_init_script("window.localStorage.setItem('communityNux', JSON.stringify('1'))")
            page = context.new_page()
            page.set_default_timeout(120_000)
            for visit in ("first", "second"):
                t0 = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/assets/boards?view=checks")
                page.get_by_text("a_no_board_below_target").first.wait_for()
                out[f"checks page, {visit} load"] = time.perf_counter() - t0
                t0 = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/assets/boards?view=partitions")
                page.get_by_text("Materialized").first.wait_for()
                out[f"partitions page, {visit} load"] = time.perf_counter() - t0
        finally:
            browser.close()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nights", type=int, default=40)
    p.add_argument("--rows", type=int, default=600)
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--keep-runs", type=int, default=12)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="boardgen-soak-") as tmp:
        work = Path(tmp)
        tables = make_tables(work, args.rows)
        root, home = work / "warehouse", work / "home"
        sizes, window_full = [], None
        for night in range(1, args.nights + 1):
            t0 = time.perf_counter()
            env = {**os.environ, "BOARDGEN_KEEP_RUNS": str(args.keep_runs)}
            proc = subprocess.run([PY, "-m", "boardgen_dagster.nightly", "--tables", str(tables), "--warehouse", str(root),
                                   "--dagster-home", str(home), "--samples", str(args.samples), "--workers",
                                   str(args.workers)], cwd=REPO, env=env, capture_output=True, text=True)
            if proc.returncode not in (0, 3):
                sys.exit(f"night {night} failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
            forgotten = next((int(line.split("retention: ")[1].split()[0]) for line in proc.stdout.splitlines()
                              if "retention: " in line), 0)
            if forgotten and window_full is None:
                window_full = night - 1  # the night before the first deletion filled the window
            sizes.append(tree_bytes(home))
            print(f"night {night:>2}: {time.perf_counter() - t0:5.1f} s, home {sizes[-1] / 2**20:7.1f} MB, "
                  f"{forgotten} run(s) forgotten", flush=True)
        if window_full:
            full = sizes[window_full - 1]
            print(f"home once the window is full (night {window_full}): {full / 2**20:.1f} MB; after night "
                  f"{args.nights}: {sizes[-1] / 2**20:.1f} MB ({100 * (sizes[-1] / full - 1):+.1f}%)")
        proc, port = serve(home, tables, root, work)
        try:
            for name, seconds in time_pages(port).items():
                print(f"{name}: {seconds:.2f} s")
        finally:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
