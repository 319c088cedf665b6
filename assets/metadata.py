"""What a row partition's materialization records (issue 13 "Dagster's
automatic plots must not draw one series zig-zagging across different rows").

Dagster plots every numeric metadata entry of an asset's materializations as
one series in time order; with one partition per row, that series jumps from
row to row. So a row's figures travel as one JSON entry (and its text
entries stay text); the unpartitioned assets keep plain numbers, whose
series over nights mean something.
"""

import dagster as dg


def row_metadata(figures: dict, path: str | None = None, seconds: dict | None = None) -> dict:
    """A row partition's metadata: its figures (JSON), where its file is, and
    the wall time per stage."""
    out = {"row": str(figures.get("row", "")), "figures": dg.MetadataValue.json(figures)}
    if seconds:
        out["seconds"] = dg.MetadataValue.json({k: round(v, 4) for k, v in seconds.items()})
    if path:
        out["path"] = dg.MetadataValue.path(path)
    return out
