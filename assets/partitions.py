"""One partition per ``board_gen`` row, keyed ``"L-D"`` (SPEC 9; SPEC 10: the
rows are not a full level x depth grid, so one dynamic dimension with
composite keys rather than a MultiPartitionsDefinition). Partitions are
added and removed as rows are (``validated_rows``, the nightly, the table
sensor). A backfill from the UI makes one run per ``ROWS_PER_RUN`` rows
(``$BOARDGEN_ROWS_PER_RUN``): runs are what spreads the work (issue 28)."""

import os

import dagster as dg

from .names import PARTITIONS

board_rows = dg.DynamicPartitionsDefinition(name=PARTITIONS)
ROWS_PER_RUN = int(os.environ.get("BOARDGEN_ROWS_PER_RUN") or 250)
