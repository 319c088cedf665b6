"""The difficulty curve, and what a table change does to it (seed 001 P2 "C3
全行审计（曲线导出工具全行矩阵 diff）": a full-row audit through the curve
export, a matrix diff over every row; seed 004 "模拟读数的波动归因变难（数值动了还是图动了分不清）":
a reading that moves must be pinned on the numbers or on the maps).

C3 own the curve and may not call generation back ("禁反向调用生成"), so
this package gives them the export (``curve``) and the paired diff of two
states of the tables (``diff``), its outputs for review (``render``), the
designer's live preview (``watch``) and the edit run's figures against the
row's previous version (``edit_report``). docs/review.md says how to read
them and why the statistics are what they are.

- ``figures``: the figures a row is compared by, their per-board columns and
  default margins;
- ``sources``: BASE and HEAD (a git revision, a tables folder, the
  warehouse's current calibration);
- ``pairing``: the boards of both versions of a row on the same scopes;
- ``asked``: what a diff is asked (``Settings``), read by the row diff, the
  overlays' and the strata's comparisons;
- ``stats``: thin wrappers over scipy and statsmodels, each figure kind's
  test and every interval with its own p;
- ``paired``: one modified row's figures, compared paired;
- ``overlay_diff``: a row's overlays of both states on the same boards,
  compared paired;
- ``strata_diff``: a changed node-map pool's drawn maps, compared paired by
  adventure on HEAD's row figures;
- ``diff``: rows matched, the false discovery rate controlled, changes
  flagged, verdict changes;
- ``render``, ``svg``: the terminal, markdown, HTML and JSON outputs;
- ``saved``: the ``calibration_diff`` dataset (``--save``).
"""
