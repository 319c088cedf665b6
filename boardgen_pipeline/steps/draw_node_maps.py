"""The node-map draws of the pipeline as plain steps: validated pools ->
simulated adventures -> checks -> ``node_map_draws`` dataset (SPEC 4, 9; seed
004 "抽签时机与可复现", "测量对账").

The Dagster asset ``node_map_draws`` is thin wiring over :func:`run_draws`.

- **Adventures**: seeds ``0 .. n - 1`` (an adventure's master seed is its
  seed), each run on both branches: the first-adventure script
  (``first_adventure_done = false``: fixed template, no draw) and the drawing
  path. The action sequence is the level starts 1..n in order
  (``nodemap.draw_adventure``). One record per (seed, branch, level): the
  domain's ``draw_record`` (template or generated map, ``source``, the
  ``node_map`` scope used, the branch, layer widths, routes, board nodes), plus
  ``map_digest`` (hash of the map's row set, ``NodeMap.rows()``),
  ``pools_digest`` (which pool content drew it) and ``draws_fingerprint``
  (the pools, the adventures and the table's row keys: what
  ``steps.currency`` compares to redraw only when one of them changed).
- **Checks** (error severity, none blocking: the draws are a measurement, not
  an input of the boards):

  - ``node_map_templates_valid``: every template of every pool passes the
    validator and the pool rules, and content discipline holds against
    ``board_gen``. Load time already refuses a bad pool, so this is the last
    gate (tables loaded elsewhere, pools built in code);
  - ``node_map_draws_deterministic``: a sample of adventures re-drawn through
    ``nodemap.simulate_draws`` gives the same records, every drawn level of
    the sample replays alone from its recorded scope
    (``nodemap.replay_level``) to the same row set, and the previous file,
    when drawn from the same pools and seeds, holds the same records;
  - ``node_map_draws_uniform``: Pearson chi-square of the drawing branch's
    template counts per level against uniform (statistic, dof, p in the
    metadata); fails below p = 0.001 (the threshold of
    docs/decisions/nodemap.md: the seed range is fixed, so at 0.05 about one
    pool edit in seven would fail with nothing wrong);
  - ``node_map_procedural_maps_valid``: step 3 run with each pool's
    parameters (enabled or not) on a sample of seeds; every map it returns
    passes the validator; when a pool enables step 3 its maps must also meet
    content discipline.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from boardgen_pipeline import check_names
from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.calibration.fingerprints import draws_fingerprint, pools_digest
from boardgen_pipeline.check_names import CHECK_DRAWS_DETERMINISTIC, CHECK_PROCEDURAL, CHECK_TEMPLATES, CHECK_UNIFORM
from boardgen_pipeline.nodemap import (
    LABEL,
    board_nodes,
    build_procedural,
    check_content_discipline,
    draw_adventure,
    draw_record,
    draw_uniformity,
    fixed_map,
    map_shape,
    render_map,
    replay_level,
    script_maps,
    simulate_draws,
    validate_pool,
    validate_template,
)
from boardgen_pipeline.nodemap.model import BOARD_TYPES
from boardgen_pipeline.nodemap.validate import template_depths
from boardgen_pipeline.outcomes import SCOPES_SHOWN, CheckOutcome
from boardgen_pipeline.settings import DEFAULT_ADVENTURES
from boardgen_pipeline.warehouse import publish

DATASET = "node_map_draws"


FILE = "draws"




DETERMINISM_SAMPLE = 64  # adventures re-drawn by the determinism check


PROCEDURAL_SAMPLE = 256  # step-3 seeds per level


UNIFORMITY_ALPHA = 0.001


BRANCHES = (False, True)  # drawing path, first-adventure script


CHECK_DETERMINISTIC = CHECK_DRAWS_DETERMINISTIC


CHECKS = check_names.NODE_MAPS


DESCRIPTIONS = {
    CHECK_TEMPLATES: "Every template of every pool valid (structure, pool rules) and content discipline against "
                     "board_gen: every battle/boss node has an exact row (seed 004 池内全部模板加载期预校验, 内容纪律).",
    CHECK_DETERMINISTIC: "Draws deterministic: a sample of adventures re-drawn gives the same records, each drawn "
                         "scope replays alone to the same map, the previous file (same pools) is unchanged.",
    CHECK_UNIFORM: f"Template draw frequencies uniform over each pool: chi-square, fails below p = {UNIFORMITY_ALPHA}.",
    CHECK_PROCEDURAL: "Step-3 procedural maps of a sample of seeds all pass the validator (and content discipline "
                      "when step 3 is enabled).",
}


def map_digest(m) -> str:
    return hashlib.sha256(m.rows()).hexdigest()[:16]


def dataset_schema():
    import pyarrow as pa

    i, s, b = pa.int64(), pa.string(), pa.bool_()
    return pa.schema([
        ("master_seed", i), ("first_adventure", b), ("level_index", i), ("template_id", s), ("source", s),
        ("scope", i), ("fallback", b), ("attempts", i), ("pool_size", i), ("layer_widths", s), ("routes", i),
        ("board_node_ids", pa.list_(i)), ("board_node_types", pa.list_(s)), ("board_node_depths", pa.list_(i)),
        ("map_digest", s), ("pools_digest", s), ("draws_fingerprint", s),
    ])


def _dataset_record(rec: dict, digest: str, pools_fp: str, draws_fp: str) -> dict:
    out = {k: v for k, v in rec.items() if k != "level"}
    out["level_index"] = rec["level"]
    out["map_digest"] = digest
    out["pools_digest"] = pools_fp
    out["draws_fingerprint"] = draws_fp
    return out


# Not the draw itself: which inputs the file was built from (steps.currency compares it).
BOOKKEEPING = ("map_digest", "pools_digest", "draws_fingerprint")


def _domain_record(rec: dict) -> dict:
    """A dataset record back in the domain's shape (``level``, no digests)."""
    out = {k: v for k, v in rec.items() if k != "level_index" and k not in BOOKKEEPING}
    out["level"] = rec["level_index"]
    return out


def draw_records(pools, seeds, branches=BRANCHES, draws_fp: str = "") -> list[dict]:
    """One dataset record per (seed, branch, level), in that order, each
    carrying ``draws_fp`` (``fingerprints.draws_fingerprint`` of the run).
    What a record reads of a map's row set, and its digest, are computed
    once per row set (a batch meets the same few thousands of times)."""
    fp = pools_digest(pools)
    read: dict = {}  # NodeMap.row_set -> (map_shape, map_digest)
    script = script_maps(pools)  # every first adventure's maps, whatever its seed (the nightly's re-draw checks it)
    out = []
    for seed in seeds:
        for flag in branches:
            for m in script if flag else draw_adventure(pools, seed, flag):
                known = read.get(m.row_set)
                if known is None:
                    known = read[m.row_set] = (map_shape(m), map_digest(m))
                rec = draw_record(m, seed, flag, len(pools[m.level].templates), known[0])
                out.append(_dataset_record(rec, known[1], fp, draws_fp))
    return out


def _template_table(pools) -> str:
    lines = ["| level | template | fixed | layer widths | board nodes (depth) |", "|---|---|---|---|---|"]
    for level, pool in sorted(pools.items()):
        for t in pool.templates:
            depth = Counter(template_depths(t).values())
            widths = "-".join(str(depth[d]) for d in range(len(depth)))
            nodes = ", ".join(f"{nid} {ty} d{d}" for nid, ty, d in board_nodes(t))
            lines.append(f"| {level} | `{t.id}` {t.name} | {'yes' if t.fixed else ''} | {widths} | {nodes} |")
    return "\n".join(lines)


def templates_outcome(pools, board_gen_keys) -> CheckOutcome:
    """All templates valid and content discipline against ``board_gen``."""
    violations = []
    for _, pool in sorted(pools.items()):
        violations += validate_pool(pool)
    violations += check_content_discipline(pools, set(board_gen_keys))
    per_level = {str(level): len(p.templates) for level, p in sorted(pools.items())}
    try:
        table = _template_table(pools)
        fixed = "\n\n".join(render_map(fixed_map(p)) for _, p in sorted(pools.items()))
        pictures = {"template_table": table, "fixed_maps": f"```\n{fixed}\n```"}
    except Exception as exc:  # a broken template cannot be drawn; the violations say why
        pictures = {"template_table": f"_not drawn: {exc}_"}
    return CheckOutcome(
        name=CHECK_TEMPLATES, assertion="templates valid", passed=not violations, severity="error", blocking=False,
        description=(f"{len(violations)} violations: {violations[0]}" if violations else
                     f"{sum(per_level.values())} templates in {len(pools)} pools valid; content discipline holds"),
        metadata={"pools": len(pools), "templates": sum(per_level.values()), "templates_per_level": per_level,
                  "fixed_templates": {str(lv): p.fixed.id for lv, p in sorted(pools.items())
                                      if sum(t.fixed for t in p.templates) == 1},
                  "violations": len(violations),
                  "violations_by_rule": dict(sorted(Counter(v.rule for v in violations).items())),
                  "first_violations": [str(v) for v in violations[:SCOPES_SHOWN]]},
        pictures=pictures,
    )


def sample_seeds(seeds, k: int = DETERMINISM_SAMPLE) -> list[int]:
    """``k`` seeds spread evenly over ``seeds`` (all of them when fewer)."""
    seeds = list(seeds)
    if len(seeds) <= k:
        return seeds
    step = len(seeds) / k
    return sorted({seeds[int(i * step)] for i in range(k)} | {seeds[-1]})


def _key(r: dict) -> tuple:
    return (r["master_seed"], r["first_adventure"], r["level_index"])


def determinism_outcome(pools, records: list[dict], sample: list[int],
                        previous: list[dict] | None = None) -> CheckOutcome:
    """Re-draw ``sample`` adventures and replay their drawn scopes; compare
    with ``records`` (and with ``previous``, the last file, when it was
    drawn from the same pools)."""
    by_key = {_key(r): r for r in records}
    redrawn = simulate_draws(sample, BRANCHES, pools=pools)
    mismatches = []
    for rec in redrawn:
        key = (rec["master_seed"], rec["first_adventure"], rec["level"])
        have = by_key.get(key)
        if have is None or _domain_record(have) != rec:
            mismatches.append(f"re-draw differs: seed {key[0]}, first_adventure {key[1]}, level {key[2]}")
    replayed = 0
    sample_set = set(sample)
    for r in records:
        if r["master_seed"] in sample_set and r["scope"] is not None:
            m = replay_level(pools[r["level_index"]], r["master_seed"], r["scope"])
            replayed += 1
            if map_digest(m) != r["map_digest"] or m.template_id != r["template_id"]:
                mismatches.append(f"replay differs: seed {r['master_seed']}, level {r['level_index']}, "
                                  f"scope {r['scope']}")
    compared_previous = 0
    if previous:
        fp = records[0]["pools_digest"] if records else None
        for old in previous:
            if old.get("pools_digest") != fp or _key(old) not in by_key:
                continue
            compared_previous += 1
            new = {k: v for k, v in by_key[_key(old)].items() if k != "draws_fingerprint"}
            if {k: old.get(k) for k in new} != new:
                mismatches.append(f"previous file differs: seed {old['master_seed']}, level {old['level_index']}")
    return CheckOutcome(
        name=CHECK_DETERMINISTIC, assertion="draws deterministic", passed=not mismatches, severity="error",
        blocking=False,
        description=(f"{len(mismatches)} mismatches: {mismatches[0]}" if mismatches else
                     f"{len(sample)} adventures re-drawn ({len(redrawn)} level maps), {replayed} drawn scopes "
                     f"replayed alone, {compared_previous} records of the previous file: all identical"),
        metadata={"sample_adventures": len(sample), "sample_seeds": sample[:SCOPES_SHOWN],
                  "redrawn_level_maps": len(redrawn), "replayed_scopes": replayed,
                  "previous_records_compared": compared_previous, "mismatches": len(mismatches),
                  "first_mismatches": mismatches[:SCOPES_SHOWN]},
    )


def _bar(n: int, most: int, width: int = 30) -> str:
    return "#" * (round(width * n / most) if most else 0)


def uniformity_outcome(pools, records: list[dict], alpha: float = UNIFORMITY_ALPHA) -> CheckOutcome:
    """Chi-square of the drawing branch's template counts, per level."""
    domain = [_domain_record(r) for r in records]
    tests = draw_uniformity(domain, pools)
    per_level, failing = {}, []
    lines = ["| level | template | draws | share | |", "|---|---|---|---|---|"]
    for level, (counts, chi) in sorted(tests.items()):
        n = sum(counts.values())
        per_level[str(level)] = {"draws": n, "counts": counts, "statistic": round(chi.statistic, 6), "dof": chi.dof,
                                 "p_value": chi.p_value}
        if chi.p_value < alpha:
            failing.append(level)
        most = max(counts.values(), default=0)
        for tid, k in counts.items():
            lines.append(f"| {level} | `{tid}` | {k} | {k / n if n else 0:.3f} | `{_bar(k, most)}` |")
        lines.append(f"| {level} | chi2 {chi.statistic:.3f}, dof {chi.dof}, p {chi.p_value:.4f} | | | |")
    ps = [v["p_value"] for v in per_level.values()]
    return CheckOutcome(
        name=CHECK_UNIFORM, assertion="draws uniform", passed=not failing, severity="error", blocking=False,
        description=(f"levels {failing} not uniform (p < {alpha})" if failing else
                     f"uniform on every level: min p {min(ps, default=1.0):.4f} >= {alpha}"),
        metadata={"alpha": alpha, "levels": per_level, "min_p_value": min(ps, default=1.0),
                  "statistics": {lv: v["statistic"] for lv, v in per_level.items()},
                  "dof": {lv: v["dof"] for lv, v in per_level.items()},
                  "p_values": {lv: v["p_value"] for lv, v in per_level.items()},
                  "failing_levels": failing},
        pictures={"draw_counts": "\n".join(lines)},
    )


def procedural_outcome(pools, board_gen_keys, seeds) -> CheckOutcome:
    """Step 3 on ``seeds`` for every pool: the maps it returns all pass the
    validator (and content discipline when the pool enables step 3)."""
    keys = set(board_gen_keys)
    per_level, problems = {}, []
    for level, pool in sorted(pools.items()):
        maps = invalid = fallbacks = content = attempts = 0
        for seed in seeds:
            m = build_procedural(pool, derive_at(LABEL, level - 1, seed))
            maps += 1
            attempts += m.attempts
            fallbacks += m.fallback
            bad = validate_template(m.as_template())
            if bad:
                invalid += 1
                problems.append(f"level {level} seed {seed}: {bad[0]}")
            missing = [(n.id, n.depth) for n in m.nodes
                       if n.type in BOARD_TYPES and (level, n.depth) not in keys]
            if missing:
                content += 1
                if pool.procedural.enabled:
                    problems.append(f"level {level} seed {seed}: board nodes without an exact board_gen row "
                                    f"{missing}")
        per_level[str(level)] = {"enabled": pool.procedural.enabled, "maps": maps, "invalid": invalid,
                                 "fallbacks": fallbacks, "mean_attempts": attempts / maps if maps else 0.0,
                                 "content_discipline_misses": content}
    invalid_total = sum(v["invalid"] for v in per_level.values())
    return CheckOutcome(
        name=CHECK_PROCEDURAL, assertion="step-3 maps valid", passed=not problems, severity="error", blocking=False,
        description=(f"{len(problems)} bad step-3 maps: {problems[0]}" if problems else
                     f"{sum(v['maps'] for v in per_level.values())} step-3 maps over {len(pools)} levels, all valid"),
        metadata={"seeds_per_level": len(list(seeds)), "levels": per_level, "invalid_maps": invalid_total,
                  "problems": len(problems), "first_problems": problems[:SCOPES_SHOWN]},
    )


def draw_outcomes(pools, board_gen_keys, records, seeds, previous=None) -> list[CheckOutcome]:
    seeds = list(seeds)
    return [
        templates_outcome(pools, board_gen_keys),
        determinism_outcome(pools, records, sample_seeds(seeds), previous),
        uniformity_outcome(pools, records),
        procedural_outcome(pools, board_gen_keys, seeds[:PROCEDURAL_SAMPLE]),
    ]


def not_applicable_outcomes(reason: str) -> list[CheckOutcome]:
    return [CheckOutcome(name=n, assertion="node maps", passed=True, severity="error", blocking=False,
                         description=f"not applicable: {reason}", metadata={"applicable": False})
            for n in CHECKS]


@dataclass
class DrawsResult:
    records: list[dict]
    outcomes: list[CheckOutcome]
    path: str
    pools_digest: str | None
    adventures: int
    seconds: dict = field(default_factory=dict)

    def outcome(self, name: str) -> CheckOutcome:
        return next(o for o in self.outcomes if o.name == name)

    def summary(self) -> dict:
        drawn = Counter((r["level_index"], r["template_id"]) for r in self.records if not r["first_adventure"])
        return {
            "adventures": self.adventures,
            "records": len(self.records),
            "levels": sorted({r["level_index"] for r in self.records}),
            "branches": ["drawn", "first_adventure"],
            "pools_digest": self.pools_digest or "none",
            "templates_drawn": {f"{lv}/{tid}": k for (lv, tid), k in sorted(drawn.items())},
        }


def run_draws(root, catalog, adventures: int = DEFAULT_ADVENTURES) -> DrawsResult:
    """Simulate ``adventures`` adventures on both branches, check the pools
    and the draws, and write ``<root>/node_map_draws/draws.parquet``
    atomically (an empty file when the tables have no node-map pools, so
    the view always answers)."""
    from time import perf_counter


    if adventures < 1:
        raise ValueError(f"adventures must be >= 1, got {adventures}")
    pools = catalog.pools
    if not pools:
        path = publish.write_flat(root, DATASET, FILE, [], dataset_schema())
        return DrawsResult([], not_applicable_outcomes("the tables have no node-map pools"), str(path), None,
                           adventures)
    t0 = perf_counter()
    seeds = range(adventures)
    records = draw_records(pools, seeds,
                           draws_fp=draws_fingerprint(pools, adventures, catalog.board_gen.keys()))
    t1 = perf_counter()
    previous = publish.read_flat(root, DATASET, FILE)
    outcomes = draw_outcomes(pools, catalog.board_gen.keys(), records, seeds, previous)
    t2 = perf_counter()
    path = publish.write_flat(root, DATASET, FILE, records, dataset_schema())
    seconds = {"draw": t1 - t0, "checks": t2 - t1, "write": perf_counter() - t2}
    return DrawsResult(records, outcomes, str(path), pools_digest(pools), adventures, seconds)


def read_draws(root) -> list[dict]:

    return publish.read_flat(Path(root), DATASET, FILE) or []
