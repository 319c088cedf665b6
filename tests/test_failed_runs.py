"""A failed run is visible: the rows a failed run did not record
read as failed in the asset's partitions, the ones it recorded as
materialized; a row that fails its F4 checks (withheld by A' or published
failing) reads as failed too, its verdict observed and its run failed on
it, and ``boardgen nightly`` counts that as failed checks (exit 3), not a
failed run (exit 4). No setting hides either: the engine plans one
materialization per row partition (no
``DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS``)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from boardgen_pipeline.steps import chain

from .faults_support import row_chain_raises
from .test_pipeline_support import boards_partitions, copy_fixture, defs_for, run_rows, run_validate, step_failures

REPO = Path(__file__).resolve().parent.parent
KEYS = ["1-0", "1-1", "2-0"]


def status(instance) -> dict:
    return instance.get_status_by_partition(dg.AssetKey("boards"), KEYS,
                                            dg.DynamicPartitionsDefinition(name="board_gen_rows"))


def test_a_row_that_raises_fails_the_run_and_reads_as_failed_beside_the_others(tmp_path, monkeypatch):
    real = row_chain_raises(monkeypatch, (1, 1))
    tables, root = copy_fixture("small", tmp_path), tmp_path / "warehouse"
    defs = defs_for(tables, root)
    with dg.instance_for_test() as instance:
        assert run_validate(defs, instance).success
        run = run_rows(defs, instance, KEYS)
        assert not run.success
        assert "1 of 3 rows failed: row 1-1: RuntimeError: planted" in \
            step_failures(run)["calibrate"].user_failure_data.description
        assert boards_partitions(run) == {"1-0", "2-0"}  # the others recorded before the run failed
        assert status(instance) == {"1-0": dg.AssetPartitionStatus.MATERIALIZED,
                                    "1-1": dg.AssetPartitionStatus.FAILED,
                                    "2-0": dg.AssetPartitionStatus.MATERIALIZED}
        # the next run repairs it
        monkeypatch.setattr(chain, "run_row", real)
        assert run_rows(defs, instance, ["1-1"]).success
        assert set(status(instance).values()) == {dg.AssetPartitionStatus.MATERIALIZED}


def test_every_row_is_planned_in_the_run_that_makes_it():
    """The engine's planned event per row partition is what marks a killed run's
    rows as failed: the project never asks for one event a run instead."""
    sources = [p.read_text(encoding="utf-8") for folder in ("assets", "boardgen_pipeline", "scripts")
               for p in (REPO / folder).rglob("*") if p.suffix in (".py", ".sh")]
    sources.append((REPO / "Makefile").read_text(encoding="utf-8"))
    assert not any("EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS" in text for text in sources)
    assert "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS" not in os.environ


def test_a_night_whose_row_fails_f4_exits_3_and_the_row_reads_as_failed(tmp_path):
    """The unmeetable fixture's row (1,1) fails A: its rows run fails on the
    row's verdict, once every row is recorded; the nightly says the check
    failed (exit 3), names no failed run, and the partition reads as failed."""
    from boardgen_pipeline.exits import Exit
    from boardgen_pipeline.steps import night

    from .nightly_support import nightly

    tables, root, home = copy_fixture("unmeetable", tmp_path), tmp_path / "warehouse", tmp_path / "home"
    code, out, err = nightly(tables, root, home, samples="8")
    said = " ".join(out.split())
    assert code == Exit.CHECK_FAILED, out + err
    assert "run failed" not in said and "FAIL table a_no_board_below_target: 1 of 2 rows fail: 1-1" in said
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = [r.dagster_run for r in instance.get_run_records()]
        rows = [r for r in runs if night.stage_of(r.tags.get(night.KEY_TAG, "")) == night.ROWS]
        assert rows and all(r.status == dg.DagsterRunStatus.FAILURE for r in rows)
        assert all(r.is_success for r in runs if r not in rows)
        got = instance.get_status_by_partition(dg.AssetKey("boards"), ["1-0", "1-1"],
                                               dg.DynamicPartitionsDefinition(name="board_gen_rows"))
    assert got == {"1-0": dg.AssetPartitionStatus.MATERIALIZED, "1-1": dg.AssetPartitionStatus.FAILED}
