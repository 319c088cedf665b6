"""The truth after an edit, as a designer sees it in the Dagster UI, in a
real browser (docs/decisions/partition-verdicts.md).

1. The repository's tables are calibrated as a night does (the prepare, rows
   and table runs, in this process, into a temporary warehouse and Dagster
   home), then row (2,2) is edited as the designer of the issue did:
   ``max_gen_attempts = 1`` and ``inferability_target = 0.99``, an illegal
   batch that is never published. The table-edit sensor is asked what to run,
   and its run is executed as the daemon would launch it.
2. ``dagster-webserver`` starts on that home (``test_browser.start_server``).
   The GraphQL API the UI reads says: no check's latest execution is "not
   evaluated", the Partitions tab's "Failed" holds 2-2 alone, and E names row
   (2,3), which now decreases with depth, in the words ``boardgen validate``
   prints.
3. Headless Chromium walks the designer's path: ``boards`` red in the asset
   graph; 2-2 counted by the Partitions tab's "Failed" filter, and alone under
   it; its partition page headed by the red banner of the failed run, its
   metadata leading with the verdict and the edited fields; the Checks tab
   without "Not evaluated", A' failed naming 2-2; the run marked Failure, its
   failure naming the changed fields.
4. The edit is reverted (the sensor's run again): green everywhere it was red.

Screenshots go to ``test-output/browser/designer-*.png``. No skip: without
Chromium or Playwright the test fails and says how to get them.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from pathlib import Path

import dagster as dg
import pytest

from boardgen_dagster.home import ensure_dagster_home
from boardgen_pipeline.calibration import assertions
from boardgen_pipeline.cli import main as boardgen

from .test_browser import (
    NODE_BORDER_JS,
    OUTPUT,
    RED_JS,
    _need_browser,
    _reddish,
    start_server,
    stop_server,
    ui_page,
    wait_loaded,
)
from .test_pipeline_support import (
    defs_for,
    edit_row,
    materialize_graph,
    run_request,
    settings_for,
    step_failures,
    tick,
)

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
N = 16
ROW, PK, NEIGHBOUR = (2, 2), "2-2", "2-3"
EDITED = "inferability_target 0.85 -> 0.99, max_gen_attempts 32 -> 1"
CHECKED = ("boards", "variant_overlays", "calibration_report", "calibration_strata", "node_map_draws")


def _graphql(port: int, query: str) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        out = json.loads(resp.read())
    assert "errors" not in out, out
    return out["data"]


CHECKS = """{ assetNodeOrError(assetKey: {path: ["%s"]}) { ... on AssetNode { assetChecksOrError { ... on AssetChecks {
  checks { name executionForLatestMaterialization { status evaluation { description } } } } } } } }"""
PARTITIONS = """{ assetNodeOrError(assetKey: {path: ["boards"]}) { ... on AssetNode {
  assetPartitionStatuses { ... on DefaultPartitionStatuses { failedPartitions materializedPartitions } } } } }"""
RUN = """{ runOrError(runId: "%s") { ... on Run { status } } }"""


def latest_executions(port: int) -> dict[str, dict | None]:
    """``{asset:check: latest execution as the Checks tab shows it}``; None is "Not evaluated"."""
    out = {}
    for asset in CHECKED:
        checks = _graphql(port, CHECKS % asset)["assetNodeOrError"]["assetChecksOrError"]["checks"]
        out.update({f"{asset}:{c['name']}": c["executionForLatestMaterialization"] for c in checks})
    return out


def failed_partitions(port: int) -> list[str]:
    return _graphql(port, PARTITIONS)["assetNodeOrError"]["assetPartitionStatuses"]["failedPartitions"]


def run_status(port: int, run_id: str) -> str:
    return _graphql(port, RUN % run_id)["runOrError"]["status"]


# ---------------------------------------------------------------- the night, the edit, the revert


def edit_run(instance, defs, settings, cursor):
    """What the table-edit sensor asks for, executed as the daemon launches it: ``(result, cursor)``."""
    _, requests, cursor = tick(instance, defs, settings, cursor)
    [request] = requests
    assert request.partition_key == PK
    return run_request(defs, instance, request), cursor


@pytest.fixture(scope="module")
def designer(tmp_path_factory):
    base = tmp_path_factory.mktemp("designer")
    tables = base / "tables"
    shutil.copytree(REPO / "tables", tables)
    root, home = base / "warehouse", base / "dagster_home"
    ensure_dagster_home(home)
    settings, defs = settings_for(tables, root, N), defs_for(tables, root, N)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        _prepare, _rows, table_run = materialize_graph(defs, instance)
        assert table_run.success
        _, _, cursor = tick(instance, defs, settings)
    return {"base": base, "tables": tables, "root": root, "home": home, "settings": settings, "defs": defs,
            "cursor": cursor}


def edit(designer, revert: bool = False):
    """The designer's edit of row (2,2) (or its revert), run as the sensor asks."""
    table = designer["tables"] / "board_gen.toml"
    if revert:
        shutil.copy(REPO / "tables" / "board_gen.toml", table)
    else:
        edit_row(designer["tables"], ROW, "max_gen_attempts", 1)
        edit_row(designer["tables"], ROW, "inferability_target", 0.99)
    with dg.DagsterInstance.from_config(str(designer["home"])) as instance:
        result, designer["cursor"] = edit_run(instance, designer["defs"], designer["settings"], designer["cursor"])
    return result


# ---------------------------------------------------------------- the page


def shot(page, name: str) -> None:
    page.screenshot(path=str(OUTPUT / f"designer-{name}.png"), full_page=True)


def node_is_red(page, port: int, name: str, red: bool) -> None:
    page.goto(f"http://127.0.0.1:{port}/asset-groups/calibration/lineage")
    page.get_by_text(name, exact=True).last.wait_for()
    # the node is grey while its status loads: wait (bounded) for the colour it should have
    want = f"{RED_JS}({NODE_BORDER_JS}('{name}'))"
    page.wait_for_function(f"() => {'' if red else '!'}{want} && {NODE_BORDER_JS}('{name}') !== null")
    assert _reddish(page.evaluate(f"{NODE_BORDER_JS}('{name}')")) is red


def partitions_tab(page, port: int, failed: int) -> None:
    """The Partitions tab of ``boards``: its "Failed" filter counts ``failed``
    rows; shown alone, the failed rows are 2-2 (when there is one)."""
    page.goto(f"http://127.0.0.1:{port}/assets/boards?view=partitions")
    page.get_by_text(f"Failed ({failed})", exact=True).wait_for()
    if failed:
        for other in ("Materialized", "Materializing", "Missing"):  # the "Failed" filter alone
            page.get_by_text(re.compile(rf"^{other} \(\d+\)$")).first.click()
        page.get_by_text(re.compile(r"^1 Partitions? Selected$")).wait_for()  # the UI says "1 Partitions"
        page.get_by_text(PK, exact=True).first.wait_for()
        assert page.get_by_text("2-1", exact=True).count() == 0


def metadata_value(page, label: str) -> str:
    """The value shown beside ``label`` in the partition page's metadata table."""
    row = page.locator("tr").filter(has=page.locator("td", has_text=re.compile(rf"^{re.escape(label)}$"))).first
    return row.locator("td").nth(1).inner_text().strip()


def checks_tab(page, port: int) -> dict[str, str]:
    """The Checks tab of ``boards``: ``{check: the status shown under its name}``
    (the list shows each check's name, then its latest execution's status)."""
    page.goto(f"http://127.0.0.1:{port}/assets/boards?view=checks")
    page.get_by_text("Checks (8)").wait_for()
    names = (*assertions.CHECKS, "boards_deterministic")
    page.get_by_text(re.compile(r"^(Succeeded|Failed)$")).first.wait_for()
    listed = page.locator("body").inner_text().split("Checks (8)", 1)[1]
    shown = {}
    for name in names:
        after = [line.strip() for line in listed.split(name, 1)[1].splitlines() if line.strip()]
        shown[name] = next(line for line in after if line not in names and not line.endswith("…n_fogless_row"))
    return shown


# ---------------------------------------------------------------- the path


def test_a_failing_edit_is_red_everywhere_a_designer_looks_and_its_revert_green(designer, capsys):
    _need_browser()  # before the server starts: a missing browser fails at once
    OUTPUT.mkdir(parents=True, exist_ok=True)
    failing = edit(designer)
    assert not failing.success
    failure = step_failures(failing)["calibrate"].user_failure_data.description
    assert f"2-2 (A, A', B; edited: {EDITED})" in failure
    # validate's words for the neighbour that now decreases with depth
    capsys.readouterr()
    assert boardgen(["validate", "--tables", str(designer["tables"])]) == 0
    [warning] = [line.removeprefix("warning: ") for line in capsys.readouterr().out.splitlines()
                 if line.startswith("warning: ")]
    assert "row (2,3)" in warning

    log = designer["base"] / "dagster-webserver.log"
    proc, port = start_server(designer["base"], {
        "DAGSTER_HOME": str(designer["home"]), "BOARDGEN_TABLES": str(designer["tables"]),
        "BOARDGEN_WAREHOUSE": str(designer["root"]), "BOARDGEN_SAMPLES": str(N), "BOARDGEN_MASTER_SEED": "0"}, log)
    try:
        wait_loaded(proc, port, log)
        # what the UI reads: every check evaluated, 2-2 alone failed, E naming (2,3) as validate does
        executions = latest_executions(port)
        assert [k for k, v in executions.items() if v is None] == [], "a check reads Not evaluated"
        assert executions[f"boards:{assertions.CHECK_A1}"]["status"] == "FAILED"
        e = executions[f"boards:{assertions.CHECK_E}"]
        assert e["status"] == "FAILED" and e["evaluation"]["description"] == f"1 of 15 rows fail: {NEIGHBOUR}: {warning}"
        assert failed_partitions(port) == [PK]
        assert run_status(port, failing.run_id) == "FAILURE"

        with ui_page(1300, OUTPUT / "designer-failure.png") as page:
            # the asset graph: boards red
            node_is_red(page, port, "boards", red=True)
            shot(page, "graph-red")
            # the Partitions tab: 2-2 counted by "Failed", and alone under it
            partitions_tab(page, port, failed=1)
            shot(page, "partitions-failed")
            # the partition page: the failed run's red banner under the header, the verdict and the edit first
            page.goto(f"http://127.0.0.1:{port}/assets/boards?view=partitions&partition={PK}")
            banner = page.get_by_text("failed, and did not materialize this asset.")
            banner.wait_for()
            assert banner.bounding_box()["y"] < page.get_by_text("Latest materialization").first.bounding_box()["y"]
            page.locator("td", has_text=re.compile(r"^F4$")).first.wait_for()
            verdict = metadata_value(page, "F4")
            assert verdict.startswith("FAIL: A: ") and re.search(r"A': \d+ of 16 boards illegal", verdict), verdict
            assert metadata_value(page, "edited") == EDITED
            assert metadata_value(page, "published").startswith("no: the batch is withheld (A')")
            shot(page, "partition-2-2")
            # the Checks tab: no check Not evaluated; A' failed, naming 2-2
            shown = checks_tab(page, port)
            shot(page, "checks")
            assert "Not evaluated" not in shown.values() and "Not Evaluated" not in shown.values(), shown
            assert shown[assertions.CHECK_A1] == "Failed" and shown[assertions.CHECK_A2] == "Succeeded", shown
            page.goto(f"http://127.0.0.1:{port}/assets/boards?view=checks&checkDetail={assertions.CHECK_A1}")
            page.get_by_text(re.compile(r"^1 of 15 rows fail: 2-2: \d+ of 16 boards illegal")).first.wait_for()
            shot(page, "check-a-prime")
            # the run: Failure, its failure naming the changed fields
            page.goto(f"http://127.0.0.1:{port}/runs/{failing.run_id}")
            page.get_by_text("Failure", exact=True).first.wait_for()
            page.get_by_text(f"edited: {EDITED}").first.wait_for()
            shot(page, "run-failure")

            # the revert: green everywhere it was red
            reverted = edit(designer, revert=True)
            assert reverted.success
            executions = latest_executions(port)
            assert all(v is not None and v["status"] == "SUCCEEDED" for v in executions.values()), executions
            assert failed_partitions(port) == [] and run_status(port, reverted.run_id) == "SUCCESS"
            node_is_red(page, port, "boards", red=False)
            shot(page, "graph-green")
            partitions_tab(page, port, failed=0)
            page.goto(f"http://127.0.0.1:{port}/assets/boards?view=partitions&partition={PK}")
            page.locator("td", has_text=re.compile(r"^F4$")).first.wait_for()
            assert metadata_value(page, "F4") == "pass"
            assert page.get_by_text("failed, and did not materialize this asset.").count() == 0
            shot(page, "partition-2-2-green")
            shown = checks_tab(page, port)
            assert set(shown.values()) == {"Succeeded"}, shown
            page.goto(f"http://127.0.0.1:{port}/runs/{reverted.run_id}")
            page.get_by_text("Success", exact=True).first.wait_for()
            shot(page, "run-success")
    finally:
        stop_server(proc)
    assert proc.poll() is not None, "dagster-webserver still running"
