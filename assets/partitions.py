"""One partition per ``board_gen`` row, keyed ``"L-D"`` (SPEC 9; SPEC 10: the
rows are not a full level x depth grid, so one dynamic dimension with
composite keys rather than a MultiPartitionsDefinition). Partitions are
added and removed as rows are (``validated_rows``, the nightly, the
table-edit sensor)."""

import dagster as dg

from .names import PARTITIONS

board_rows = dg.DynamicPartitionsDefinition(name=PARTITIONS)
