"""``boardgen export --godot DIR`` and the nightly's export on green: the
calibrated tables as the game's Godot 4 resources, refused under a failing
calibration (SPEC 11 "stamped with the tables' digest and the verdict they
were calibrated under"; seed 000 "values in board_gen.tres").

The verdict is the warehouse's: every row of ``board_gen`` passes F4 with
its current batch (``steps.table_check.row_verdicts``: the batch of the
tables as they are now, at ``samples`` boards and the master seed). A table
with a failing row, or a row not calibrated for these tables, is refused
(:class:`Refused`, exit 3, the rows named) unless ``allow_failing`` asks
for it explicitly; the files then carry the failing verdict in their stamp.

The files (``conformance.godot`` writes their text): ``board_gen.tres``,
``variation.tres``, ``resource_weights.tres``, ``nodemap_level_<L>.tres``
and the GDScript classes they name, beside them. Every text is built before
the first file is written; each file is replaced atomically; the same
tables and verdict give the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boardgen_pipeline.calibration.fingerprints import tables_digest
from boardgen_pipeline.catalog import Catalog
from boardgen_pipeline.conformance import godot
from boardgen_pipeline.conformance.kit import KIT_VERSION

NIGHT_FOLDER = "godot"  # the nightly's export: <warehouse>/godot/


class Refused(Exception):
    """The tables' last calibration failed (or is missing): nothing written.
    ``verdict``: the verdict that refused."""

    def __init__(self, message: str, verdict: Verdict):
        super().__init__(message)
        self.verdict = verdict


class TargetError(Exception):
    """The export target cannot be a folder of resources: one sentence."""


@dataclass(frozen=True)
class Verdict:
    failing: dict[str, list[str]]  # partition -> failing assertions ("not calibrated")
    rows: int
    samples: int
    master_seed: int

    @property
    def green(self) -> bool:
        return not self.failing

    def text(self) -> str:
        where = f"{self.samples} boards a row, master seed {self.master_seed}"
        if self.green:
            return f"green: all {self.rows} rows pass F4 ({where})"
        named = "; ".join(f"{pk}: {', '.join(names)}" for pk, names in sorted(self.failing.items()))
        return f"failing: {len(self.failing)} of {self.rows} rows ({named}) ({where})"


def verdict(root, catalog: Catalog, samples: int, master_seed: int = 0) -> Verdict:
    from boardgen_pipeline.steps.table_check import row_verdicts

    rows = row_verdicts(Path(root), catalog.board_gen, samples, master_seed)
    return Verdict({pk: names for pk, names in rows.items() if names}, len(rows), samples, master_seed)


def _source(name: str) -> str:
    # the file's name in a tables folder, never the folder's path: a pinned copy and a checkout export the same bytes
    return f"tables/{name} (TOML: the source designers edit)"


def texts(catalog: Catalog, verdict_text: str) -> dict[str, str]:
    """Every file of the export by name (pure: the same inputs, the same bytes)."""
    digest = tables_digest(catalog.tables_dir)[0]

    def st(name: str) -> dict:
        return godot.stamp(digest, KIT_VERSION, verdict_text, _source(name))

    out = {"board_gen.tres": godot.board_gen_tres(catalog.board_gen, st("board_gen.toml"))}
    if catalog.variation is not None:
        out["variation.tres"] = godot.variation_tres(catalog.variation, st("variation.toml"))
    if catalog.resources is not None:
        out["resource_weights.tres"] = godot.resource_weights_tres(catalog.resources, st("resource_weights.toml"))
    for level in sorted(catalog.pools or {}):
        out[f"nodemap_level_{level}.tres"] = godot.node_map_pool_tres(catalog.pools[level],
                                                                       st(f"nodemaps/level_{level}.toml"))
    for cls in godot.CLASSES:
        out[cls.file] = godot.script(cls, st("the GDScript classes"))
    return out


def check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise TargetError(f"{target} is a file; the Godot resources go into a folder")
    parent = next((p for p in (target, *target.parents) if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise TargetError(f"{parent} is a file; the Godot resources go into a folder")


def export(catalog: Catalog, target: Path | str, root, samples: int, master_seed: int = 0,
           allow_failing: bool = False) -> tuple[Verdict, list[Path]]:
    """Write the resources into ``target`` under the warehouse's verdict."""
    from boardgen_pipeline.files import atomic_write

    target = Path(target)
    check_target(target)
    v = verdict(root, catalog, samples, master_seed)
    if not v.green and not allow_failing:
        raise Refused(f"the tables' last calibration is not green, so nothing was exported: {v.text()}; "
                      f"calibrate them (boardgen calibrate), or pass --allow-failing to export them stamped failing", v)
    files = texts(catalog, v.text())
    target.mkdir(parents=True, exist_ok=True)
    return v, [atomic_write(target / name, text) for name, text in files.items()]


def export_on_green(root, catalog: Catalog, samples: int, master_seed: int = 0) -> tuple[Verdict, list[Path]]:
    """The nightly's export: ``<warehouse>/godot/`` rewritten when the
    night's verdict is green; nothing written otherwise (the folder keeps the
    last green export, whose stamp names the tables it was made from)."""
    try:
        return export(catalog, Path(root) / NIGHT_FOLDER, root, samples, master_seed)
    except Refused as refused:
        return refused.verdict, []
