"""The nightly as it is deployed: the schedule under a real ``dagster-daemon``
(``boardgen ui``, what ``make ui`` runs: the webserver and the daemon) on a
home of its own, the cron set to every minute. Waits, on conditions, for
exactly one scheduled night to finish, stops the daemon, and holds the night
to what ``boardgen nightly`` does (docs/pipeline.md "One nightly"): its
table-wide checks were evaluated in runs of that night, retention ran, its
boards are the records ``boardgen nightly`` writes, and no second night
overlapped it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import dagster as dg
import pyarrow.parquet as pq
import pytest

from boardgen_pipeline.steps import night

from .nightly_support import BOARDGEN
from .test_pipeline_support import copy_fixture

pytestmark = [pytest.mark.integration, pytest.mark.slow]
DEADLINE = 1500  # only turns a hang into a failure: a cold numba cache compiles for minutes in each run process


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _records(root) -> list[dict]:
    """Every board record of the warehouse, hive keys put back, in row and scope order."""
    out = []
    for path in sorted((root / "boards").glob("level_index=*/node_depth=*/part.parquet")):
        level, depth = (int(p.name.split("=")[1]) for p in (path.parent.parent, path.parent))
        out += [{**r, "level_index": level, "node_depth": depth} for r in pq.read_table(path).to_pylist()]
    return sorted(out, key=lambda r: (r["level_index"], r["node_depth"], r["scope"]))


def _nights(instance) -> dict[str, list]:
    runs: dict[str, list] = {}
    for record in instance.get_run_records(dg.RunsFilter(tags={night.TRIGGER_TAG: night.SCHEDULE})):
        runs.setdefault(record.dagster_run.tags[night.NIGHT_TAG], []).append(record)
    return runs


def _over(records) -> bool:
    return any(night.stage_of(r.dagster_run.tags.get(night.KEY_TAG, "")) == night.RETENTION and r.dagster_run.is_finished
               for r in records)


def test_one_scheduled_night_under_the_daemon_is_the_nightly(tmp_path, small_nightly):
    home, root = tmp_path / "home", tmp_path / "warehouse"
    env = {**os.environ, "DAGSTER_HOME": str(home), "BOARDGEN_TABLES": str(copy_fixture("small", tmp_path)),
           "BOARDGEN_WAREHOUSE": str(root), "BOARDGEN_SAMPLES": small_nightly["samples"],
           "BOARDGEN_NIGHTLY_CRON": "* * * * *"}
    log = open(tmp_path / "ui.log", "wb")
    ui = subprocess.Popen([BOARDGEN, "ui", "-p", str(_free_port())], env=env, stdout=log, stderr=subprocess.STDOUT,
                          start_new_session=True)
    first = None
    try:
        deadline = time.monotonic() + DEADLINE
        while first is None:
            assert ui.poll() is None, (tmp_path / "ui.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "no scheduled night finished: " + (tmp_path / "ui.log").read_text()[-3000:]
            # the launcher says DAGSTER_HOME= once it has made the home: opening it before could race its
            # first migration (SPEC 10)
            if "DAGSTER_HOME=" in (tmp_path / "ui.log").read_text(errors="replace"):
                with dg.DagsterInstance.from_config(str(home)) as instance:
                    done = [n for n, records in _nights(instance).items() if _over(records)]
                    first = min(done) if done else None
            time.sleep(1)
    finally:
        if ui.poll() is None:
            os.killpg(ui.pid, signal.SIGTERM)  # what Ctrl-C does: the launcher stops the daemon and the webserver
        ui.wait(timeout=120)
        log.close()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        nights = _nights(instance)
        runs = nights[first]
        stages = [night.stage_of(r.dagster_run.tags[night.KEY_TAG]) for r in runs]
        assert sorted(set(stages)) == ["prepare", "retention", "rows", "table"]
        assert [stages.count(s) for s in ("prepare", "table", "retention")] == [1, 1, 1]
        by_stage = {night.stage_of(r.dagster_run.tags[night.KEY_TAG]): r for r in runs}
        assert all(r.dagster_run.is_success for r in runs), [(r.dagster_run.tags, r.dagster_run.status) for r in runs]
        # a scheduled night reads as the schedule's on the Runs page, not "Manually launched": its prepare run
        # carries the schedule's tag, what follows it the sensor's that asked for it
        assert by_stage[night.PREPARE].dagster_run.tags.get("dagster/schedule_name") == "nightly_calibration"
        assert all(r.dagster_run.tags.get("dagster/sensor_name", "").startswith("night_follow_up_on_")
                   for r in runs if r is not by_stage[night.PREPARE])
        # the night's table-wide checks were evaluated in the night's own table run
        table = by_stage[night.TABLE].dagster_run
        of = dg.DagsterEventType.ASSET_CHECK_EVALUATION
        checks = {r.event_log_entry.dagster_event.event_specific_data.check_name
                  for r in instance.get_records_for_run(table.run_id, of_type=of).records}
        assert {"every_row_passes_f4", "boards_deterministic", "a_no_board_below_target"} <= checks
        # retention ran, as the night's last run
        assert by_stage[night.RETENTION].dagster_run.is_success
        assert max(r.create_timestamp for r in runs) == by_stage[night.RETENTION].create_timestamp
        # no second night overlapped it: every other night began after this one's last run ended
        end = max(r.end_time for r in runs)
        begin = min(r.create_timestamp.timestamp() for r in runs)
        for other, records in nights.items():
            if other != first:
                starts = min(r.create_timestamp.timestamp() for r in records)
                assert starts >= end or max(r.end_time or time.time() for r in records) <= begin, other
    # the boards are the records `boardgen nightly` writes (layouts and metrics), row for row
    assert _records(root) == _records(small_nightly["root"])
