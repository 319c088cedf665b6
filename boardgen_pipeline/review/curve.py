"""The curve export: the difficulty curve, one record per row, from the
warehouse alone (seed 001 P2 "C3 全行审计（曲线导出工具全行矩阵 diff）": C3 own
the curve and read the table's schema, and may not call generation back,
"禁反向调用生成"; SPEC 7 report C and diagnostics D; docs/review.md "The
curve export").

A record holds the row's parameters and its F4 verdicts, p10/p50/p90 of
inferability and of ``inferability_core``, the retry rate, mean attempts and
exit counts, the fog budget and difficulty figures (3BV, openings), what a
perfect player risks (the no-guess share, mean guesses, win rate and mean
survival, each with its 95% interval) and the Boss flag. Most are the row's
stored report (``calibration_report``); the few report C does not keep
(the core's and the openings' percentiles, the no-guess and guesses
intervals) are read from the row's stored boards in the same scan, with the
same interpolation (DuckDB's ``quantile_cont`` is numpy's linear one).
Nothing is generated.

Formats: CSV (the default), Parquet, JSON; PNG (one picture per level,
every figure against depth) and HTML (one self-contained page), drawn on
demand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from boardgen_pipeline.calibration.batch import FAIRNESS_FIGURES
from boardgen_pipeline.errors import SourceError
from boardgen_pipeline.review import svg
from boardgen_pipeline.review.sources import stored_reports
from boardgen_pipeline.tables.board_gen import REPORTED_PARAMETERS
from boardgen_pipeline.warehouse import datasets, publish

REPORT = "calibration_report"
PNG_FOLDER = "curve"
Z95 = 0.95

VERDICTS = ("assertion_a", "assertion_a2", "assertion_a1", "assertion_b", "assertion_b1", "assertion_f", "green")
# report C's columns the curve carries, in its order (the player's with their intervals)
REPORT_COLUMNS = ("samples", "p10", "p50", "p90", "passed", "best_legal", "least_bad", "retry_rate", "mean_attempts",
                  "cap_rejections", "below_target", "illegal", "fog_full_share", "delta_budget_fog_p50",
                  "delta_budget_fog_p90", "fog_burden_ratio_p50", "fog_burden_ratio_p90", "bbbv_p10", "bbbv_p50",
                  "bbbv_p90", "bbbv_per_safe_p50", "solvable_full_logic_share", *FAIRNESS_FIGURES)
BOARD_FIGURES = ("inferability_core_p10", "inferability_core_p50", "inferability_core_p90", "openings_p10",
                 "openings_p50", "openings_p90", "no_guess_share_ci_low", "no_guess_share_ci_high",
                 "mean_guesses_ci_low", "mean_guesses_ci_high")
COLUMNS = ("key", "level_index", "node_depth", "boss_row", *REPORTED_PARAMETERS, "min_mean_survival", *VERDICTS,
           *REPORT_COLUMNS, *BOARD_FIGURES, "row_fingerprint", "batch_fingerprint")

BOARDS_SQL = """
select level_index, node_depth,
       quantile_cont(coalesce(inferability_core, inferability), [0.1, 0.5, 0.9]) as core,
       quantile_cont(openings, [0.1, 0.5, 0.9])                                   as openings,
       count(*) filter (where won is not null)                                    as analysed,
       count(*) filter (where won is not null and forced_guesses = 0)             as no_guess,
       avg(forced_guesses) filter (where won is not null)                         as guesses_mean,
       stddev_samp(forced_guesses) filter (where won is not null)                 as guesses_sd
from read_parquet($files, hive_partitioning = true)
group by level_index, node_depth
"""


def _board_figures(root: Path, keys) -> dict[tuple[int, int], dict]:
    """The figures report C does not keep, from the rows' intact boards files."""
    import duckdb
    from scipy.stats import t
    from statsmodels.stats.proportion import proportion_confint

    files = [str(datasets.partition_path(root, "boards", k)) for k in sorted(keys)
             if publish.intact(root, datasets.partition_path(root, "boards", k))]
    if not files:
        return {}
    con = duckdb.connect()
    try:
        rows = con.execute(BOARDS_SQL, {"files": files}).fetchall()
    finally:
        con.close()
    out = {}
    for level, depth, core, openings, analysed, no_guess, mean, sd in rows:
        figures = {f"inferability_core_p{q}": v for q, v in zip((10, 50, 90), core)}
        figures.update({f"openings_p{q}": v for q, v in zip((10, 50, 90), openings)})
        if analysed:
            low, high = proportion_confint(no_guess, analysed, alpha=1 - Z95, method="wilson")
            figures.update(no_guess_share_ci_low=float(low), no_guess_share_ci_high=float(high))
            if analysed >= 2 and sd:
                low, high = t.interval(Z95, analysed - 1, loc=mean, scale=sd / math.sqrt(analysed))
            else:
                low = high = mean
            figures.update(mean_guesses_ci_low=float(low), mean_guesses_ci_high=float(high))
        out[(int(level), int(depth))] = figures
    return out


def records(root: Path) -> list[dict]:
    """One record per row with an intact report (module docstring), in key order."""
    root = Path(root)
    reports = stored_reports(root)
    if not reports:
        raise SourceError(f"no calibration report in {root}: run `boardgen calibrate` (or `make run`) first")
    boards = _board_figures(root, reports)
    out = []
    for key in sorted(reports):
        report = {**reports[key][0], **boards.get(key, {}), "key": f"{key[0]}-{key[1]}"}
        out.append({name: report.get(name) for name in COLUMNS})
    return out


def encode(rows: list[dict], fmt: str) -> str | bytes:
    """The records as CSV, JSON or Parquet, or the HTML page."""
    if fmt == "csv":
        import pandas as pd

        return pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(index=False)
    if fmt == "json":
        return json.dumps([{k: _plain(v) for k, v in r.items()} for r in rows], indent=1) + "\n"
    if fmt == "parquet":
        return datasets.encode(datasets.records_table(rows, drop=()))
    if fmt == "html":
        return html(rows)
    raise ValueError(f"unknown curve format {fmt!r}")


def _plain(value):
    return None if isinstance(value, float) and math.isnan(value) else value


# The panels of a level's picture: (title, the figure's column, its interval's columns or a band's, the core's).
PANELS = (
    ("inferability p10/p50/p90", "p50", ("p10", "p90")),
    ("inferability core p10/p50/p90", "inferability_core_p50", ("inferability_core_p10", "inferability_core_p90")),
    ("win rate", "win_rate", ("win_rate_ci_low", "win_rate_ci_high")),
    ("mean survival", "mean_survival", ("mean_survival_ci_low", "mean_survival_ci_high")),
    ("no-guess share", "no_guess_share", ("no_guess_share_ci_low", "no_guess_share_ci_high")),
    ("mean guesses", "mean_guesses", ("mean_guesses_ci_low", "mean_guesses_ci_high")),
    ("retry rate", "retry_rate", None),
    ("mean attempts", "mean_attempts", None),
    ("3BV p10/p50/p90", "bbbv_p50", ("bbbv_p10", "bbbv_p90")),
    ("openings p10/p50/p90", "openings_p50", ("openings_p10", "openings_p90")),
    ("fog digging cost p50/p90", "delta_budget_fog_p50", ("delta_budget_fog_p50", "delta_budget_fog_p90")),
    ("fog burden ratio p50/p90", "fog_burden_ratio_p50", ("fog_burden_ratio_p50", "fog_burden_ratio_p90")),
)


FOG_PANELS = frozenset({"delta_budget_fog_p50", "fog_burden_ratio_p50"})  # the fog's panels, by column
# each panel's y unit, by its column
UNITS = {"p50": "share of safe cells", "inferability_core_p50": "share of safe cells", "win_rate": "share of boards",
         "mean_survival": "probability", "no_guess_share": "share of boards", "mean_guesses": "guesses a board",
         "retry_rate": "share of boards", "mean_attempts": "attempts a board", "bbbv_p50": "3BV (clicks)",
         "openings_p50": "openings a board", "delta_budget_fog_p50": "digs (AP)", "fog_burden_ratio_p50": "ratio"}
# the panels with a target, and the column that holds each row's
TARGETS = {"p50": "inferability_target", "inferability_core_p50": "inferability_target",
           "mean_survival": "min_mean_survival"}


def has_fog(rows: list[dict]) -> bool:
    """Whether any row of a level places fog regions."""
    return any(r.get("fog_region_count") for r in rows)


def panels_for(rows: list[dict]) -> tuple:
    """The panels of one level: every panel, but the fog's on a level
    without fog (its rows' fog figures are all zero: empty panels)."""
    return tuple(p for p in PANELS if has_fog(rows) or p[1] not in FOG_PANELS)


def levels(rows: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for r in rows:
        out.setdefault(r["level_index"], []).append(r)
    return {level: sorted(rs, key=lambda r: r["node_depth"]) for level, rs in sorted(out.items())}


def html(rows: list[dict]) -> str:
    """One self-contained page: each level's figures against depth, with a
    y axis in the figure's unit, intervals shaded, the row's target dashed
    where the figure has one, the Boss row as a diamond; no fog panels on a
    level without fog."""
    body = ["<h1>Difficulty curve</h1>",
            f"<p>{len(rows)} rows from the warehouse's calibration reports; bands: 95% intervals or p10-p90. "
            f"{svg.LEGEND}.</p>"]
    for level, mine in levels(rows).items():
        panels = []
        for title, column, band in panels_for(mine):
            points = [(r["node_depth"], r.get(column)) for r in mine]
            shade = [(r["node_depth"], r.get(band[0]), r.get(band[1])) for r in mine] if band else []
            boss = [(r["node_depth"], r.get(column)) for r in mine if r.get("boss_row")]
            targets = [(r["node_depth"], r.get(TARGETS[column])) for r in mine] if column in TARGETS else []
            panels.append(svg.panel(title, [svg.Series(column, "#1f77b4", points, band=shade)], unit=UNITS.get(column, ""),
                                    targets=targets, boss=boss))
        body.append(f"<h2>level {level}</h2><div class=\"level\">{''.join(panels)}</div>")
    return svg.page("difficulty curve", body)


def write_pngs(rows: list[dict], folder: Path) -> list[Path]:
    """One PNG per level (``curve_level_<L>.png``), written atomically."""
    from boardgen_pipeline import files
    from boardgen_pipeline.pictures.charts import curve_level_png

    folder = Path(folder)
    with datasets.storage_faults(folder):
        folder.mkdir(parents=True, exist_ok=True)
        return [files.atomic_write(folder / f"curve_level_{level}.png", curve_level_png(level, mine, panels_for(mine)))
                for level, mine in levels(rows).items()]

