"""The overlay checks of one row as :class:`CheckOutcome` values (seed 003
"验收标准"; SPEC 3; SPEC 9 "overlay checks"), beside the placement they check,
as the F4 assertions live beside theirs (``calibration.assertions``).

One check per quality dimension, all error severity, none blocking (the
overlays are a record beside the boards; nothing downstream reads them):

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

The checks hold what a reader of the warehouse gets: the overlays read back
from the written table (``OverlayBatch.from_arrow``) against the boards
rebuilt from their layouts, with R0 recomputed (``board.r0``). Every board
gets the compiled rule bits (``check_kernels``); the readable checks
(``variants.checks``) run only on boards with a bit set, for the messages,
cells and rules the metadata names. A failing check draws its first
offending board; a passing one carries the reproduce command of the board it
would have shown (``example_board``) instead of a drawing.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from boardgen_pipeline import check_names
from boardgen_pipeline.board.geometry import Board
from boardgen_pipeline.board.r0 import board_arrays, r0_batch
from boardgen_pipeline.check_names import CHECK_BOSS, CHECK_DOMAIN, CHECK_ONE_TYPE, CHECK_PACKS, CHECK_SKEW
from boardgen_pipeline.outcomes import SCOPES_SHOWN, CheckOutcome
from boardgen_pipeline.variants.batch import OverlayBatch
from boardgen_pipeline.variants.check_kernels import rule_flags
from boardgen_pipeline.variants.checks import CheckIssue, check_boss_rule, check_domain, check_one_type, check_packs, check_skew
from boardgen_pipeline.variants.placement import Overlay, type_letter
from boardgen_pipeline.variants.skew import POOL_TOTAL, ResourceWeights, skew_weights

CHECKS = check_names.OVERLAYS


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


@dataclass(frozen=True)
class Placed:
    """One board with its R0 and its overlay, as the readable checks and the
    drawings see them."""

    scope: int
    board: Board
    r0: frozenset
    overlay: Overlay
    depth: int | str = "D"


def _fog_issues(p: Placed) -> list[CheckIssue]:
    fog = set(p.board.fog)
    on_fog = tuple(c for c in p.overlay.cells if c in fog)
    if on_fog:
        return [CheckIssue("variant_on_fog", f"{len(on_fog)} variant cells on fog cells", on_fog)]
    return []


def board_issues(p: Placed, boss_rule: bool = True) -> dict[str, list[CheckIssue]]:
    """The readable checks of one board by check group (``variants.checks``;
    the fog rule joins the domain group). The pack rules need every cell on
    a board of the overlay's own size: otherwise the group reports why they
    cannot be evaluated (``pack_off_board``, ``pack_board_mismatch``)."""
    ov, b = p.overlay, p.board
    size = b.width * b.height
    off = [c for pack in ov.packs for c in pack if not 0 <= c < size]
    off += [c for c in ov.cells if not 0 <= c < size and c not in off]
    if off:
        packs = [CheckIssue("pack_off_board", f"{len(off)} pack cells off the board", tuple(off))]
    elif (ov.width, ov.height) != (b.width, b.height):
        packs = [CheckIssue("pack_board_mismatch", f"overlay is {ov.width}x{ov.height}, board {b.width}x{b.height}: "
                                                   "the pack rules cannot be evaluated")]
    else:
        packs = check_packs(ov)
    return {"domain": check_domain(b, p.r0, ov) + _fog_issues(p), "packs": packs, "one_type": check_one_type(ov),
            "boss_rule": check_boss_rule(ov) if boss_rule else []}


@dataclass(frozen=True)
class CheckedRow:
    """A row's overlays as the checks see them: ``batch`` (read back from
    its table), board ``i`` of the batch on row ``i`` of ``mines``, ``fog``
    and ``r0`` (recomputed from the boards), the compiled rule bits
    (``check_kernels.RULES``) and the readable issues of every board with a
    bit set."""

    batch: OverlayBatch
    mines: np.ndarray
    fog: np.ndarray
    r0: np.ndarray
    width: int
    height: int
    spawn_side: int
    flags: np.ndarray
    issues: dict

    def placed(self, i: int) -> Placed:
        board = Board(self.width, self.height, self.spawn_side, self.mines[i].tobytes(),
                      tuple(np.flatnonzero(self.fog[i]).tolist()))
        return Placed(int(self.batch.board_scope[i]), board, frozenset(np.flatnonzero(self.r0[i]).tolist()),
                      self.batch.overlay(i), self.batch.node_depth)


def _aligned(batch: OverlayBatch, board_scopes, *arrays):
    """The rows of ``arrays`` (one per board of ``board_scopes``) in the
    batch's board order, matched by scope."""
    scopes = np.asarray(list(board_scopes), np.int64)
    if scopes.shape[0] != arrays[0].shape[0]:
        raise ValueError(f"{scopes.shape[0]} board scopes for {arrays[0].shape[0]} boards")
    order = np.argsort(scopes, kind="stable")
    pos = np.minimum(np.searchsorted(scopes[order], batch.board_scope), max(0, scopes.shape[0] - 1))
    if len(batch) and (not scopes.shape[0] or (scopes[order][pos] != batch.board_scope).any()):
        missing = sorted(set(batch.board_scope.tolist()) - set(scopes.tolist()))
        raise ValueError(f"overlays of board scopes {missing[:8]} have no board")
    idx = order[pos]
    return tuple(a[idx] for a in arrays)


def check_row(batch: OverlayBatch, mines, fog, *, width: int, height: int, spawn_side: int,
              board_scopes=None, r0=None) -> CheckedRow:
    """Hold a row's overlays against its boards (``[B, W*H]`` masks, in the
    order of ``board_scopes``, or already in the batch's order when it is
    None): R0 recomputed from the boards, the compiled rule bits of every
    board, the readable checks of the boards that have one.

    ``r0``: ``board.r0.r0_batch`` of these very masks when the caller has
    it (the chain computes it once, from the layouts as written, and the
    placement reads the same array, read-only); it is that function of
    the boards either way, never the generator's nor the placement's own
    state."""
    mines, fog = board_arrays(mines, fog, width, height)
    if r0 is None:
        r0 = r0_batch(mines, fog, width, height, spawn_side)  # in the order of the masks, aligned below
    else:
        r0, _ = board_arrays(r0, None, width, height)
        if r0.shape != mines.shape:
            raise ValueError(f"R0 of shape {r0.shape} for boards of shape {mines.shape}")
    if board_scopes is not None:
        mines, fog, r0 = _aligned(batch, board_scopes, mines, fog, r0)
    elif mines.shape[0] != len(batch):
        raise ValueError(f"{len(batch)} overlays for {mines.shape[0]} boards")
    flags = rule_flags(batch, mines, fog, r0, width, height)
    row = CheckedRow(batch, mines, fog, r0, width, height, spawn_side, flags, {})
    for i in np.flatnonzero(flags).tolist():
        row.issues[i] = board_issues(row.placed(i))
    return row


def reproduce_command(level_index: int, depth, scope: int, master_seed: int | None) -> str:
    """The command that rebuilds a board and its overlay."""
    seed = f" --master-seed {master_seed}" if master_seed else ""
    return f"boardgen generate --level {level_index} --depth {depth} --seed {scope}{seed} --variants"


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
    again = reproduce_command(ov.level_index, p.depth, p.scope, ov.master_seed)
    return (f"**{title}**: board scope `{p.scope}`\n\n{head}\n\n```\n" + "\n".join(rows)
            + f"\n```\n{legend}\n\nreproduce: `{again}`")


# (board index, board scope, issue) in board order
Found = list[tuple[int, int, CheckIssue]]


def _found(row: CheckedRow, group: str) -> Found:
    scopes = row.batch.board_scope
    return [(i, int(scopes[i]), issue) for i in sorted(row.issues) for issue in row.issues[i].get(group, [])]


def _issue_summary(found: Found) -> dict:
    scopes = sorted({s for _, s, _ in found})
    return {
        "issues": len(found),
        "issues_by_rule": dict(sorted(Counter(i.rule for _, _, i in found).items())),
        "failing_scopes": scopes[:SCOPES_SHOWN],
        "failing_scopes_total": len(scopes),
        "first_issues": [f"{s}: {i.rule}: {i.message}" for _, s, i in found[:8]],
    }


def _picture_board(row: CheckedRow, found: Found, rank: np.ndarray) -> int | None:
    """The board to show: the first offending one, else the first board
    ranking highest (``rank``, ties to the lowest scope)."""
    if not len(row.batch):
        return None
    if found:
        return found[0][0]
    best = np.flatnonzero(rank == rank.max())
    return int(best[np.argmin(row.batch.board_scope[best])])


def _show(row: CheckedRow, found: Found, i: int | None, metadata: dict) -> dict:
    """The pictures of a check: the first offending board drawn when it
    fails; when it passes, no drawing, the shown board's reproduce command
    in ``metadata["example_board"]``."""
    if i is None:
        return {}
    if found:
        return {"overlaid_board": draw_overlay(row.placed(i), "first offending board")}
    b = row.batch  # the two fields the command needs, not the board's whole readable overlay
    metadata["example_board"] = reproduce_command(int(b.level_index[i]), b.node_depth, int(b.board_scope[i]),
                                                  b.master_seed_of(i))
    return {}


def _row_meta(row: CheckedRow) -> dict:
    b = row.batch
    if not len(b):
        return {"boards": 0}
    return {"boards": len(b), "level_index": int(b.level_index[0]), "board_type": b.board_type.value(0),
            "is_boss": bool(b.is_boss[0])}


def domain_outcome(row: CheckedRow) -> CheckOutcome:
    found = _found(row, "domain")
    n = len(row.batch)
    counts = row.batch.cell_count()
    cells, with_cells = int(counts.sum()), int((counts > 0).sum())
    metadata = {**_row_meta(row), "variant_cells": cells, "boards_with_cells": with_cells,
                "r0_cells_mean": (int(row.r0.sum(dtype=np.int64)) / n) if n else 0.0, **_issue_summary(found)}
    pictures = _show(row, found, _picture_board(row, found, counts), metadata)
    return CheckOutcome(
        name=CHECK_DOMAIN, assertion="overlay domain", passed=not found, severity="error", blocking=False,
        description=(f"{len(found)} domain issues on {len({s for _, s, _ in found})} boards" if found else
                     f"{cells} variant cells on {with_cells} of {n} boards, all safe and outside R0"),
        metadata=metadata, pictures=pictures,
    )


def packs_outcome(row: CheckedRow) -> CheckOutcome:
    found = _found(row, "packs")
    b = row.batch
    n = len(b)
    by_size = np.bincount(b.pack_sizes()) if b.pack_sizes().size else np.zeros(0, np.int64)
    sizes = {int(k): int(v) for k, v in enumerate(by_size.tolist()) if v}
    lo, hi = (int(b.pack_min[0]), int(b.pack_max[0])) if n else (None, None)
    packs = sum(sizes.values())
    shortfall = b.shortfall
    metadata = {**_row_meta(row), "packs": packs,
                "pack_size_distribution": {str(k): v for k, v in sizes.items()},
                "pack_min": lo, "pack_max": hi,
                "target_cells": int(b.target.sum()), "placed_cells": int(b.cell_count().sum()),
                "shortfall_cells": int(shortfall.sum()), "boards_with_shortfall": int((shortfall != 0).sum()),
                "candidate_cells": int(b.candidate_count.sum()), **_issue_summary(found)}
    pictures = _show(row, found, _picture_board(row, found, b.pack_count()), metadata)
    return CheckOutcome(
        name=CHECK_PACKS, assertion="overlay packs", passed=not found, severity="error", blocking=False,
        description=(f"{len(found)} pack issues on {len({s for _, s, _ in found})} boards" if found else
                     f"{packs} packs, sizes {sizes} within "
                     f"[{lo if n else '-'}, {hi if n else '-'}], 8-connected, never touching"),
        metadata=metadata, pictures=pictures,
    )


def _names(batch: OverlayBatch, codes: np.ndarray, none: str) -> list[str]:
    return [batch.type_ids[c] if c >= 0 else none for c in codes.tolist()]


def one_type_outcome(row: CheckedRow) -> CheckOutcome:
    found = _found(row, "one_type")
    b = row.batch
    n = len(b)
    codes, last_reversed, counts = np.unique(np.asarray(b.variant_type)[::-1], return_index=True, return_counts=True)
    names = _names(b, codes, "(none)")
    types = dict(sorted(zip(names, counts.tolist())))
    # the scope a type is listed with: its last board's (as a dict built in
    # board order keeps it)
    scopes = {name: b.scope.value(n - 1 - int(r)) or "-" for name, r in zip(names, last_reversed.tolist())}
    lines = ["| variant type | scope | boards |", "|---|---|---|"]
    lines += [f"| {t} | {scopes[t]} | {k} |" for t, k in types.items()]
    region = b.scope.vocab.index("region") if "region" in b.scope.vocab else -2
    return CheckOutcome(
        name=CHECK_ONE_TYPE, assertion="one type per board", passed=not found, severity="error", blocking=False,
        description=(f"{len({s for _, s, _ in found})} boards break the one-type rule" if found else
                     f"one type per board: {types}"),
        metadata={**_row_meta(row), "type_counts": types,
                  "whole_board_boards": int((np.asarray(b.global_variant) >= 0).sum()),
                  "region_boards": int((b.scope.codes == region).sum()),
                  "boards_without_type": int((np.asarray(b.variant_type) < 0).sum()),
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


def boss_outcome(row: CheckedRow, applies: bool = True) -> CheckOutcome:
    found = _found(row, "boss_rule") if applies else []
    b = row.batch
    meta = _row_meta(row)
    level, is_boss = meta.get("level_index", 0), meta.get("is_boss", False)
    gv = np.asarray(b.global_variant)
    codes, counts = np.unique(gv[gv >= 0], return_counts=True)
    globals_ = dict(sorted(zip(_names(b, codes, "(none)"), counts.tolist())))
    if not applies:
        description = "not applicable: the variation table declares no global type"
    elif found:
        description = f"{len({s for _, s, _ in found})} of {len(b)} boards break the Boss rule: {found[0][2].message}"
    else:
        description = f"{'Boss' if is_boss else 'non-Boss'} row, level {level}: {_expected_boss(level, is_boss)}"
    metadata = {**meta, "applicable": applies, "expected": _expected_boss(level, is_boss),
                "global_variants": globals_,
                "boards_with_cells": int((b.cell_count() > 0).sum()),
                "global_fallback_boards": int(np.asarray(b.global_fallback).sum()),
                **_issue_summary(found)}
    pictures = _show(row, found, _picture_board(row, found, b.cell_count()), metadata)
    return CheckOutcome(
        name=CHECK_BOSS, assertion="Boss whole-board rule", passed=not found, severity="error", blocking=False,
        description=description, metadata=metadata, pictures=pictures,
    )


def skew_effect_values(variation, batch: OverlayBatch | None) -> list[int]:
    """0 (the off state) plus every ``resource_face`` value the table declares
    or the row's overlays carry."""
    values = {0}
    if variation is not None:
        values |= {t.effect_value for t in variation.types if t.effect == "resource_face"}
    if batch is not None and "resource_face" in batch.effect.vocab:
        face = batch.effect.codes == batch.effect.vocab.index("resource_face")
        valid = batch.valid.get("effect_value")
        if valid is not None:
            face &= valid
        values |= set(np.asarray(batch.effect_value)[face].tolist())
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
        try:  # check_skew skews too: an effect value the skew refuses is an issue, not a crash
            issues = check_skew(weights, v)
            skewed[v] = skew_weights(weights, v)
        except ValueError as exc:
            found.append((v, CheckIssue("skew_error", str(exc))))
            continue
        found += [(v, i) for i in issues]
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
        pictures={"weights": "\n".join(lines)} if found else {},  # one table for every row: drawn when it fails
    )


def row_outcomes(row: CheckedRow, variation, weights: ResourceWeights | None) -> list[CheckOutcome]:
    """Every overlay check of one checked row, in ``CHECKS`` order."""
    return [
        domain_outcome(row),
        packs_outcome(row),
        one_type_outcome(row),
        boss_outcome(row, boss_rule_applies(variation)),
        skew_outcome(weights, skew_effect_values(variation, row.batch)),
    ]


def overlay_outcomes(batch: OverlayBatch, mines, fog, *, width: int, height: int, spawn_side: int, variation,
                     weights: ResourceWeights | None, board_scopes=None, r0=None) -> list[CheckOutcome]:
    """Every overlay check of one row, in ``CHECKS`` order: ``batch`` read
    back from the row's ``variant_overlays`` table, the row's boards as
    ``[B, W*H]`` masks (``board.r0.layouts_to_arrays`` of their layouts), in
    the order of ``board_scopes`` (None: the batch's order); ``r0`` as in
    :func:`check_row`."""
    row = check_row(batch, mines, fog, width=width, height=height, spawn_side=spawn_side, board_scopes=board_scopes,
                    r0=r0)
    return row_outcomes(row, variation, weights)


def not_applicable_outcomes(reason: str) -> list[CheckOutcome]:
    """Every check passing as not applicable (a tables directory without
    ``variation.toml``: no overlays to check)."""
    return [CheckOutcome(name=n, assertion="overlay", passed=True, severity="error", blocking=False,
                         description=f"not applicable: {reason}", metadata={"applicable": False, "boards": 0})
            for n in CHECKS]
