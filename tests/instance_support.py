"""What the tests of the Dagster instance's storage share: one asset that
records a materialization (a run, its own SQLite file, an event in the index)."""

import dagster as dg


@dg.asset
def marked():
    return dg.MaterializeResult(metadata={"n": 1})
