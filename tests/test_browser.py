"""The failing check of a row, as a designer sees it in the Dagster UI, in a
real browser.

1. The pipeline materializes the ``unmeetable`` fixture (row (1,1) cannot
   reach target 1.0: assertion A fails) into a temporary warehouse and a
   temporary ``DAGSTER_HOME`` as the nightly does: the tables
   and draws, one run over every row partition, the table-wide checks.
2. ``dagster-webserver`` starts on a free localhost port, on a workspace
   file pointing at ``boardgen_dagster.definitions`` with ``BOARDGEN_TABLES``,
   ``BOARDGEN_WAREHOUSE`` and ``DAGSTER_HOME`` set to those folders; the
   test waits (bounded) until the code location is loaded.
3. Headless Chromium (Debian's ``/usr/bin/chromium``, driven by Playwright)
   opens the asset graph, where the failure must show without opening any
   Partitions tab: ``calibration_report`` is drawn red (its
   table-wide check ``every_row_passes_f4`` failed), a passing asset is
   not. That check's page shows first, above its metadata and without a
   click, the failing row and assertion, its verdict, the advisor's fix and
   the pictures (histogram with the target, worst board), decoded images,
   whole in a 1500x950 and a 1280x800 window: each picture,
   scrolled into view, is on screen, inside every ancestor that clips
   (the description panel is 260 px high, ``overflow: hidden``) and covered
   by nothing (the panel's "Show more" button); so are the full-size
   pictures in the dialog of its ``failing_row_pictures`` entry.
   Then the table-wide check ``a_no_board_below_target`` of asset
   ``boards`` (checks are table-wide): the failing row named in its
   verdict, the row's own figures and failing scopes in its metadata; and
   the ``boards`` Partitions tab: each row's state, the failing row's
   figures on its materialization.
4. Screenshots go to ``test-output/browser/`` (git-ignored; override with
   ``BOARDGEN_TEST_OUTPUT``), also on failure. The server is stopped in a
   ``finally``.

No skip: without Chromium or Playwright the test fails and says how to get
them (``scripts/ensure_chromium.sh``; ``make test`` and ``.ci/run`` run it).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest

from boardgen_dagster.home import ensure_dagster_home
from boardgen_pipeline.calibration import assertions
from boardgen_pipeline.steps.table_check import CHECK_EVERY_ROW
from boardgen_pipeline.warehouse import datasets

from .test_pipeline_support import copy_fixture, defs_for, expected_figures, materialize_graph, meta, row_checks

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("BOARDGEN_CHROMIUM", "/usr/bin/chromium"))
OUTPUT = Path(os.environ.get("BOARDGEN_TEST_OUTPUT", REPO / "test-output")) / "browser"
CHROMIUM_ARGS = [
    # as root there is no sandbox; this machine has no GPU and a closed network
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
N = 8
FAILING, PASSING = "1-1", "1-0"
WINDOWS = ((1500, 950), (1280, 800))  # the table-wide check's page is read in these
PICTURES = ("inferability histogram", "worst board")  # the alt texts of a failing row's two pictures
CHECK = assertions.CHECK_A
SERVER_START_TIMEOUT = 240.0  # seconds until the code location is loaded
PAGE_TIMEOUT_MS = 20_000  # any one wait on the page


def _need_browser():
    """Playwright and Chromium, or a failure that says how to get them."""
    how = ("run `bash scripts/ensure_chromium.sh` as root (it runs `apt-get install chromium chromium-driver`; "
           "`make test` and `.ci/run` call it), or set BOARDGEN_CHROMIUM to a Chromium binary")
    if not CHROMIUM.exists():
        pytest.fail(f"the browser test needs Chromium at {CHROMIUM}, which is missing: {how}", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - the test extras install it
        pytest.fail(f"the browser test needs Playwright for Python ({exc}): "
                    "`.venv/bin/pip install -e '.[test]'` (make test does)", pytrace=False)
    return sync_playwright


@contextmanager
def ui_page(height: int, failure_shot: Path):
    """A Chromium page for the UI, 1600 wide (the "join the community" dialog of a fresh localhost
    instance kept from covering it); on a failure, a screenshot of the page at ``failure_shot``; the
    browser closed either way."""
    with _need_browser()() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1600, "height": height})
            context.add_init_script("window.localStorage.setItem('communityNux', JSON.stringify('1'))")
            page = context.new_page()
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            try:
                yield page
            except Exception:
                page.screenshot(path=str(failure_shot), full_page=True)
                raise
        finally:
            browser.close()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- the fixture warehouse


def materialize(base: Path, monkeypatch) -> dict:
    """The ``unmeetable`` fixture through the pipeline into ``base``, as runs
    persisted in ``base/dagster_home``; returns what the page must show."""
    tables = copy_fixture("unmeetable", base)
    root = base / "warehouse"
    home = base / "dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))  # restored after the test
    ensure_dagster_home(home)
    defs = defs_for(tables, root, N)
    with dg.DagsterInstance.get() as instance:
        _prepare, _rows, table_run = materialize_graph(defs, instance)
        evaluations = {c.check_name: c for c in table_run.get_asset_check_evaluations()}
    a_fail = evaluations[CHECK]
    assert not a_fail.passed and list(meta(a_fail)["failing"]) == [FAILING], "fixture no longer fails A on 1-1 only"
    summary = evaluations[CHECK_EVERY_ROW]
    assert not summary.passed and f"{FAILING} (A)" in summary.description
    records = pq.read_table(datasets.partition_path(root, "boards", (1, 1))).to_pylist()
    figures = expected_figures(records, target=1.0)
    row = row_checks(root, (1, 1))[CHECK]
    assert row["figures"]["below_target"] == len(figures["below"]) > 0
    return {"tables": tables, "root": root, "home": home, "meta": row["figures"], "figures": figures,
            "description": a_fail.description, "row_description": row["description"],
            "summary": summary.description}


# ---------------------------------------------------------------- the server


def _graphql(port: int, query: str, timeout: float = 5.0) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


LOCATIONS = """{ workspaceOrError { __typename ... on Workspace { locationEntries {
  name loadStatus locationOrLoadError { __typename ... on PythonError { message } } } } } }"""


def start_server(base: Path, env_for: dict, log_path: Path) -> tuple[subprocess.Popen, int]:
    workspace = base / "workspace.yaml"
    workspace.write_text(
        "load_from:\n"
        "  - python_module:\n"
        "      module_name: boardgen_dagster.definitions\n"
        "      attribute: defs\n"
        f"      working_directory: {json.dumps(str(REPO))}\n"
        "      location_name: boardgen\n",
        encoding="utf-8",
    )
    env = {**os.environ, **env_for, "DAGSTER_DISABLE_TELEMETRY": "1", "PYTHONUNBUFFERED": "1"}
    port = _free_port()
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagster_webserver", "-w", str(workspace), "-h", "127.0.0.1", "-p", str(port)],
        cwd=base, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: stopping it stops its code server too
    )
    log.close()
    return proc, port


def wait_loaded(proc: subprocess.Popen, port: int, log_path: Path, timeout: float = SERVER_START_TIMEOUT) -> float:
    """Seconds until the webserver answers and the code location is loaded."""
    t0 = time.monotonic()
    last = "no answer yet"
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            pytest.fail(f"dagster-webserver exited with {proc.returncode} while starting; its log "
                        f"({log_path}):\n{log_path.read_text(errors='replace')[-3000:]}", pytrace=False)
        try:
            entries = _graphql(port, LOCATIONS)["data"]["workspaceOrError"]["locationEntries"]
        except (urllib.error.URLError, ConnectionError, OSError, KeyError, TypeError, ValueError) as exc:
            last = repr(exc)
        else:
            entry = next((e for e in entries if e["name"] == "boardgen"), None)
            last = repr(entry)
            if entry and entry["loadStatus"] == "LOADED":
                loaded = entry["locationOrLoadError"]
                if loaded["__typename"] != "RepositoryLocation":
                    pytest.fail(f"the boardgen code location failed to load in the webserver: {loaded}",
                                pytrace=False)
                return time.monotonic() - t0
        time.sleep(0.25)
    pytest.fail(f"dagster-webserver not ready after {timeout:.0f} s (last: {last}); log: {log_path}", pytrace=False)


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    try:  # the code server it started shares its process group
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ---------------------------------------------------------------- the page


# The border colour of an asset's node in the lineage graph (its box holds the asset's name).
NODE_BORDER_JS = """(name => {
  for (const el of document.querySelectorAll('foreignObject *')) {
    if (el.childElementCount === 0 && el.textContent.trim() === name) {
      for (let e = el; e; e = e.parentElement) {
        if (String(e.className).includes('AssetNodeBox')) return getComputedStyle(e).borderTopColor;
      }
    }
  }
  return null;
})"""


RED_JS = """(c => { const v = (c || '').match(/\\d+/g); return !!v && +v[0] > 150 && +v[1] < 100 && +v[2] < 100; })"""


def _reddish(css_colour: str | None) -> bool:
    r, g, b = (int(v) for v in re.findall(r"\d+", css_colour or "")[:3]) if css_colour else (0, 0, 0)
    return r > 150 and g < 100 and b < 100


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def metadata_table(detail) -> dict[str, str]:
    """``{label: shown value}`` of the check's metadata table."""
    rows = detail.locator("tr").evaluate_all(
        "rows => rows.filter(r => r.cells.length >= 2).map(r => [r.cells[0].innerText, r.cells[1].innerText])")
    return {k.strip(): v.strip() for k, v in rows}


def open_markdown(page, detail, label: str):
    """Open the ``[Show ...]`` dialog of one metadata entry; returns the dialog."""
    row = detail.locator("tr").filter(has=page.locator("td").first.get_by_text(label, exact=True))
    row.get_by_text(re.compile(r"\[Show (Markdown|JSON)\]")).first.click()
    dialog = page.get_by_role("dialog").filter(has_text=label)
    dialog.wait_for()
    return dialog


def close_dialog(page, dialog) -> None:
    dialog.get_by_role("button", name="Close").click()
    dialog.wait_for(state="hidden")


# Where a picture is not whole: every ancestor that clips (overflow other than visible) and whose
# box does not hold the picture's, whether the picture leaves the window, and the points of its
# edges (its bottom edge first) where something else is on top of it.
NOT_WHOLE_JS = """(img => {
  const r = img.getBoundingClientRect();
  const clipped = [];
  for (let e = img.parentElement; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    if (s.overflowX === 'visible' && s.overflowY === 'visible') continue;
    const b = e.getBoundingClientRect();
    if (r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5 || r.left < b.left - 0.5 || r.right > b.right + 0.5) {
      clipped.push(`${e.tagName}.${String(e.className).split(' ')[0]} (overflow ${s.overflowY}, max-height `
                   + `${s.maxHeight}) spans y ${Math.round(b.top)}..${Math.round(b.bottom)}`);
    }
  }
  const off = r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth;
  const covered = [];
  const points = [[r.left + 2, r.bottom - 2], [(r.left + r.right) / 2, r.bottom - 2], [r.right - 2, r.bottom - 2],
                  [r.left + 2, r.top + 2], [r.right - 2, r.top + 2]];
  for (const [x, y] of points) {
    const hit = document.elementFromPoint(x, y);
    if (hit !== img) {
      covered.push(`(${Math.round(x)}, ${Math.round(y)}): ${hit ? hit.tagName + ' ' + (hit.innerText || '').trim() : 'nothing'}`);
    }
  }
  return {y: [Math.round(r.top), Math.round(r.bottom)], window: [innerWidth, innerHeight], clipped,
          off_screen: off, covered};
})"""


def assert_whole(page, image, what: str) -> None:
    """``image``, scrolled into view, is decoded, on screen, inside every
    ancestor that clips and under nothing."""
    page.wait_for_function("i => i.complete && i.naturalWidth > 0", arg=image.element_handle())
    image.scroll_into_view_if_needed()
    seen = image.evaluate(NOT_WHOLE_JS)
    assert not seen["clipped"], f"{what} is cut off by {seen['clipped']} (it spans y {seen['y']})"
    assert not seen["off_screen"], f"{what} is not on screen after scrolling: {seen}"
    assert not seen["covered"], f"{what} is covered at {seen['covered']}"


def pictures(page, within=None):
    """The failing row's pictures (``within`` a dialog, or on the page), in order."""
    return (within or page).locator(", ".join(f"img[alt='{alt}']" for alt in PICTURES))


def test_failing_check_of_a_row_in_the_dagster_ui(tmp_path, monkeypatch):
    _need_browser()  # before the server starts: a missing browser fails at once
    started = time.monotonic()
    timings = {}
    data = materialize(tmp_path, monkeypatch)
    timings["materialize"] = time.monotonic() - started
    m, figures = data["meta"], data["figures"]

    OUTPUT.mkdir(parents=True, exist_ok=True)
    log_path = tmp_path / "dagster-webserver.log"
    proc, port = start_server(tmp_path, {
        "DAGSTER_HOME": str(data["home"]),
        "BOARDGEN_TABLES": str(data["tables"]),
        "BOARDGEN_WAREHOUSE": str(data["root"]),
        "BOARDGEN_SAMPLES": str(N),
        "BOARDGEN_MASTER_SEED": "0",
    }, log_path)
    try:
        timings["server"] = wait_loaded(proc, port, log_path)
        t_browser = time.monotonic()
        with ui_page(1400, OUTPUT / "failure.png") as page:
            # 1. the asset graph: the failure is visible without opening a Partitions tab
            page.goto(f"http://127.0.0.1:{port}/asset-groups/calibration/lineage")
            page.get_by_text("calibration_report", exact=True).last.wait_for()
            # the node is grey while its status loads: wait (bounded) for it to turn red
            try:
                page.wait_for_function(f"() => {RED_JS}({NODE_BORDER_JS}('calibration_report'))")
            finally:
                page.screenshot(path=str(OUTPUT / "asset-graph.png"), full_page=True)
            assert _reddish(page.evaluate(f"{NODE_BORDER_JS}('calibration_report')")), "report not red"
            assert not _reddish(page.evaluate(f"{NODE_BORDER_JS}('validated_rows')")), "a passing asset is red"

            # 2. the table-wide check: the failing row, its fix and its pictures first, decoded and
            # whole in each window
            for width, height in WINDOWS:
                page.set_viewport_size({"width": width, "height": height})
                page.goto(f"http://127.0.0.1:{port}/assets/calibration_report?view=checks"
                          f"&checkDetail={CHECK_EVERY_ROW}")
                page.get_by_text(f"{FAILING} (A)").first.wait_for()
                shot = OUTPUT / f"check-{CHECK_EVERY_ROW}-{width}x{height}.png"
                try:
                    assert page.get_by_text("Failed").first.is_visible()
                    assert page.get_by_text(f"{len(figures['below'])} of {N} boards below target 1.0").first.is_visible()
                    assert page.get_by_text("largest mine_density that passes").first.is_visible()
                    images = pictures(page)
                    images.first.wait_for()
                    alts = images.evaluate_all("imgs => imgs.map(i => i.alt)")
                    assert alts == list(PICTURES), alts
                    assert images.first.is_visible()  # the histogram shows without a click
                    metadata_top = page.get_by_text("Metadata", exact=True).first.bounding_box()["y"]
                    for i, alt in enumerate(alts):
                        img = images.nth(i)
                        assert_whole(page, img, f"the {alt} at {width}x{height}")
                        w, h = img.evaluate("i => [i.naturalWidth, i.naturalHeight]")
                        assert w > 100 and h > 100, (alt, w, h)
                        assert img.bounding_box()["y"] < metadata_top, f"{alt} is not above the metadata"
                finally:
                    page.screenshot(path=str(shot))  # the window as a person sees it
            # every failing row's pictures at full size, in the dialog of one metadata entry
            dialog = open_markdown(page, page, "failing_row_pictures")
            full = pictures(page, within=dialog)
            assert full.evaluate_all("imgs => imgs.map(i => i.alt)") == list(PICTURES)
            for i, alt in enumerate(PICTURES):
                assert_whole(page, full.nth(i), f"the full-size {alt} in failing_row_pictures")
                assert full.nth(i).evaluate("i => i.naturalHeight") > images.nth(i).evaluate("i => i.naturalHeight")
            page.screenshot(path=str(OUTPUT / f"check-{CHECK_EVERY_ROW}-failing_row_pictures.png"))
            close_dialog(page, dialog)
            page.set_viewport_size({"width": 1600, "height": 1400})

            # 3. the table-wide A on boards: the failing row in its verdict, the row's own numbers
            page.goto(f"http://127.0.0.1:{port}/assets/boards?view=checks&checkDetail={CHECK}")
            page.get_by_text(data["description"], exact=True).first.wait_for()
            page.screenshot(path=str(OUTPUT / f"check-{CHECK}.png"), full_page=True)
            assert data["description"] == f"1 of 2 rows fail: {FAILING}: " + data["row_description"]
            assert data["row_description"] == f"{len(figures['below'])} of {N} boards below target 1.0"
            assert page.get_by_text("Failed").first.is_visible()
            table = metadata_table(page)
            assert table["assertion"] == "A" and table["first_failing_row"] == FAILING
            for label in ("failing", "first_failing_figures", f"{FAILING} inferability_histogram",
                          f"{FAILING} worst_board"):
                assert label in table, f"metadata entry {label} not shown: {sorted(table)}"
            dialog = open_markdown(page, page, "first_failing_figures")
            shown = _squash(dialog.inner_text())
            for key, value in (("below_target", len(figures["below"])), ("samples", N),
                               ("exit_passed", figures["exits"]["passed"]), ("worst_scope", m["worst_scope"])):
                assert f'"{key}": {value}' in shown, f"{key} = {value} not in {shown}"
            assert all(str(s) in shown for s in figures["below"]), shown  # the failing scopes
            close_dialog(page, dialog)

            # 4. the rows' states: every row of the table materialized, the failing one's figures on it
            page.goto(f"http://127.0.0.1:{port}/assets/boards?view=partitions")
            page.get_by_text(FAILING, exact=True).first.wait_for()
            page.screenshot(path=str(OUTPUT / "boards-partitions.png"), full_page=True)
            assert page.get_by_text("Materialized").first.is_visible()
        timings["browser"] = time.monotonic() - t_browser
    finally:
        stop_server(proc)
    timings["total"] = time.monotonic() - started
    print(f"browser test timings (s): {', '.join(f'{k} {v:.1f}' for k, v in timings.items())}; "
          f"screenshots in {OUTPUT}")
    assert proc.poll() is not None, "dagster-webserver still running"
