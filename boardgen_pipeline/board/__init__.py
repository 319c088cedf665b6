"""One board, from a parameter row to a verified minesweeper board (seed 000
"四阶段管线": parameter snapshot -> place -> generate-verify -> output; seed 001
fog, F1-F5; SPEC 2, 5, 6).

- ``rng``: SplitMix64 streams, one per ``(master_seed, label, scope)`` (SPEC 6);
- ``geometry``: cells, the spawn square, layouts (SPEC 2.1, 2.6);
- ``placement``: place then shave (SPEC 2.2), readable reference;
- ``solver``: R0 and R∞ under ``single_subset`` (SPEC 2.3), readable reference;
- ``kernels``: the compiled twins of placement and solver by name, held in
  one module per stage: ``kernel_args`` (the named tuples they take their
  arrays in, and the checks of those), ``place_numbers``, ``flood``,
  ``closure_cells`` (the closure of each board shape), ``fog_kernels``,
  ``attempt_loop``, ``batch_driver`` (docs/architecture-kernels.md: which
  compiled function holds each rule, which reference proves it);
- ``workspace``: the :class:`~boardgen_pipeline.board.workspace.Workspace`
  that builds those tuples for one board size and calls the kernels;
- ``fog``: fog placement and the fog budget (SPEC 5);
- ``generator``: the attempt loop and its three exits (SPEC 2.4-2.5);
- ``measure``: the measure entry point (seed 001 AC-8);
- ``difficulty``: 3BV, openings, solve waves, complete logic (per-board difficulty);
- ``probability``: exact mine probabilities of a position, and ``player``:
  a perfect player's forced guesses and survival (fairness; ``limbs``:
  exact integers for their kernels);
- ``bench``: throughput of one row, for ``boardgen bench``;
- ``kernel_cache``: numba's cache written by two processes at once, the
  cold compile run from both ends.

Imports only ``tables``, ``errors`` and ``paths`` below it. Importing the
package sets numba's cache folder first (``paths.kernel_cache_dir``: named by
a digest of the kernels' sources, so no cached kernel runs older code than
its sources say).
"""

from boardgen_pipeline.paths import kernel_cache_dir

kernel_cache_dir()
