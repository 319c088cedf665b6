"""What a row partition's materialization records (issue 13 "Failures in
front"; issue 23 "Where the Dagster UI can draw a row's figures over time,
let it").

A row's figures travel as one JSON entry, ``figures`` (all of them, text
included). Its key figures (``PLOTTED``: p10, p50, p90, the pass rate, the
retry rate) are also plain float entries, which the UI plots. For a
partitioned asset, Dagster 1.13 draws them two ways: by partition (the
default: each row's latest value, side by side, 120 rows at most) and by
event (the asset's last 100 materializations in time order: a row's
successive versions while a designer edits that row, one run per edit, but
interleaved across rows after a run over many). It has no plot of one partition over time: a row's
trajectory is ``boardgen history`` and the ``calibration_history`` view
(``steps.history``). The unpartitioned assets keep plain numbers, whose
series over nights mean something.
"""

import dagster as dg

PLOTTED = ("p10", "p50", "p90", "pass_rate", "retry_rate")


def row_metadata(figures: dict, path: str | None = None, seconds: dict | None = None) -> dict:
    """A row partition's metadata: its figures (JSON), the key ones again as
    numbers Dagster plots, where its file is, and the wall time per stage."""
    out = {"row": str(figures.get("row", "")), "figures": dg.MetadataValue.json(figures)}
    out.update({name: dg.MetadataValue.float(float(figures[name])) for name in PLOTTED
                if figures.get(name) is not None})
    if seconds:
        out["seconds"] = dg.MetadataValue.json({k: round(v, 4) for k, v in seconds.items()})
    if path:
        out["path"] = dg.MetadataValue.path(path)
    return out
