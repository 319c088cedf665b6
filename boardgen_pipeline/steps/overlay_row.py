"""One row's variant overlays as plain steps: published boards -> overlays ->
overlay checks -> ``variant_overlays`` partition (SPEC 3, 9; seed 003
"验收标准"; issue 4 "Asset").

The Dagster asset ``variant_overlays`` is thin wiring over :func:`run_overlays`;
tests call the check functions directly on hand-built overlays.

- The overlays of a row are computed from its *published* boards
  (``warehouse.publish.read_partition``): a batch with an illegal board is never
  published (assertion A' blocks it), so no overlay is ever placed on an
  illegal board. The boards must come from the row's current batch (same
  batch fingerprint), or the step refuses.
- Placement is the domain's (``overlays.overlay_records``); each record gets
  the board's ``batch_fingerprint`` and an ``overlay_fingerprint`` (batch,
  variation table content, the row's Boss flag and board type, overlay
  version), so the warehouse says which table version placed it.
- The checks read the *written records* back into :class:`Overlay` values and
  hold them against the board rebuilt from its layout, with R0 recomputed:
  they test what a reader of the warehouse gets, written against the seed's
  acceptance lines (``variants.checks``) rather than the placement's code.

Checks (one per quality dimension, all error severity, none blocking: the
overlays are a record beside the boards, and nothing downstream reads them):

- ``overlay_cells_safe_outside_r0``: every variant cell on the board, safe,
  outside R0, and not a fog cell (decision: a cell carries one variant);
- ``overlay_packs_connected_in_range``: each pack 8-connected with size in
  ``[pack_min, pack_max]``, packs never touching, count within target,
  shortfall reported truthfully;
- ``overlay_one_type_per_board``: at most one type per board; a whole-board
  variant carries no cells and took no draws;
- ``overlay_boss_rows_global_type``: Boss rows carry the global type and zero
  cells from level 2 on, none on level 1 (applies when the table declares a
  global type; otherwise passes as not applicable);
- ``overlay_skew_invariants``: for ``effect_value`` 0 and every
  ``resource_face`` value the table or the row's overlays use: total 77,
  0 bit-identical to no skew, whitelist unchanged, survival never up,
  offense never down.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path

from boardgen_pipeline.board.geometry import Board
from boardgen_pipeline.board.solver import reveal_r0
from boardgen_pipeline.calibration.fingerprints import overlay_fingerprint
from boardgen_pipeline.calibration.seeds import seed_batch
from boardgen_pipeline.outcomes import SCOPES_SHOWN, CheckOutcome
from boardgen_pipeline.tables.board_gen import BoardGenTable
from boardgen_pipeline.variants.checks import (
    CheckIssue,
    check_boss_rule,
    check_domain,
    check_one_type,
    check_overlay,
    check_skew,
)
from boardgen_pipeline.variants.overlays import board_from_record, overlay_records
from boardgen_pipeline.variants.placement import Overlay, overlay_record_schema, type_letter
from boardgen_pipeline.variants.skew import POOL_TOTAL, ResourceWeights, skew_weights
from boardgen_pipeline.warehouse import datasets, publish

CHECK_DOMAIN = "overlay_cells_safe_outside_r0"


CHECK_PACKS = "overlay_packs_connected_in_range"


CHECK_ONE_TYPE = "overlay_one_type_per_board"


CHECK_BOSS = "overlay_boss_rows_global_type"


CHECK_SKEW = "overlay_skew_invariants"


CHECKS = (CHECK_DOMAIN, CHECK_PACKS, CHECK_ONE_TYPE, CHECK_BOSS, CHECK_SKEW)


DESCRIPTIONS = {
    CHECK_DOMAIN: "Variant cells all on the board, safe (never a mine), outside R0 and off fog cells (seed 003 布置域).",
    CHECK_PACKS: "Each pack 8-connected with size in [pack_min, pack_max], packs never touching, cells within the "
                 "target, shortfall = target - placed (seed 003 连通片).",
    CHECK_ONE_TYPE: "At most one variant type per board; a whole-board variant carries zero cells and zero draws.",
    CHECK_BOSS: "Boss rows carry the global (whole-board) type and zero cells from level 2 on, none on level 1; "
                "no global type off Boss rows (seed 003 恒定制).",
    CHECK_SKEW: "Resource-face skew: total 77, effect_value 0 bit-identical to no skew, whitelist unchanged, "
                "survival never up, offense never down (seed 003 off 态零扰动, 合计恒 77).",
}


def overlay_dataset_schema():
    """The explicit schema of a ``variant_overlays`` partition file:
    ``board_scope`` (joins ``boards.scope``), the overlay record
    (``variants.placement.overlay_record_schema``; ``level_index`` and
    ``node_depth`` live in the hive path) and the fingerprints."""
    import pyarrow as pa

    record = [f for f in overlay_record_schema() if f.name != "level_index"]
    return pa.schema([pa.field("board_scope", pa.int64()), *record,
                      pa.field("batch_fingerprint", pa.string()), pa.field("overlay_fingerprint", pa.string())])


def build_records(board_records: list[dict], board_gen: BoardGenTable, variation, key: tuple[int, int]) -> list[dict]:
    """The overlay records of a row's boards (``overlays.overlay_records``),
    with the fingerprints; one per board, in board order."""
    row = board_gen.rows[key]
    fp = overlay_fingerprint(board_records[0]["batch_fingerprint"] if board_records else "", variation,
                             board_gen.is_boss_row(key), row.board_type)
    out = overlay_records(board_records, board_gen, variation)
    for rec, board in zip(out, board_records):
        rec["level_index"], rec["node_depth"] = key
        rec["batch_fingerprint"] = board.get("batch_fingerprint")
        rec["overlay_fingerprint"] = fp
    return out


_OVERLAY_FIELDS = {f.name for f in fields(Overlay)}


def overlay_from_record(rec: dict) -> Overlay:
    """An :class:`Overlay` value back from a written record (lists to tuples)."""
    values = {k: v for k, v in rec.items() if k in _OVERLAY_FIELDS}
    for name in ("cells", "global_pool", "region_pool"):
        values[name] = tuple(values.get(name) or ())
    values["packs"] = tuple(tuple(p) for p in values.get("packs") or ())
    return Overlay(**values)


@dataclass(frozen=True)
class Placed:
    """One board with its R0 and its overlay, as the checks see them."""

    scope: int
    board: Board
    r0: frozenset
    overlay: Overlay
    depth: int | str = "D"


def placed_from_records(board_records: list[dict], overlay_recs: list[dict], spawn_side: int) -> list[Placed]:
    """Boards rebuilt from their layouts, R0 recomputed (the spawn square and
    its flood, fog cells never opened), matched to their overlays by scope."""
    by_scope = {r["scope"]: r for r in board_records}
    out = []
    for rec in overlay_recs:
        b = board_from_record(by_scope[rec["board_scope"]], spawn_side)
        r0 = reveal_r0(b.mines, b.width, b.height, b.spawn_side, frozenset(b.fog))
        out.append(Placed(rec["board_scope"], b, r0, overlay_from_record(rec), rec.get("node_depth", "D")))
    return out


def _fog_issues(p: Placed) -> list[CheckIssue]:
    fog = set(p.board.fog)
    on_fog = tuple(c for c in p.overlay.cells if c in fog)
    if on_fog:
        return [CheckIssue("variant_on_fog", f"{len(on_fog)} variant cells on fog cells", on_fog)]
    return []


def draw_overlay(p: Placed, title: str = "overlaid board") -> str:
    """Markdown drawing of one overlaid board: ``*`` mine, ``o`` R0, ``f``
    fog, ``.`` other safe cell, and each pack drawn with the type's letter
    (upper case for the first pack, then alternating case so packs that
    would touch are told apart)."""
    ov, b = p.overlay, p.board
    letter = type_letter(ov.variant_type)
    pack_of = {c: i for i, pack in enumerate(ov.packs) for c in pack}
    loose = set(ov.cells) - set(pack_of)
    fog = set(b.fog)
    rows = []
    for y in range(b.height):
        line = []
        for x in range(b.width):
            c = y * b.width + x
            if c in pack_of:
                line.append(letter if pack_of[c] % 2 == 0 else letter.lower())
            elif c in loose:
                line.append("?")
            elif b.mines[c]:
                line.append("*")
            elif c in fog:
                line.append("f")
            elif c in p.r0:
                line.append("o")
            else:
                line.append(".")
        rows.append(" ".join(line))
    if ov.global_variant is not None:
        head = f"whole-board variant `{ov.global_variant}` ({ov.effect} {ov.effect_value}), no variant cells"
    elif ov.variant_type is None:
        head = "no variant (empty candidate pool)"
    else:
        head = (f"`{ov.variant_type}` = {letter} ({ov.effect}, {ov.trigger}): {len(ov.cells)}/{ov.target} cells "
                f"in {len(ov.packs)} packs {[len(k) for k in ov.packs]}, shortfall {ov.shortfall}")
    legend = "`*` mine, `o` R0, `f` fog, `.` safe; packs alternate upper/lower case; `?` a cell in no pack"
    seed = f" --master-seed {ov.master_seed}" if ov.master_seed else ""
    again = f"boardgen generate --level {ov.level_index} --depth {p.depth} --seed {p.scope}{seed} --variants"
    return (f"**{title}**: board scope `{p.scope}`\n\n{head}\n\n```\n" + "\n".join(rows)
            + f"\n```\n{legend}\n\nreproduce: `{again}`")


def board_issues(placed: list[Placed], boss_rule: bool = True) -> list[dict[str, list[CheckIssue]]]:
    """``variants.checks.check_overlay`` of every board, once (the outcomes
    below share it); the fog rule joins the domain group."""
    out = []
    for p in placed:
        ov, size = p.overlay, p.board.width * p.board.height
        off = tuple(c for p_ in ov.packs for c in p_ if not 0 <= c < size)
        if off:  # the pack rules cannot even be evaluated on cells off the board
            issues = {"domain": check_domain(p.board, p.r0, ov),
                      "packs": [CheckIssue("pack_off_board", f"{len(off)} pack cells off the board", off)],
                      "one_type": check_one_type(ov),
                      "boss_rule": check_boss_rule(ov) if boss_rule else []}
        else:
            issues = check_overlay(p.board, p.r0, ov, boss_rule=boss_rule)
        issues["domain"] = issues["domain"] + _fog_issues(p)
        out.append(issues)
    return out


def _found(placed: list[Placed], issues, group: str, boss_rule: bool = False) -> list[tuple[int, CheckIssue]]:
    if issues is None:
        issues = board_issues(placed, boss_rule)
    return [(p.scope, i) for p, by_group in zip(placed, issues) for i in by_group.get(group, [])]


def _issue_summary(found: list[tuple[int, CheckIssue]]) -> dict:
    scopes = sorted({s for s, _ in found})
    return {
        "issues": len(found),
        "issues_by_rule": dict(sorted(Counter(i.rule for _, i in found).items())),
        "failing_scopes": scopes[:SCOPES_SHOWN],
        "failing_scopes_total": len(scopes),
        "first_issues": [f"{s}: {i.rule}: {i.message}" for s, i in found[:8]],
    }


def _picture_board(placed: list[Placed], found: list[tuple[int, CheckIssue]], key=None) -> Placed | None:
    """The board to draw: the first offending one, else the one the ``key``
    ranks highest (default: most variant cells)."""
    if not placed:
        return None
    if found:
        bad = found[0][0]
        return next(p for p in placed if p.scope == bad)
    return max(placed, key=key or (lambda p: (len(p.overlay.cells), -p.scope)))


def _row_meta(placed: list[Placed]) -> dict:
    if not placed:
        return {"boards": 0}
    ov = placed[0].overlay
    return {"boards": len(placed), "level_index": ov.level_index, "board_type": ov.board_type, "is_boss": ov.is_boss}


def domain_outcome(placed: list[Placed], issues=None) -> CheckOutcome:
    found = _found(placed, issues, "domain")
    cells = sum(len(p.overlay.cells) for p in placed)
    with_cells = sum(1 for p in placed if p.overlay.cells)
    pic = _picture_board(placed, found)
    return CheckOutcome(
        name=CHECK_DOMAIN, assertion="overlay domain", passed=not found, severity="error", blocking=False,
        description=(f"{len(found)} domain issues on {len({s for s, _ in found})} boards" if found else
                     f"{cells} variant cells on {with_cells} of {len(placed)} boards, all safe and outside R0"),
        metadata={**_row_meta(placed), "variant_cells": cells, "boards_with_cells": with_cells,
                  "r0_cells_mean": (sum(len(p.r0) for p in placed) / len(placed)) if placed else 0.0,
                  **_issue_summary(found)},
        pictures={"overlaid_board": draw_overlay(pic, "first offending board" if found else "board with most variant "
                                                 "cells")} if pic else {},
    )


def packs_outcome(placed: list[Placed], issues=None) -> CheckOutcome:
    found = _found(placed, issues, "packs")
    sizes: Counter = Counter()
    for p in placed:
        sizes.update(len(k) for k in p.overlay.packs)
    ov = placed[0].overlay if placed else None
    target = sum(p.overlay.target for p in placed)
    placed_cells = sum(len(p.overlay.cells) for p in placed)
    shortfall = sum(p.overlay.shortfall for p in placed)
    pic = _picture_board(placed, found, key=lambda p: (len(p.overlay.packs), -p.scope))
    return CheckOutcome(
        name=CHECK_PACKS, assertion="overlay packs", passed=not found, severity="error", blocking=False,
        description=(f"{len(found)} pack issues on {len({s for s, _ in found})} boards" if found else
                     f"{sum(sizes.values())} packs, sizes {dict(sorted(sizes.items()))} within "
                     f"[{ov.pack_min if ov else '-'}, {ov.pack_max if ov else '-'}], 8-connected, never touching"),
        metadata={**_row_meta(placed), "packs": sum(sizes.values()),
                  "pack_size_distribution": {str(k): v for k, v in sorted(sizes.items())},
                  "pack_min": ov.pack_min if ov else None, "pack_max": ov.pack_max if ov else None,
                  "target_cells": target, "placed_cells": placed_cells, "shortfall_cells": shortfall,
                  "boards_with_shortfall": sum(1 for p in placed if p.overlay.shortfall),
                  "candidate_cells": sum(p.overlay.candidate_count for p in placed),
                  **_issue_summary(found)},
        pictures={"overlaid_board": draw_overlay(pic, "first offending board" if found else "board with most packs")}
        if pic else {},
    )


def one_type_outcome(placed: list[Placed], issues=None) -> CheckOutcome:
    found = _found(placed, issues, "one_type")
    types = Counter(p.overlay.variant_type or "(none)" for p in placed)
    lines = ["| variant type | scope | boards |", "|---|---|---|"]
    scopes = {p.overlay.variant_type or "(none)": p.overlay.scope or "-" for p in placed}
    lines += [f"| {t} | {scopes[t]} | {n} |" for t, n in sorted(types.items())]
    return CheckOutcome(
        name=CHECK_ONE_TYPE, assertion="one type per board", passed=not found, severity="error", blocking=False,
        description=(f"{len(found)} boards break the one-type rule" if found else
                     f"one type per board: {dict(sorted(types.items()))}"),
        metadata={**_row_meta(placed), "type_counts": dict(sorted(types.items())),
                  "whole_board_boards": sum(1 for p in placed if p.overlay.global_variant is not None),
                  "region_boards": sum(1 for p in placed if p.overlay.scope == "region"),
                  "boards_without_type": sum(1 for p in placed if p.overlay.variant_type is None),
                  **_issue_summary(found)},
        pictures={"types": "\n".join(lines)},
    )


def boss_rule_applies(variation) -> bool:
    """The Boss rule is a fact of tables that declare a global type (the
    default: ``skewed_veins`` from level 2); without one it does not apply."""
    return variation is not None and any(t.scope == "global" for t in variation.types)


def _expected_boss(level: int, is_boss: bool) -> str:
    if not is_boss:
        return "no whole-board variant (not a Boss row)"
    if level == 1:
        return "no whole-board variant (level 1 Boss is immune)"
    return "the global type on every board, zero variant cells"


def boss_outcome(placed: list[Placed], applies: bool = True, issues=None) -> CheckOutcome:
    found = _found(placed, issues, "boss_rule", boss_rule=True) if applies else []
    meta = _row_meta(placed)
    level, is_boss = meta.get("level_index", 0), meta.get("is_boss", False)
    globals_ = Counter(p.overlay.global_variant for p in placed if p.overlay.global_variant is not None)
    pic = _picture_board(placed, found)
    if not applies:
        description = "not applicable: the variation table declares no global type"
    elif found:
        description = f"{len({s for s, _ in found})} of {len(placed)} boards break the Boss rule: {found[0][1].message}"
    else:
        description = f"{'Boss' if is_boss else 'non-Boss'} row, level {level}: {_expected_boss(level, is_boss)}"
    return CheckOutcome(
        name=CHECK_BOSS, assertion="Boss whole-board rule", passed=not found, severity="error", blocking=False,
        description=description,
        metadata={**meta, "applicable": applies, "expected": _expected_boss(level, is_boss),
                  "global_variants": dict(sorted(globals_.items())),
                  "boards_with_cells": sum(1 for p in placed if p.overlay.cells),
                  "global_fallback_boards": sum(1 for p in placed if p.overlay.global_fallback),
                  **_issue_summary(found)},
        pictures={"overlaid_board": draw_overlay(pic, "first offending board" if found else "a board of the row")}
        if pic else {},
    )


def skew_effect_values(variation, placed: list[Placed]) -> list[int]:
    """0 (the off state) plus every ``resource_face`` value the table declares
    or the row's overlays carry."""
    values = {0}
    if variation is not None:
        values |= {t.effect_value for t in variation.types if t.effect == "resource_face"}
    values |= {p.overlay.effect_value for p in placed if p.overlay.effect == "resource_face"
               and p.overlay.effect_value is not None}
    return sorted(values)


def skew_outcome(weights: ResourceWeights | None, effect_values: list[int]) -> CheckOutcome:
    if weights is None:
        return CheckOutcome(
            name=CHECK_SKEW, assertion="skew invariants", passed=True, severity="error", blocking=False,
            description="not applicable: no resource weight table", metadata={"applicable": False})
    found: list[tuple[int, CheckIssue]] = []
    totals, families = {}, {}
    lines = ["| resource | family | " + " | ".join(f"skew {v}%" for v in effect_values) + " |",
             "|---|---|" + "---|" * len(effect_values)]
    skewed = {}
    for v in effect_values:
        found += [(v, i) for i in check_skew(weights, v)]
        try:
            skewed[v] = skew_weights(weights, v)
        except ValueError as exc:
            found.append((v, CheckIssue("skew_error", str(exc))))
            continue
        totals[str(v)] = skewed[v].total
        families[str(v)] = {f: skewed[v].family_total(f) for f in ("offense", "survival", "whitelist")}
    for i, r in enumerate(weights.rows):
        cells = " | ".join(str(skewed[v].rows[i].weight) if v in skewed else "-" for v in effect_values)
        lines.append(f"| {r.id} | {r.family} | {cells} |")
    lines.append("| **total** | | " + " | ".join(str(totals.get(str(v), "-")) for v in effect_values) + " |")
    off_identical = (skewed.get(0) is weights) if 0 in effect_values else None
    return CheckOutcome(
        name=CHECK_SKEW, assertion="skew invariants", passed=not found, severity="error", blocking=False,
        description=(f"{len(found)} skew issues: {found[0][1].message}" if found else
                     f"total {POOL_TOTAL} at effect values {effect_values}; 0 is the unskewed table itself; "
                     f"whitelist unchanged"),
        metadata={"applicable": True, "effect_values": effect_values, "pool_total": POOL_TOTAL,
                  "totals": totals, "family_totals": families, "off_state_identical": off_identical,
                  "issues": len(found), "issues_by_rule": dict(sorted(Counter(i.rule for _, i in found).items())),
                  "first_issues": [f"effect {v}: {i.rule}: {i.message}" for v, i in found[:8]]},
        pictures={"weights": "\n".join(lines)},
    )


def overlay_outcomes(placed: list[Placed], variation, weights: ResourceWeights | None) -> list[CheckOutcome]:
    """Every overlay check of one row, in ``CHECKS`` order."""
    issues = board_issues(placed, boss_rule=True)
    return [
        domain_outcome(placed, issues),
        packs_outcome(placed, issues),
        one_type_outcome(placed, issues),
        boss_outcome(placed, boss_rule_applies(variation), issues),
        skew_outcome(weights, skew_effect_values(variation, placed)),
    ]


def not_applicable_outcomes(reason: str) -> list[CheckOutcome]:
    """Every check passing as not applicable (a tables directory without
    ``variation.toml``: no overlays to check)."""
    return [CheckOutcome(name=n, assertion="overlay", passed=True, severity="error", blocking=False,
                         description=f"not applicable: {reason}", metadata={"applicable": False, "boards": 0})
            for n in CHECKS]


@dataclass
class OverlayResult:
    key: tuple[int, int]
    records: list[dict]
    outcomes: list[CheckOutcome]
    path: str | None
    fingerprint: str | None
    seconds: dict = field(default_factory=dict)

    def outcome(self, name: str) -> CheckOutcome:
        return next(o for o in self.outcomes if o.name == name)

    def summary(self) -> dict:
        recs = self.records
        types = Counter(r["variant_type"] or "(none)" for r in recs)
        return {
            "row": f"({self.key[0]},{self.key[1]})",
            "boards": len(recs),
            "variant_cells": sum(r["cell_count"] for r in recs),
            "packs": sum(r["pack_count"] for r in recs),
            "shortfall_cells": sum(r["shortfall"] for r in recs),
            "whole_board_boards": sum(1 for r in recs if r["global_variant"] is not None),
            "type_counts": dict(sorted(types.items())),
            "overlay_fingerprint": self.fingerprint or "none",
            "published": self.path is not None,
        }


def run_overlays(root, catalog, key: tuple[int, int], samples: int, master_seed: int = 0) -> OverlayResult:
    """The overlays of one row's published boards, checked, then written to
    ``variant_overlays`` (checks are not blocking: the file is written either
    way, so a failure can be dug into with SQL). Without a variation table
    the row's partition is withdrawn and every check passes as not
    applicable. Raises FileNotFoundError (no published boards) or ValueError
    (boards of another batch)."""
    from time import perf_counter


    board_gen = catalog.board_gen
    if catalog.variation is None:
        publish.withdraw(root, "variant_overlays", key)
        return OverlayResult(key, [], not_applicable_outcomes("the tables have no variation.toml"), None, None)
    t0 = perf_counter()
    batch = seed_batch(board_gen, key, samples, master_seed)
    boards = publish.read_partition(root, "boards", key)
    fps = {r.get("batch_fingerprint") for r in boards}
    if fps != {batch.batch_fingerprint}:
        raise ValueError(f"published boards of row {batch.row.key_text} were made from batch {sorted(map(str, fps))}, "
                         f"not {batch.batch_fingerprint}: regenerate the boards first")
    records = build_records(boards, board_gen, catalog.variation, key)
    t1 = perf_counter()
    placed = placed_from_records(boards, records, board_gen.spawn_side)
    outcomes = overlay_outcomes(placed, catalog.variation, catalog.resources)
    t2 = perf_counter()
    path = publish.publish_overlays(root, key, records, overlay_dataset_schema())
    seconds = {"place": t1 - t0, "checks": t2 - t1, "write": perf_counter() - t2}
    return OverlayResult(key, records, outcomes, str(path), records[0]["overlay_fingerprint"] if records else None,
                         seconds)


def stored_overlay_fingerprint(root, key: tuple[int, int]) -> str | None:
    """The overlay fingerprint the warehouse holds for a row, or None."""
    import pyarrow.parquet as pq


    path = datasets.partition_path(Path(root), "variant_overlays", key)
    if not path.exists():
        return None
    try:
        col = pq.read_table(path, columns=["overlay_fingerprint"]).column(0)
    except (KeyError, ValueError, OSError):
        return None
    return str(col[0]) if len(col) else None
