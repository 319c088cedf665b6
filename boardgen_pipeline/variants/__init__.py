"""Variants beside a board (seed 003 "变异框架与类型清单", "布置段", "全局作用域型",
"验收标准"; SPEC 3).

- ``table``: the variation table and its candidate-pool gate;
- ``placement``: one overlay per board from its own ``variant_place`` stream;
- ``overlays``: overlays of generated boards (the Boss rule, fog exclusion);
- ``skew``: the resource weight table and the resource-face skew;
- ``checks``: the acceptance lines as plain checks over overlays.

Imports ``board`` and ``tables``; nothing above. Importing the package sets
numba's cache folder first (``paths.kernel_cache_dir``), as ``board`` does.
"""

from boardgen_pipeline.paths import kernel_cache_dir

kernel_cache_dir()
