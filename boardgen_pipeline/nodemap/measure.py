"""Measurement that keeps draws from polluting readings (seed 004 "测量对账：
别让随机污染读数": 分层出数 and 基线可比; SPEC 4 "Stratified measurement").

- :func:`simulate_draws`: one record per (adventure, level) for the
  ``node_map_draws`` table: what was drawn, from which scope, on which
  branch, and the depth of every battle/boss node (its board row).
- :func:`chi_square_uniform` and :func:`draw_uniformity`: Pearson's test that
  draws are uniform over a pool, p-value from the regularized upper
  incomplete gamma function (Numerical Recipes 6.2: series below ``a + 1``,
  Lentz continued fraction above), standard library only.
- :func:`stratify`: calibration figures per ``level x template`` from
  per-row figures, and the pool figure as the draw-probability-weighted mean
  (a uniform pool: the arithmetic mean).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from boardgen_pipeline.nodemap.draw import draw_adventure
from boardgen_pipeline.nodemap.model import BOARD_TYPES, NodeMap, Pool
from boardgen_pipeline.nodemap.render import map_routes
from boardgen_pipeline.nodemap.validate import board_nodes


def draw_record(m: NodeMap, master_seed: int, first_adventure: bool, pool_size: int, shape: dict | None = None) -> dict:
    """One draw's record; ``shape`` is ``map_shape(m)`` when the caller has it."""
    shape = map_shape(m) if shape is None else shape
    return {
        "master_seed": master_seed,
        "first_adventure": first_adventure,
        "level": m.level,
        "template_id": m.template_id,
        "source": m.source,
        "scope": m.scope,
        "fallback": m.fallback,
        "attempts": m.attempts,
        "pool_size": pool_size,
        "layer_widths": shape["layer_widths"],
        "routes": shape["routes"],
        "board_node_ids": list(shape["board_node_ids"]),
        "board_node_types": list(shape["board_node_types"]),
        "board_node_depths": list(shape["board_node_depths"]),
    }


def map_shape(m: NodeMap) -> dict:
    """What a draw record reads of the map's row set alone (its nodes and
    edges): a batch of draws meets the same few row sets thousands of times,
    and its caller may read each once."""
    boards = sorted((n for n in m.nodes if n.type in BOARD_TYPES), key=lambda n: n.id)
    return {
        "layer_widths": "-".join(map(str, m.layer_widths())),
        "routes": map_routes(m),
        "board_node_ids": tuple(n.id for n in boards),
        "board_node_types": tuple(n.type for n in boards),
        "board_node_depths": tuple(n.depth for n in boards),
    }


def simulate_draws(master_seeds: Iterable[int], first_adventure_flags: bool | Iterable[bool] = (False,), *,
                   pools: Mapping[int, Pool]) -> list[dict]:
    """Draw records of adventures whose actions are the level starts 1..n.

    ``first_adventure_flags``: which branches to run for each seed (True =
    the first-adventure script, ``first_adventure_done = false``; False = the
    drawing path, the only one measurement uses per seed 004)."""
    flags = (first_adventure_flags,) if isinstance(first_adventure_flags, bool) else tuple(first_adventure_flags)
    records = []
    for seed in master_seeds:
        for flag in flags:
            for m in draw_adventure(pools, seed, flag):
                records.append(draw_record(m, seed, flag, len(pools[m.level].templates)))
    return records


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    dof: int
    p_value: float


def regularized_gamma_q(a: float, x: float) -> float:
    """``Q(a, x) = Γ(a, x) / Γ(a)`` for ``a > 0``, ``x >= 0``."""
    if a <= 0 or x < 0:
        raise ValueError("Q(a, x) needs a > 0 and x >= 0")
    if x == 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    eps, tiny = 1e-15, 1e-300
    if x < a + 1:
        # Series for P(a, x); Q = 1 - P.
        ap, term = a, 1.0 / a
        total = term
        for _ in range(10_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * eps:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # Continued fraction for Q(a, x), modified Lentz.
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < eps:
            break
    return math.exp(log_front) * h


def chi_square_uniform(counts: Iterable[int]) -> ChiSquare:
    """Pearson's chi-square of ``counts`` against the uniform distribution."""
    counts = list(counts)
    k, n = len(counts), sum(counts)
    if k < 2 or n == 0:
        return ChiSquare(0.0, max(k - 1, 0), 1.0)
    expected = n / k
    stat = sum((c - expected) ** 2 for c in counts) / expected
    return ChiSquare(stat, k - 1, regularized_gamma_q((k - 1) / 2, stat / 2))


def draw_uniformity(records: Iterable[dict], pools: Mapping[int, Pool]) -> dict[int, tuple[dict[str, int], ChiSquare]]:
    """Per level: draw counts per template (pool order, zeros included) and
    the uniformity test, over records of the drawing branch (source
    ``draw``)."""
    counts: dict[int, Counter] = {level: Counter() for level in pools}
    for r in records:
        if r["source"] == "draw":
            counts[r["level"]][r["template_id"]] += 1
    out = {}
    for level, pool in pools.items():
        per = {t.id: counts[level][t.id] for t in pool.templates}
        out[level] = (per, chi_square_uniform(per.values()))
    return out


@dataclass(frozen=True)
class Stratified:
    """Figures of one level's pool, per template and for the pool."""

    level: int
    probabilities: dict[str, float]
    template_rows: dict[str, list[tuple[int, int]]]
    template_figures: dict[str, dict[str, float]]
    pool_figures: dict[str, float]

    def records(self) -> list[dict]:
        """One flat row per template plus one for the pool (template ``*``)."""
        out = [{"level": self.level, "template_id": tid, "draw_probability": self.probabilities[tid], **figs}
               for tid, figs in self.template_figures.items()]
        out.append({"level": self.level, "template_id": "*", "draw_probability": 1.0, **self.pool_figures})
        return out


def stratify(row_figures: Mapping[tuple[int, int], Mapping[str, float]], pool: Pool,
             probabilities: Mapping[str, float] | None = None) -> Stratified:
    """Per-template figures of ``pool`` and their weighted mean.

    A template's figure is the mean over its battle and boss nodes of their
    ``(level, depth)`` row's figure, one node one board (a row standing at
    three nodes counts three times); a step-2 slot counts with the share of
    its candidates that are boards. ``probabilities`` are the draw
    probabilities (default: uniform, 1/N each)."""
    n = len(pool.templates)
    probs = dict(probabilities) if probabilities is not None else {t.id: 1 / n for t in pool.templates}
    if set(probs) != {t.id for t in pool.templates} or not math.isclose(sum(probs.values()), 1.0):
        raise ValueError(f"draw probabilities must cover the level {pool.level} pool exactly and sum to 1: {probs}")
    missing = []
    rows: dict[str, list[tuple[int, int]]] = {}
    weights: dict[str, list[float]] = {}
    for t in pool.templates:
        rows[t.id], weights[t.id] = [], []
        for nid, _ty, depth in board_nodes(t):
            key = (pool.level, depth)
            if key not in row_figures:
                missing.append(f"{t.id}/{nid} -> row {key}")
                continue
            node = t.node(nid)
            share = (sum(c in BOARD_TYPES for c in node.slot) / len(node.slot)) if node.slot else 1.0
            rows[t.id].append(key)
            weights[t.id].append(share)
    if missing:
        raise ValueError("no figures for the rows of these battle/boss nodes: " + "; ".join(missing))
    names = sorted({name for key in {k for ks in rows.values() for k in ks} for name in row_figures[key]})
    incomplete = [f"{key} lacks {name!r}" for ks in rows.values() for key in set(ks) for name in names
                  if name not in row_figures[key]]
    if incomplete:
        raise ValueError("row figures are incomplete: " + "; ".join(sorted(set(incomplete))))
    template_figures = {}
    for t in pool.templates:
        w_total = sum(weights[t.id])
        template_figures[t.id] = {
            name: sum(w * row_figures[k][name] for k, w in zip(rows[t.id], weights[t.id])) / w_total
            for name in names
        }
    pool_figures = {name: sum(probs[tid] * figs[name] for tid, figs in template_figures.items()) for name in names}
    return Stratified(pool.level, probs, rows, template_figures, pool_figures)
