"""The step-3 report (seed 004 台阶三; SPEC 4 "Step 3"): how step 3 behaves
over many seeds, so a designer can judge parameters before enabling them.

Seed ``s`` stands for the adventure with master seed ``s`` whose actions are
the level starts 1..n (the action sequence of :func:`.draw.draw_adventure`
and the draw records): level ``L`` builds on ``derive_at("node_map", L - 1,
s)``, so the report shows the very maps those adventures would get if the
pool enabled step 3. Figures: per-attempt acceptance, share of seeds that got a procedural
map (the rest fell back to a template, flagged), attempts used, rejection
reasons (validator rule names and ``min_routes``; an attempt breaking two
rules counts once for each), layer-width sequences, route counts and node
types per layer of the accepted maps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from boardgen_pipeline.board.rng import derive_at
from boardgen_pipeline.nodemap.draw import LABEL
from boardgen_pipeline.nodemap.model import NODE_TYPES, Pool, ProceduralParams
from boardgen_pipeline.nodemap.procedural import build_procedural
from boardgen_pipeline.nodemap.render import map_routes


@dataclass
class ProceduralReport:
    level: int
    params: ProceduralParams
    seeds: int = 0
    attempts_total: int = 0
    procedural_maps: int = 0
    fallbacks: int = 0
    attempts_used: Counter = field(default_factory=Counter)
    rejection_reasons: Counter = field(default_factory=Counter)
    fallback_templates: Counter = field(default_factory=Counter)
    layer_widths: Counter = field(default_factory=Counter)
    routes: Counter = field(default_factory=Counter)
    types_per_layer: dict[int, Counter] = field(default_factory=dict)

    @property
    def acceptance_rate(self) -> float:
        """Share of seeds that got a procedural map within the budget."""
        return self.procedural_maps / self.seeds if self.seeds else 0.0

    @property
    def attempt_acceptance_rate(self) -> float:
        """Share of single attempts that passed the gate."""
        return self.procedural_maps / self.attempts_total if self.attempts_total else 0.0

    @property
    def retry_rate(self) -> float:
        """Share of seeds that needed two attempts or more."""
        return sum(k for a, k in self.attempts_used.items() if a >= 2) / self.seeds if self.seeds else 0.0

    def as_dict(self) -> dict:
        return {
            "level": self.level,
            "seeds": self.seeds,
            "acceptance_rate": self.acceptance_rate,
            "attempt_acceptance_rate": self.attempt_acceptance_rate,
            "retry_rate": self.retry_rate,
            "mean_attempts": self.attempts_total / self.seeds if self.seeds else 0.0,
            "procedural_maps": self.procedural_maps,
            "fallbacks": self.fallbacks,
            "attempts_used": dict(sorted(self.attempts_used.items())),
            "rejection_reasons": dict(self.rejection_reasons.most_common()),
            "fallback_templates": dict(sorted(self.fallback_templates.items())),
            "layer_widths": dict(self.layer_widths.most_common()),
            "routes": dict(sorted(self.routes.items())),
            "types_per_layer": {d: dict(sorted(c.items())) for d, c in sorted(self.types_per_layer.items())},
        }

    def format(self) -> str:
        p = self.params
        d = self.as_dict()
        route_total = sum(self.routes.values())
        mean_routes = sum(r * k for r, k in self.routes.items()) / route_total if route_total else 0.0
        lines = [
            f"step 3, level {self.level}: layers {p.layers}, branching {p.branching}, "
            f"type mix {dict(p.type_mix)}, retry budget {p.retry_budget}, min routes {p.min_routes}",
            f"  seeds {self.seeds}: procedural {self.procedural_maps} ({self.acceptance_rate:.2%}), "
            f"fallback {self.fallbacks}",
            f"  attempts: total {self.attempts_total}, mean {d['mean_attempts']:.3f}, "
            f"per-attempt acceptance {self.attempt_acceptance_rate:.2%}, retry rate {self.retry_rate:.2%}",
            f"  attempts used: {d['attempts_used']}",
            f"  rejection reasons: {d['rejection_reasons']}",
            f"  fallback templates: {d['fallback_templates']}",
            f"  routes: mean {mean_routes:.2f}, distribution {d['routes']}",
            "  layer widths (most common first):",
        ]
        lines += [f"    {w}: {k}" for w, k in self.layer_widths.most_common(12)]
        if len(self.layer_widths) > 12:
            lines.append(f"    ... {len(self.layer_widths) - 12} more sequences")
        lines.append("  node types per layer:")
        for depth, c in sorted(self.types_per_layer.items()):
            lines.append(f"    d{depth}: " + ", ".join(f"{t} {c[t]}" for t in NODE_TYPES if c[t]))
        return "\n".join(lines)


def procedural_report(pool: Pool, seeds: Iterable[int] = range(10_000),
                      params: ProceduralParams | None = None) -> ProceduralReport:
    """Run step 3 for every seed (the pool's parameters, enabled or not, unless
    ``params`` is given) and collect the figures."""
    p = params or pool.procedural
    report = ProceduralReport(pool.level, p)
    for seed in seeds:
        stream = derive_at(LABEL, pool.level - 1, seed)
        m = build_procedural(pool, stream, p)
        report.seeds += 1
        report.attempts_used[m.attempts] += 1
        for reasons in m.rejections:
            report.rejection_reasons.update(reasons)
        if m.fallback:
            report.fallbacks += 1
            report.attempts_total += m.attempts
            report.fallback_templates[m.template_id] += 1
            continue
        report.attempts_total += m.attempts
        report.procedural_maps += 1
        report.layer_widths["-".join(map(str, m.layer_widths()))] += 1
        report.routes[map_routes(m)] += 1
        for n in m.nodes:
            report.types_per_layer.setdefault(n.depth, Counter())[n.type] += 1
    return report


def step3_report_text(pools: Mapping[int, Pool], seeds: Iterable[int] = range(10_000),
                      params: ProceduralParams | None = None) -> str:
    """The step-3 report of every level as text (the figures recorded in
    docs/decisions/nodemap.md come from this function)."""
    seeds = list(seeds)
    return "\n\n".join(procedural_report(pool, seeds, params).format() for pool in pools.values()) + "\n"
