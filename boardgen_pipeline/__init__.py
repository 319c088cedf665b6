"""boardgen: deterministic minesweeper board generation and calibration.

The public entry points: ``generate(level_index, node_depth, seed)`` (seed
000 "生成入口") and the measure entry point ``measure_layout`` /
``measure_cells`` (seed 001 AC-8). They are imported on first use (PEP 562),
so a command that needs no board (``boardgen validate``, the nightly's
coordinator) does not load the compiled kernels.
"""

__all__ = ["generate", "measure_cells", "measure_layout"]


def __getattr__(name: str):
    if name == "generate":
        from boardgen_pipeline.board.generator import generate

        return generate
    if name in ("measure_cells", "measure_layout"):
        from boardgen_pipeline.board import measure

        return getattr(measure, name)
    raise AttributeError(f"module 'boardgen_pipeline' has no attribute {name!r}")
