"""Every table of a tables directory, loaded and cross-checked together
(SPEC 2.7, 3, 4: "all violations reported together", content discipline).

``load_catalog(dir)`` runs the load-time checks of ``board_gen.toml``,
``variation.toml``, ``resource_weights.toml``, ``nodemaps/`` and
``curve_targets.toml`` (SPEC 12: the target curve names rows and levels of
``board_gen``) and the cross-table rule that every battle and boss node has
an exact ``board_gen`` row, then raises one TableError with every violation
of every file. A table
file that is absent is skipped (a fixture directory may hold only
``board_gen.toml``); ``board_gen.toml`` itself is required.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from boardgen_pipeline.errors import TableError, Violation
from boardgen_pipeline.paths import default_tables_dir
from boardgen_pipeline.tables.board_gen import DEFAULT_TABLE, BoardGenTable, load_board_gen

VARIATION_TABLE = "variation.toml"


RESOURCE_TABLE = "resource_weights.toml"


NODEMAP_DIR = "nodemaps"


TARGETS_TABLE = "curve_targets.toml"


@dataclass(frozen=True)
class Catalog:
    tables_dir: Path
    board_gen: BoardGenTable
    variation: object | None  # variants.VariationTable
    resources: object | None  # skew.ResourceWeights
    pools: dict | None  # level -> nodemap.Pool
    targets: object | None = None  # tables.curve_targets.CurveTargets

    @property
    def warnings(self) -> tuple[Violation, ...]:
        return self.board_gen.warnings


def _collect(fn, violations: list[Violation]):
    try:
        return fn()
    except TableError as exc:
        violations.extend(exc.violations)
        return None


def load_catalog(tables_dir: Path | str | None = None, shown_as: Path | str | None = None) -> Catalog:
    """Every table of ``tables_dir``, validated together. ``shown_as``: the
    folder a copy was made from (a night's pinned tables,
    ``steps.pinned_tables``): what messages, findings and commands name, so
    a designer reads their own file, and the warehouse holds no copy's path."""
    from boardgen_pipeline.nodemap import check_content_discipline, read_pools
    from boardgen_pipeline.variants.skew import load_resource_weights
    from boardgen_pipeline.variants.table import load_variation_table

    root = Path(tables_dir or default_tables_dir())
    violations: list[Violation] = []
    board_gen = _collect(lambda: load_board_gen(root / DEFAULT_TABLE), violations)
    variation = resources = pools = targets = None
    if (root / VARIATION_TABLE).exists():
        variation = _collect(lambda: load_variation_table(root / VARIATION_TABLE), violations)
    if (root / RESOURCE_TABLE).exists():
        resources = _collect(lambda: load_resource_weights(root / RESOURCE_TABLE), violations)
    if (root / NODEMAP_DIR).is_dir():
        pools, pool_violations = read_pools(root)
        violations.extend(pool_violations)
        if board_gen is not None and not pool_violations:
            violations.extend(check_content_discipline(pools, set(board_gen.keys())))
    if board_gen is not None and (root / TARGETS_TABLE).exists():
        from boardgen_pipeline.tables.curve_targets import load_curve_targets

        targets = _collect(lambda: load_curve_targets(root / TARGETS_TABLE, board_gen), violations)
    if violations:
        raise TableError(violations)
    if shown_as is not None:
        board_gen = _shown_as(board_gen, Path(shown_as) / DEFAULT_TABLE)
        if targets is not None:
            from dataclasses import replace

            targets = replace(targets, path=str(Path(shown_as) / TARGETS_TABLE))
    return Catalog(root, board_gen, variation, resources, pools, targets)


def _shown_as(table: BoardGenTable, path: Path) -> BoardGenTable:
    from dataclasses import replace

    warnings = tuple(replace(w, file=str(path)) for w in table.warnings)
    return replace(table, path=str(path), warnings=warnings)
