"""When the calibration runs (SPEC 9): the table-edit sensor regenerates
exactly the edited rows (others' Parquet bytes and mtimes untouched), adds
and removes partitions with rows; a scheduled night goes prepare, rows,
table checks, retention, each asked for once; the loaded definitions are
what they should be."""

from __future__ import annotations

import datetime as dt

import dagster as dg

from boardgen_dagster.automation import NIGHTLY_CRON, nightly_calibration
from boardgen_dagster.names import PREPARE_JOB, ROW_ASSETS, STRATA, TABLES
from boardgen_pipeline.calibration import assertions, fingerprints
from boardgen_pipeline.check_names import CHECK_CORRIDOR
from boardgen_pipeline.steps import currency, determinism, draw_node_maps, night, stratify
from boardgen_pipeline.steps.table_check import CHECK_EVERY_ROW
from boardgen_pipeline.variants import outcomes as overlay_row
from boardgen_pipeline.warehouse import datasets
from boardgen_pipeline.warehouse.publish import REJECTED

from .test_pipeline_support import (
    checks_of,
    copy_fixture,
    defs_for,
    edit_row,
    files_state,
    materialize_graph,
    parquet_records,
    request_rows,
    run_request,
    settings_for,
    tick,
)

ROW_SELECTION = [dg.AssetKey(a) for a in (*TABLES, *ROW_ASSETS, STRATA)]
TABLE_CHECKS = {f"{a}:{c}" for a, names in (("boards", (*assertions.CHECKS, determinism.CHECK)),
                                             ("variant_overlays", overlay_row.CHECKS),
                                             ("calibration_report", (CHECK_EVERY_ROW, CHECK_CORRIDOR)),
                                             ("calibration_strata", (stratify.CHECK_COMPLETE,))) for c in names}


def checks_asked(request) -> set[str]:
    return {f"{k.asset_key.to_user_string()}:{k.name}" for k in request.asset_check_keys}


def execute(defs, instance, requests):
    """Run what the sensor asked for, with the selection and the partitions it asked for; the results."""
    results = [run_request(defs, instance, req) for req in requests]
    assert all(r.success for r in results)
    return results


def test_editing_one_row_regenerates_exactly_its_partition(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    settings = settings_for(tables, root)
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        materialize_graph(defs, instance)
        before = files_state(root)
        # boards, variant_overlays, calibration_report, row_checks and one calibration_history version for
        # 3 rows; draws; strata
        assert len(before) == 17

        # nothing changed: the sensor has nothing to do
        result, requests, cursor = tick(instance, defs, settings)
        assert requests == [] and "3 rows unchanged" in result.skip_reason.skip_message

        edit_row(tables, (1, 0), "inferability_target", 0.86)
        result, requests, cursor = tick(instance, defs, settings, cursor)
        # one run per edit: the row, then the table-wide checks and the figures that read its report
        assert [r.partition_key for r in requests] == ["1-0"]
        assert requests[0].tags["boardgen/reason"] == "rows changed: 1-0"
        # not the node-map draws, whose inputs (pools, adventures, row keys) did not change
        assert list(requests[0].asset_selection) == ROW_SELECTION
        assert checks_asked(requests[0]) == TABLE_CHECKS
        # asked again before the run stored the new fingerprint: not requested twice
        _, again, _ = tick(instance, defs, settings, cursor)
        assert again == []

        (edit,) = execute(defs, instance, requests)
        # the rows' F4 verdicts are recorded before the stratified figures are computed: what a designer
        # waits for after an edit comes first (neither reads the other)
        events = edit.all_events
        f4 = [i for i, e in enumerate(events) if e.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION
              and e.asset_check_evaluation_data.asset_key == dg.AssetKey("boards")]
        strata = next(i for i, e in enumerate(events) if e.is_step_materialization
                      and e.asset_key == dg.AssetKey("calibration_strata"))
        assert len(f4) == len(assertions.CHECKS) + 1 and max(f4) < strata
        # the edit run's verdict carries what the edit did to the row, against its previous version
        every = {c.check_name: c for c in edit.get_asset_check_evaluations()}[CHECK_EVERY_ROW]
        shown = every.metadata["edited 1-0 against its previous version"].value
        # the changed field first, then the verdict, then the paired figures
        assert shown.startswith("**Row (1,0) edited: inferability_target 0.85 -> 0.86**\n\nF4: F4 passes -> F4 passes")
        assert "**paired** on the same 8 scopes" in shown
        # and on the row's partition page: what the edit changed
        page = {e.partition: e.materialization.metadata for e in edit.get_asset_materialization_events()
                if e.asset_key == dg.AssetKey("boards")}
        assert page["1-0"]["edited"].value == "inferability_target 0.85 -> 0.86"
        after = files_state(root)
        changed = {p for p in after if after[p] != before.get(p)}
        # the node-map draws and the figures (the fixture has no pools) are recomputed in the run,
        # byte-identical, so their files are not rewritten
        history = {p for p in changed if p.startswith("calibration_history/level_index=1/node_depth=0/")}
        assert len(history) == 1 and history <= set(after) - set(before)  # a version added, none rewritten
        assert changed - history == {f"{d}/level_index=1/node_depth=0/part.parquet" for d in
                                     ("boards", "variant_overlays", "calibration_report", "row_checks")}
        for path in before:  # untouched rows: same bytes, same mtime
            if path not in changed:
                assert after[path] == before[path], path
        _, requests, cursor = tick(instance, defs, settings, cursor)
        assert requests == []


def _edit_run(instance, defs, settings, cursor, tables, key, field, value):
    """Edit one field of one row, and run what the sensor asks for: the row's run (its result, the cursor)."""
    edit_row(tables, key, field, value)
    _, requests, cursor = tick(instance, defs, settings, cursor)
    assert [r.partition_key for r in requests] == [f"{key[0]}-{key[1]}"]
    [result] = [run_request(defs, instance, r) for r in requests]
    return result, cursor


def test_an_edit_of_a_row_rejudges_its_neighbours_e_as_validate_does(tmp_path, capsys):
    """E compares a level's rows: an edit of (1,0) decides whether (1,1), which
    is not regenerated, decreases with depth. The edit run's E, the partition
    page of (1,1) and the summary judge it on the table as it is now, as
    ``boardgen validate`` does, in both directions."""
    from boardgen_pipeline.catalog import load_catalog
    from boardgen_pipeline.cli import main as boardgen
    from boardgen_pipeline.steps import summary

    from .test_pipeline_support import boards_observations, meta

    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    settings = settings_for(tables, root)
    defs = defs_for(tables, root)

    def validate_warnings() -> list[str]:
        capsys.readouterr()
        assert boardgen(["validate", "--tables", str(tables)]) == 0
        return [line.removeprefix("warning: ") for line in capsys.readouterr().out.splitlines()
                if line.startswith("warning: ")]

    def e_of_the_summary() -> bool:
        rows = summary.table_rows(root, load_catalog(tables), settings.samples)
        return rows.listed["1-1"]["checks"][assertions.CHECK_E]["passed"]

    with dg.instance_for_test() as instance:
        _, _, table_run = materialize_graph(defs, instance)
        assert not checks_of(table_run)[assertions.CHECK_E].passed  # the fixture: (1,1) decreases from (1,0)
        _, _, cursor = tick(instance, defs, settings)
        # (1,0) made sparser: (1,1) no longer decreases, though its stored verdict (its batch's) says it does
        edit, cursor = _edit_run(instance, defs, settings, cursor, tables, (1, 0), "mine_density", 0.19)
        e = checks_of(edit)[assertions.CHECK_E]
        assert validate_warnings() == [] and e.passed and e.description == "all 3 rows pass"
        assert boards_observations(edit)["1-1"]["E (e_monotone_in_depth)"].value == "pass"
        assert e_of_the_summary()
        # (1,0) made denser than (1,1): now (1,1) breaks monotonicity, named as validate names it
        edit, cursor = _edit_run(instance, defs, settings, cursor, tables, (1, 0), "mine_density", 0.23)
        [warning] = validate_warnings()
        assert "row (1,1)" in warning
        e = checks_of(edit)[assertions.CHECK_E]
        assert not e.passed and e.severity == dg.AssetCheckSeverity.WARN
        assert meta(e)["failing"] == {"1-1": warning} and e.description == f"1 of 3 rows fail: 1-1: {warning}"
        page = boards_observations(edit)["1-1"]
        assert page["F4"].value == "pass (warning: E)" and page["E (e_monotone_in_depth)"].value == f"warning: {warning}"
        assert "row (1,0) changed" in page["re-judged"].value
        assert not e_of_the_summary()
        assert edit.success  # a warning turns nothing red


def test_adding_and_removing_rows_adds_and_removes_partitions(tmp_path):
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    settings = settings_for(tables, root)
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        materialize_graph(defs, instance)
        before = files_state(root)
        path = tables / "board_gen.toml"
        text = path.read_text()
        block = text[text.index("[[rows]]\nlevel_index = 1\nnode_depth = 1"):text.index("[[rows]]\nlevel_index = 2")]
        path.write_text(text + "\n" + block.replace("node_depth = 1  #", "node_depth = 2  #"))

        result, requests, cursor = tick(instance, defs, settings)
        # (1,1) is no longer level 1's Boss row: its overlays are placed again; (1,2) is new. One run
        # covers both: the range 1-1 .. 1-2 in partition order (2-0 sits between them: regenerated
        # bit-identical, so its files are not rewritten)
        assert len(requests) == 1 and requests[0].tags["boardgen/reason"] == "rows changed: 1-2"
        assert list(requests[0].asset_selection) == ROW_SELECTION  # no pools: the draws stay empty
        assert instance.get_dynamic_partitions("board_gen_rows") == ["1-0", "1-1", "2-0", "1-2"]
        assert request_rows(requests[0], instance.get_dynamic_partitions("board_gen_rows")) == ["1-1", "2-0", "1-2"]
        execute(defs, instance, requests)
        assert datasets.partition_path(root, "boards", (1, 2)).exists()
        overlays_11 = "variant_overlays/level_index=1/node_depth=1/part.parquet"
        assert files_state(root)[overlays_11] != before[overlays_11]
        assert not any(r["is_boss"] for r in parquet_records(root / overlays_11))
        _, again, cursor = tick(instance, defs, settings, cursor)
        assert again == []

        # remove row (2,0): its partition and its files go, nothing else is touched
        text = path.read_text()
        start = text.index("[[rows]]\nlevel_index = 2")
        end = text.index("[[rows]]", start + 1)
        path.write_text(text[:start] + text[end:])
        result, requests, cursor = tick(instance, defs, settings, cursor)
        assert len(requests) == 1 and not requests[0].partition_key
        assert "2-0" not in instance.get_dynamic_partitions("board_gen_rows")
        execute(defs, instance, requests)
        after = files_state(root)
        # the row's published files go; its calibration history stays (the past of a row put back)
        assert not [p for p in after if "level_index=2" in p and not p.startswith("calibration_history/")]
        assert [p for p in after if "level_index=2" in p] == [p for p in before if p.startswith(
            "calibration_history/level_index=2/")]
        report_11 = "calibration_report/level_index=1/node_depth=1/part.parquet"  # boss_row is now false
        checks_11 = "row_checks/level_index=1/node_depth=1/part.parquet"  # its Boss check's figures too
        for p, state in before.items():
            if "level_index=2" not in p and p not in (overlays_11, report_11, checks_11):
                assert after[p] == state, p


def test_an_invalid_table_is_reported_once_by_the_sensor(tmp_path):
    tables, root = copy_fixture("bad", tmp_path), tmp_path / "warehouse"
    settings = settings_for(tables, root)
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        result, requests, cursor = tick(instance, defs, settings)
        assert len(requests) == 1 and list(requests[0].asset_selection) == [dg.AssetKey(a) for a in TABLES]
        result, requests, _ = tick(instance, defs, settings, cursor)
        assert requests == [] and "table violations" in result.skip_reason.skip_message


def follow_up(instance, defs, run):
    """What the daemon's run-status sensor asks for when ``run`` ends."""
    from boardgen_dagster.automation import night_follow_up

    sensor = next(s for s in night_follow_up if s.name.endswith(run.status.value.lower()))
    event = instance.get_records_for_run(run.run_id, of_type=dg.DagsterEventType.RUN_SUCCESS
                                         if run.is_success else dg.DagsterEventType.RUN_FAILURE).records[0]
    with dg.build_run_status_sensor_context(sensor_name=sensor.name, dagster_instance=instance, dagster_run=run,
                                            dagster_event=event.event_log_entry.dagster_event,
                                            repository_def=defs.get_repository_def()) as context:
        result = sensor(context)
    return [] if isinstance(result, dg.SkipReason) else list(result)


def test_a_scheduled_night_runs_prepare_then_its_rows_then_the_checks_then_retention(tmp_path, monkeypatch):
    """The schedule asks for the night's prepare run over the pinned tables;
    each time a run of the night ends, the follow-up sensor asks for what
    comes next, once: the rows (three rows: one range), the table run once
    every row run has ended, retention after it; then nothing. A tick while the night
    runs is skipped with its reason."""
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    for name, value in (("BOARDGEN_TABLES", tables), ("BOARDGEN_WAREHOUSE", root), ("BOARDGEN_SAMPLES", "8")):
        monkeypatch.setenv(name, str(value))
    defs = defs_for(tables, root)
    assert nightly_calibration.cron_schedule == NIGHTLY_CRON == "0 2 * * *"
    when = dt.datetime(2026, 12, 1, 2, 0, tzinfo=dt.UTC)
    with dg.instance_for_test() as instance:
        # a context manager: the context opens its own instance from the ref, which must close
        # before the test's instance does (else its state storage outlives it)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when,
                                       repository_def=defs.get_repository_def()) as context:
            (prepare,) = nightly_calibration.evaluate_tick(context).run_requests
        tonight = prepare.tags[night.NIGHT_TAG]
        assert tonight.startswith("2026-12-01T020000-schedule-") and prepare.run_key == f"{tonight}:prepare"
        assert prepare.tags[night.FOLLOW_TAG] == night.DAEMON and night.stage_of(prepare.tags[night.KEY_TAG]) == night.PREPARE
        # launched from the schedule's page (the request's tags alone), the run still reads as the schedule's
        assert prepare.tags["dagster/schedule_name"] == "nightly_calibration"
        pinned = prepare.run_config["resources"]["settings"]["config"]["tables_dir"]
        assert pinned == str(root / "_tables" / fingerprints.tables_digest(tables)[0])
        assert fingerprints.tables_digest(pinned) == fingerprints.tables_digest(tables)
        assert instance.get_dynamic_partitions("board_gen_rows") == ["1-0", "1-1", "2-0"]
        done = run_request(defs, instance, prepare, job=PREPARE_JOB)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when,
                                       repository_def=defs.get_repository_def()) as context:
            fresh = instance.create_run_for_job(defs.resolve_job_def(PREPARE_JOB), tags=prepare.tags)
            skipped = nightly_calibration.evaluate_tick(context)
            instance.delete_run(fresh.run_id)
        assert skipped.skip_message.startswith(f"night {tonight} is still running")
        # one request at a time, as the runs end: what each end asks for
        asked, queue = [], follow_up(instance, defs, instance.get_run_by_id(done.run_id))
        asked.append([r.run_key for r in queue])
        launched = {r.run_key for r in queue}
        while queue:
            done = run_request(defs, instance, queue.pop(0))
            assert done.success
            # the daemon launches a sensor's run key once (the request asked again before the run exists)
            more = [r for r in follow_up(instance, defs, instance.get_run_by_id(done.run_id))
                    if r.run_key not in launched]
            launched |= {r.run_key for r in more}
            asked.append([r.run_key for r in more])
            queue += more
        # two executors by default (the queue's concurrency): the draws cost more than these three tiny rows,
        # so one executor draws and the other takes every row in one range; the table run once it ended;
        # retention after the table run; asked for once each
        assert asked == [[f"{tonight}:rows-000"], [f"{tonight}:table"], [f"{tonight}:retention"], []]
        runs = instance.get_runs(filters=dg.RunsFilter(tags={night.NIGHT_TAG: tonight}))
        assert sorted(night.stage_of(r.tags[night.KEY_TAG]) for r in runs) == ["prepare", "retention", "rows", "table"]
        # few tags a run on the Runs page: a rows run says its night, key, count, trigger, follower, launcher
        # (and Dagster's range), each once
        rows_run = next(r for r in runs if night.stage_of(r.tags[night.KEY_TAG]) == night.ROWS)
        ours = sorted(k for k in rows_run.tags if k.startswith("boardgen/"))
        assert ours == sorted([night.NIGHT_TAG, night.KEY_TAG, night.OF_TAG, night.TRIGGER_TAG, night.FOLLOW_TAG,
                               night.LAUNCHER_TAG]), ours

    bad_tables = copy_fixture("bad", tmp_path / "bad")
    monkeypatch.setenv("BOARDGEN_TABLES", str(bad_tables))
    with dg.instance_for_test() as instance:
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=when) as context:
            request = nightly_calibration(context)
        assert request.partition_key is None and list(request.asset_selection) == [dg.AssetKey(a) for a in TABLES]
        assert request.tags[night.FOLLOW_TAG] == "none"


SNAPSHOT = {
    "assets": ["boards", "calibration_report", "calibration_strata", "curve_proposal", "godot_resources",
               "node_map_draws", "seed_batches", "table_files", "tuned_rows", "validated_rows", "variant_overlays"],
    "partitioned": ["boards", "tuned_rows"],
    "deps": {
        "validated_rows": ["table_files"],
        "seed_batches": ["validated_rows"],
        "boards": ["seed_batches"],
        "variant_overlays": ["boards"],
        "calibration_report": ["boards", "variant_overlays"],
        "node_map_draws": ["validated_rows"],
        "calibration_strata": ["calibration_report", "node_map_draws"],
        "godot_resources": ["calibration_strata"],
        "tuned_rows": ["validated_rows"],
        "curve_proposal": ["validated_rows"],
    },
    "checks": sorted([f"boards:{c}" for c in (*assertions.CHECKS, determinism.CHECK)]
                     + [f"variant_overlays:{c}" for c in overlay_row.CHECKS]
                     + [f"node_map_draws:{c}" for c in draw_node_maps.CHECKS]
                     + [f"calibration_strata:{stratify.CHECK_COMPLETE}"]
                     + [f"calibration_report:{CHECK_EVERY_ROW}", f"calibration_report:{CHECK_CORRIDOR}"]),
    "blocking": [],
    "jobs": ["calibration_job", "calibration_prepare", "calibration_retention", "calibration_rows", "calibration_table",
             "curve_tune_job"],
    "job_assets": {"calibration_job": ["boards", "calibration_report", "calibration_strata", "node_map_draws",
                                       "seed_batches", "table_files", "validated_rows", "variant_overlays"],
                   "calibration_prepare": ["node_map_draws", "table_files", "validated_rows"],
                   "calibration_retention": [],
                   "calibration_rows": ["boards", "calibration_report", "seed_batches", "variant_overlays"],
                   "calibration_table": ["calibration_strata", "godot_resources"],
                   "curve_tune_job": ["curve_proposal", "tuned_rows"]},
    "schedules": {"nightly_calibration": "0 2 * * *"},
    "sensors": ["night_follow_up_on_canceled", "night_follow_up_on_failure", "night_follow_up_on_success",
                "table_edit_sensor"],
}


def test_definitions_snapshot():
    from boardgen_dagster.definitions import defs

    # Loading definitions reads the current instance's defs-state storage, a context
    # variable that instances disposed earlier in the session may have left stale.
    with dg.instance_for_test():
        dg.Definitions.validate_loadable(defs)
        repo = defs.get_repository_def()
    graph = repo.asset_graph
    keys = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    checks = {c for c in graph.asset_check_keys}
    snapshot = {
        "assets": keys,
        "partitioned": sorted(k for k in keys if graph.get(dg.AssetKey(k)).partitions_def is not None),
        "deps": {k: sorted(p.to_user_string() for p in graph.get(dg.AssetKey(k)).parent_keys)
                 for k in keys if graph.get(dg.AssetKey(k)).parent_keys},
        "checks": sorted(f"{c.asset_key.to_user_string()}:{c.name}" for c in checks),
        "blocking": sorted(f"{c.asset_key.to_user_string()}:{c.name}" for c in checks
                           if graph.get_check_spec(c).blocking),
        "jobs": sorted(j.name for j in repo.get_all_jobs() if not j.name.startswith("__")),
        "job_assets": {j.name: sorted(k.to_user_string() for k in j.asset_layer.selected_asset_keys)
                       for j in repo.get_all_jobs() if not j.name.startswith("__")},
        "schedules": {s.name: s.cron_schedule for s in repo.schedule_defs},
        "sensors": sorted(s.name for s in repo.sensor_defs),
    }
    assert snapshot == SNAPSHOT
    for c in checks:  # table-wide checks: one result for the whole table, a handful of events a run
        assert graph.get_check_spec(c).partitions_def is None
    # a backfill from the UI: one run per range of rows, each recording its own
    from boardgen_dagster.calibration import ROWS_PER_RUN

    assert graph.get(dg.AssetKey("boards")).backfill_policy == dg.BackfillPolicy.multi_run(ROWS_PER_RUN)
    assert graph.get(dg.AssetKey("boards")).partitions_def.name == "board_gen_rows"


def test_rejected_rows_count_as_stored_so_the_sensor_does_not_loop(tmp_path):
    import shutil

    from .test_pipeline_support import FIXTURES

    tables, root = copy_fixture("illegal", tmp_path), tmp_path / "warehouse"
    # with a variation table: a rejected row has no overlays, and must not be asked for them
    shutil.copy(FIXTURES / "small" / "variation.toml", tables / "variation.toml")
    settings = settings_for(tables, root)
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        materialize_graph(defs, instance)
        assert (root / REJECTED).exists()
        now = fingerprints.fingerprints_now(settings.load_catalog().board_gen, settings.samples, 0)
        assert currency.fingerprints_stored(root, now) == now
        _, requests, _ = tick(instance, defs, settings)
        assert requests == []
