"""Calibration figures per ``level x template`` and per pool (SPEC 4
"Stratified measurement"; seed 004 "测量对账：分层出数").

A template's figure is the mean over its battle and boss nodes of their
``(level, depth)`` row's figure (``nodemap.stratify``: one node one board, a
row standing at three nodes counts three times, a step-2 slot with the share
of its candidates that are boards). The pool's figure is the mean of its
templates' figures weighted by their draw probabilities: the pool draws
uniformly (SPEC 4 "Draw"), so each template weighs ``1/N``. Beside the
designed probability each record carries the share the ``node_map_draws``
batch observed, so a reader can see the weights were honest.

Only *current* row reports count: a report whose ``batch_fingerprint`` is not
the row's fingerprint now (the table changed since, and the row has not been
regenerated yet) or a row without a report (an illegal batch is never
reported) leaves the templates standing on it without figures
(``complete = false``, ``missing_rows`` names the rows), and the pool figure
of that level empty: a mean over fewer nodes would be a different figure
under the same name.

The dataset ``calibration_strata`` (``<warehouse>/calibration_strata/
strata.parquet``, DuckDB view ``calibration_strata``) holds one record per
template (``kind = 'template'``) and one per pool (``kind = 'pool'``,
``template_id = '*'``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from boardgen_pipeline.calibration.fingerprints import (
    fingerprints_now,
    inputs_fingerprint,
    partition_key,
    reports_fingerprint,
)
from boardgen_pipeline.check_names import CHECK_COMPLETE
from boardgen_pipeline.nodemap import Pool, stratify
from boardgen_pipeline.nodemap.validate import board_nodes
from boardgen_pipeline.outcomes import CheckOutcome
from boardgen_pipeline.steps import draw_node_maps
from boardgen_pipeline.warehouse import publish

DATASET = "calibration_strata"


FILE = "strata"


# The difficulty figures of report C, stratified like the others:
# what a player meets on a template's boards, on average over its nodes.
# Reports written before the difficulty figures lack them: the figures are then left empty.
DIFFICULTY_FIGURES = ("bbbv_p50", "bbbv_per_safe_p50", "subset_steps_p50", "solvable_full_logic_share")


# Row figures of calibration_report that are averaged (all per-board means or
# percentiles of the row's batch; counts are not, they depend on N).
FIGURES = ("p10", "p50", "p90", "retry_rate", "mean_attempts") + DIFFICULTY_FIGURES
REPORT_COLUMNS = ("batch_fingerprint", *FIGURES)  # what the strata read of a report




DESCRIPTION = ("Every template of every pool has figures: each battle/boss node's row has a current calibration "
               "report (warning: a row not yet regenerated or not published leaves its templates without figures; "
               "the check says which, and why).")


def dataset_schema():
    import pyarrow as pa

    i, s, b, f = pa.int64(), pa.string(), pa.bool_(), pa.float64()
    return pa.schema([
        ("level_index", i), ("kind", s), ("template_id", s), ("template_name", s), ("fixed", b),
        ("draw_probability", f), ("observed_draw_share", f), ("board_nodes", i), ("rows", pa.list_(s)),
        ("complete", b), ("missing_rows", pa.list_(s)),
        *[(name, f) for name in FIGURES],
        ("reports_fingerprint", s), ("pools_digest", s), ("inputs_fingerprint", s),
    ])


def current_reports(reports: dict[tuple[int, int], dict], table, samples: int, master_seed: int
                    ) -> tuple[dict[tuple[int, int], dict], list[str]]:
    """The reports whose batch fingerprint is the row's fingerprint now, and
    the partition keys of the stale ones."""
    now = fingerprints_now(table, samples, master_seed)
    current, stale = {}, []
    for key, rec in sorted(reports.items()):
        if now.get(partition_key(key)) == rec.get("batch_fingerprint"):
            current[key] = rec
        else:
            stale.append(partition_key(key))
    return current, stale


def observed_shares(draws: list[dict], pools_fp: str | None) -> dict[tuple[int, str], float]:
    """Share of the drawing branch's level starts that drew each template
    (draw records of the same pool content only)."""
    counts: Counter = Counter()
    totals: Counter = Counter()
    for r in draws:
        if r.get("pools_digest") != pools_fp or r.get("first_adventure") or r.get("source") != "draw":
            continue
        counts[(r["level_index"], r["template_id"])] += 1
        totals[r["level_index"]] += 1
    return {k: n / totals[k[0]] for k, n in counts.items()}


def strata_records(pools: dict[int, Pool], row_figures: dict[tuple[int, int], dict],
                   shares: dict[tuple[int, str], float] | None = None, *, reports_fp: str = "",
                   pools_fp: str = "", inputs_fp: str = "") -> list[dict]:
    """One record per template and one per pool, level by level. A template
    whose rows all have figures gets them (``nodemap.stratify`` on the
    template alone); the pool figure needs every template complete
    (``nodemap.stratify`` on the pool, uniform draw probabilities)."""
    shares = shares or {}
    out = []
    for level, pool in sorted(pools.items()):
        n = len(pool.templates)
        complete_pool = True
        for t in pool.templates:
            nodes = board_nodes(t)
            rows = [partition_key((level, d)) for _, _, d in nodes]
            missing = sorted({partition_key((level, d)) for _, _, d in nodes if (level, d) not in row_figures})
            figures = {name: None for name in FIGURES}
            if not missing:
                single = Pool(level, (t,), pool.file, pool.procedural)
                figures.update(stratify(row_figures, single, {t.id: 1.0}).template_figures[t.id])
            else:
                complete_pool = False
            out.append({"level_index": level, "kind": "template", "template_id": t.id, "template_name": t.name,
                        "fixed": t.fixed, "draw_probability": 1 / n,
                        "observed_draw_share": shares.get((level, t.id)), "board_nodes": len(nodes), "rows": rows,
                        "complete": not missing, "missing_rows": missing, **figures,
                        "reports_fingerprint": reports_fp, "pools_digest": pools_fp, "inputs_fingerprint": inputs_fp})
        figures = {name: None for name in FIGURES}
        if complete_pool:
            figures.update(stratify(row_figures, pool).pool_figures)
        out.append({"level_index": level, "kind": "pool", "template_id": "*", "template_name": f"level {level} pool",
                    "fixed": False, "draw_probability": 1.0, "observed_draw_share": None,
                    "board_nodes": None, "rows": sorted({r for rec in out if rec["level_index"] == level
                                                         and rec["kind"] == "template" for r in rec["rows"]}),
                    "complete": complete_pool,
                    "missing_rows": sorted({m for rec in out if rec["level_index"] == level
                                            and rec["kind"] == "template" for m in rec["missing_rows"]}),
                    **figures, "reports_fingerprint": reports_fp, "pools_digest": pools_fp,
                    "inputs_fingerprint": inputs_fp})
    return out


def row_figures_of(reports: dict[tuple[int, int], dict]) -> dict[tuple[int, int], dict]:
    """The figures every report has (a figure some report lacks is left out
    for all: a mean over part of the nodes would be another figure)."""
    names = [n for n in FIGURES if all(r.get(n) is not None for r in reports.values())]
    return {k: {name: float(r[name]) for name in names} for k, r in reports.items()}


def missing_reasons(root, table, samples: int, master_seed: int, missing) -> dict[str, str]:
    """Why each row of ``missing`` (partition keys) has no current report, in
    the words a designer acts on: its batch fails A' (withheld: the F4 checks
    name it), it was not regenerated since the table changed, or it was never
    calibrated."""
    from boardgen_pipeline.calibration.fingerprints import row_key
    from boardgen_pipeline.steps import currency

    now = fingerprints_now(table, samples, master_seed)
    out = {}
    for pk in missing:
        stored = currency.stored_batch(root, row_key(pk)) if pk in now else None
        if pk not in now:
            out[pk] = "not in the table"
        elif stored is None:
            out[pk] = "never calibrated"
        elif "damaged" in stored:
            out[pk] = "a damaged file (the next run makes it again)"
        elif stored["batch_fingerprint"] != now[pk]:
            out[pk] = "not regenerated since the table changed"
        elif stored.get("rejected"):
            out[pk] = "its batch fails A' and is withheld, so it has no report (every_row_passes_f4 names it)"
        else:
            out[pk] = "no current report"
    return out


def complete_outcome(records: list[dict], stale: list[str], applicable: bool = True,
                     why: dict[str, str] | None = None) -> CheckOutcome:
    if not applicable:
        return CheckOutcome(name=CHECK_COMPLETE, assertion="strata complete", passed=True, severity="warning",
                            blocking=False, description="not applicable: the tables have no node-map pools",
                            metadata={"applicable": False})
    templates = [r for r in records if r["kind"] == "template"]
    incomplete = [r for r in templates if not r["complete"]]
    missing = sorted({m for r in incomplete for m in r["missing_rows"]})
    lines = ["| level | template | p | " + " | ".join(FIGURES) + " |", "|---|---|---|" + "---|" * len(FIGURES)]
    for r in records:
        name = "**pool**" if r["kind"] == "pool" else f"`{r['template_id']}`"
        figs = " | ".join("-" if r[f] is None else f"{r[f]:.3f}" for f in FIGURES)
        lines.append(f"| {r['level_index']} | {name} | {r['draw_probability']:.2f} | {figs} |")
    return CheckOutcome(
        name=CHECK_COMPLETE, assertion="strata complete", passed=not incomplete, severity="warning", blocking=False,
        description=(f"{len(incomplete)} of {len(templates)} templates without figures: "
                     + "; ".join(f"row {pk}: {(why or {}).get(pk, 'no current report')}" for pk in missing)
                     if incomplete else
                     f"figures for all {len(templates)} templates and {len(records) - len(templates)} pools"),
        metadata={"applicable": True, "templates": len(templates), "incomplete_templates": len(incomplete),
                  "missing_rows": missing, "why_missing": {pk: (why or {}).get(pk, "no current report")
                                                           for pk in missing}, "stale_reports": stale,
                  "pools_complete": sum(1 for r in records if r["kind"] == "pool" and r["complete"])},
        pictures={"strata": "\n".join(lines)},
    )


@dataclass
class StrataResult:
    records: list[dict]
    outcomes: list[CheckOutcome]
    path: str
    stale: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        pools = [r for r in self.records if r["kind"] == "pool"]
        return {
            "templates": sum(1 for r in self.records if r["kind"] == "template"),
            "pools": len(pools),
            "pools_complete": sum(1 for r in pools if r["complete"]),
            "pool_p50": {str(r["level_index"]): r["p50"] for r in pools},
            "pool_bbbv_per_safe_p50": {str(r["level_index"]): r["bbbv_per_safe_p50"] for r in pools},
            "stale_reports": self.stale,
        }


def run_strata(root, catalog, samples: int, master_seed: int = 0,
               adventures: int | None = None) -> StrataResult:
    """Read every row's report and the draws, write the stratified figures
    (``adventures``: the node-map batch size, part of the inputs
    fingerprint; default ``draw_node_maps.DEFAULT_ADVENTURES``)."""

    pools = catalog.pools or {}
    reports = {key: recs[0] for key, recs in sorted(publish.read_row_records(
        root, "calibration_report", publish.intact_keys(root, "calibration_report"), REPORT_COLUMNS).items())
        if recs}
    current, stale = current_reports(reports, catalog.board_gen, samples, master_seed)
    pools_fp = draw_node_maps.pools_digest(pools) if pools else ""
    shares = observed_shares(draw_node_maps.read_draws(root), pools_fp)
    fps = {k: r.get("batch_fingerprint") for k, r in current.items()}
    adventures = draw_node_maps.DEFAULT_ADVENTURES if adventures is None else adventures
    records = strata_records(pools, row_figures_of(current), shares, reports_fp=reports_fingerprint(fps),
                             pools_fp=pools_fp,
                             inputs_fp=inputs_fingerprint(pools, adventures, fps) if pools else "")
    path = publish.write_flat(root, DATASET, FILE, records, dataset_schema())
    # The report chart and the difficulty curves are drawn on demand (`boardgen chart`): a PNG of every
    # row cost more than the rows' boards and was drawn every night whether looked at or not.
    missing = sorted({m for r in records for m in r["missing_rows"]})
    why = missing_reasons(root, catalog.board_gen, samples, master_seed, missing) if missing else {}
    return StrataResult(records, [complete_outcome(records, stale, applicable=bool(pools), why=why)], str(path), stale)
