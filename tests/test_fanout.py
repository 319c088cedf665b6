"""Fan-out over Dask (issue 7): a row's batch generated on a real
LocalCluster is bit-identical to the in-process path, through the plain
function and through the Dagster resource."""

from __future__ import annotations

import dagster as dg
import pytest
from distributed import Client, LocalCluster

from assets.definitions import build_definitions
from assets.resources import DaskCluster
from boardgen_pipeline.calibration.batch import batch_scopes, run_row
from boardgen_pipeline.calibration.fanout import chunks, generate_on_cluster
from boardgen_pipeline.tables.board_gen import load_board_gen_dir
from boardgen_pipeline.warehouse import datasets

from .test_pipeline_support import QUIET, copy_fixture, run_partition, run_validate, settings_for

pytestmark = [pytest.mark.filterwarnings(w) for w in QUIET]


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


def test_chunks_cover_the_scopes_in_order():
    parts = chunks(range(10, 75), 32)
    assert [(p.start, p.stop) for p in parts] == [(10, 42), (42, 74), (74, 75)]


@pytest.mark.parametrize("key", [(1, 0), (3, 4)])  # a plain row and a fog row
def test_cluster_records_equal_in_process_records(client, key):
    table = load_board_gen_dir()
    local = run_row(table, key, 40)
    remote = generate_on_cluster(client, table.rows[key], table.spawn_side, table.header.dig_ap_cost,
                                 batch_scopes(*key, 40), chunk=7)
    assert remote == local
    assert len({r["scope"] for r in remote}) == 40


def test_boards_asset_through_the_dask_resource_writes_the_same_bytes(tmp_path):
    tables = copy_fixture("small", tmp_path)
    paths = {}
    for mode in ("in_process", "local"):
        root = tmp_path / mode
        defs = build_definitions(settings_for(tables, root), DaskCluster(mode=mode, local_workers=2))
        with dg.instance_for_test() as instance:
            assert run_validate(defs, instance).success
            assert run_partition(defs, instance, "1-0").success
        paths[mode] = datasets.partition_path(root, "boards", (1, 0)).read_bytes()
    assert paths["local"] == paths["in_process"]


def test_scheduler_mode_needs_an_address():
    with pytest.raises(dg.Failure):
        with DaskCluster(mode="scheduler").client():
            pass
