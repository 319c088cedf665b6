"""Tuning: the target curve turned into parameter rows, and its corridor
(SPEC 12; seed 000 leaves the numbers to C3's curve; docs/designer.md
"Aim the curve", docs/decisions/tuning.md).

- ``figures``: a targeted figure on a set of boards, report C's value and
  its interval;
- ``knobs``: the values of a knob that give different boards;
- ``search``: the paired noisy search over them; ``sampler``: a row's
  candidates on its probe scopes;
- ``proposal``: one row searched, then proven on its calibration batch;
  ``run``: many rows through a row pool, and the table edit they make;
  ``render``: the outputs of ``boardgen tune``;
- ``corridor``: every targeted row within tolerance of its target, one
  rule for the nightly's check, the held-out proof, ``diff`` and ``watch``;
  ``stored``: the corridor as the warehouse holds the calibration.

The targets file itself is a table (``tables.curve_targets``).
"""
