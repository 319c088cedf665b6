"""Calibration of a parameter row by a seed batch (seed 001 "F4 批量统计断言";
SPEC 7, 7.1; the advisor).

- ``fingerprints``: what decides each dataset (rows, overlays, draws, strata);
- ``seeds``: a row's seed batch and its boards;
- ``batch``: batches over a table, the row report's figures (C, D);
- ``assertions``: the F4 assertions A, A'', A', B, B', E, one function each;
- ``report``: the row's ``calibration_report`` record with the advisor's figures;
- ``advisor``: what would make a failing row pass.

Pure: no warehouse, no Dagster. Imports the domain packages below it.
"""
