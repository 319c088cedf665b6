"""boardgen: deterministic minesweeper board generation and calibration.

The public entry points: ``generate(level_index, node_depth, seed)`` (seed
000 "生成入口") and the measure entry point ``measure_layout`` /
``measure_cells`` (seed 001 AC-8).
"""

from boardgen_pipeline.board.generator import generate
from boardgen_pipeline.board.measure import measure_cells, measure_layout

__all__ = ["generate", "measure_cells", "measure_layout"]
