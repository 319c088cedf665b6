"""Section 8 of docs/conformance.md, AC-2: a one-row table's checks."""

from __future__ import annotations

from . import plan
from .readings import rd

BOARD_TYPES = ("dungeon", "underdark", "deep_underdark")


def _int_in(value, lo: int, hi: int | None = None) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= lo and (hi is None or value <= hi)


def _domains(row: dict, side: int) -> list[str]:
    low = side if rd().guessed_width_domain else 8
    checks = {
        "level_index": _int_in(row["level_index"], 1),
        "node_depth": _int_in(row["node_depth"], 0),
        "board_width": _int_in(row["board_width"], low, 64),
        "board_height": _int_in(row["board_height"], low, 64),
        "mine_density": 0 < plan.double(row["mine_density"]) <= 0.5,
        "inferability_target": 0.85 <= plan.double(row["inferability_target"]) <= 1,
        "solver_rules": row["solver_rules"] == "single_subset",
        "min_safe_count": _int_in(row["min_safe_count"], 1, 999),
        "max_gen_attempts": _int_in(row["max_gen_attempts"], 1, 32),
        "board_type": row["board_type"] in BOARD_TYPES,
        "shave_ring_radius": _int_in(row["shave_ring_radius"], 0, 2),
        "r0_max_cap": _int_in(row["r0_max_cap"], 1),
        "fog_region_count": _int_in(row["fog_region_count"], 0, 32),
        "fog_target_ratio": 0 <= plan.double(row["fog_target_ratio"]) < 1,
    }
    return [name for name, ok in checks.items() if not ok]


def _row_rules(row: dict, side: int) -> list[tuple[str, str]]:
    w, h = row["board_width"], row["board_height"]
    n = plan.mines_target(row["mine_density"], w * h, side)
    out = []
    if not side * side <= row["r0_max_cap"] <= w * h // 2:
        out.append(("r0_max_cap", "domain"))
    if row["node_depth"] > 255:
        out.append(("node_depth", "seed_scopes"))
    if n < 1:
        out.append(("mine_density", "mines_at_least_one"))
    if w * h - n < row["min_safe_count"]:
        out.append(("min_safe_count", "min_safe_feasible"))
    if row["max_gen_attempts"] * w * h > 16384:
        out.append(("board_width" if rd().cost_gate_under_board_width else "max_gen_attempts", "cost_gate"))
    count, ratio, d = row["fog_region_count"], plan.double(row["fog_target_ratio"]), plan.double(row["mine_density"])
    broken = [count == 0 and ratio != 0, count >= 1 and not ratio > 0, count >= 1 and ratio > 8 * d,
              count >= 1 and ratio > 0.25]
    out += [("fog_target_ratio", "fog_predicate")] * sum(broken)
    return out


def validate_row(inp: dict) -> dict:
    row, side = inp["row"], inp["header"]["spawn_side"]
    domains = _domains(row, side)
    out = [(name, "domain") for name in domains]
    if rd().domain_silences_own_field:
        out += [v for v in _row_rules(row, side) if v[0] not in domains]
    elif not domains:
        rules = _row_rules(row, side)
        if rd().cap_bound_silences and ("r0_max_cap", "domain") in rules:
            rules = [("r0_max_cap", "domain")]
        out += rules
    if row["node_depth"] != 0:
        out.append(("node_depth", "missing_anchor"))
    if rd().violations_deduplicated:
        out = list(dict.fromkeys(out))
    out.sort(key=(lambda v: (v[1], v[0])) if rd().violations_by_rule else None)
    return {"violations": [{"field": f, "rule": r} for f, r in out]}
